// A PUT lands on exactly the device its descriptor declares (BP-PUT-DEVICE),
// checked on a machine without a GPU: the stand-in plugin of the IPC tests
// (tests/ipc/fake_gpu_plugin.c) serves device tag CUDA from memfds. (The
// Vulkan and OpenCL cases of net_test.cpp check the same where those
// devices are.) The program loads only that plugin: it sets
// HURRAY_BACKEND_PATH and HURRAY_BACKENDS before main, before libhurray
// loads any backend. Server in this process, client on a second thread.
#include <catch2/catch.hpp>

#include <hurray.h>
#include <hurray_net.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "../common/ipcfake_env.h"

namespace {

unsigned char pattern(uint64_t i) { return static_cast<unsigned char>((i * 131 + 17) % 251); }

}  // namespace

TEST_CASE("a PUT declared for a device lands on that device, not on the CPU "
          "(BP-PUT-DEVICE, stand-in plugin)",
          "[net][BP-PUT-DEVICE]") {
  REQUIRE(hurray_test::g_ipcfake_env);
  hurray_error err{};
  hurray_context *ctx = nullptr;
  REQUIRE(hurray_context_create(&ctx, nullptr) == HURRAY_OK);
  const uint8_t devices[] = {HURRAY_DEVICE_CPU, HURRAY_DEVICE_CUDA};
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  cfg.address = "127.0.0.1";
  cfg.transport = HURRAY_TRANSPORT_CROSS_MACHINE;
  cfg.context = ctx;
  cfg.devices = devices;
  cfg.n_devices = 2;
  hurray_net_server *srv = nullptr;
  {
    const hurray_status st = hurray_net_server_create(&cfg, &srv, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
  }

  const uint64_t n = 1u << 20;
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = n;
  a.alignment = 4096;
  hurray_buffer *src = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &a, &src, nullptr) == HURRAY_OK);
  auto *p = static_cast<unsigned char *>(hurray_buffer_data(src));
  for (uint64_t i = 0; i < n; ++i) p[i] = pattern(i);

  // The client on a thread, this thread polling the server (bounded).
  std::atomic<bool> done{false};
  hurray_status put_st = HURRAY_E_INTERNAL;
  hurray_error put_err{};
  const uint16_t port = hurray_net_server_port(srv);
  std::thread client([&] {
    hurray_net_client_config cc = HURRAY_NET_CLIENT_CONFIG_INIT;
    cc.address = "127.0.0.1";
    cc.port = port;
    cc.transport = HURRAY_TRANSPORT_CROSS_MACHINE;
    cc.timeout_ms = 30000;
    hurray_net_client *c = nullptr;
    put_st = hurray_net_client_connect(&cc, &c, &put_err);
    if (put_st == HURRAY_OK) {
      hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
      d.buffer_id = 7;
      d.device_tag = HURRAY_DEVICE_CUDA;
      d.memory_class = HURRAY_MEMORY_STANDARD;
      put_st = hurray_net_client_put_buffer(c, src, &d, &put_err);
      hurray_net_client_destroy(c);
    }
    done = true;
  });
  std::vector<hurray_net_received> landed;
  for (int polls = 0; polls < 6000 && (!done || polls == 0); ++polls) {
    hurray_net_received got;
    got.size = sizeof got;
    REQUIRE(hurray_net_server_poll(srv, 5, &got, &err) == HURRAY_OK);
    if (got.buffer) landed.push_back(got);
  }
  client.join();
  for (int i = 0; i < 10; ++i) {  // anything still queued
    hurray_net_received got;
    got.size = sizeof got;
    if (hurray_net_server_poll(srv, 0, &got, nullptr) != HURRAY_OK || !got.buffer) break;
    landed.push_back(got);
  }

  INFO(put_err.message);
  REQUIRE(put_st == HURRAY_OK);
  REQUIRE(landed.size() == 1);
  const hurray_net_received &r = landed[0];
  CHECK(r.buffer_id == 7);
  CHECK(r.handle.device_tag == HURRAY_DEVICE_CUDA);  // exactly the declared device
  CHECK(r.handle.memory_class == HURRAY_MEMORY_STANDARD);
  hurray_buffer_handle bh;
  REQUIRE(hurray_buffer_get_handle(r.buffer, &bh, nullptr) == HURRAY_OK);
  CHECK(bh.device_tag == HURRAY_DEVICE_CUDA);  // the buffer itself, not only the report
  std::vector<unsigned char> back(n);
  REQUIRE(hurray_buffer_copy_to_host(r.buffer, 0, back.data(), n, &err) == HURRAY_OK);
  bool same = true;
  for (uint64_t i = 0; i < n && same; ++i) same = back[i] == pattern(i);
  CHECK(same);

  for (auto &x : landed) hurray_buffer_unref(x.buffer);
  hurray_buffer_unref(src);
  hurray_net_server_destroy(srv);
  hurray_context_destroy(ctx);
}
