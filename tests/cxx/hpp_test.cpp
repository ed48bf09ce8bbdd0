// include/hurray.hpp, the header-only C++17 layer: ownership (each release
// and free exactly once, also on exceptions and moves), errors carrying
// status, rule and message, the non-throwing overloads, host spans, and the
// IPC wrappers between two channels of one socketpair.
#include <hurray.hpp>

#include <catch2/catch.hpp>

#include "hpp_test_util.h"

#include <sys/socket.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using hpp_test::free_count;

// 256 bytes of CPU memory (0x5A), 64-aligned, freed through count_free.
hurray::buffer wrapped(free_count &frees) {
  return hpp_test::wrapped_256(frees, [](void *mem) { std::memset(mem, 0x5A, 256); });
}

}  // namespace

TEST_CASE("an error carries the status, the rule ID and the message", "[hpp]") {
  unsigned char bytes[15] = {};
  try {
    (void)hurray::decode(bytes, sizeof bytes);
    FAIL("decode of 15 bytes did not throw");
  } catch (const hurray::error &e) {
    CHECK(e.status() == HURRAY_E_SIZE);
    CHECK(std::string(e.rule_id()) == "BP-SIZE");
    CHECK(std::string(e.what()).find("BP-SIZE") != std::string::npos);
  }
  // The non-throwing overload returns the status and fills the error.
  hurray_buffer_handle h{};
  hurray_error err = hurray::no_error();
  CHECK(hurray::decode(std::nothrow, bytes, sizeof bytes, h, &err) == HURRAY_E_SIZE);
  CHECK(std::string(err.rule_id) == "BP-SIZE");
}

TEST_CASE("a policy agrees a private tag, validation throws before", "[hpp]") {
  hurray_buffer_handle h{};
  h.byte_size = 64;
  h.alignment = 64;
  h.device_tag = 0xF3;
  auto p = hurray::policy::create();
  try {
    p.validate(h);
    FAIL("a private tag not agreed was accepted");
  } catch (const hurray::error &e) {
    CHECK(e.status() == HURRAY_E_DEVICE_TAG);
    CHECK(std::string(e.rule_id()) == "BP-DEV-PRIVATE");
  }
  p.allow_private_tag(0xF3);
  CHECK_NOTHROW(p.validate(h));
  CHECK(p.validate(std::nothrow, h) == HURRAY_OK);
}

TEST_CASE("a handoff releases exactly once, the memory is freed once", "[hpp]") {
  free_count frees;
  {
    hurray::buffer b = wrapped(frees);
    hurray::handoff a = b.export_handoff();
    REQUIRE(a.live());
    CHECK(a.bytes().size() == 256);
    CHECK(a.bytes()[255] == std::byte{0x5A});
    CHECK(a.release() == HURRAY_OK);
    CHECK_FALSE(a.live());
    CHECK(a.release() == HURRAY_E_ALREADY_RELEASED);
    CHECK(a.bytes().empty());
    hurray::handoff c = b.export_handoff();  // released by its destructor
    hurray::handoff moved = std::move(c);
    CHECK_FALSE(c.live());  // NOLINT(bugprone-use-after-move): moved-from is empty
    CHECK(moved.live());
    CHECK(frees.n == 0);
  }
  CHECK(frees.n == 1);
}

TEST_CASE("a handoff that leaves a scope by an exception is released", "[hpp]") {
  free_count frees;
  auto ctx = hurray::context::create();
  ctx.set_guard(true);
  {
    hurray::buffer b = wrapped(frees);
    try {
      hurray::handoff h = b.export_handoff();
      throw std::runtime_error("consumer failed");
    } catch (const std::runtime_error &) {
    }
  }
  CHECK(frees.n == 1);
  CHECK(ctx.guard_count() == 0);
}

TEST_CASE("into_raw gives the struct away and adopt takes it back", "[hpp]") {
  free_count frees;
  hurray::buffer b = wrapped(frees);
  hurray_handoff raw = b.export_handoff().into_raw();
  REQUIRE(raw.release != nullptr);
  b = hurray::buffer();
  CHECK(frees.n == 0);  // the raw handoff keeps the memory alive
  {
    hurray::handoff back = hurray::handoff::adopt(raw);
    CHECK(raw.release == nullptr);  // moved in
  }
  CHECK(frees.n == 1);
}

TEST_CASE("buffers allocate, view and fail without throwing on request", "[hpp]") {
  auto b = hurray::buffer::alloc_host(4096, 4096);
  REQUIRE(b.bytes().size() == 4096);
  for (std::size_t i = 0; i < 4096; ++i) b.bytes()[i] = std::byte(i & 0xFF);
  auto v = b.view(128, 64);
  REQUIRE(v.bytes().size() == 64);
  CHECK(v.bytes()[0] == std::byte{128});
  CHECK(v.handle().alignment == 128);

  hurray::buffer out;
  hurray_error err = hurray::no_error();
  CHECK(b.view(std::nothrow, 4000, 200, out, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("BP-VIEW-BOUNDS") != std::string::npos);
  CHECK_FALSE(out);
  try {
    (void)b.view(4000, 200);
    FAIL("an out-of-bounds view did not throw");
  } catch (const hurray::error &e) {
    CHECK(e.status() == HURRAY_E_INVALID_ARGUMENT);
    CHECK(std::string(e.what()).find("BP-VIEW-BOUNDS") != std::string::npos);
  }
}

namespace {

// Two channels of one socketpair (the handshake needs both ends at once).
std::pair<hurray::ipc::channel, hurray::ipc::channel> channel_pair() {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  hurray::ipc::channel b;
  hurray_status sb = HURRAY_E_INTERNAL;
  std::thread t([&] { sb = hurray::ipc::channel::from_fd(std::nothrow, sv[1], b); });
  hurray::ipc::channel a = hurray::ipc::channel::from_fd(sv[0]);
  t.join();
  REQUIRE(sb == HURRAY_OK);
  return {std::move(a), std::move(b)};
}

}  // namespace

TEST_CASE("ipc sends a buffer, the consumer's destructor releases it", "[hpp]") {
  auto [producer, consumer] = channel_pair();
  std::vector<std::uint64_t> released;
  producer.on_release([&](std::uint64_t id, hurray_ipc_release_reason r) {
    CHECK(r == HURRAY_IPC_RELEASED);
    released.push_back(id);
  });
  auto b = hurray::buffer::alloc_host(8192, 4096, true);
  std::memset(b.data(), 0x42, 8192);
  const std::uint64_t id = producer.send(b);
  {
    std::uint64_t got = 0;
    hurray::handoff h = consumer.receive(5000, &got);
    CHECK(got == id);
    h.check(hurray::policy::create().set_transport(HURRAY_TRANSPORT_IPC));
    REQUIRE(h.bytes().size() == 8192);
    CHECK(h.bytes()[8191] == std::byte{0x42});
  }
  for (int i = 0; i < 50 && released.empty(); ++i) (void)producer.progress(100);
  REQUIRE(released.size() == 1);
  CHECK(released[0] == id);
  CHECK(producer.stats().released == 1);
  CHECK(producer.stats().outstanding == 0);
}

TEST_CASE("an exception in the release callback comes back from progress", "[hpp]") {
  auto [producer, consumer] = channel_pair();
  producer.on_release([](std::uint64_t, hurray_ipc_release_reason) {
    throw std::runtime_error("from the callback");
  });
  auto b = hurray::buffer::alloc_host(4096, 4096, true);
  (void)producer.send(b);
  CHECK(consumer.receive(5000).release() == HURRAY_OK);
  bool thrown = false;
  for (int i = 0; i < 50 && !thrown; ++i) {
    try {
      (void)producer.progress(100);
    } catch (const std::runtime_error &e) {
      CHECK(std::string(e.what()) == "from the callback");
      thrown = true;
    }
  }
  CHECK(thrown);
  CHECK(producer.stats().released == 1);
}

TEST_CASE("a receive with nothing sent fails with the status", "[hpp]") {
  auto [producer, consumer] = channel_pair();
  hurray::handoff h;
  CHECK(consumer.receive(std::nothrow, h, 0) == HURRAY_E_IO);
  CHECK_FALSE(h.live());
  CHECK_THROWS_AS(consumer.receive(0), hurray::error);
}

namespace {
std::atomic<int> event_frees{0};
int frees_at_event_free = -1;
free_count *event_owner = nullptr;
void count_event_free(void *, void *) {
  frees_at_event_free = event_owner->n.load();
  event_frees.fetch_add(1);
}
}  // namespace

TEST_CASE("release_after_event hands the event over, freed once after the release", "[hpp]") {
  free_count frees;
  event_owner = &frees;
  event_frees = 0;
  static int event;  // the CPU waits on no event and releases at once
  hurray::buffer b = wrapped(frees);
  hurray::handoff h = b.export_handoff();
  b = hurray::buffer();
  // Refused (no free function): both stay the caller's.
  hurray_error e = hurray::no_error();
  CHECK(h.release_after_event(std::nothrow, hurray::context(), &event, 0, nullptr, nullptr, &e) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(h.live());
  CHECK_THROWS_AS(h.release_after_event(hurray::context(), nullptr, 0, count_event_free, nullptr),
                  hurray::error);
  CHECK(h.live());
  CHECK(event_frees == 0);
  h.release_after_event(hurray::context(), &event, 0, count_event_free, nullptr);
  CHECK_FALSE(h.live());
  CHECK(frees.n == 1);
  CHECK(event_frees == 1);
  CHECK(frees_at_event_free == 1);  // the release ran first
}
