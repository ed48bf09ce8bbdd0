// libhurray-net over UCX's TCP transport on loopback (CTest sets UCX_TLS=tcp).
// The server runs in this process, polled by the test's thread; clients run
// on a second thread ([net]) or as real processes, the example client and a
// raw peer that skips the client's checks ([process]).
#include <catch2/catch.hpp>

#include <hurray_backend.h>
#include <hurray_net.h>

#include "wire.h"  // the protocol's messages (src/net), for N15's rule

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
  srv.drop(c);
  CHECK(srv.finish() == 0);
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
  srv.drop(c);
  CHECK(srv.finish() == 0);
}

namespace {
void noop_release(hurray_handoff *h) { h->release = nullptr; }
void noop_release_event(hurray_handoff *h) { h->release_event = nullptr; }
}  // namespace

TEST_CASE("BP-SYNC-NET: EVENT and CONSUMER_STREAM handoffs never reach the wire",
          "[net][BP-SYNC-NET]") {
  Server srv;
  alignas(4096) static unsigned char bytes[4096];
  int event = 0;
  auto make = [&](uint8_t sync) {
    hurray_handoff h;
    std::memset(&h, 0, sizeof h);
    h.version = HURRAY_HANDOFF_VERSION;
    hurray_buffer_handle bh = {sizeof bytes, 4096, HURRAY_DEVICE_VULKAN, sync,
                               HURRAY_MEMORY_HOST_PINNED, 0};
    hurray_handle_encode(&bh, h.handle, sizeof h.handle, nullptr);
    h.data = bytes;
    h.sync_object = &event;
    if (sync == HURRAY_SYNC_EVENT) h.release_event = noop_release_event;
    h.release = noop_release;
    return h;
  };
  hurray_handoff ev = make(HURRAY_SYNC_EVENT), stream = make(HURRAY_SYNC_CONSUMER_STREAM);
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
  srv.drop(c);
  CHECK(srv.finish() == 0);
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
  srv.drop(c);
  CHECK(srv.finish() == 0);
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

// ------------------------------------------------------ PUTs in flight --

namespace {
// Fill *err as a library would (the tests' allocators refuse with it).
hurray_status refuse_with(hurray_error *err, hurray_status st, uint32_t rule, const char *msg) {
  std::memset(err, 0, sizeof *err);
  err->status = st;
  err->rule = rule;
  std::snprintf(err->message, sizeof err->message, "%s", msg);
  return st;
}

// An allocator that refuses buffer id 3 with DEVICE_UNAVAILABLE (with its
// own message), id 4 with OUT_OF_MEMORY (without one), returns a buffer of
// the wrong size for id 5, and allocates the others through the backend.
hurray_status picky_alloc(void *user, uint64_t id, const hurray_alloc_desc *desc,
                          hurray_buffer **out, hurray_error *err) {
  ++*static_cast<int *>(user);
  if (id == 3)
    return refuse_with(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                       "BP-PUT-DEVICE: no room left on this device for id 3");
  if (id == 4) return HURRAY_E_OUT_OF_MEMORY;
  hurray_alloc_desc a = *desc;
  if (id == 5) a.byte_size += 4096;
  return hurray_buffer_alloc(nullptr, &a, out, err);
}

// The application's receive pool of one block (the tests' allocators run on
// the thread that polls the server).
struct OneBlock {
  void *block = nullptr;
  uint64_t size = 0;
  bool busy = false;
  int allocs = 0, returns = 0;
};
void one_block_return(void *user, void *) {
  auto *p = static_cast<OneBlock *>(user);
  p->busy = false;
  ++p->returns;
}
hurray_status one_block_alloc(void *user, uint64_t, const hurray_alloc_desc *desc,
                              hurray_buffer **out, hurray_error *err) {
  auto *p = static_cast<OneBlock *>(user);
  ++p->allocs;
  if (p->busy || desc->byte_size != p->size || desc->device_tag != HURRAY_DEVICE_CPU)
    return hurray_buffer_alloc(nullptr, desc, out, err);
  hurray_buffer_desc b = HURRAY_BUFFER_DESC_INIT;
  b.handle = {desc->byte_size, 4096, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
              HURRAY_MEMORY_STANDARD, 0};
  b.data = p->block;
  b.free_fn = one_block_return;
  b.free_user = p;
  const hurray_status st = hurray_buffer_wrap(nullptr, &b, out, err);
  if (st == HURRAY_OK) p->busy = true;
  return st;
}

// A source whose memory is the test's: `freed` tells when the last reference
// (the caller's and every export the client holds) is gone.
struct Tracked {
  std::vector<unsigned char> bytes;
  hurray_buffer *buffer = nullptr;
  bool freed = false;
  explicit Tracked(uint64_t n, uint64_t seed) : bytes(n + 4096) {
    auto *p = aligned();
    for (uint64_t i = 0; i < n; ++i) p[i] = pattern(i, seed);
    hurray_buffer_desc b = HURRAY_BUFFER_DESC_INIT;
    b.handle = {n, 4096, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_STANDARD, 0};
    b.data = p;
    b.free_fn = [](void *user, void *) { static_cast<Tracked *>(user)->freed = true; };
    b.free_user = this;
    REQUIRE(hurray_buffer_wrap(nullptr, &b, &buffer, nullptr) == HURRAY_OK);
  }
  unsigned char *aligned() {
    const auto at = reinterpret_cast<uintptr_t>(bytes.data());
    return bytes.data() + ((4096 - at % 4096) % 4096);
  }
};
}  // namespace

TEST_CASE("a window of PUTs in flight lands byte for byte, each with its own result",
          "[net][window][BP-NET-OWN]") {
  Server srv;
  const std::vector<uint64_t> sizes = {0, 1, 4096, 100000, 1u << 20, 3u << 20, 8u << 20, 65536};
  std::vector<hurray_buffer *> sources;
  for (size_t i = 0; i < sizes.size(); ++i) sources.push_back(cpu_buffer(sizes[i], 10 + i));
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(sources[4], nullptr, &h, nullptr) == HURRAY_OK);
  std::vector<uint64_t> tickets(sizes.size(), 0);
  std::vector<hurray_status> started(sizes.size(), HURRAY_E_INTERNAL),
      results(sizes.size(), HURRAY_E_INTERNAL);
  int32_t done_before = -1, done_after = -1;
  hurray_status test_st = HURRAY_E_INTERNAL;
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    // All started before any is waited for; #4 is a handoff, the rest buffers.
    for (size_t i = 0; i < sizes.size(); ++i) {
      hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 200 + i);
      started[i] = i == 4 ? hurray_net_client_put_start(c, &h, &d, &tickets[i], nullptr)
                          : hurray_net_client_put_buffer_start(c, sources[i], &d, &tickets[i],
                                                               nullptr);
    }
    // The caller's own reference may go at once: the client holds an export.
    hurray_buffer_unref(sources[6]);
    sources[6] = nullptr;
    hurray_net_client_put_test(c, tickets[7], &done_before, nullptr);
    // Tested until done: the result is then waiting for put_wait.
    const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    do {
      test_st = hurray_net_client_put_test(c, tickets[7], &done_after, nullptr);
    } while (test_st == HURRAY_OK && done_after == 0 && std::chrono::steady_clock::now() < limit);
    // Waited for out of order.
    for (size_t k = sizes.size(); k-- > 0;) results[k] = hurray_net_client_put_wait(c, tickets[k], nullptr);
  });
  REQUIRE(c != nullptr);
  for (size_t i = 0; i < sizes.size(); ++i) {
    INFO("PUT " << i);
    CHECK(started[i] == HURRAY_OK);
    CHECK(tickets[i] != 0);
    CHECK(results[i] == HURRAY_OK);
  }
  for (size_t i = 1; i < tickets.size(); ++i) CHECK(tickets[i] != tickets[i - 1]);
  CHECK((done_before == 0 || done_before == 1));
  CHECK(test_st == HURRAY_OK);
  CHECK(done_after == 1);
  REQUIRE(srv.landed.size() == sizes.size());
  for (const hurray_net_received &r : srv.landed) {
    REQUIRE(r.buffer_id >= 200);
    const size_t i = r.buffer_id - 200;
    REQUIRE(i < sizes.size());
    CHECK(r.handle.byte_size == sizes[i]);
    CHECK(same_bytes(r.buffer, sizes[i], 10 + i));
  }
  CHECK(h.release != nullptr);  // the handoff stays the caller's (BP-NET-OWN)
  CHECK(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  for (auto *b : sources) hurray_buffer_unref(b);
  srv.drop(c);
  const hurray_net_stats st = srv.stats();
  CHECK(st.puts_landed == sizes.size());
  CHECK(st.in_flight == 0);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a ticket is waited for once: twice, unknown or 0 is a clear error", "[net][window]") {
  Server srv;
  hurray_buffer *src = cpu_buffer(100000, 1);
  uint64_t t = 0;
  hurray_status first = HURRAY_E_INTERNAL, second = HURRAY_OK, tested = HURRAY_OK,
                unknown = HURRAY_OK, zero = HURRAY_OK, sync = HURRAY_E_INTERNAL;
  hurray_error e2, e3, e4;
  int32_t done = 7;
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
    if (hurray_net_client_put_buffer_start(c, src, &d, &t, nullptr) != HURRAY_OK) return;
    first = hurray_net_client_put_wait(c, t, nullptr);
    second = hurray_net_client_put_wait(c, t, &e2);
    tested = hurray_net_client_put_test(c, t, &done, &e3);
    unknown = hurray_net_client_put_wait(c, t + 1000, &e4);
    zero = hurray_net_client_put_wait(c, 0, nullptr);
    // The synchronous call still works beside (and after) tickets.
    sync = hurray_net_client_put_buffer(c, src, &d, nullptr);
  });
  REQUIRE(c != nullptr);
  CHECK(first == HURRAY_OK);
  CHECK(second == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(e2.message).find("already waited for") != std::string::npos);
  CHECK(std::string(e2.message).find("hurray_net_client_put_wait") != std::string::npos);
  CHECK(tested == HURRAY_E_INVALID_ARGUMENT);
  CHECK(done == 0);
  CHECK(std::string(e3.message).find("not a PUT in flight") != std::string::npos);
  CHECK(unknown == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(e4.message).find("never started") != std::string::npos);
  CHECK(zero == HURRAY_E_INVALID_ARGUMENT);
  CHECK(sync == HURRAY_OK);
  CHECK(srv.stats().puts_landed == 2);
  hurray_buffer_unref(src);
  srv.drop(c);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a failing PUT in a window does not spoil the others, DEVICE_UNAVAILABLE per PUT",
          "[net][window][BP-PUT-DEVICE][BP-SYNC-NET]") {
  int calls = 0;
  Server srv({HURRAY_DEVICE_CPU}, HURRAY_TRANSPORT_CROSS_MACHINE, picky_alloc, &calls);
  const uint64_t n = 1u << 20;
  hurray_buffer *src = cpu_buffer(n, 3);
  // An EVENT handoff: refused before anything is sent (BP-SYNC-NET).
  alignas(4096) static unsigned char bytes[4096];
  int event = 0;
  hurray_handoff ev;
  std::memset(&ev, 0, sizeof ev);
  ev.version = HURRAY_HANDOFF_VERSION;
  hurray_buffer_handle bh = {sizeof bytes, 4096, HURRAY_DEVICE_VULKAN, HURRAY_SYNC_EVENT,
                             HURRAY_MEMORY_HOST_PINNED, 0};
  hurray_handle_encode(&bh, ev.handle, sizeof ev.handle, nullptr);
  ev.data = bytes;
  ev.sync_object = &event;
  ev.release_event = noop_release_event;
  ev.release = noop_release;

  const int kPuts = 8;  // ids 0..7; 3, 4 and 5 fail on the server
  std::vector<uint64_t> tickets(kPuts, 0);
  std::vector<hurray_status> results(kPuts, HURRAY_E_INTERNAL);
  std::vector<hurray_error> errors(kPuts);
  hurray_status s_vk = HURRAY_OK, s_ev = HURRAY_OK;
  uint64_t t_vk = 99, t_ev = 99;
  hurray_error e_vk, e_ev;
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    for (int i = 0; i < kPuts; ++i) {
      hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, i);
      if (hurray_net_client_put_buffer_start(c, src, &d, &tickets[i], nullptr) != HURRAY_OK)
        return;
      if (i == 2) {  // refused by the client in the middle of the window
        hurray_net_transfer_desc vk = to(HURRAY_DEVICE_VULKAN);
        s_vk = hurray_net_client_put_buffer_start(c, src, &vk, &t_vk, &e_vk);
        hurray_net_transfer_desc cpu = to(HURRAY_DEVICE_CPU);
        s_ev = hurray_net_client_put_start(c, &ev, &cpu, &t_ev, &e_ev);
      }
    }
    for (int i = 0; i < kPuts; ++i) results[i] = hurray_net_client_put_wait(c, tickets[i], &errors[i]);
  });
  REQUIRE(c != nullptr);
  // Refused before anything was sent: no ticket.
  CHECK(s_vk == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(e_vk.rule_id) == "BP-PUT-DEVICE");
  CHECK(t_vk == 0);
  CHECK(s_ev == HURRAY_E_SYNC);
  CHECK(std::string(e_ev.rule_id) == "BP-SYNC-NET");
  CHECK(t_ev == 0);
  CHECK(ev.release != nullptr);
  // Each PUT its own answer.
  for (int i = 0; i < kPuts; ++i) {
    INFO("PUT " << i << ": " << errors[i].message);
    if (i == 3) {
      CHECK(results[i] == HURRAY_E_DEVICE_UNAVAILABLE);
      CHECK(std::string(errors[i].rule_id) == "BP-PUT-DEVICE");
      CHECK(std::string(errors[i].message).find("no room left") != std::string::npos);
    } else if (i == 4) {
      CHECK(results[i] == HURRAY_E_OUT_OF_MEMORY);
      CHECK(std::string(errors[i].message).find("allocator refused") != std::string::npos);
    } else if (i == 5) {
      CHECK(results[i] == HURRAY_E_INTERNAL);
      CHECK(std::string(errors[i].message).find("were declared") != std::string::npos);
    } else {
      CHECK(results[i] == HURRAY_OK);
    }
  }
  CHECK(calls == kPuts);
  REQUIRE(srv.landed.size() == 5);
  for (const hurray_net_received &r : srv.landed) {
    CHECK(r.buffer_id != 3);
    CHECK(r.buffer_id != 4);
    CHECK(r.buffer_id != 5);
    CHECK(same_bytes(r.buffer, n, 3));
  }
  const hurray_net_stats st = srv.stats();
  CHECK(st.puts_refused == 3);
  CHECK(st.puts_landed == 5);
  CHECK(st.live_buffers == 0);
  hurray_buffer_unref(src);
  srv.drop(c);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a server's allocator: PUTs land in memory the application owns and recycles",
          "[net][alloc][BP-NET-OWN]") {
  const uint64_t n = 2u << 20;
  std::vector<unsigned char> backing(n + 4096);
  OneBlock pool;
  pool.block = backing.data() + ((4096 - reinterpret_cast<uintptr_t>(backing.data()) % 4096) % 4096);
  pool.size = n;
  Server srv({}, HURRAY_TRANSPORT_CROSS_MACHINE, one_block_alloc, &pool);
  hurray_buffer *a = cpu_buffer(n, 21), *b = cpu_buffer(n, 22);
  hurray_status s1 = HURRAY_E_INTERNAL, s2 = HURRAY_E_INTERNAL;
  hurray_net_client *c = nullptr;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 1);
    s1 = hurray_net_client_put_buffer(c, a, &d, nullptr);
  });
  REQUIRE(c != nullptr);
  CHECK(s1 == HURRAY_OK);
  REQUIRE(srv.landed.size() == 1);
  CHECK(hurray_buffer_data(srv.landed[0].buffer) == pool.block);  // the application's memory
  CHECK(srv.landed[0].handle.device_tag == HURRAY_DEVICE_CPU);
  CHECK(srv.landed[0].handle.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED);
  CHECK(same_bytes(srv.landed[0].buffer, n, 21));
  CHECK(pool.busy);
  // The application is done with it: the block goes back and takes the next PUT.
  hurray_buffer_unref(srv.landed[0].buffer);
  srv.landed.clear();
  CHECK(pool.returns == 1);
  with_client(srv, [&] {
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 2);
    s2 = hurray_net_client_put_buffer(c, b, &d, nullptr);
  });
  CHECK(s2 == HURRAY_OK);
  REQUIRE(srv.landed.size() == 1);
  CHECK(hurray_buffer_data(srv.landed[0].buffer) == pool.block);
  CHECK(same_bytes(srv.landed[0].buffer, n, 22));
  CHECK(pool.allocs == 2);
  hurray_buffer_unref(a);
  hurray_buffer_unref(b);
  srv.drop(c);
  CHECK(srv.finish() == 0);
  CHECK(pool.returns == 2);
  CHECK(!pool.busy);

  // A configuration shorter than the first published one (here: one that
  // ends at `context`) is refused, never read as an older layout.
  hurray_net_server_config old = HURRAY_NET_SERVER_CONFIG_INIT;
  old.size = static_cast<uint32_t>(offsetof(hurray_net_server_config, alloc));
  old.address = "127.0.0.1";
  hurray_net_server *s = nullptr;
  CHECK(hurray_net_server_create(&old, &s, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(s == nullptr);
}

TEST_CASE("destroying a client with PUTs in flight releases what they hold", "[net][window]") {
  Server srv;
  Tracked src(64u << 20, 5);
  hurray_net_client *c = nullptr;
  int started = 0;
  with_client(srv, [&] {
    c = connect(srv.port(), nullptr);
    if (!c) return;
    for (int i = 0; i < 4; ++i) {
      hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, i);
      uint64_t t = 0;
      if (hurray_net_client_put_buffer_start(c, src.buffer, &d, &t, nullptr) == HURRAY_OK)
        ++started;
    }
    hurray_net_client_destroy(c);  // none waited for
  });
  REQUIRE(c != nullptr);
  CHECK(started == 4);
  hurray_buffer_unref(src.buffer);
  CHECK(src.freed);  // the client's exports are all released
  serve_until(srv, [](const hurray_net_stats &s) {
    return s.in_flight == 0 && s.disconnections == s.connections;
  }, "the abandoned PUTs are settled");
  const hurray_net_stats st = srv.stats();
  // Each landed, was dropped, or never left the client.
  CHECK(st.puts_landed + st.transfers_failed <= 4);
  CHECK(st.live_buffers == 0);
  CHECK(srv.finish() == 0);
}

// ============================================================ [process] --

TEST_CASE("faults from real processes are refused with their rule, the server keeps serving",
          "[process]") {
  Server srv({HURRAY_DEVICE_CPU, HURRAY_DEVICE_VULKAN, HURRAY_DEVICE_OPENCL});
  struct Fault {
    const char *mode, *status, *rule, *says;
  };
  const Fault faults[] = {
      {"event", "HURRAY_E_SYNC", "rule=BP-SYNC-NET", "BP-SYNC-NET"},
      {"truncated", "HURRAY_E_PROTOCOL", "rule= ", "truncated transfer"},
      {"nodevice", "HURRAY_E_DEVICE_UNAVAILABLE", "rule=BP-PUT-DEVICE", "never placed elsewhere"},
      {"badheader", "HURRAY_E_PROTOCOL", "rule= ", "malformed PUT header"},
  };
  uint64_t refused = 0;
  for (const Fault &f : faults) {
    Child peer({HURRAY_NET_RAW_PEER, f.mode, "127.0.0.1", port_arg(srv)});
    const int rc = serve_until_exit(srv, peer);
    INFO(f.mode << ": " << peer.output);
    CHECK(rc == 0);
    CHECK(peer.output.find(std::string("status=") + f.status) != std::string::npos);
    CHECK(peer.output.find(f.rule) != std::string::npos);
    CHECK(peer.output.find(f.says) != std::string::npos);
    CHECK(srv.stats().puts_refused == ++refused);
    CHECK(srv.stats().live_buffers == 0);
    CHECK(srv.stats().in_flight == 0);
    good_client_is_served(srv);
  }
  CHECK(srv.stats().puts_landed == 4);
  CHECK(srv.finish() == 0);
}

TEST_CASE("an RDMA-policy server refuses a 64-byte-aligned PUT on the wire (BP-ALIGN-IPC)",
          "[process][BP-ALIGN-IPC]") {
  Server srv({}, HURRAY_TRANSPORT_RDMA);
  Child peer({HURRAY_NET_RAW_PEER, "badalign", "127.0.0.1", port_arg(srv)});
  CHECK(serve_until_exit(srv, peer) == 0);
  INFO(peer.output);
  CHECK(peer.output.find("status=HURRAY_E_ALIGNMENT rule=BP-ALIGN-IPC") != std::string::npos);
  CHECK(srv.stats().puts_refused == 1);
}

namespace {
// Start `args`, wait until the server has a transfer in flight, freeze the
// child (so the transfer cannot finish), then kill it. Retries when the
// transfer finished before the child could be frozen.
void kill_mid_transfer(Server &srv, const std::vector<std::string> &args, bool put) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    const hurray_net_stats before = srv.stats();
    Child c(args);
    bool frozen = false;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    while (!c.exited()) {
      srv.poll(0);
      if (srv.stats().in_flight > 0) {
        c.signal(SIGSTOP);
        frozen = true;
        break;
      }
      if (std::chrono::steady_clock::now() > limit) FAIL("no transfer started: " << c.output);
    }
    INFO(c.output);
    REQUIRE(frozen);
    const hurray_net_stats st = srv.stats();
    const bool finished = put ? st.puts_landed > before.puts_landed
                              : st.gets_served > before.gets_served;
    c.signal(SIGKILL);
    while (!c.exited()) srv.poll(1);
    if (finished) continue;  // too fast to catch: try again
    serve_until(srv, [&](const hurray_net_stats &s) {
      return s.transfers_failed == before.transfers_failed + 1 && s.in_flight == 0;
    }, "the cut-off transfer is dropped");
    serve_until(srv, [&](const hurray_net_stats &s) {
      return s.disconnections == s.connections;
    }, "the killed client's connection is closed");
    CHECK(srv.stats().live_buffers == 0);
    if (put) CHECK(srv.stats().puts_landed == before.puts_landed);
    return;
  }
  FAIL("every transfer finished before the client could be stopped");
}
}  // namespace

TEST_CASE("a client killed mid-PUT: the transfer is dropped, nothing leaks, the next "
          "client is served", "[process]") {
  Server srv;
  kill_mid_transfer(srv, {HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size",
                          std::to_string(512u << 20)},
                    true);
  good_client_is_served(srv);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a client killed mid-GET: the send is dropped, the registration stays, the next "
          "client is served", "[process]") {
  Server srv;
  hurray_buffer *offer = cpu_buffer(512u << 20, 1);
  REQUIRE(hurray_net_server_register(srv.s, 1, offer, nullptr) == HURRAY_OK);
  hurray_buffer_unref(offer);
  kill_mid_transfer(srv, {HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size", "0",
                          "--get", "1"},
                    false);
  good_client_is_served(srv);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a server killed mid-PUT: the client gets a clear I/O error", "[process]") {
  Child server({HURRAY_NET_EXAMPLE_SERVER, "--address", "127.0.0.1", "--port", "0"});
  hurray_net_client *c = connect_then_stop(server);  // the server stops reading mid-way ...
  hurray_error err;
  hurray_buffer *src = cpu_buffer(256u << 20, 2);
  std::atomic<bool> done{false};
  hurray_status s = HURRAY_OK;
  std::thread t([&] {
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
    s = hurray_net_client_put_buffer(c, src, &d, &err);
    done = true;
  });
  usleep(100000);  // not an assertion: lets the PUT start before the kill
  server.signal(SIGKILL);  // ... and dies
  t.join();
  CHECK(done);
  CHECK(s == HURRAY_E_IO);
  INFO(err.message);
  CHECK(std::string(err.message).find("hurray-net") != std::string::npos);
  // The client stays usable only to be destroyed: every call says the connection is lost.
  hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
  CHECK(hurray_net_client_put_buffer(c, src, &d, &err) == HURRAY_E_IO);
  CHECK(std::string(err.message).find("connection is lost") != std::string::npos);
  hurray_net_client_destroy(c);
  hurray_buffer_unref(src);
}

TEST_CASE("a client killed with PUTs in flight: each is dropped, nothing leaks, the next "
          "client is served", "[process][window]") {
  Server srv;
  bool caught = false;
  for (int attempt = 0; attempt < 5 && !caught; ++attempt) {
    const hurray_net_stats before = srv.stats();
    Child c({HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size",
             std::to_string(64u << 20), "--count", "8", "--window", "4"});
    const auto limit = std::chrono::steady_clock::now() + std::chrono::minutes(2);
    bool frozen = false;
    while (!c.exited()) {
      srv.poll(0);
      if (srv.stats().in_flight >= 2) {  // two or more PUTs of it moving at once
        c.signal(SIGSTOP);
        frozen = true;
        break;
      }
      if (std::chrono::steady_clock::now() > limit) FAIL("no PUTs in flight: " << c.output);
    }
    INFO(c.output);
    c.signal(SIGKILL);
    while (!c.exited()) srv.poll(1);
    if (!frozen) continue;  // finished before it could be caught: try again
    serve_until(srv, [&](const hurray_net_stats &s) {
      return s.in_flight == 0 && s.disconnections == s.connections;
    }, "the cut-off PUTs are dropped and the connection closed");
    const hurray_net_stats st = srv.stats();
    // Some PUTs may have landed before the kill; the others were dropped.
    CHECK(st.transfers_failed >= before.transfers_failed + 1);
    CHECK(st.puts_landed < before.puts_landed + 8);
    CHECK(st.live_buffers == 0);
    caught = true;
  }
  REQUIRE(caught);
  for (auto &r : srv.landed) hurray_buffer_unref(r.buffer);
  srv.landed.clear();
  good_client_is_served(srv);
  CHECK(srv.finish() == 0);
}

TEST_CASE("a window of PUTs from a client process lands whole", "[process][window]") {
  Server srv;
  Child c({HURRAY_NET_EXAMPLE_CLIENT, "127.0.0.1", port_arg(srv), "--size", "300000", "--count",
           "10", "--window", "4", "--id", "500"});
  const int rc = serve_until_exit(srv, c);
  INFO(c.output);
  CHECK(rc == 0);
  REQUIRE(srv.landed.size() == 10);
  for (size_t i = 0; i < srv.landed.size(); ++i) {
    CHECK(srv.landed[i].buffer_id == 500 + i);
    const auto *p = static_cast<const unsigned char *>(hurray_buffer_data(srv.landed[i].buffer));
    bool same = true;
    for (uint64_t k = 0; k < 300000; ++k) same = same && p[k] == k % 251;
    CHECK(same);
  }
  CHECK(srv.finish() == 0);
}

TEST_CASE("a window's answers come together, each PUT's exactly once (N15)",
          "[process][window]") {
  Server srv;
  struct Case {
    const char *hint;
    bool acks;
  };
  // HINT 0 is a client from before the field: one PUT_REP per PUT. HINT 8:
  // the 8 PUTs are under way at once, so their answers go out as PUT_ACKs
  // that carry at least 4 ids (half the window) each, or what landed in the
  // server's round, not one message each.
  for (const Case k : {Case{"0", false}, Case{"8", true}}) {
    const size_t before = srv.landed.size();
    Child peer({HURRAY_NET_RAW_PEER, "window", "127.0.0.1", port_arg(srv), "8", k.hint});
    const int rc = serve_until_exit(srv, peer);
    INFO("HINT " << k.hint << ": " << peer.output);
    CHECK(rc == 0);
    CHECK(peer.output.find("answered=8 twice=0 unknown=0 failed=0") != std::string::npos);
    CHECK(srv.landed.size() == before + 8);
    int put_rep = -1, put_ack = -1;
    const size_t at = peer.output.find("answers ");
    REQUIRE(at != std::string::npos);
    REQUIRE(std::sscanf(peer.output.c_str() + at, "answers put_rep=%d put_ack=%d", &put_rep,
                        &put_ack) == 2);
    if (k.acks) {
      CHECK(put_rep == 0);
      CHECK(put_ack >= 1);
      CHECK(put_ack < 8);  // together, not one each
    } else {
      CHECK(put_rep == 8);
      CHECK(put_ack == 0);
    }
  }
  CHECK(srv.stats().puts_landed == 16);
  CHECK(srv.finish() == 0);
}

TEST_CASE("ack_now: a landed PUT's answer waits only for a small PUT under way (N15)",
          "[net][window]") {
  using hurray::net::ack_now;
  CHECK_FALSE(ack_now(0, 8, 3, 0));  // nothing waits
  // A client without the field (0) or with one PUT in flight: at once.
  CHECK(ack_now(1, 0, 5, 0));
  CHECK(ack_now(1, 1, 5, 0));
  CHECK(ack_now(1, 2, 5, 0));
  // A window of 8: up to 3 wait while small PUTs are under way; 4 go.
  CHECK_FALSE(ack_now(1, 8, 5, 0));
  CHECK_FALSE(ack_now(3, 8, 1, 0));
  CHECK(ack_now(4, 8, 1, 0));
  // Nothing small under way (no later landing would send them), or a large
  // PUT under way (it would make them wait long): at once.
  CHECK(ack_now(1, 8, 0, 0));
  CHECK(ack_now(1, 8, 2, 1));
  // Half the window, but never more than one PUT_ACK holds.
  CHECK_FALSE(ack_now(hurray::net::kMaxAckIds - 1, 1000000, 1, 0));
  CHECK(ack_now(hurray::net::kMaxAckIds, 1000000, 1, 0));
}

TEST_CASE("a server killed with PUTs in flight: each gets a clear I/O error", "[process][window]") {
  Child server({HURRAY_NET_EXAMPLE_SERVER, "--address", "127.0.0.1", "--port", "0"});
  hurray_net_client *c = connect_then_stop(server);  // the server stops reading ...
  hurray_error err;
  Tracked src(64u << 20, 2);
  std::vector<uint64_t> tickets;
  for (int i = 0; i < 4; ++i) {
    hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, i);
    uint64_t t = 0;
    REQUIRE(hurray_net_client_put_buffer_start(c, src.buffer, &d, &t, &err) == HURRAY_OK);
    tickets.push_back(t);
  }
  int32_t done = 1;
  CHECK(hurray_net_client_put_test(c, tickets[0], &done, nullptr) == HURRAY_OK);
  CHECK(done == 0);
  server.signal(SIGKILL);  // ... and dies with four PUTs in flight
  for (uint64_t t : tickets) {
    hurray_error e;
    CHECK(hurray_net_client_put_wait(c, t, &e) == HURRAY_E_IO);
    INFO(e.message);
    CHECK(std::string(e.message).find("hurray-net") != std::string::npos);
  }
  hurray_net_transfer_desc d = to(HURRAY_DEVICE_CPU);
  uint64_t t = 5;
  CHECK(hurray_net_client_put_buffer_start(c, src.buffer, &d, &t, &err) == HURRAY_E_IO);
  CHECK(t == 0);
  CHECK(std::string(err.message).find("connection is lost") != std::string::npos);
  hurray_net_client_destroy(c);
  hurray_buffer_unref(src.buffer);
  CHECK(src.freed);  // every export the PUTs held is released
}
