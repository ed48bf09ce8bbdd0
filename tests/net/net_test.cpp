// libhurray-net over UCX's TCP transport on loopback (CTest sets UCX_TLS=tcp):
// the HELLO, PUT and GET between a server polled by the test's thread and a
// client on a second thread ([net]). PUTs in flight: net_window_test.cpp;
// clients and servers as real processes: net_process_test.cpp.
#include <catch2/catch.hpp>

#include <hurray_backend.h>
#include <hurray_net.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "net_support.h"
#include "synced_handoff.h"

using namespace nettest;

// ================================================================ [net] --

TEST_CASE("the HELLO lists exactly the devices the server offers", "[net]") {
  SECTION("every device present") {
    Server srv;
    hurray_error err;
    hurray_net_client *c = nullptr;
    std::vector<hurray_net_device> devs(16);
    size_t n = 0;
    with_client(srv, [&] {
      c = connect(srv.port(), &err);
      if (c) hurray_net_client_peer_devices(c, devs.data(), devs.size(), &n, nullptr);
    });
    INFO(err.message);
    REQUIRE(c != nullptr);
    size_t expected = 0;
    for (unsigned t = 0; t <= HURRAY_DEVICE_OPENCL; ++t) {
      int32_t count = 0;
      if (hurray_device_count(nullptr, static_cast<uint8_t>(t), &count, nullptr) == HURRAY_OK &&
          count > 0)
        ++expected;
    }
    CHECK(n == expected);
    REQUIRE(n >= 1);
    CHECK(devs[0].device_tag == HURRAY_DEVICE_CPU);
    CHECK(devs[0].count == 1);
    CHECK((devs[0].memory_classes & 1u) == 1u);
    srv.drop(c);
  }
  SECTION("restricted to CPU") {
    Server srv({HURRAY_DEVICE_CPU});
    hurray_net_client *c = nullptr;
    size_t n = 99;
    hurray_net_device d;
    with_client(srv, [&] {
      c = connect(srv.port(), nullptr);
      if (c) hurray_net_client_peer_devices(c, &d, 1, &n, nullptr);
    });
    REQUIRE(c != nullptr);
    CHECK(n == 1);
    CHECK(d.device_tag == HURRAY_DEVICE_CPU);
    srv.drop(c);
  }
}

TEST_CASE("PUT of CPU buffers lands byte for byte, the server owns its copy (BP-NET-OWN)",
          "[net][BP-NET-OWN]") {
  Server srv;
  const std::vector<uint64_t> sizes = {0, 1, 4096, 100000, 8u << 20};
  std::vector<hurray_status> results;
  std::vector<hurray_buffer *> sources;
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    for (size_t i = 0; i < sizes.size(); ++i) {
      hurray_buffer *b = cpu_buffer(sizes[i], i);
      sources.push_back(b);
      hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 100 + i);
      results.push_back(hurray_net_client_put_buffer(c, b, &d, nullptr));
    }
  });
  REQUIRE(c != nullptr);
  REQUIRE(results.size() == sizes.size());
  for (auto r : results) CHECK(r == HURRAY_OK);
  REQUIRE(srv.landed.size() == sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    const hurray_net_received &r = srv.landed[i];
    CHECK(r.buffer_id == 100 + i);
    CHECK(r.handle.byte_size == sizes[i]);
    CHECK(r.handle.device_tag == HURRAY_DEVICE_CPU);
    CHECK(r.handle.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED);
    CHECK(r.handle.memory_class == HURRAY_MEMORY_STANDARD);
    CHECK(r.handle.alignment == 4096);
    // The sender keeps its source and may change it: the copy is the server's.
    if (sizes[i] > 0) {
      static_cast<unsigned char *>(hurray_buffer_data(sources[i]))[0] ^= 0xff;
      CHECK(hurray_buffer_data(r.buffer) != hurray_buffer_data(sources[i]));
    }
    CHECK(same_bytes(r.buffer, sizes[i], i));
  }
  // A handoff of the received buffer is the server's to give on.
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(srv.landed[3].buffer, nullptr, &h, nullptr) == HURRAY_OK);
  CHECK(hurray_handoff_check(&h, nullptr, nullptr) == HURRAY_OK);
  CHECK(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  for (auto *b : sources) hurray_buffer_unref(b);
  srv.drop(c);
  const hurray_net_stats st = srv.stats();
  CHECK(st.puts_landed == sizes.size());
  CHECK(st.in_flight == 0);
  CHECK(srv.finish() == 0);
}

TEST_CASE("PUT into Vulkan and OpenCL memory lands there, or is refused where absent",
          "[net][BP-PUT-DEVICE]") {
  Server srv;
  struct Dest {
    uint8_t tag, mc;
  };
  const std::vector<Dest> dests = {
      {HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD}, {HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_HOST_PINNED},
      {HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD}, {HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_HOST_PINNED},
      {HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_UNIFIED}};
  const uint64_t n = 1u << 20;
  std::vector<hurray_status> results;
  std::vector<hurray_error> errors(dests.size());
  hurray_net_client *c = nullptr;
  hurray_buffer *src = cpu_buffer(n, 7);
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    for (size_t i = 0; i < dests.size(); ++i) {
      hurray_net_transfer_desc d = to(dests[i].tag, dests[i].mc, i);
      results.push_back(hurray_net_client_put_buffer(c, src, &d, &errors[i]));
    }
  });
  REQUIRE(c != nullptr);
  REQUIRE(results.size() == dests.size());
  size_t landed = 0;
  for (size_t i = 0; i < dests.size(); ++i) {
    INFO(hurray_device_tag_name(dests[i].tag) << "/" << hurray_memory_class_name(dests[i].mc)
                                              << ": " << errors[i].message);
    if (local_has(dests[i].tag, dests[i].mc)) {
      REQUIRE(results[i] == HURRAY_OK);
      REQUIRE(landed < srv.landed.size());
      const hurray_net_received &r = srv.landed[landed++];
      CHECK(r.buffer_id == i);
      CHECK(r.handle.device_tag == dests[i].tag);  // exactly the declared device
      CHECK(r.handle.memory_class == dests[i].mc);
      CHECK(same_bytes(r.buffer, n, 7));
    } else {
      CHECK(results[i] == HURRAY_E_DEVICE_UNAVAILABLE);
      CHECK(std::string(errors[i].rule_id) == "BP-PUT-DEVICE");
    }
  }
  CHECK(srv.landed.size() == landed);
  hurray_buffer_unref(src);
  CHECK(srv.close(c) == 0);
}

TEST_CASE("a PUT to a device the server lacks is refused before anything is sent",
          "[net][BP-PUT-DEVICE]") {
  Server srv({HURRAY_DEVICE_CPU});
  hurray_net_client *c = nullptr;
  hurray_error e1, e2;
  hurray_status s1 = HURRAY_OK, s2 = HURRAY_OK, s3 = HURRAY_E_INTERNAL;
  hurray_buffer *src = cpu_buffer(4096, 1);
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc vk = to(HURRAY_DEVICE_VULKAN);
    s1 = hurray_net_client_put_buffer(c, src, &vk, &e1);
    hurray_net_transfer_desc second_cpu = to(HURRAY_DEVICE_CPU);
    second_cpu.device_ordinal = 1;
    s2 = hurray_net_client_put_buffer(c, src, &second_cpu, &e2);
    hurray_net_transfer_desc cpu = to(HURRAY_DEVICE_CPU);
    s3 = hurray_net_client_put_buffer(c, src, &cpu, nullptr);
  });
  REQUIRE(c != nullptr);
  CHECK(s1 == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(e1.rule_id) == "BP-PUT-DEVICE");
  CHECK(std::string(e1.message).find("never placed elsewhere") != std::string::npos);
  CHECK(s2 == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(e2.rule_id) == "BP-PUT-DEVICE");
  CHECK(s3 == HURRAY_OK);
  // Nothing of the refused PUTs reached the server.
  CHECK(srv.stats().puts_refused == 0);
  CHECK(srv.stats().puts_landed == 1);
  hurray_buffer_unref(src);
  CHECK(srv.close(c) == 0);
}

TEST_CASE("BP-SYNC-NET: EVENT and CONSUMER_STREAM handoffs never reach the wire",
          "[net][BP-SYNC-NET]") {
  Server srv;
  alignas(4096) static unsigned char bytes[4096];
  int event = 0;
  hurray_handoff ev = synced_handoff(bytes, HURRAY_SYNC_EVENT, &event),
                 stream = synced_handoff(bytes, HURRAY_SYNC_CONSUMER_STREAM, &event);
  hurray_error e1, e2;
  hurray_status s1 = HURRAY_OK, s2 = HURRAY_OK;
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
    s1 = hurray_net_client_put(c, &ev, &d, &e1);
    s2 = hurray_net_client_put(c, &stream, &d, &e2);
  });
  REQUIRE(c != nullptr);
  CHECK(s1 == HURRAY_E_SYNC);
  CHECK(std::string(e1.rule_id) == "BP-SYNC-NET");
  CHECK(s2 == HURRAY_E_SYNC);
  CHECK(std::string(e2.rule_id) == "BP-SYNC-NET");
  CHECK(srv.stats().puts_refused == 0);  // refused before anything was sent
  CHECK(srv.stats().puts_landed == 0);
  CHECK(ev.release != nullptr);          // the handoff stays the caller's
  srv.drop(c);
}

TEST_CASE("a PUT of a handoff: a CPU export goes as it is, device memory needs staging",
          "[net]") {
  Server srv;
  hurray_buffer *src = cpu_buffer(50000, 3);
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(src, nullptr, &h, nullptr) == HURRAY_OK);
  hurray_status s = HURRAY_E_INTERNAL;
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 9);
    s = hurray_net_client_put(c, &h, &d, nullptr);
  });
  REQUIRE(c != nullptr);
  CHECK(s == HURRAY_OK);
  REQUIRE(srv.landed.size() == 1);
  CHECK(same_bytes(srv.landed[0].buffer, 50000, 3));
  CHECK(h.release != nullptr);  // still the caller's (BP-NET-OWN)
  CHECK(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  hurray_buffer_unref(src);

  // Opaque device memory as a handoff: refused with the reason; as a buffer: staged.
  if (local_has(HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD)) {
    hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
    a.byte_size = 70000;
    a.alignment = 4096;
    a.device_tag = HURRAY_DEVICE_OPENCL;
    hurray_buffer *dev = nullptr;
    REQUIRE(hurray_buffer_alloc(nullptr, &a, &dev, nullptr) == HURRAY_OK);
    std::vector<unsigned char> host(70000);
    for (size_t i = 0; i < host.size(); ++i) host[i] = pattern(i, 4);
    REQUIRE(hurray_buffer_copy_from_host(dev, 0, host.data(), host.size(), nullptr) == HURRAY_OK);
    hurray_handoff dh;
    REQUIRE(hurray_buffer_export(dev, nullptr, &dh, nullptr) == HURRAY_OK);
    hurray_status s1 = HURRAY_OK, s2 = HURRAY_E_INTERNAL;
    hurray_error e1;
    with_client(srv, [&] {
      hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 10);
      s1 = hurray_net_client_put(c, &dh, &d, &e1);
      s2 = hurray_net_client_put_buffer(c, dev, &d, nullptr);
    });
    CHECK(s1 == HURRAY_E_UNSUPPORTED);
    CHECK(std::string(e1.message).find("put_buffer") != std::string::npos);
    CHECK(s2 == HURRAY_OK);
    REQUIRE(srv.landed.size() == 2);
    CHECK(same_bytes(srv.landed[1].buffer, 70000, 4));
    hurray_handoff_release(&dh, nullptr);
    hurray_buffer_unref(dev);
  }
  CHECK(srv.close(c) == 0);
}

TEST_CASE("BP-ALIGN-IPC: under the RDMA policy 64-byte alignment is refused and 4096 passes",
          "[net][BP-ALIGN-IPC]") {
  Server srv({}, HURRAY_TRANSPORT_RDMA);
  hurray_buffer *a64 = cpu_buffer(8192, 1, 64);
  hurray_buffer *a4k = cpu_buffer(8192, 2, 4096);
  hurray_status s1 = HURRAY_OK, s2 = HURRAY_E_INTERNAL;
  hurray_error e1;
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr, HURRAY_TRANSPORT_RDMA);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
    s1 = hurray_net_client_put_buffer(c, a64, &d, &e1);
    s2 = hurray_net_client_put_buffer(c, a4k, &d, nullptr);
  });
  REQUIRE(c != nullptr);
  CHECK(s1 == HURRAY_E_ALIGNMENT);
  CHECK(std::string(e1.rule_id) == "BP-ALIGN-IPC");
  CHECK(s2 == HURRAY_OK);
  CHECK(srv.stats().puts_landed == 1);
  hurray_buffer_unref(a64);
  hurray_buffer_unref(a4k);
  srv.drop(c);
  // A transport the network does not use is refused.
  hurray_net_client_config cfg = HURRAY_NET_CLIENT_CONFIG_INIT;
  cfg.address = "127.0.0.1";
  cfg.port = srv.port();
  cfg.transport = HURRAY_TRANSPORT_IPC;
  hurray_net_client *bad = nullptr;
  CHECK(hurray_net_client_connect(&cfg, &bad, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(bad == nullptr);
}

TEST_CASE("GET copies a registered buffer onto the client's declared device", "[net]") {
  Server srv;
  const uint64_t n = 3u << 20;
  hurray_buffer *offer = cpu_buffer(n, 5);
  REQUIRE(hurray_net_server_register(srv.s, 5, offer, nullptr) == HURRAY_OK);
  CHECK(hurray_net_server_register(srv.s, 5, offer, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  hurray_buffer_unref(offer);  // the server holds its own reference
  hurray_buffer *got = nullptr, *got_cl = nullptr, *none = nullptr;
  hurray_status s_ok = HURRAY_E_INTERNAL, s_unknown = HURRAY_OK, s_nodev = HURRAY_OK,
                s_cl = HURRAY_E_INTERNAL;
  hurray_error e_unknown, e_nodev;
  const bool has_cl = local_has(HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD);
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 5);
    s_ok = hurray_net_client_get(c, &d, &got, nullptr);
    hurray_net_transfer_desc u = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 6);
    s_unknown = hurray_net_client_get(c, &u, &none, &e_unknown);
    hurray_net_transfer_desc r = to(HURRAY_DEVICE_ROCM, HURRAY_MEMORY_STANDARD, 5);
    s_nodev = hurray_net_client_get(c, &r, &none, &e_nodev);
    if (has_cl) {
      hurray_net_transfer_desc cl = to(HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD, 5);
      s_cl = hurray_net_client_get(c, &cl, &got_cl, nullptr);
    }
  });
  REQUIRE(c != nullptr);
  REQUIRE(s_ok == HURRAY_OK);
  hurray_buffer_handle h;
  REQUIRE(hurray_buffer_get_handle(got, &h, nullptr) == HURRAY_OK);
  CHECK(h.byte_size == n);
  CHECK(h.device_tag == HURRAY_DEVICE_CPU);
  CHECK(same_bytes(got, n, 5));
  CHECK(s_unknown == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(e_unknown.message).find("no buffer registered") != std::string::npos);
  CHECK(s_nodev == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(e_nodev.rule_id) == "BP-PUT-DEVICE");
  CHECK(none == nullptr);
  if (has_cl) {
    REQUIRE(s_cl == HURRAY_OK);
    REQUIRE(hurray_buffer_get_handle(got_cl, &h, nullptr) == HURRAY_OK);
    CHECK(h.device_tag == HURRAY_DEVICE_OPENCL);
    CHECK(same_bytes(got_cl, n, 5));
  }
  const hurray_net_stats st = srv.stats();
  CHECK(st.gets_served == (has_cl ? 2u : 1u));
  CHECK(st.gets_refused == 1);
  CHECK(hurray_net_server_unregister(srv.s, 5, nullptr) == HURRAY_OK);
  CHECK(hurray_net_server_unregister(srv.s, 5, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  hurray_status s_gone = HURRAY_OK;
  with_client(srv, [&] {
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 5);
    s_gone = hurray_net_client_get(c, &d, &none, nullptr);
  });
  CHECK(s_gone == HURRAY_E_INVALID_ARGUMENT);
  hurray_buffer_unref(got);
  hurray_buffer_unref(got_cl);
  CHECK(srv.close(c) == 0);
}

TEST_CASE("connecting where nobody listens is a clear I/O error", "[net]") {
  uint16_t port = 0;
  {
    Server srv;
    port = srv.port();
  }
  hurray_error err;
  hurray_net_client *c = connect(port, &err, HURRAY_TRANSPORT_CROSS_MACHINE, 10000);
  CHECK(c == nullptr);
  CHECK(err.status == HURRAY_E_IO);
  CHECK(std::string(err.message).find("cannot connect") != std::string::npos);
  hurray_net_client_destroy(c);
}

TEST_CASE("invalid arguments are refused with HURRAY_E_INVALID_ARGUMENT", "[net]") {
  hurray_net_server *s = nullptr;
  CHECK(hurray_net_server_create(nullptr, &s, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  cfg.transport = HURRAY_TRANSPORT_IN_PROCESS;
  hurray_error err;
  CHECK(hurray_net_server_create(&cfg, &s, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("transport") != std::string::npos);
  CHECK(s == nullptr);
  hurray_net_client *c = nullptr;
  hurray_net_client_config cc = HURRAY_NET_CLIENT_CONFIG_INIT;
  CHECK(hurray_net_client_connect(&cc, &c, nullptr) == HURRAY_E_INVALID_ARGUMENT);  // no address
  hurray_net_received r;
  r.size = 0;
  CHECK(hurray_net_server_poll(nullptr, 0, &r, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  hurray_net_server_destroy(nullptr);
  hurray_net_client_destroy(nullptr);
  uint64_t ticket = 7;
  int32_t done = 7;
  hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
  CHECK(hurray_net_client_put_start(nullptr, nullptr, &d, &ticket, nullptr) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(ticket == 0);
  ticket = 7;
  CHECK(hurray_net_client_put_buffer_start(nullptr, nullptr, &d, &ticket, nullptr) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(ticket == 0);
  CHECK(hurray_net_client_put_test(nullptr, 1, &done, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(done == 0);
  CHECK(hurray_net_client_put_wait(nullptr, 1, nullptr) == HURRAY_E_INVALID_ARGUMENT);
}
