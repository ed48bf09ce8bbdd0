// hurray_policy: creation, defaults, setters and their argument checks.
#include <catch2/catch.hpp>

#include "../common/table_util.h"

using namespace hurray_test;

TEST_CASE("policy: create, destroy, NULL handling", "[policy]") {
  hurray_policy *p = nullptr;
  REQUIRE(hurray_policy_create(&p, nullptr) == HURRAY_OK);
  REQUIRE(p != nullptr);
  hurray_policy_destroy(p);
  hurray_policy_destroy(nullptr);  // no-op
  hurray_error err;
  CHECK(hurray_policy_create(nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_policy_set_transport(nullptr, HURRAY_TRANSPORT_IPC, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_policy_allow_private_tag(nullptr, 0xF0, 1, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_policy_set_ipc_sync(nullptr, 1, 0, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_policy_set_warnings_as_errors(nullptr, 1, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("policy: a new policy behaves exactly as NULL", "[policy]") {
  PolicyPtr fresh;
  const Bytes samples[] = {
      encode({make(4096, 64, HURRAY_DEVICE_CPU)}),
      encode({make(4096, 256, HURRAY_DEVICE_CUDA, HURRAY_SYNC_EVENT)}),
      encode({make(4096, 64, 0xF2)}),
      encode({make(4096, 64, HURRAY_DEVICE_HEXAGON)}),
  };
  for (const auto &b : samples) {
    const Report a = check(b, nullptr), c = check(b, fresh);
    CHECK(a.status == c.status);
    CHECK(a.error_ids() == c.error_ids());
    CHECK(a.warning_ids() == c.warning_ids());
  }
}

TEST_CASE("policy: setters refuse values they do not know", "[policy]") {
  PolicyPtr p;
  hurray_error err;
  CHECK(hurray_policy_set_transport(p, static_cast<hurray_transport>(7), &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("transport") != std::string::npos);
  // only private tags can be agreed
  for (int tag : {0x00, 0x01, 0x09, 0xEF, 0xFF}) {
    CHECK(hurray_policy_allow_private_tag(p, uint8_t(tag), 1, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(std::string(err.rule_id) == "BP-DEV-PRIVATE");
  }
  CHECK(hurray_policy_set_ipc_sync(p, HURRAY_DEVICE_CUDA, 0x4, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_policy_set_ipc_sync(p, 0x30, HURRAY_IPC_SYNC_EVENTS, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_policy_set_ipc_sync(p, HURRAY_DEVICE_CPU, HURRAY_IPC_SYNC_EVENTS, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.rule_id) == "BP-SYNC-CPU");
  CHECK(hurray_policy_set_ipc_sync(p, HURRAY_DEVICE_CPU, 0, &err) == HURRAY_OK);
  // a private tag's capabilities can be declared
  CHECK(hurray_policy_set_ipc_sync(p, 0xF4, HURRAY_IPC_SYNC_EVENTS, &err) == HURRAY_OK);
}

TEST_CASE("policy: private-tag IPC capabilities apply once the tag is agreed", "[policy][BP-SYNC-IPC]") {
  PolicyPtr p(HURRAY_TRANSPORT_IPC);
  hurray_policy_allow_private_tag(p, 0xF4, 1, nullptr);
  const auto h = make(4096, 4096, 0xF4, HURRAY_SYNC_EVENT);
  CHECK(check(h, p).error_ids() == std::vector<std::string>{"BP-SYNC-IPC"});
  hurray_policy_set_ipc_sync(p, 0xF4, HURRAY_IPC_SYNC_EVENTS, nullptr);
  CHECK(check(h, p).status == HURRAY_OK);
}
