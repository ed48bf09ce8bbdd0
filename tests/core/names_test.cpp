// Version, status, rule and enum names: generated from one table each.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "../common/table_util.h"

TEST_CASE("version: library and header agree", "[names]") {
  CHECK(hurray_version() == HURRAY_VERSION_NUMBER);
  CHECK(std::string(hurray_version_string()) == HURRAY_VERSION_STRING);
  CHECK(HURRAY_VERSION_NUMBER == 10000);
}

TEST_CASE("status: every code has a distinct name and a message", "[names]") {
  std::set<std::string> names;
#define XX(name, num, msg)                                                       \
  CHECK(std::string(hurray_status_name(HURRAY_##name)) == "HURRAY_" #name);      \
  CHECK(std::string(hurray_status_message(HURRAY_##name)) == msg);               \
  names.insert(hurray_status_name(HURRAY_##name));
  HURRAY_STATUS_MAP(XX)
#undef XX
  CHECK(names.size() == 17);
  CHECK(HURRAY_OK == 0);
  CHECK(HURRAY_E_DEVICE_UNAVAILABLE == 10);
  CHECK(std::string(hurray_status_name(static_cast<hurray_status>(1234))) == "HURRAY_E_UNKNOWN");
  CHECK(std::string(hurray_status_message(static_cast<hurray_status>(-1))) == "unknown status");
}

TEST_CASE("rules: IDs, kinds and summaries for every rule of RULES.md", "[names]") {
  // The 37 rule IDs of RULES.md, verbatim.
  const std::set<std::string> spec = {
      "BP-SIZE", "BP-LE", "BP-RESERVED", "BP-ALIGN-POW2", "BP-ALIGN-MIN", "BP-ALIGN-EMPTY",
      "BP-ALIGN-ADDR", "BP-ALIGN-IPC", "BP-ALIGN-GPU-PAGE", "BP-ALIGN-HEXAGON", "BP-ALIGN-TRUST",
      "BP-DEV-INVALID", "BP-DEV-RESERVED", "BP-DEV-PRIVATE", "BP-MC-INVALID", "BP-MC-PAIR",
      "BP-COLOC", "BP-PUT-DEVICE", "BP-SYNC-VALUE", "BP-SYNC-CPU", "BP-SYNC-NET", "BP-SYNC-IPC",
      "BP-SYNC-PAYLOAD", "BP-SYNC-WAIT", "BP-SYNC-STREAM", "BP-SYNC-FENCE", "BP-REL-ONCE",
      "BP-REL-AFTER", "BP-REL-THREAD", "BP-EVREL-ONCE", "BP-REFCOUNT", "BP-IPC-RELEASE",
      "BP-NET-OWN", "BP-ZC-NOCOPY", "BP-ZC-NOMUT", "BP-ZC-QPARAM", "BP-ZC-STABLE"};
  std::set<std::string> seen;
  int rejects = 0, warns = 0;
  for (int r = 1; r < 100; ++r) {
    const std::string id = hurray_rule_id(static_cast<hurray_rule>(r));
    if (id.empty()) {
      CHECK(hurray_rule_kind_of(static_cast<hurray_rule>(r)) == HURRAY_RULE_KIND_NONE);
      continue;
    }
    CHECK(seen.insert(id).second);
    const auto kind = hurray_rule_kind_of(static_cast<hurray_rule>(r));
    rejects += kind == HURRAY_RULE_KIND_REJECT;
    warns += kind == HURRAY_RULE_KIND_WARN;
    CHECK(std::string(hurray_rule_summary(static_cast<hurray_rule>(r))).size() > 10);
  }
  CHECK(seen == spec);
  CHECK(rejects == 18);
  CHECK(warns == 2);
  CHECK(std::string(hurray_rule_id(HURRAY_RULE_NONE)).empty());
  CHECK(std::string(hurray_rule_id(HURRAY_RULE_ALIGN_GPU_PAGE)) == "BP-ALIGN-GPU-PAGE");
}

namespace {

// name(v) for every byte v: the known names from 0 on, then "reserved" up to
// 0xEF, "private" up to 0xFE, and "invalid" for 0xFF.
template <class Name>
void check_byte_names(Name name, std::initializer_list<const char *> known) {
  const std::vector<const char *> names(known);
  for (int v = 0; v < 256; ++v) {
    INFO("value " << v);
    const std::string n = name(uint8_t(v));
    if (v < int(names.size())) CHECK(n == names[size_t(v)]);
    else if (v <= 0xEF) CHECK(n == "reserved");
    else if (v <= 0xFE) CHECK(n == "private");
    else CHECK(n == "invalid");
  }
}

}  // namespace

TEST_CASE("names: device tags, memory classes, sync modes, transports", "[names]") {
  check_byte_names(hurray_device_tag_name, {"CPU", "CUDA", "ROCM", "METAL", "VULKAN", "WEBGPU",
                                            "HEXAGON", "LEVEL_ZERO", "OPENCL"});
  check_byte_names(hurray_memory_class_name, {"STANDARD", "HOST_PINNED", "UNIFIED", "PEER"});
  CHECK(std::string(hurray_sync_mode_name(0)) == "PRODUCER_SYNCED");
  CHECK(std::string(hurray_sync_mode_name(1)) == "EVENT");
  CHECK(std::string(hurray_sync_mode_name(2)) == "CONSUMER_STREAM");
  CHECK(std::string(hurray_sync_mode_name(3)) == "invalid");
  CHECK(std::string(hurray_transport_name(HURRAY_TRANSPORT_IN_PROCESS)) == "in-process");
  CHECK(std::string(hurray_transport_name(HURRAY_TRANSPORT_IPC)) == "ipc");
  CHECK(std::string(hurray_transport_name(HURRAY_TRANSPORT_RDMA)) == "rdma");
  CHECK(std::string(hurray_transport_name(HURRAY_TRANSPORT_CROSS_MACHINE)) == "cross-machine");
  CHECK(std::string(hurray_transport_name(static_cast<hurray_transport>(9))) == "invalid");
  // enum constants carry the wire values
  CHECK(HURRAY_DEVICE_VULKAN == 0x04);
  CHECK(HURRAY_DEVICE_OPENCL == 0x08);
  CHECK(HURRAY_MEMORY_PEER == 0x03);
  CHECK(HURRAY_SYNC_CONSUMER_STREAM == 0x02);
}

TEST_CASE("hurray_error layout is frozen", "[names][abi]") {
  CHECK(sizeof(hurray_error) == 320);
  CHECK(offsetof(hurray_error, buffer_index) == 16);
  CHECK(offsetof(hurray_error, rule_id) == 32);
  CHECK(offsetof(hurray_error, message) == 64);
  CHECK(sizeof(hurray_buffer_handle) == 16);
  CHECK(offsetof(hurray_buffer_handle, alignment) == 8);
  CHECK(offsetof(hurray_buffer_handle, device_tag) == 12);
  CHECK(offsetof(hurray_buffer_handle, memory_class) == 14);
}
