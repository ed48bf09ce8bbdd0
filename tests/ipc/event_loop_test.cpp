// Event-loop integration and flow control (include/hurray_ipc.h): the descriptors of
// hurray_ipc_listener_fd() and hurray_ipc_fd() are readable exactly when a
// call with timeout 0 would make progress, and hurray_ipc_try_send() never
// waits. The peers are real processes (tests/ipc/ipc_peer.cpp,
// raw_peer.cpp); the listener's peer is a raw socket of this process, so
// that the order of its connect and its HELLO is fixed. Flow control
// (docs/spec/ipc.md "Flow control"): sends stay within the WINDOW a peer of
// protocol version 3 announced, so two correct peers never trip
// BP-IPC-LIMIT whatever the consumer's release pattern.
#include <hurray_ipc.h>

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include <catch2/catch.hpp>
#include "../common/shareable_alloc.h"

#include "../../src/ipc/wire.h"
#include "../common/peer_process.h"

namespace {

namespace wire = hurray::ipc;

bool readable(int fd, int ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

hurray_ipc_stats stats(hurray_ipc_channel *ch) {
  hurray_ipc_stats s{};
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
  return s;
}

// A shareable 4 KiB CPU buffer (the caller's reference).
hurray_buffer *shareable_page() {
  return hurray_test::alloc_shareable(4096, HURRAY_IPC_ALIGNMENT);
}

}  // namespace

TEST_CASE("the listener's descriptor is readable when a waiting handshake's HELLO comes") {
  char path[64];
  std::snprintf(path, sizeof path, "/tmp/hurray-evloop-%d.sock", static_cast<int>(getpid()));
  hurray_ipc_listener *l = nullptr;
  hurray_error err{};
  REQUIRE(hurray_ipc_listen(path, nullptr, &l, &err) == HURRAY_OK);
  const int lfd = hurray_ipc_listener_fd(l);
  CHECK_FALSE(readable(lfd, 0));
  const int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  REQUIRE(connect(s, reinterpret_cast<sockaddr *>(&a), sizeof a) == 0);
  CHECK(readable(lfd, 5000));  // a connection
  hurray_ipc_channel *ch = nullptr;
  CHECK(hurray_ipc_accept(l, 0, &ch, &err) == HURRAY_E_IO);  // taken in, no HELLO yet
  CHECK_FALSE(readable(lfd, 0));                                // nothing to do now
  wire::Message hello{};
  hello.type = wire::Type::Hello;
  hello.protocol_version = 1;
  hello.device_count = 1;
  hello.devices[0] = {HURRAY_DEVICE_CPU, 1u << HURRAY_MEMORY_STANDARD};
  uint8_t buf[wire::kMaxMessage];
  const size_t n = wire::encode(hello, buf, sizeof buf);
  REQUIRE(write(s, buf, n) == static_cast<ssize_t>(n));
  CHECK(readable(lfd, 5000));  // the handshake can go on: this is what a poll loop needs
  const hurray_status st = hurray_ipc_accept(l, 0, &ch, &err);
  INFO(err.message);
  CHECK(st == HURRAY_OK);
  if (st == HURRAY_OK) hurray_ipc_close(ch);
  close(s);
  hurray_ipc_listener_destroy(l);
}

TEST_CASE("a channel's descriptor is readable while a handoff waits in its queue") {
  hurray_test::PeerProcess peer(HURRAY_IPC_PEER, {"produce", "{fd}", "3"}, nullptr);
  REQUIRE(peer.signal_byte() == 'S');  // all three are in the socket
  const int fd = hurray_ipc_fd(peer.ch);
  REQUIRE(fd >= 0);
  CHECK(readable(fd, 5000));
  uint32_t count = 0;
  hurray_error err{};
  REQUIRE(hurray_ipc_progress(peer.ch, 0, &count, &err) == HURRAY_OK);
  // The handshake's last read may already have queued some of the three (the
  // peer sends them as soon as it has this side's DEVICES): progress reads
  // the rest, and the socket is empty now ...
  CHECK(count <= 3);
  CHECK(hurray_ipc_progress(peer.ch, 0, &count, &err) == HURRAY_OK);
  CHECK(count == 0);
  CHECK(readable(fd, 0));  // ... but receive(0) would make progress
  hurray_handoff h[3];
  for (int i = 0; i < 3; ++i) {
    CHECK(readable(fd, 0));
    REQUIRE(hurray_ipc_receive(peer.ch, 0, &h[i], nullptr, &err) == HURRAY_OK);
  }
  CHECK_FALSE(readable(fd, 0));  // nothing left to do
  for (hurray_handoff &x : h) CHECK(hurray_ipc_release(&x, &err) == HURRAY_OK);
}

TEST_CASE("try_send on a full socket sends nothing, keeps the channel, and says when there is room") {
  hurray_test::PeerProcess peer(HURRAY_IPC_RAW_PEER, {"drain-on-usr1", "{fd}"}, nullptr);
  REQUIRE(peer.signal_byte() == 'R');
  hurray_buffer *b = shareable_page();
  hurray_error err{};
  const int fd = hurray_ipc_fd(peer.ch);
  uint64_t sent = 0, id = 1;
  while (sent < 5000) {  // a socket holds a few hundred
    REQUIRE(hurray_ipc_try_send(peer.ch, b, nullptr, &id, &err) == HURRAY_OK);
    if (id == 0) break;
    ++sent;
  }
  REQUIRE(id == 0);  // the socket filled up; nothing waited
  CHECK(sent > 0);
  hurray_ipc_stats s = stats(peer.ch);
  CHECK(s.closed == 0);
  CHECK(s.sent == sent);  // the refused one was not counted, nor held
  CHECK(s.outstanding == sent);
  CHECK_FALSE(readable(fd, 0));  // no room, nothing came
  CHECK(hurray_ipc_try_send(peer.ch, b, nullptr, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  REQUIRE(kill(peer.pid, SIGUSR1) == 0);  // the peer reads now
  CHECK(readable(fd, 10000));             // room again
  REQUIRE(hurray_ipc_try_send(peer.ch, b, nullptr, &id, &err) == HURRAY_OK);
  CHECK(id != 0);
  CHECK_FALSE(readable(fd, 0));  // a try_send got through: room is no longer watched
  CHECK(stats(peer.ch).sent == sent + 1);
  hurray_buffer_unref(b);
}

TEST_CASE("sends stay within the window a peer of version 3 announced, in handoffs and descriptors") {
  const struct {
    const char *mode;
    uint64_t fits;
  } cases[] = {{"window-3", 3}, {"window-fds4", 4}};  // each CPU handoff carries 1 descriptor
  hurray_buffer *b = shareable_page();
  for (const auto &c : cases) {
    INFO(c.mode);
    hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
    o.io_timeout_ms = 200;
    hurray_test::PeerProcess peer(HURRAY_IPC_RAW_PEER, {c.mode, "{fd}"}, &o);
    REQUIRE(peer.signal_byte() == 'R');
    hurray_error err{};
    uint64_t sent = 0, id = 1;
    while (sent < 100) {
      REQUIRE(hurray_ipc_try_send(peer.ch, b, nullptr, &id, &err) == HURRAY_OK);
      if (id == 0) break;
      ++sent;
    }
    CHECK(sent == c.fits);  // the window is full, not the socket
    // a blocking send waits for a RELEASE that never comes, then gives up; the channel stays
    CHECK(hurray_ipc_send(peer.ch, b, nullptr, nullptr, &err) == HURRAY_E_IO);
    INFO(err.message);
    CHECK(std::string(err.message).find("window") != std::string::npos);
    const hurray_ipc_stats s = stats(peer.ch);
    CHECK(s.closed == 0);
    CHECK(s.sent == c.fits);
  }
  hurray_buffer_unref(b);
}

TEST_CASE("two correct peers exchange 10^5 buffers with any release pattern and never close",
          "[.flow]") {
  constexpr int kCount = 100000;
  hurray_buffer *b = shareable_page();
  for (const char *batch : {"100", "0", "1"}) {  // the whole window, at random, one by one
    INFO("release batches: " << batch);
    hurray_test::PeerProcess peer(HURRAY_IPC_PEER, {"window", "{fd}", std::to_string(kCount), batch},
                                  nullptr);
    hurray_error err{};
    hurray_status st = HURRAY_OK;
    int sent = 0;
    while (sent < kCount && (st = hurray_ipc_send(peer.ch, b, nullptr, nullptr, &err)) == HURRAY_OK)
      ++sent;
    INFO(err.message);
    CHECK(st == HURRAY_OK);
    CHECK(sent == kCount);
    // the last releases, within a bounded time
    for (int i = 0; i < 600 && stats(peer.ch).released < static_cast<uint64_t>(sent); ++i)
      (void)hurray_ipc_progress(peer.ch, 100, nullptr, nullptr);
    const hurray_ipc_stats s = stats(peer.ch);
    CHECK(s.released == static_cast<uint64_t>(kCount));
    CHECK(s.reclaimed == 0);  // none taken back: the channel held until every release came
    CHECK(s.messages_rejected == 0);
    CHECK(peer.wait_exit() == 0);
  }
  hurray_buffer_unref(b);
}
