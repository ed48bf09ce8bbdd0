// One test per rule of RULES.md that the bytes decide: bytes that break it,
// the status and rule ID expected, the buffer index and byte offset.
#include <catch2/catch.hpp>

#include <cstring>

#include "../common/table_util.h"

using namespace hurray_test;
using V = std::vector<std::string>;

namespace {

// Valid baseline handles.
const hurray_buffer_handle kCpu = make(4096, 64, HURRAY_DEVICE_CPU);
const hurray_buffer_handle kCuda = make(1 << 20, 4096, HURRAY_DEVICE_CUDA);

void expect_rejected(const Report &r, hurray_status status, const char *rule, int64_t index,
                     int64_t offset) {
  INFO("first error: " << r.first.message);
  CHECK(r.first_status == status);
  CHECK(r.status == status);
  CHECK(std::string(r.first.rule_id) == rule);
  CHECK(std::string(hurray_rule_id(static_cast<hurray_rule>(r.first.rule))) == rule);
  CHECK(r.first.status == status);
  CHECK(r.first.severity == HURRAY_SEVERITY_ERROR);
  CHECK(r.first.buffer_index == index);
  CHECK(r.first.byte_offset == offset);
  // the message names the rule
  CHECK(std::string(r.first.message).rfind(rule, 0) == 0);
  REQUIRE_FALSE(r.all.empty());
  CHECK(std::string(r.all[0].rule_id) == rule);
}

void expect_valid(const Report &r) {
  INFO((r.all.empty() ? "" : r.all[0].message));
  CHECK(r.first_status == HURRAY_OK);
  CHECK(r.status == HURRAY_OK);
  CHECK(r.errors == 0);
}

}  // namespace

TEST_CASE("baseline handles are valid", "[rules]") {
  expect_valid(check(kCpu));
  expect_valid(check(kCuda));
  CHECK(check(kCpu).warnings == 0);
  CHECK(check(kCuda).warnings == 0);
}

TEST_CASE("BP-SIZE: empty input, truncated handle, trailing bytes", "[rules][BP-SIZE]") {
  expect_rejected(check(Bytes{}), HURRAY_E_SIZE, "BP-SIZE", 0, 0);
  Bytes b = encode({kCpu});
  b.pop_back();  // 15 bytes
  expect_rejected(check(b), HURRAY_E_SIZE, "BP-SIZE", 0, 0);
  b = encode({kCpu, kCpu});
  b.resize(31);
  expect_rejected(check(b), HURRAY_E_SIZE, "BP-SIZE", 1, 16);
  b = encode({kCpu});
  b.push_back(0);  // 17 bytes: one handle plus one trailing byte
  const Report r = check(b);
  expect_rejected(r, HURRAY_E_SIZE, "BP-SIZE", 1, 16);
  CHECK(r.errors == 1);  // the complete handle itself is fine
}

TEST_CASE("BP-SIZE: the complete handles of a truncated table are still checked", "[rules][BP-SIZE]") {
  Bytes b = encode({make(4096, 3, HURRAY_DEVICE_CPU)});
  b.resize(20);
  const Report r = check(b);
  CHECK(r.error_ids() == V{"BP-SIZE", "BP-ALIGN-POW2", "BP-ALIGN-MIN"});
}

TEST_CASE("BP-RESERVED: byte 15 must be zero", "[rules][BP-RESERVED]") {
  for (uint8_t v : {0x01, 0x80, 0xFF}) {
    auto h = kCpu;
    h.reserved = v;
    expect_rejected(check(h), HURRAY_E_RESERVED, "BP-RESERVED", 0, 15);
  }
}

TEST_CASE("BP-ALIGN-POW2: alignment is a non-zero power of two", "[rules][BP-ALIGN-POW2]") {
  for (uint32_t a : {0u, 3u, 65u, 96u, 4095u, 0xFFFFFFFFu}) {
    expect_rejected(check(make(4096, a, HURRAY_DEVICE_CPU)), HURRAY_E_ALIGNMENT,
                    "BP-ALIGN-POW2", 0, 8);
    // empty buffers too: "any power of two", and 0 is not one
    expect_rejected(check(make(0, a, HURRAY_DEVICE_CPU)), HURRAY_E_ALIGNMENT, "BP-ALIGN-POW2",
                    0, 8);
  }
  for (int bit = 6; bit < 32; ++bit) expect_valid(check(make(1, 1u << bit, HURRAY_DEVICE_CPU)));
}

TEST_CASE("BP-ALIGN-MIN: non-empty buffers declare at least 64", "[rules][BP-ALIGN-MIN]") {
  for (uint32_t a : {1u, 2u, 16u, 32u})
    expect_rejected(check(make(1, a, HURRAY_DEVICE_CPU)), HURRAY_E_ALIGNMENT, "BP-ALIGN-MIN",
                    0, 8);
  expect_valid(check(make(1, 64, HURRAY_DEVICE_CPU)));
}

TEST_CASE("BP-ALIGN-EMPTY: an empty buffer may declare any power of two", "[rules][BP-ALIGN-EMPTY]") {
  for (int bit = 0; bit < 32; ++bit) {
    expect_valid(check(make(0, 1u << bit, HURRAY_DEVICE_CPU)));
    PolicyPtr ipc(HURRAY_TRANSPORT_IPC);
    expect_valid(check(make(0, 1u << bit, HURRAY_DEVICE_CPU), ipc));
    // no GPU page warning for an empty GPU buffer either
    CHECK(check(make(0, 1u << bit, HURRAY_DEVICE_CUDA)).warnings == 0);
  }
}

TEST_CASE("BP-ALIGN-IPC: IPC and RDMA need 4096 for non-empty buffers", "[rules][BP-ALIGN-IPC]") {
  for (auto t : {HURRAY_TRANSPORT_IPC, HURRAY_TRANSPORT_RDMA}) {
    PolicyPtr p(t);
    expect_rejected(check(make(1, 2048, HURRAY_DEVICE_CPU), p), HURRAY_E_ALIGNMENT,
                    "BP-ALIGN-IPC", 0, 8);
    expect_valid(check(make(1, 4096, HURRAY_DEVICE_CPU), p));
    expect_valid(check(make(1, 65536, HURRAY_DEVICE_CPU), p));
  }
  for (auto t : {HURRAY_TRANSPORT_IN_PROCESS, HURRAY_TRANSPORT_CROSS_MACHINE}) {
    PolicyPtr p(t);
    expect_valid(check(make(1, 64, HURRAY_DEVICE_CPU), p));
  }
}

TEST_CASE("BP-ALIGN-ADDR: the address is a multiple of the declared alignment", "[rules][BP-ALIGN-ADDR]") {
  alignas(4096) static unsigned char page[8192];
  auto h = make(100, 4096, HURRAY_DEVICE_CPU);
  hurray_error err;
  CHECK(hurray_handle_check_address(&h, page, &err) == HURRAY_OK);
  REQUIRE(hurray_handle_check_address(&h, page + 64, &err) == HURRAY_E_ALIGNMENT);
  CHECK(std::string(err.rule_id) == "BP-ALIGN-ADDR");
  CHECK(std::string(err.message).find("4096") != std::string::npos);
  h.alignment = 64;
  CHECK(hurray_handle_check_address(&h, page + 64, &err) == HURRAY_OK);
  CHECK(hurray_handle_check_address(&h, page + 1, &err) == HURRAY_E_ALIGNMENT);
  // non-empty NULL is never aligned data
  CHECK(hurray_handle_check_address(&h, nullptr, &err) == HURRAY_E_ALIGNMENT);
  CHECK(std::string(err.rule_id) == "BP-ALIGN-ADDR");
  // BP-ALIGN-EMPTY: an empty buffer takes NULL or any pointer
  h.byte_size = 0;
  CHECK(hurray_handle_check_address(&h, nullptr, &err) == HURRAY_OK);
  CHECK(hurray_handle_check_address(&h, page + 3, &err) == HURRAY_OK);
  // a non-power-of-two declaration cannot be checked: BP-ALIGN-POW2
  h = make(1, 96, HURRAY_DEVICE_CPU);
  CHECK(hurray_handle_check_address(&h, page, &err) == HURRAY_E_ALIGNMENT);
  CHECK(std::string(err.rule_id) == "BP-ALIGN-POW2");
  CHECK(hurray_handle_check_address(nullptr, page, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("BP-ALIGN-GPU-PAGE: GPU memory below 4096 is a warning", "[rules][BP-ALIGN-GPU-PAGE]") {
  const uint8_t gpu[] = {HURRAY_DEVICE_CUDA,   HURRAY_DEVICE_ROCM,       HURRAY_DEVICE_METAL,
                         HURRAY_DEVICE_VULKAN, HURRAY_DEVICE_WEBGPU,     HURRAY_DEVICE_LEVEL_ZERO,
                         HURRAY_DEVICE_OPENCL};
  for (uint8_t tag : gpu) {
    INFO("device_tag " << int(tag));
    const Report r = check(make(1024, 256, tag));
    expect_valid(r);
    CHECK(r.warning_ids() == V{"BP-ALIGN-GPU-PAGE"});
    CHECK(r.all[0].status == HURRAY_E_ALIGNMENT);
    CHECK(r.all[0].byte_offset == 8);
    CHECK(check(make(1024, 4096, tag)).warnings == 0);
  }
  for (uint8_t tag : {uint8_t(HURRAY_DEVICE_CPU), uint8_t(HURRAY_DEVICE_HEXAGON)})
    CHECK(check(make(1024, 256, tag)).warnings == 0);
}

TEST_CASE("BP-ALIGN-GPU-PAGE: an error when SHOULDs are errors", "[rules][BP-ALIGN-GPU-PAGE][policy]") {
  PolicyPtr strict;
  REQUIRE(hurray_policy_set_warnings_as_errors(strict, 1, nullptr) == HURRAY_OK);
  const Report r = check(make(1024, 256, HURRAY_DEVICE_VULKAN), strict);
  expect_rejected(r, HURRAY_E_ALIGNMENT, "BP-ALIGN-GPU-PAGE", 0, 8);
  CHECK(r.warnings == 0);
}

TEST_CASE("BP-ALIGN-HEXAGON: HEXAGON below 128 is a warning", "[rules][BP-ALIGN-HEXAGON]") {
  const Report r = check(make(1024, 64, HURRAY_DEVICE_HEXAGON));
  expect_valid(r);
  CHECK(r.warning_ids() == V{"BP-ALIGN-HEXAGON"});
  CHECK(check(make(1024, 128, HURRAY_DEVICE_HEXAGON)).warnings == 0);
  PolicyPtr strict;
  hurray_policy_set_warnings_as_errors(strict, 1, nullptr);
  expect_rejected(check(make(1024, 64, HURRAY_DEVICE_HEXAGON), strict), HURRAY_E_ALIGNMENT,
                  "BP-ALIGN-HEXAGON", 0, 8);
}

TEST_CASE("BP-DEV-INVALID: device_tag 0xFF", "[rules][BP-DEV-INVALID]") {
  expect_rejected(check(make(64, 64, 0xFF)), HURRAY_E_DEVICE_TAG, "BP-DEV-INVALID", 0, 12);
}

TEST_CASE("BP-DEV-RESERVED: device_tags 0x09-0xEF", "[rules][BP-DEV-RESERVED]") {
  for (int tag = 0x09; tag <= 0xEF; ++tag)
    expect_rejected(check(make(64, 64, uint8_t(tag))), HURRAY_E_DEVICE_TAG, "BP-DEV-RESERVED",
                    0, 12);
}

TEST_CASE("BP-DEV-PRIVATE: private tags need an explicit agreement per tag", "[rules][BP-DEV-PRIVATE]") {
  PolicyPtr agreed;
  REQUIRE(hurray_policy_allow_private_tag(agreed, 0xF0, 1, nullptr) == HURRAY_OK);
  for (int tag = 0xF0; tag <= 0xFE; ++tag) {
    const auto h = make(64, 64, uint8_t(tag));
    expect_rejected(check(h), HURRAY_E_DEVICE_TAG, "BP-DEV-PRIVATE", 0, 12);
    if (tag == 0xF0)
      expect_valid(check(h, agreed));
    else  // agreeing to 0xF0 says nothing about the others
      expect_rejected(check(h, agreed), HURRAY_E_DEVICE_TAG, "BP-DEV-PRIVATE", 0, 12);
  }
  REQUIRE(hurray_policy_allow_private_tag(agreed, 0xF0, 0, nullptr) == HURRAY_OK);
  expect_rejected(check(make(64, 64, 0xF0), agreed), HURRAY_E_DEVICE_TAG, "BP-DEV-PRIVATE", 0, 12);
}

TEST_CASE("BP-MC-INVALID: memory classes 0x04-0xEF and 0xFF", "[rules][BP-MC-INVALID]") {
  for (int mc = 0x04; mc <= 0xFF; ++mc) {
    if (mc >= 0xF0 && mc <= 0xFE) continue;
    expect_rejected(check(make(64, 64, HURRAY_DEVICE_CPU, 0, uint8_t(mc))),
                    HURRAY_E_MEMORY_CLASS, "BP-MC-INVALID", 0, 14);
  }
}

TEST_CASE("BP-MC-PAIR: pairs outside the validity table", "[rules][BP-MC-PAIR]") {
  expect_rejected(check(make(64, 64, HURRAY_DEVICE_CPU, 0, HURRAY_MEMORY_HOST_PINNED)),
                  HURRAY_E_MEMORY_CLASS, "BP-MC-PAIR", 0, 14);
  expect_rejected(check(make(4096, 4096, HURRAY_DEVICE_METAL, 0, HURRAY_MEMORY_PEER)),
                  HURRAY_E_MEMORY_CLASS, "BP-MC-PAIR", 0, 14);
  expect_rejected(check(make(4096, 4096, HURRAY_DEVICE_WEBGPU, 0, HURRAY_MEMORY_UNIFIED)),
                  HURRAY_E_MEMORY_CLASS, "BP-MC-PAIR", 0, 14);
  // a private class with a named tag
  expect_rejected(check(make(4096, 4096, HURRAY_DEVICE_CUDA, 0, 0xF5)), HURRAY_E_MEMORY_CLASS,
                  "BP-MC-PAIR", 0, 14);
  // a private tag takes STANDARD or a private class, nothing else
  PolicyPtr agreed;
  hurray_policy_allow_private_tag(agreed, 0xF7, 1, nullptr);
  expect_valid(check(make(64, 64, 0xF7, 0, 0xF5), agreed));
  expect_valid(check(make(64, 64, 0xF7, 0, HURRAY_MEMORY_STANDARD), agreed));
  expect_rejected(check(make(64, 64, 0xF7, 0, HURRAY_MEMORY_UNIFIED), agreed),
                  HURRAY_E_MEMORY_CLASS, "BP-MC-PAIR", 0, 14);
}

TEST_CASE("BP-COLOC: every handle shares device_tag and memory_class", "[rules][BP-COLOC]") {
  expect_valid(check(encode({kCuda, kCuda, kCuda})));
  auto other = kCuda;
  other.device_tag = HURRAY_DEVICE_ROCM;
  expect_rejected(check(encode({kCuda, kCuda, other})), HURRAY_E_COLOCATION, "BP-COLOC", 2, 44);
  auto cls = kCuda;
  cls.memory_class = HURRAY_MEMORY_UNIFIED;
  expect_rejected(check(encode({kCuda, cls, kCuda})), HURRAY_E_COLOCATION, "BP-COLOC", 1, 30);
  // both differ: two findings for that handle, tag first
  auto both = other;
  both.memory_class = HURRAY_MEMORY_UNIFIED;
  const Report r = check(encode({kCuda, both}));
  CHECK(r.error_ids() == V{"BP-COLOC", "BP-COLOC"});
  CHECK(r.all[0].byte_offset == 28);
  CHECK(r.all[1].byte_offset == 30);
  // sizes and alignments may differ
  auto small = kCuda;
  small.byte_size = 0;
  small.alignment = 1;
  expect_valid(check(encode({kCuda, small})));
}

TEST_CASE("BP-SYNC-VALUE: sync_mode 0x00-0x02 only", "[rules][BP-SYNC-VALUE]") {
  for (int s = 3; s <= 0xFF; ++s)
    expect_rejected(check(make(4096, 4096, HURRAY_DEVICE_CUDA, uint8_t(s))), HURRAY_E_SYNC,
                    "BP-SYNC-VALUE", 0, 13);
  for (int s = 0; s <= 2; ++s) expect_valid(check(make(4096, 4096, HURRAY_DEVICE_CUDA, uint8_t(s))));
}

TEST_CASE("BP-SYNC-CPU: CPU handles are PRODUCER_SYNCED", "[rules][BP-SYNC-CPU]") {
  for (uint8_t s : {uint8_t(HURRAY_SYNC_EVENT), uint8_t(HURRAY_SYNC_CONSUMER_STREAM)})
    expect_rejected(check(make(64, 64, HURRAY_DEVICE_CPU, s)), HURRAY_E_SYNC, "BP-SYNC-CPU", 0, 13);
}

TEST_CASE("BP-SYNC-NET: cross-machine and RDMA carry PRODUCER_SYNCED only", "[rules][BP-SYNC-NET]") {
  for (auto t : {HURRAY_TRANSPORT_CROSS_MACHINE, HURRAY_TRANSPORT_RDMA}) {
    PolicyPtr p(t);
    for (uint8_t s : {uint8_t(HURRAY_SYNC_EVENT), uint8_t(HURRAY_SYNC_CONSUMER_STREAM)})
      expect_rejected(check(make(4096, 4096, HURRAY_DEVICE_CUDA, s), p), HURRAY_E_SYNC,
                      "BP-SYNC-NET", 0, 13);
    expect_valid(check(make(4096, 4096, HURRAY_DEVICE_CUDA), p));
  }
}

TEST_CASE("BP-SYNC-IPC: EVENT and CONSUMER_STREAM need IPC-exportable sync objects", "[rules][BP-SYNC-IPC]") {
  PolicyPtr ipc(HURRAY_TRANSPORT_IPC);
  // default capabilities (TABLES.md §5): events on CUDA, ROCM, VULKAN, LEVEL_ZERO
  for (uint8_t tag : {HURRAY_DEVICE_CUDA, HURRAY_DEVICE_ROCM, HURRAY_DEVICE_VULKAN,
                      HURRAY_DEVICE_LEVEL_ZERO})
    expect_valid(check(make(4096, 4096, tag, HURRAY_SYNC_EVENT), ipc));
  for (uint8_t tag : {HURRAY_DEVICE_METAL, HURRAY_DEVICE_WEBGPU, HURRAY_DEVICE_HEXAGON,
                      HURRAY_DEVICE_OPENCL})
    expect_rejected(check(make(4096, 4096, tag, HURRAY_SYNC_EVENT), ipc), HURRAY_E_SYNC,
                    "BP-SYNC-IPC", 0, 13);
  // no runtime exports IPC streams
  expect_rejected(check(make(4096, 4096, HURRAY_DEVICE_CUDA, HURRAY_SYNC_CONSUMER_STREAM), ipc),
                  HURRAY_E_SYNC, "BP-SYNC-IPC", 0, 13);
  // the policy can declare capabilities, per device
  REQUIRE(hurray_policy_set_ipc_sync(ipc, HURRAY_DEVICE_OPENCL, HURRAY_IPC_SYNC_EVENTS, nullptr) == HURRAY_OK);
  expect_valid(check(make(4096, 4096, HURRAY_DEVICE_OPENCL, HURRAY_SYNC_EVENT), ipc));
  REQUIRE(hurray_policy_set_ipc_sync(ipc, HURRAY_DEVICE_CUDA, HURRAY_IPC_SYNC_STREAMS, nullptr) == HURRAY_OK);
  expect_valid(check(make(4096, 4096, HURRAY_DEVICE_CUDA, HURRAY_SYNC_CONSUMER_STREAM), ipc));
  expect_rejected(check(make(4096, 4096, HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT), ipc),
                  HURRAY_E_SYNC, "BP-SYNC-IPC", 0, 13);
  // in-process, everything goes
  expect_valid(check(make(4096, 4096, HURRAY_DEVICE_OPENCL, HURRAY_SYNC_CONSUMER_STREAM)));
}

TEST_CASE("a handle with several faults lists all of them, in byte order", "[rules][diagnose]") {
  PolicyPtr rdma(HURRAY_TRANSPORT_RDMA);
  // CPU, alignment 48, EVENT, HOST_PINNED, reserved 1, over RDMA
  const auto h = make(100, 48, HURRAY_DEVICE_CPU, HURRAY_SYNC_EVENT, HURRAY_MEMORY_HOST_PINNED, 1);
  const Report r = check(h, rdma);
  CHECK(r.error_ids() == V{"BP-ALIGN-POW2", "BP-ALIGN-MIN", "BP-ALIGN-IPC", "BP-SYNC-CPU",
                           "BP-SYNC-NET", "BP-MC-PAIR", "BP-RESERVED"});
  CHECK(r.warnings == 0);
  std::vector<int64_t> offsets;
  for (const auto &e : r.all) offsets.push_back(e.byte_offset);
  CHECK(offsets == std::vector<int64_t>{8, 8, 8, 13, 13, 14, 15});
  expect_rejected(r, HURRAY_E_ALIGNMENT, "BP-ALIGN-POW2", 0, 8);
}

TEST_CASE("a reserved tag does not also raise pair or IPC findings", "[rules][diagnose]") {
  PolicyPtr ipc(HURRAY_TRANSPORT_IPC);
  const Report r = check(make(4096, 4096, 0x42, HURRAY_SYNC_EVENT, HURRAY_MEMORY_PEER), ipc);
  CHECK(r.error_ids() == V{"BP-DEV-RESERVED"});
}
