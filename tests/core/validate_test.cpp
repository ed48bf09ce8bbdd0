// The validity table over all 65,536 (device_tag, memory_class) values, the
// agreement between first-error and all-errors modes, and diagnose's
// capacity contract.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <random>

#include "../common/table_util.h"

using namespace hurray_test;

namespace {

// TABLES.md §3, transcribed here independently of src/core/tables.cpp.
// S = STANDARD, H = HOST_PINNED, U = UNIFIED, P = PEER.
const std::map<int, std::string> kTable = {
    {0x00, "S"},   {0x01, "SHUP"}, {0x02, "SHUP"}, {0x03, "SHU"}, {0x04, "SHU"},
    {0x05, "S"},   {0x06, "SU"},   {0x07, "SHUP"}, {0x08, "SHU"},
};

bool expected_pair(int tag, int mc) {
  if (tag >= 0xF0 && tag <= 0xFE) return mc == 0x00 || (mc >= 0xF0 && mc <= 0xFE);
  auto it = kTable.find(tag);
  if (it == kTable.end()) return false;
  if (mc > 3) return false;
  return it->second.find("SHUP"[mc]) != std::string::npos;
}

}  // namespace

TEST_CASE("all 65,536 (device_tag, memory_class) values against the table", "[validate][BP-MC-PAIR]") {
  PolicyPtr agreed;
  for (int tag = 0xF0; tag <= 0xFE; ++tag)
    REQUIRE(hurray_policy_allow_private_tag(agreed, uint8_t(tag), 1, nullptr) == HURRAY_OK);
  size_t valid = 0;
  for (int tag = 0; tag < 256; ++tag) {
    for (int mc = 0; mc < 256; ++mc) {
      const bool want = expected_pair(tag, mc);
      REQUIRE(hurray_memory_class_valid_for(uint8_t(tag), uint8_t(mc)) == (want ? 1 : 0));
      const auto h = make(4096, 4096, uint8_t(tag), HURRAY_SYNC_PRODUCER_SYNCED, uint8_t(mc));
      hurray_error err;
      const hurray_status st = hurray_handle_validate(&h, agreed, &err);
      const bool tag_ok = tag <= 0x08 || (tag >= 0xF0 && tag <= 0xFE);
      const bool mc_defined = mc <= 0x03 || (mc >= 0xF0 && mc <= 0xFE);
      if (want) {
        ++valid;
        REQUIRE(st == HURRAY_OK);
      } else if (!tag_ok) {
        REQUIRE(st == HURRAY_E_DEVICE_TAG);
        REQUIRE(std::string(err.rule_id) == (tag == 0xFF ? "BP-DEV-INVALID" : "BP-DEV-RESERVED"));
      } else {
        REQUIRE(st == HURRAY_E_MEMORY_CLASS);
        REQUIRE(std::string(err.rule_id) == (mc_defined ? "BP-MC-PAIR" : "BP-MC-INVALID"));
      }
    }
  }
  // 1 + 4 + 4 + 3 + 3 + 1 + 2 + 4 + 3 named pairs, 15 private tags x 16 classes
  CHECK(valid == 25 + 15 * 16);
}

TEST_CASE("every valid pair round-trips through the codec", "[validate][roundtrip]") {
  for (int tag = 0; tag <= 0x08; ++tag)
    for (int mc = 0; mc <= 3; ++mc) {
      if (!expected_pair(tag, mc)) continue;
      for (uint8_t sync = 0; sync <= 2; ++sync) {
        if (tag == 0 && sync != 0) continue;
        const auto h = make(123456789, 4096, uint8_t(tag), sync, uint8_t(mc));
        const Bytes b = encode({h});
        hurray_buffer_handle back;
        REQUIRE(hurray_handle_decode(b.data(), b.size(), &back, nullptr) == HURRAY_OK);
        REQUIRE(std::memcmp(&back, &h, sizeof h) == 0);
        REQUIRE(hurray_handle_validate(&back, nullptr, nullptr) == HURRAY_OK);
        unsigned char again[16];
        hurray_handle_encode(&back, again, 16, nullptr);
        REQUIRE(std::memcmp(again, b.data(), 16) == 0);
      }
    }
}

TEST_CASE("first-error and all-errors modes agree on random tables", "[validate][property]") {
  std::mt19937_64 rng(7);
  PolicyPtr policies[5] = {PolicyPtr(HURRAY_TRANSPORT_IN_PROCESS), PolicyPtr(HURRAY_TRANSPORT_IPC),
                           PolicyPtr(HURRAY_TRANSPORT_RDMA),
                           PolicyPtr(HURRAY_TRANSPORT_CROSS_MACHINE),
                           PolicyPtr(HURRAY_TRANSPORT_IN_PROCESS)};
  hurray_policy_set_warnings_as_errors(policies[4], 1, nullptr);
  hurray_policy_allow_private_tag(policies[4], 0xF1, 1, nullptr);
  // Bias the fields towards interesting values so that valid handles occur.
  auto pick = [&](std::initializer_list<uint64_t> common, uint64_t mask) {
    if (rng() % 4 == 0) return rng() & mask;
    return *(common.begin() + rng() % common.size());
  };
  size_t valid_seen = 0, invalid_seen = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    // up to 12 handles: the batch fast path takes 4 at a time
    const size_t n = 1 + rng() % 12;
    Bytes b;
    const uint8_t tag = uint8_t(pick({0, 1, 4, 6, 8, 0xF1, 0x20, 0xFF}, 0xFF));
    const uint8_t mc = uint8_t(pick({0, 1, 2, 3, 0xF2, 0x10}, 0xFF));
    for (size_t i = 0; i < n; ++i) {
      auto h = make(pick({0, 1, 4096}, ~UINT64_C(0)), uint32_t(pick({1, 64, 128, 4096, 96}, 0xFFFFFFFF)),
                    rng() % 32 ? tag : uint8_t(rng()), uint8_t(pick({0, 0, 1, 2, 3}, 0xFF)),
                    rng() % 32 ? mc : uint8_t(rng()), uint8_t(rng() % 64 ? 0 : rng()));
      const Bytes one = encode({h});
      b.insert(b.end(), one.begin(), one.end());
    }
    if (rng() % 16 == 0) b.resize(b.size() - 1 - rng() % 15);
    for (const auto &p : policies) {
      const Report r = check(b, p);
      REQUIRE(r.first_status == r.status);
      REQUIRE((r.status == HURRAY_OK) == (r.errors == 0));
      if (r.status == HURRAY_OK) {
        ++valid_seen;
      } else {
        ++invalid_seen;
        // the first error of diagnose is the one validate returns
        const hurray_error *first = nullptr;
        for (const auto &e : r.all)
          if (e.severity == HURRAY_SEVERITY_ERROR) { first = &e; break; }
        REQUIRE(first != nullptr);
        REQUIRE(std::string(first->rule_id) == r.first.rule_id);
        REQUIRE(first->buffer_index == r.first.buffer_index);
        REQUIRE(first->byte_offset == r.first.byte_offset);
        REQUIRE(std::string(first->message) == r.first.message);
        // every error names a rule ID, and its message starts with it
        for (const auto &e : r.all) {
          REQUIRE(e.rule_id[0] != '\0');
          REQUIRE(std::string(e.message).rfind(e.rule_id, 0) == 0);
        }
      }
      // a table of one handle: hurray_handle_validate says the same
      if (b.size() == 16) {
        hurray_buffer_handle h;
        hurray_handle_decode(b.data(), 16, &h, nullptr);
        REQUIRE(hurray_handle_validate(&h, p, nullptr) == r.status);
      }
    }
  }
  CHECK(valid_seen > 100);
  CHECK(invalid_seen > 1000);
}

TEST_CASE("diagnose: counts beyond capacity, writes at most capacity", "[validate][diagnose]") {
  PolicyPtr rdma(HURRAY_TRANSPORT_RDMA);
  const Bytes b = encode({make(100, 48, HURRAY_DEVICE_CPU, HURRAY_SYNC_EVENT,
                               HURRAY_MEMORY_HOST_PINNED, 1)});
  size_t ne = 99, nw = 99;
  CHECK(hurray_table_diagnose(b.data(), b.size(), rdma, nullptr, 0, &ne, &nw, nullptr) ==
        HURRAY_E_ALIGNMENT);
  CHECK(ne == 7);
  CHECK(nw == 0);
  hurray_error out[3];
  hurray_error sentinel;
  std::memset(&sentinel, 0x5A, sizeof sentinel);
  out[2] = sentinel;
  CHECK(hurray_table_diagnose(b.data(), b.size(), rdma, out, 2, &ne, nullptr, nullptr) ==
        HURRAY_E_ALIGNMENT);
  CHECK(ne == 7);
  CHECK(std::string(out[0].rule_id) == "BP-ALIGN-POW2");
  CHECK(std::string(out[1].rule_id) == "BP-ALIGN-MIN");
  CHECK(std::memcmp(&out[2], &sentinel, sizeof sentinel) == 0);
  hurray_error err;
  CHECK(hurray_table_diagnose(b.data(), b.size(), rdma, nullptr, 1, &ne, &nw, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(err.status == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_table_diagnose(nullptr, 16, rdma, out, 3, &ne, &nw, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_table_validate(nullptr, 16, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_handle_validate(nullptr, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("batch fast path: long valid tables, and every single fault in them", "[validate][batch]") {
  // A valid table of 37 handles (the SIMD loop's 4-wide body and its tail),
  // then each handle broken in each way in turn: validate must agree with
  // the rule engine's full walk (diagnose) every time.
  std::mt19937_64 rng(99);
  for (auto transport : {HURRAY_TRANSPORT_IN_PROCESS, HURRAY_TRANSPORT_IPC}) {
    PolicyPtr p(transport);
    std::vector<hurray_buffer_handle> hs;
    for (int i = 0; i < 37; ++i)
      hs.push_back(make(i % 5 == 0 ? 0 : uint64_t(rng() % 100000) + 1,
                        i == 7 ? 0x80000000u : 4096u << (i % 3), HURRAY_DEVICE_VULKAN,
                        uint8_t(transport == HURRAY_TRANSPORT_IN_PROCESS ? i % 3 : 0),
                        HURRAY_MEMORY_UNIFIED));
    auto table = [&] {
      Bytes b;
      for (const auto &h : hs) {
        const Bytes one = encode({h});
        b.insert(b.end(), one.begin(), one.end());
      }
      return b;
    };
    REQUIRE(check(table(), p).status == HURRAY_OK);
    REQUIRE(check(table(), p).first_status == HURRAY_OK);
    for (size_t victim = 0; victim < hs.size(); ++victim) {
      for (int fault = 0; fault < 7; ++fault) {
        const hurray_buffer_handle keep = hs[victim];
        hurray_buffer_handle &h = hs[victim];
        switch (fault) {
          case 0: h.device_tag = HURRAY_DEVICE_OPENCL; break;   // BP-COLOC
          case 1: h.memory_class = HURRAY_MEMORY_STANDARD; break;
          case 2: h.reserved = 0x10; break;
          case 3: h.sync_mode = 3; break;
          case 4: h.alignment = 3u << 12; break;                 // not a power of two
          case 5: h.alignment = 0; break;
          case 6: h.byte_size = 1; h.alignment = 32; break;      // below the minimum
        }
        const Report r = check(table(), p);
        INFO("handle " << victim << " fault " << fault);
        CHECK(r.first_status != HURRAY_OK);
        CHECK(r.status == r.first_status);
        // a changed handle 0 is valid alone; then handle 1 differs from it
        const bool moved_first = victim == 0 && fault <= 1;
        CHECK(r.first.buffer_index == int64_t(moved_first ? 1 : victim));
        h = keep;
      }
    }
  }
}
