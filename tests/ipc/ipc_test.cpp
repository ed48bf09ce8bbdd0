// The IPC channel between real processes: this test program is one side,
// hurray_ipc_test_peer (ipc_peer.cpp), fork+exec'd, the other. Descriptors
// really cross (SCM_RIGHTS), peers are really SIGKILLed.
// Device memory across processes: ipc_device_test.cpp.

#include "ipc_test_support.h"

using namespace ipctest;

TEST_CASE("a buffer crosses to another process without a copy, and comes back") {
  const int memfds = count_memfds();
  Backs backs;
  std::vector<hurray_buffer *> bufs;
  {
    Peer peer("consume", 8);
    REQUIRE(hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr) == HURRAY_OK);
    for (int i = 0; i < 8; ++i) {
      bufs.push_back(shareable(1 << 20, i % 255 + 1));
      uint64_t id = 0;
      hurray_error err{};
      const hurray_status st = hurray_ipc_send(peer.ch, bufs.back(), nullptr, &id, &err);
      INFO(err.message);
      REQUIRE(st == HURRAY_OK);
      CHECK(id == static_cast<uint64_t>(i + 1));
    }
    CHECK(stats_of(peer.ch).outstanding == 8);
    // every release arrives (the peer then exits: the last progress may see EOF)
    progress_until(peer.ch, [&] { return backs.ids.size() == 8; });
    REQUIRE(backs.ids.size() == 8);
    for (auto r : backs.reasons) CHECK(r == HURRAY_IPC_RELEASED);
    const hurray_ipc_stats s = stats_of(peer.ch);
    CHECK(s.sent == 8);
    CHECK(s.released == 8);
    CHECK(s.outstanding == 0);
    CHECK(s.releases_refused == 0);
    CHECK(peer.wait_exit() == 0);
  }
  // The consumer wrote into the last byte of each mapping: same memory.
  for (hurray_buffer *b : bufs) {
    const auto *p = static_cast<const unsigned char *>(hurray_buffer_data(b));
    CHECK(p[(1 << 20) - 1] == 0xAB);
    hurray_buffer_unref(b);
  }
  CHECK(count_memfds() == memfds);
}

TEST_CASE("the producer's reference alone keeps sent memory until the release") {
  const int memfds = count_memfds();
  Peer peer("consume", 3);
  Backs backs;
  hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr);
  for (int i = 0; i < 3; ++i) {
    hurray_buffer *b = shareable(64 << 10, i + 1);
    REQUIRE(hurray_ipc_send(peer.ch, b, nullptr, nullptr, nullptr) == HURRAY_OK);
    hurray_buffer_unref(b);  // only the channel holds it now (BP-REFCOUNT)
  }
  progress_until(peer.ch, [&] { return backs.ids.size() == 3; });
  CHECK(backs.ids.size() == 3);
  CHECK(count_memfds() == memfds);  // freed once every consumer released
  CHECK(peer.wait_exit() == 0);
}

TEST_CASE("the handle is validated under the IPC rules before anything is sent") {
  hurray_ipc_channel *a = nullptr, *b = nullptr;
  local_pair(&a, &b);
  hurray_error err{};
  hurray_handoff h;

  SECTION("BP-ALIGN-IPC: alignment below 4096") {
    hurray_buffer *buf = shareable(4096, 1, 64);
    CHECK(hurray_ipc_send(a, buf, nullptr, nullptr, &err) == HURRAY_E_ALIGNMENT);
    CHECK(std::string(err.rule_id) == "BP-ALIGN-IPC");
    hurray_buffer_unref(buf);
  }
  SECTION("BP-SYNC-CPU: a CPU buffer with an event") {
    hurray_buffer *buf = shareable(4096, 1);
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    e.sync_mode = HURRAY_SYNC_EVENT;
    CHECK(hurray_ipc_send(a, buf, &e, nullptr, &err) == HURRAY_E_SYNC);
    CHECK(std::string(err.rule_id).rfind("BP-SYNC", 0) == 0);
    hurray_buffer_unref(buf);
  }
  SECTION("memory that is not shareable") {
    alignas(4096) static unsigned char mem[8192];
    hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
    d.handle.byte_size = sizeof mem;
    d.handle.alignment = 4096;
    d.data = mem;
    hurray_buffer *buf = nullptr;
    REQUIRE(hurray_buffer_wrap(nullptr, &d, &buf, nullptr) == HURRAY_OK);
    CHECK(hurray_ipc_send(a, buf, nullptr, nullptr, &err) == HURRAY_E_UNSUPPORTED);
    CHECK(std::string(err.message).find("HURRAY_ALLOC_SHAREABLE") != std::string::npos);
    hurray_buffer_unref(buf);
  }
  // nothing reached the other side, and both channels are fine
  CHECK(stats_of(a).sent == 0);
  CHECK(hurray_ipc_receive(b, 0, &h, nullptr, &err) == HURRAY_E_IO);
  CHECK(stats_of(b).closed == 0);
  CHECK(stats_of(b).received == 0);
  hurray_ipc_close(a);
  hurray_ipc_close(b);
}

TEST_CASE("a handoff between two channels of one process, acquire and check included") {
  hurray_ipc_channel *a = nullptr, *b = nullptr;
  local_pair(&a, &b);
  hurray_buffer *buf = shareable(3 * 4096 + 5, 0x42);
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.flags = HURRAY_HANDOFF_READ_ONLY;
  uint64_t sent = 0, got = 0;
  REQUIRE(hurray_ipc_send(a, buf, &e, &sent, nullptr) == HURRAY_OK);
  hurray_handoff h;
  hurray_error err{};
  REQUIRE(hurray_ipc_receive(b, 1000, &h, &got, &err) == HURRAY_OK);
  CHECK(got == sent);
  CHECK(h.flags & HURRAY_HANDOFF_READ_ONLY);
  CHECK(h.data != hurray_buffer_data(buf));  // a second mapping of the same memory
  hurray_policy *ipc = nullptr;
  hurray_policy_create(&ipc, nullptr);
  hurray_policy_set_transport(ipc, HURRAY_TRANSPORT_IPC, nullptr);
  CHECK(hurray_handoff_check(&h, ipc, &err) == HURRAY_OK);
  CHECK(hurray_handoff_acquire(nullptr, &h, nullptr, &err) == HURRAY_OK);
  hurray_policy_destroy(ipc);
  static_cast<unsigned char *>(hurray_buffer_data(buf))[7] = 0x17;  // seen through h
  CHECK(static_cast<const unsigned char *>(h.data)[7] == 0x17);
  CHECK(static_cast<const unsigned char *>(h.data)[3 * 4096 + 4] == 0x42);
  void *const mapped = h.data;
  CHECK(hurray_ipc_release(&h, &err) == HURRAY_OK);
  CHECK(hurray_ipc_release(&h, &err) == HURRAY_E_ALREADY_RELEASED);  // BP-REL-ONCE
  REQUIRE(hurray_ipc_progress(a, 1000, nullptr, nullptr) == HURRAY_OK);
  CHECK(stats_of(a).released == 1);
  CHECK(stats_of(a).releases_refused == 0);
  // the same memory again: the consumer's released mapping is reused
  REQUIRE(hurray_ipc_send(a, buf, &e, &sent, nullptr) == HURRAY_OK);
  REQUIRE(hurray_ipc_receive(b, 1000, &h, &got, &err) == HURRAY_OK);
  CHECK(h.data == mapped);
  CHECK(static_cast<const unsigned char *>(h.data)[7] == 0x17);
  // and another buffer is another mapping, aligned as its handle says
  hurray_buffer *big = shareable(1 << 20, 0x33, 1 << 20);
  hurray_handoff h2;
  REQUIRE(hurray_ipc_send(a, big, nullptr, nullptr, nullptr) == HURRAY_OK);
  REQUIRE(hurray_ipc_receive(b, 1000, &h2, nullptr, &err) == HURRAY_OK);
  CHECK(h2.data != h.data);
  CHECK(reinterpret_cast<uintptr_t>(h2.data) % (1 << 20) == 0);
  CHECK(static_cast<const unsigned char *>(h2.data)[(1 << 20) - 1] == 0x33);
  CHECK(hurray_ipc_release(&h, &err) == HURRAY_OK);
  CHECK(hurray_ipc_release(&h2, &err) == HURRAY_OK);
  hurray_buffer_unref(big);
  while (stats_of(a).released < 3) REQUIRE(hurray_ipc_progress(a, 1000, nullptr, nullptr) == HURRAY_OK);
  hurray_buffer_unref(buf);
  hurray_ipc_close(a);
  hurray_ipc_close(b);
}

TEST_CASE("a SIGKILLed consumer's buffers are reclaimed") {
  const int memfds = count_memfds();
  Peer peer("hold", 4);
  Backs backs;
  hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr);
  for (int i = 0; i < 4; ++i) {
    hurray_buffer *b = shareable(256 << 10, i + 1);
    REQUIRE(hurray_ipc_send(peer.ch, b, nullptr, nullptr, nullptr) == HURRAY_OK);
    hurray_buffer_unref(b);
  }
  REQUIRE(peer.signal_byte() == 'R');  // the consumer maps and holds all four
  CHECK(count_memfds() == memfds + 4);
  peer.sigkill();
  hurray_error err{};
  CHECK(progress_until(peer.ch, [] { return false; }) == HURRAY_E_IO);
  const hurray_ipc_stats s = stats_of(peer.ch);
  CHECK(s.closed == 1);
  CHECK(s.reclaimed == 4);
  CHECK(s.released == 0);
  CHECK(s.outstanding == 0);
  REQUIRE(backs.ids.size() == 4);
  for (auto r : backs.reasons) CHECK(r == HURRAY_IPC_PEER_GONE);
  CHECK(count_memfds() == memfds);  // BP-IPC-RELEASE: freed when the consumer died
  // the channel says so from now on
  hurray_buffer *b = shareable(4096, 1);
  CHECK(hurray_ipc_send(peer.ch, b, nullptr, nullptr, &err) == HURRAY_E_IO);
  hurray_buffer_unref(b);
}

TEST_CASE("a release for a buffer never sent, or a second one, is refused and counted") {
  Peer peer("misbehave", 1);
  Backs backs;
  hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr);
  hurray_buffer *first = shareable(4096, 1);
  REQUIRE(hurray_ipc_send(peer.ch, first, nullptr, nullptr, nullptr) == HURRAY_OK);
  // three release messages arrive: for ID 999999, for 1, and for 1 again
  progress_until(peer.ch, [&] { return stats_of(peer.ch).releases_refused == 2; });
  hurray_ipc_stats s = stats_of(peer.ch);
  CHECK(s.releases_refused == 2);
  CHECK(s.released == 1);
  CHECK(s.closed == 0);
  CHECK(backs.ids == std::vector<uint64_t>{1});
  // the producer's state is intact: the channel still works
  hurray_buffer *second = shareable(8192, 0x5A);
  REQUIRE(hurray_ipc_send(peer.ch, second, nullptr, nullptr, nullptr) == HURRAY_OK);
  progress_until(peer.ch, [&] { return backs.ids.size() == 2; });
  CHECK(backs.ids == std::vector<uint64_t>{1, 2});
  s = stats_of(peer.ch);
  CHECK(s.released == 2);
  CHECK(s.releases_refused == 2);
  CHECK(s.messages_rejected == 0);
  CHECK(peer.wait_exit() == 0);
  hurray_buffer_unref(first);
  hurray_buffer_unref(second);
}

TEST_CASE("a malformed message closes that channel only") {
  Peer bad("garbage", 1);
  Peer good("consume", 2);
  hurray_buffer *b1 = shareable(4096, 1), *b2 = shareable(4096, 2);
  REQUIRE(hurray_ipc_send(bad.ch, b1, nullptr, nullptr, nullptr) == HURRAY_OK);
  hurray_error err{};
  hurray_status st;
  do st = hurray_ipc_progress(bad.ch, 10000, nullptr, &err);
  while (st == HURRAY_OK);
  CHECK(st == HURRAY_E_PROTOCOL);
  CHECK(std::string(err.message).find("bad magic") != std::string::npos);
  hurray_ipc_stats s = stats_of(bad.ch);
  CHECK(s.closed == 1);
  CHECK(s.messages_rejected == 1);
  CHECK(s.reclaimed == 1);
  CHECK(bad.wait_exit() == 0);  // the peer saw the channel close
  // the other channel is untouched
  REQUIRE(hurray_ipc_send(good.ch, b1, nullptr, nullptr, nullptr) == HURRAY_OK);
  REQUIRE(hurray_ipc_send(good.ch, b2, nullptr, nullptr, nullptr) == HURRAY_OK);
  progress_until(good.ch, [&] { return stats_of(good.ch).released == 2; });
  CHECK(stats_of(good.ch).released == 2);
  CHECK(good.wait_exit() == 0);
  hurray_buffer_unref(b1);
  hurray_buffer_unref(b2);
}

TEST_CASE("a producer that dies leaves the consumer's mappings valid and its release fails cleanly") {
  Peer peer("produce", 3);
  REQUIRE(peer.signal_byte() == 'S');
  hurray_handoff h[3];
  for (int i = 0; i < 3; ++i) {
    hurray_error err{};
    const hurray_status st = hurray_ipc_receive(peer.ch, 10000, &h[i], nullptr, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
  }
  peer.sigkill();
  for (int i = 0; i < 3; ++i) {
    const auto *p = static_cast<const unsigned char *>(h[i].data);
    CHECK(p[0] == i + 1);
    CHECK(p[(64 << 10) - 1] == i + 1);
  }
  hurray_error err{};
  CHECK(hurray_ipc_release(&h[0], &err) == HURRAY_E_IO);  // could not tell the producer
  CHECK(h[0].release == nullptr);                         // but released here
  h[1].release(&h[1]);                                    // the plain way works too
  CHECK(hurray_handoff_release(&h[2], &err) == HURRAY_OK);
  CHECK(hurray_ipc_release(&h[2], &err) == HURRAY_E_ALREADY_RELEASED);
  const hurray_ipc_stats s = stats_of(peer.ch);
  CHECK(s.closed == 1);
  CHECK(s.received == 3);
  CHECK(s.releases_failed == 3);
  CHECK(s.releases_sent == 0);
  CHECK(hurray_ipc_receive(peer.ch, 0, &h[0], nullptr, &err) == HURRAY_E_IO);
}

TEST_CASE("no descriptor leaks over thousands of handoffs") {
  const int before = open_fds();
  constexpr int kCount = 3000;
  {
    Peer peer("consume", kCount);
    uint64_t released = 0;
    for (int i = 0; i < kCount; ++i) {
      hurray_buffer *b = shareable(4096, i % 255 + 1);
      hurray_error err{};
      const hurray_status st = hurray_ipc_send(peer.ch, b, nullptr, nullptr, &err);
      INFO(err.message);
      REQUIRE(st == HURRAY_OK);
      hurray_buffer_unref(b);
      if (i % 64 == 63) {  // keep a bounded number in flight
        progress_until(peer.ch, [&] { return stats_of(peer.ch).outstanding < 16; });
      }
    }
    progress_until(peer.ch, [&] { return stats_of(peer.ch).outstanding == 0; });
    released = stats_of(peer.ch).released;
    CHECK(released == kCount);
    CHECK(peer.wait_exit() == 0);  // the consumer counted its own descriptors too
  }
  CHECK(open_fds() == before);
  CHECK(count_memfds() == 0);
}

TEST_CASE("listen, connect and accept over a socket path, and HELLO says who is there") {
  const std::string path = "/tmp/hurray-ipc-test-" + std::to_string(getpid()) + ".sock";
  hurray_ipc_listener *l = nullptr;
  hurray_error err{};
  REQUIRE(hurray_ipc_listen(path.c_str(), nullptr, &l, &err) == HURRAY_OK);
  CHECK(hurray_ipc_listener_fd(l) >= 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    execl(HURRAY_IPC_PEER, HURRAY_IPC_PEER, "connect", path.c_str(), "1", (char *)nullptr);
    _exit(127);
  }
  hurray_ipc_channel *ch = nullptr;
  const hurray_status st = hurray_ipc_accept(l, 10000, &ch, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  hurray_ipc_peer_info info;
  info.size = sizeof info;
  REQUIRE(hurray_ipc_peer(ch, &info, &err) == HURRAY_OK);
  CHECK(info.protocol_version == HURRAY_IPC_PROTOCOL_VERSION);
  CHECK(info.pid == pid);
  REQUIRE(info.device_count >= 1);
  CHECK(info.devices[0].device_tag == HURRAY_DEVICE_CPU);
  CHECK(info.devices[0].memory_classes == 1u << HURRAY_MEMORY_STANDARD);
  CHECK(hurray_ipc_fd(ch) >= 0);
  hurray_buffer *b = shareable(4096, 1);
  REQUIRE(hurray_ipc_send(ch, b, nullptr, nullptr, nullptr) == HURRAY_OK);
  hurray_buffer_unref(b);
  progress_until(ch, [&] { return stats_of(ch).released == 1; });
  CHECK(stats_of(ch).released == 1);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  hurray_ipc_close(ch);
  CHECK(hurray_ipc_accept(l, 0, &ch, &err) == HURRAY_E_IO);  // nobody else is there
  hurray_ipc_listener_destroy(l);
  CHECK(access(path.c_str(), F_OK) != 0);  // the socket file is gone
  CHECK(hurray_ipc_connect(path.c_str(), nullptr, &ch, &err) == HURRAY_E_IO);
}

TEST_CASE("arguments are checked, and a channel announces the CPU") {
  hurray_ipc_channel *a = nullptr, *b = nullptr;
  local_pair(&a, &b);
  hurray_ipc_peer_info info;
  info.size = sizeof info;
  REQUIRE(hurray_ipc_peer(a, &info, nullptr) == HURRAY_OK);
  CHECK(info.device_count == 1);  // the CPU only
  CHECK(hurray_ipc_fd(a) >= 0);
  hurray_ipc_close(a);
  hurray_ipc_close(b);
  // bad arguments
  hurray_error err{};
  CHECK(hurray_ipc_channel_from_fd(-1, nullptr, &a, &err) == HURRAY_E_INVALID_ARGUMENT);
  const int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
  CHECK(hurray_ipc_channel_from_fd(fd, nullptr, &a, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(fcntl(fd, F_GETFD) == -1);  // taken and closed
  CHECK(hurray_ipc_send(nullptr, nullptr, nullptr, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_ipc_fd(nullptr) == -1);
  hurray_ipc_close(nullptr);
  hurray_ipc_listener_destroy(nullptr);
}

// Run as its own CTest test (hidden tag): exit 77, reported as skipped, where
// there is no Vulkan device with exportable memory.

// Registered on its own with label "concurrency" (scripts/test.sh runs those
// under ThreadSanitizer): a consumer thread waits in hurray_ipc_receive while
// another releases, and a producer thread sends while another reads releases.
TEST_CASE("threads: receive, release, send and progress at once", "[.concurrency]") {
  hurray_ipc_channel *a = nullptr, *b = nullptr;
  local_pair(&a, &b);
  constexpr int kCount = 400;
  hurray_buffer *buf = shareable(8192, 0x21);
  std::mutex mu;
  std::vector<hurray_handoff> held;
  std::atomic<int> received{0}, released{0}, failures{0};
  std::atomic<bool> done{false};
  std::thread consumer([&] {
    for (int i = 0; i < kCount; ++i) {
      hurray_handoff h;
      if (hurray_ipc_receive(b, 10000, &h, nullptr, nullptr) != HURRAY_OK) {
        ++failures;
        return;
      }
      if (static_cast<const unsigned char *>(h.data)[8191] != 0x21) ++failures;
      std::lock_guard<std::mutex> lock(mu);
      held.push_back(h);
      ++received;
    }
  });
  std::thread releaser([&] {
    while (released < kCount && !failures) {
      hurray_handoff h{};
      {
        std::lock_guard<std::mutex> lock(mu);
        if (held.empty()) continue;
        h = held.back();
        held.pop_back();
      }
      if (hurray_ipc_release(&h, nullptr) != HURRAY_OK) ++failures;
      ++released;
    }
  });
  std::thread progress([&] {
    while (!done) hurray_ipc_progress(a, 10, nullptr, nullptr);
  });
  for (int i = 0; i < kCount; ++i)
    if (hurray_ipc_send(a, buf, nullptr, nullptr, nullptr) != HURRAY_OK) ++failures;
  consumer.join();
  releaser.join();
  while (stats_of(a).released < kCount && !failures) std::this_thread::yield();
  done = true;
  progress.join();
  CHECK(failures == 0);
  CHECK(received == kCount);
  const hurray_ipc_stats s = stats_of(a);
  CHECK(s.sent == kCount);
  CHECK(s.released == kCount);
  CHECK(s.outstanding == 0);
  CHECK(s.releases_refused == 0);
  hurray_ipc_close(a);
  hurray_ipc_close(b);
  hurray_buffer_unref(buf);
}

// Run as its own CTest test (hidden tag) with the stand-in device plugin
// (fake_gpu_plugin.c) serving tag CUDA and HURRAY_IPCFAKE_DEFER=1: device
// memory and its event cross through the backend table's ipc_* functions,
// and the consumer's acquire waits until the producer reaches the event.
// ---- the wire format ----

TEST_CASE("wire: every message type round-trips, and lengths, types and descriptors are checked") {
  uint8_t buf[wire::kMaxMessage + 8];
  wire::Message m{}, back{};
  hurray_error err{};

  m.type = wire::Type::Hello;
  m.protocol_version = 1;
  m.device_count = 2;
  m.devices[0] = {HURRAY_DEVICE_CPU, 1};
  m.devices[1] = {HURRAY_DEVICE_VULKAN, 7};
  size_t n = wire::encode(m, buf, sizeof buf);
  REQUIRE(n == 16 + 8 + 16);
  REQUIRE(wire::parse(buf, n, 0, &back, &err) == HURRAY_OK);
  CHECK(back.device_count == 2);
  CHECK(back.devices[1].tag == HURRAY_DEVICE_VULKAN);
  CHECK(back.devices[1].classes == 7);
  CHECK(wire::parse(buf, n - 1, 0, &back, &err) == HURRAY_E_PROTOCOL);  // length
  CHECK(wire::parse(buf, n, 1, &back, &err) == HURRAY_E_PROTOCOL);      // a stray fd
  CHECK(wire::parse(buf, 15, 0, &back, &err) == HURRAY_E_PROTOCOL);     // short header

  m = {};
  m.type = wire::Type::Handoff;
  m.id = 42;
  const hurray_buffer_handle h = {8192, 4096, HURRAY_DEVICE_CPU, 0, 0, 0};
  hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr);
  m.flags = HURRAY_HANDOFF_READ_ONLY;
  m.memory.kind = wire::kKindMemfd;
  m.memory.has_fd = 1;
  m.memory.byte_size = 8192;
  n = wire::encode(m, buf, sizeof buf);
  REQUIRE(n == wire::kHeaderSize + wire::kHandoffBody);  // the 216-byte form
  REQUIRE(wire::parse(buf, n, 1, &back, &err) == HURRAY_OK);
  CHECK(back.id == 42);
  CHECK(std::memcmp(back.handle, m.handle, 16) == 0);
  uint8_t again[wire::kMaxMessage];
  REQUIRE(wire::encode(back, again, sizeof again) == n);
  CHECK(std::memcmp(again, buf, n) == 0);
  CHECK(wire::parse(buf, n, 0, &back, &err) == HURRAY_E_PROTOCOL);  // its memfd is missing
  buf[64] = 1;  // memory.byte_size (message offset 64) 8193: still fits
  CHECK(wire::parse(buf, n, 1, &back, &err) == HURRAY_OK);
  buf[64] = 0;
  buf[65] = 0x10;  // memory.byte_size 4096: smaller than the buffer
  CHECK(wire::parse(buf, n, 1, &back, &err) == HURRAY_E_PROTOCOL);
  CHECK(std::string(err.message).find("8192 bytes in 4096 bytes of memory") != std::string::npos);

  m = {};
  m.type = wire::Type::Release;
  m.id = 7;
  n = wire::encode(m, buf, sizeof buf);
  REQUIRE(n == 24);
  REQUIRE(wire::parse(buf, n, 0, &back, &err) == HURRAY_OK);
  CHECK(back.id == 7);
  buf[6] = 9;  // unknown type
  CHECK(wire::parse(buf, n, 0, &back, &err) == HURRAY_E_PROTOCOL);
  CHECK(std::string(err.message).find("unknown message type 9") != std::string::npos);
  CHECK(err.byte_offset == 6);
  buf[6] = 3;
  buf[4] = 2;  // a future framing version
  CHECK(wire::parse(buf, n, 0, &back, &err) == HURRAY_E_PROTOCOL);
  buf[4] = 1;
  buf[14] = 1;  // reserved
  CHECK(wire::parse(buf, n, 0, &back, &err) == HURRAY_E_PROTOCOL);
}

