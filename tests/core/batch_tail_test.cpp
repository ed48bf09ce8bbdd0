// hurray_table_validate's batch fast path (src/core/validate.cpp,
// fast_table_valid) checks handles 1.. four at a time (SSE2) and the rest
// one by one (the scalar tail). Each rule it checks is broken here in one
// handle at a time, at every position of tables of 2 to 10 handles, so each
// broken handle sits once in a vector lane and once in the tail; every table
// must be refused, under that rule, at that handle. The policies are those
// whose minimum differs: in-process (64) and IPC and RDMA (4096).
#include <hurray.h>

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "../common/table_util.h"

using hurray_test::make;

namespace {

struct Case {
  const char *what;
  hurray_buffer_handle bad;  // what handle i becomes
  const char *rule;          // the rule the refusal must name
  bool ipc_only;             // broken only where the IPC minimum applies
};

// A table of n CUDA handles, all valid under every transport used here, but
// handle `at`, which is `bad`.
std::vector<unsigned char> table(size_t n, size_t at, const hurray_buffer_handle &bad) {
  std::vector<unsigned char> out;
  for (size_t i = 0; i < n; ++i) {
    const hurray_buffer_handle h =
        i == at ? bad : make(4096 * (i + 1), 4096, HURRAY_DEVICE_CUDA);
    unsigned char b[HURRAY_HANDLE_SIZE];
    REQUIRE(hurray_handle_encode(&h, b, sizeof b, nullptr) == HURRAY_OK);
    out.insert(out.end(), b, b + sizeof b);
  }
  return out;
}

void check_every_position(hurray_transport transport, const Case &c) {
  hurray_policy *p = nullptr;
  REQUIRE(hurray_policy_create(&p, nullptr) == HURRAY_OK);
  REQUIRE(hurray_policy_set_transport(p, transport, nullptr) == HURRAY_OK);
  const bool ipc = transport == HURRAY_TRANSPORT_IPC || transport == HURRAY_TRANSPORT_RDMA;
  for (size_t n = 2; n <= 10; ++n) {
    for (size_t at = 1; at < n; ++at) {
      const auto bytes = table(n, at, c.bad);
      hurray_error err{};
      const hurray_status st = hurray_table_validate(bytes.data(), bytes.size(), p, &err);
      INFO(c.what << ": " << n << " handles, broken handle " << at << ", transport "
                  << hurray_transport_name(transport));
      if (c.ipc_only && !ipc) {
        CHECK(st == HURRAY_OK);
        continue;
      }
      CHECK(st != HURRAY_OK);
      CHECK(std::string(err.rule_id) == c.rule);
      CHECK(err.buffer_index == static_cast<int64_t>(at));
    }
  }
  // The same table with every handle valid passes (so the fast path is the
  // one that answers the refusals above, not a path that refuses anything).
  for (size_t n = 2; n <= 10; ++n) {
    const auto bytes = table(n, n, c.bad);
    CHECK(hurray_table_validate(bytes.data(), bytes.size(), p, nullptr) == HURRAY_OK);
  }
  hurray_policy_destroy(p);
}

const Case kCases[] = {
    {"alignment 64 under IPC", make(8192, 64, HURRAY_DEVICE_CUDA), "BP-ALIGN-IPC", true},
    {"alignment 2048 under IPC", make(8192, 2048, HURRAY_DEVICE_CUDA), "BP-ALIGN-IPC", true},
    {"alignment 32", make(8192, 32, HURRAY_DEVICE_CUDA), "BP-ALIGN-MIN", false},
    {"alignment 0", make(8192, 0, HURRAY_DEVICE_CUDA), "BP-ALIGN-POW2", false},
    {"alignment 6144", make(8192, 6144, HURRAY_DEVICE_CUDA), "BP-ALIGN-POW2", false},
    {"reserved byte 1", make(8192, 4096, HURRAY_DEVICE_CUDA, 0, 0, 1), "BP-RESERVED", false},
    {"another device", make(8192, 4096, HURRAY_DEVICE_ROCM), "BP-COLOC", false},
    {"another memory class", make(8192, 4096, HURRAY_DEVICE_CUDA, 0, HURRAY_MEMORY_UNIFIED),
     "BP-COLOC", false},
    {"sync_mode 3", make(8192, 4096, HURRAY_DEVICE_CUDA, 3), "BP-SYNC-VALUE", false},
};

}  // namespace

TEST_CASE("batch validation: every rule of the fast path holds in its vector lanes and its "
          "scalar tail, in process",
          "[validate][batch]") {
  for (const Case &c : kCases) check_every_position(HURRAY_TRANSPORT_IN_PROCESS, c);
}

TEST_CASE("batch validation: the IPC minimum holds in the vector lanes and the scalar tail "
          "(BP-ALIGN-IPC)",
          "[validate][batch]") {
  for (const Case &c : kCases) {
    check_every_position(HURRAY_TRANSPORT_IPC, c);
    check_every_position(HURRAY_TRANSPORT_RDMA, c);
  }
}
