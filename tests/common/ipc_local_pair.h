// Two IPC channels in this process, over a socket pair (HELLO needs both
// sides at once: one is made on a thread). For Catch2 tests.
#pragma once

#include <hurray_ipc.h>

#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <thread>

namespace hurray_test {

inline void local_pair(hurray_ipc_channel **a, hurray_ipc_channel **b) {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  hurray_status sb = HURRAY_E_INTERNAL;
  std::thread t([&] { sb = hurray_ipc_channel_from_fd(sv[1], nullptr, b, nullptr); });
  const hurray_status sa = hurray_ipc_channel_from_fd(sv[0], nullptr, a, nullptr);
  t.join();
  REQUIRE(sa == HURRAY_OK);
  REQUIRE(sb == HURRAY_OK);
}

}  // namespace hurray_test
