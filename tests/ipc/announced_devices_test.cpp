// hurray_ipc_send sends only what the peer announced in its HELLO
// (BP-PUT-DEVICE), checked on a machine without a GPU: the stand-in plugin
// tests/ipc/fake_gpu_plugin.c serves device tag CUDA from memfds. (The
// Vulkan test of ipc_test.cpp checks the same where a Vulkan device is.)
// This program loads only that plugin: it sets HURRAY_BACKEND_PATH and
// HURRAY_BACKENDS before main, before libhurray loads any backend.
#include <hurray.h>
#include <hurray_ipc.h>

#include <sys/socket.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>
#include "../common/shareable_alloc.h"

#include "../common/ipcfake_env.h"

namespace {

// Two channels of this process over a socket pair, each announcing `tags`
// besides the CPU (HELLO needs both sides at once: one is made on a thread).
void pair(const std::vector<uint8_t> &a_tags, const std::vector<uint8_t> &b_tags,
          hurray_ipc_channel **a, hurray_ipc_channel **b) {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  hurray_ipc_options oa = HURRAY_IPC_OPTIONS_INIT, ob = HURRAY_IPC_OPTIONS_INIT;
  oa.device_count = static_cast<uint32_t>(a_tags.size());
  oa.device_tags = a_tags.empty() ? nullptr : a_tags.data();
  ob.device_count = static_cast<uint32_t>(b_tags.size());
  ob.device_tags = b_tags.empty() ? nullptr : b_tags.data();
  hurray_status sb = HURRAY_E_INTERNAL;
  hurray_error eb{};
  std::thread t([&] { sb = hurray_ipc_channel_from_fd(sv[1], &ob, b, &eb); });
  hurray_error ea{};
  const hurray_status sa = hurray_ipc_channel_from_fd(sv[0], &oa, a, &ea);
  t.join();
  INFO(ea.message << " / " << eb.message);
  REQUIRE(sa == HURRAY_OK);
  REQUIRE(sb == HURRAY_OK);
}

hurray_buffer *fake_gpu_buffer(uint64_t n, unsigned char fill) {
  // CUDA: the stand-in plugin
  hurray_buffer *b = hurray_test::alloc_shareable(n, HURRAY_IPC_ALIGNMENT, HURRAY_DEVICE_CUDA);
  hurray_error err{};
  const std::vector<unsigned char> bytes(n, fill);
  REQUIRE(hurray_buffer_copy_from_host(b, 0, bytes.data(), n, &err) == HURRAY_OK);
  return b;
}

uint64_t sent(hurray_ipc_channel *ch) {
  hurray_ipc_stats s;
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
  return s.sent;
}

}  // namespace

TEST_CASE("a device buffer is not sent to a peer that did not announce its device "
          "(BP-PUT-DEVICE, stand-in plugin)",
          "[ipc][BP-PUT-DEVICE]") {
  REQUIRE(hurray_test::g_ipcfake_env);
  hurray_ipc_channel *x = nullptr, *y = nullptr;
  pair({HURRAY_DEVICE_CUDA}, {}, &x, &y);  // y announces the CPU only
  hurray_ipc_peer_info info;
  info.size = sizeof info;
  REQUIRE(hurray_ipc_peer(x, &info, nullptr) == HURRAY_OK);
  CHECK(info.device_count == 1);
  hurray_buffer *b = fake_gpu_buffer(65536, 0x3C);
  hurray_error err{};
  CHECK(hurray_ipc_send(x, b, nullptr, nullptr, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.rule_id) == "BP-PUT-DEVICE");
  CHECK(sent(x) == 0);
  hurray_handoff h;
  CHECK(hurray_ipc_receive(y, 0, &h, nullptr, &err) == HURRAY_E_IO);  // nothing arrived
  hurray_buffer_unref(b);
  hurray_ipc_close(x);
  hurray_ipc_close(y);
}

TEST_CASE("a device buffer crosses to a peer that announced its device, and lands on it "
          "(stand-in plugin)",
          "[ipc][BP-PUT-DEVICE]") {
  REQUIRE(hurray_test::g_ipcfake_env);
  hurray_ipc_channel *x = nullptr, *y = nullptr;
  pair({HURRAY_DEVICE_CUDA}, {HURRAY_DEVICE_CUDA}, &x, &y);
  hurray_ipc_peer_info info;
  info.size = sizeof info;
  REQUIRE(hurray_ipc_peer(x, &info, nullptr) == HURRAY_OK);
  REQUIRE(info.device_count == 2);
  CHECK(info.devices[1].device_tag == HURRAY_DEVICE_CUDA);
  hurray_buffer *b = fake_gpu_buffer(65536, 0x5D);
  hurray_error err{};
  const hurray_status st = hurray_ipc_send(x, b, nullptr, nullptr, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  CHECK(sent(x) == 1);
  hurray_handoff h;
  REQUIRE(hurray_ipc_receive(y, 10000, &h, nullptr, &err) == HURRAY_OK);
  hurray_buffer_handle got;
  REQUIRE(hurray_handle_decode(h.handle, sizeof h.handle, &got, nullptr) == HURRAY_OK);
  CHECK(got.device_tag == HURRAY_DEVICE_CUDA);
  CHECK(got.byte_size == 65536);
  CHECK(hurray_ipc_release(&h, &err) == HURRAY_OK);
  hurray_buffer_unref(b);
  hurray_ipc_close(x);
  hurray_ipc_close(y);
}
