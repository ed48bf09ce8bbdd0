// libhurray-net: a window of PUTs in flight on one client (ticket, wait,
// per-PUT results, the server's allocator), over UCX's TCP transport on
// loopback; the server polled by the test's thread, the client on a second
// one ([net][window]).
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
#include "synced_handoff.h"

using namespace nettest;

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
  CHECK(srv.close(c) == 0);
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
  hurray_handoff ev = synced_handoff(bytes, HURRAY_SYNC_EVENT, &event);

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
  CHECK(srv.close(c) == 0);
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
  CHECK(srv.close(c) == 0);
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
