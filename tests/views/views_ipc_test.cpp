// Views across processes: a view sent with hurray_ipc_send reaches a real
// second process (hurray_views_peer) as the view's bytes, not its parent's
// (CPU memfd at the view's offset; Vulkan memory with the HANDOFF's view
// offset, protocol version 2), the IPC alignment rule applies to the view's
// own alignment, and the wire format's 224-byte HANDOFF round-trips and is
// checked.
#include <catch2/catch.hpp>
#include <hurray_ipc.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/ipc/wire.h"
#include "../common/scm_rights.h"
#include "../common/shareable_alloc.h"
#include "../common/view_of.h"
#include "../common/peer_process.h"

namespace {

using hurray_test::view_of;

unsigned char pattern(uint64_t i) { return static_cast<unsigned char>((i * 13 + 5) ^ (i >> 9)); }

uint64_t fnv(const unsigned char *p, uint64_t n) {
  uint64_t h = 1469598103934665603ull;
  for (uint64_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// The channel options of a peer serving `tag`.
hurray_ipc_options peer_options(const uint8_t *tag) {
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  if (*tag != HURRAY_DEVICE_CPU) {
    o.device_count = 1;
    o.device_tags = tag;
  }
  return o;
}

// hurray_views_peer on one end of a socket pair; its stdout is a pipe.
struct Peer {
  uint8_t tag;
  hurray_ipc_options opts;
  hurray_test::PeerProcess proc;
  hurray_ipc_channel *ch;
  FILE *out = nullptr;

  Peer(uint8_t t, int n)
      : tag(t),
        opts(peer_options(&tag)),
        proc(HURRAY_VIEWS_PEER, {"{fd}", std::to_string(t), std::to_string(n)}, &opts),
        ch(proc.ch) {
    out = fdopen(proc.out, "r");
    REQUIRE(out);
    proc.out = -1;  // the FILE's now
  }
  ~Peer() {
    if (out) fclose(out);
  }
  struct Line {
    unsigned long long size = 0, offset = 0, hash = 0;
    unsigned align = 0, flags = 0;
  };
  // The peer's report of the next buffer it received.
  Line line() {
    char buf[256] = {};
    REQUIRE(std::fgets(buf, sizeof buf, out) != nullptr);
    Line l;
    REQUIRE(std::sscanf(buf, "size %llu align %u flags %u offset %llu hash %llx", &l.size,
                        &l.align, &l.flags, &l.offset, &l.hash) == 5);
    return l;
  }
  int wait_exit() { return proc.wait_exit(); }
};

hurray_buffer *alloc(uint8_t tag, uint8_t mc, uint64_t size) {
  hurray_buffer *b = hurray_test::alloc_shareable(size, HURRAY_IPC_ALIGNMENT, tag, mc);
  hurray_error err{};
  std::vector<unsigned char> all(size);
  for (uint64_t i = 0; i < size; ++i) all[i] = pattern(i);
  REQUIRE(hurray_buffer_copy_from_host(b, 0, all.data(), size, &err) == HURRAY_OK);
  return b;
}


uint64_t expected_hash(uint64_t off, uint64_t len) {
  std::vector<unsigned char> b(len);
  for (uint64_t i = 0; i < len; ++i) b[i] = pattern(off + i);
  return fnv(b.data(), len);
}

uint64_t sent_count(hurray_ipc_channel *ch) {
  hurray_ipc_stats s;
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
  return s.sent;
}

// Send each (offset, length) view of p; the peer reports what it received.
void send_views(Peer &peer, hurray_buffer *p, const std::vector<std::pair<uint64_t, uint64_t>> &vs,
                bool opaque) {
  for (const auto &[off, len] : vs) {
    INFO("view of " << len << " bytes at " << off);
    hurray_buffer *v = view_of(p, off, len);
    hurray_error err{};
    const hurray_status st = hurray_ipc_send(peer.ch, v, nullptr, nullptr, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    hurray_buffer_unref(v);  // the send's export keeps it (and p's memory) alive
    const Peer::Line l = peer.line();
    CHECK(l.size == len);
    CHECK(l.align == 4096);
    if (opaque) {
      CHECK(l.hash == 0);
      CHECK(l.offset == off);
      CHECK((l.flags & HURRAY_HANDOFF_OPAQUE_DATA));
      CHECK(bool(l.flags & HURRAY_HANDOFF_OPAQUE_OFFSET) == (off != 0));
    } else {
      CHECK(l.hash == expected_hash(off, len));
      CHECK(!(l.flags & HURRAY_HANDOFF_OPAQUE_OFFSET));
      CHECK(l.offset == 0);
    }
  }
}

void wait_back(hurray_ipc_channel *ch, uint64_t n) {
  for (int i = 0; i < 3000; ++i) {
    hurray_ipc_stats s;
    s.size = sizeof s;
    REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
    if (s.outstanding == 0 && s.sent == n) return;
    hurray_ipc_progress(ch, 10, nullptr, nullptr);
  }
  FAIL("the peer did not release every view");
}

}  // namespace

TEST_CASE("ipc: a CPU view reaches another process as the view's bytes") {
  const uint64_t size = 65536;
  hurray_buffer *p = alloc(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, size);
  const std::vector<std::pair<uint64_t, uint64_t>> vs = {
      {0, 4096}, {8192, 16384}, {size - 4096, 4096}, {4096, 100}, {12288, 40960}};
  Peer peer(HURRAY_DEVICE_CPU, static_cast<int>(vs.size() + 1));
  send_views(peer, p, vs, false);
  // a view of a view: at 4096 + 8192 of p
  hurray_buffer *a = view_of(p, 4096, 32768);
  hurray_buffer *b = view_of(a, 8192, 8192);
  hurray_buffer_unref(a);
  hurray_buffer_unref(p);  // b's send alone keeps the memory now
  hurray_error err{};
  REQUIRE(hurray_ipc_send(peer.ch, b, nullptr, nullptr, &err) == HURRAY_OK);
  hurray_buffer_unref(b);
  const Peer::Line l = peer.line();
  CHECK(l.size == 8192);
  CHECK(l.hash == expected_hash(12288, 8192));
  wait_back(peer.ch, vs.size() + 1);
  CHECK(peer.wait_exit() == 0);
}

TEST_CASE("ipc: a view is sent only if its own alignment meets BP-ALIGN-IPC") {
  hurray_buffer *p = alloc(HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD, 65536);
  Peer peer(HURRAY_DEVICE_CPU, 1);
  hurray_error err{};
  for (uint64_t off : {64ull, 2048ull, 4096ull + 512}) {
    hurray_buffer *v = view_of(p, off, 1024);
    CHECK(hurray_ipc_send(peer.ch, v, nullptr, nullptr, &err) == HURRAY_E_ALIGNMENT);
    CHECK(std::string(err.rule_id) == "BP-ALIGN-IPC");
    hurray_buffer_unref(v);
  }
  CHECK(sent_count(peer.ch) == 0);
  // a page-aligned one goes
  hurray_buffer *v = view_of(p, 4096 * 5, 4096);
  REQUIRE(hurray_ipc_send(peer.ch, v, nullptr, nullptr, &err) == HURRAY_OK);
  CHECK(peer.line().hash == expected_hash(4096 * 5, 4096));
  hurray_buffer_unref(v);
  hurray_buffer_unref(p);
  wait_back(peer.ch, 1);
  CHECK(peer.wait_exit() == 0);
}

TEST_CASE("ipc: Vulkan views cross with their offset (UNIFIED: the bytes, STANDARD: handle and offset)",
          "[vulkan]") {
  int32_t n = 0;
  hurray_error err{};
  const hurray_status cst = hurray_device_count(nullptr, HURRAY_DEVICE_VULKAN, &n, &err);
  INFO(err.message);
  REQUIRE(cst == HURRAY_OK);  // lavapipe is here: absent is a failure
  const uint64_t size = 65536;
  const std::vector<std::pair<uint64_t, uint64_t>> vs = {
      {0, 4096}, {12288, 8192}, {size - 4096, 4096}, {4096, 333}};
  {
    hurray_buffer *p = alloc(HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_UNIFIED, size);
    Peer peer(HURRAY_DEVICE_VULKAN, static_cast<int>(vs.size()));
    send_views(peer, p, vs, false);
    hurray_buffer_unref(p);
    wait_back(peer.ch, vs.size());
    CHECK(peer.wait_exit() == 0);
  }
  {
    hurray_buffer *p = alloc(HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD, size);
    Peer peer(HURRAY_DEVICE_VULKAN, static_cast<int>(vs.size()));
    send_views(peer, p, vs, true);
    hurray_buffer_unref(p);
    wait_back(peer.ch, vs.size());
    CHECK(peer.wait_exit() == 0);
  }
}

TEST_CASE("ipc: wire: a HANDOFF with a view offset round-trips, and its offset is checked") {
  namespace w = hurray::ipc;
  w::Message m{};
  m.type = w::Type::Handoff;
  m.id = 7;
  const hurray_buffer_handle h = {4096, 4096, HURRAY_DEVICE_VULKAN, 0, HURRAY_MEMORY_STANDARD, 0};
  REQUIRE(hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr) == HURRAY_OK);
  m.memory.kind = 1;
  m.memory.byte_size = 65536;
  m.view_offset = 8192;
  uint8_t buf[w::kMaxMessage];
  const size_t len = w::encode(m, buf, sizeof buf);
  REQUIRE(len == w::kHeaderSize + w::kHandoffViewBody);
  w::Message back{};
  hurray_error err{};
  REQUIRE(w::parse(buf, len, 0, &back, &err) == HURRAY_OK);
  CHECK(back.view_offset == 8192);
  uint8_t again[w::kMaxMessage];
  REQUIRE(w::encode(back, again, sizeof again) == len);
  CHECK(std::memcmp(buf, again, len) == 0);
  // without a view offset: the 216-byte form, as before
  m.view_offset = 0;
  CHECK(w::encode(m, buf, sizeof buf) == w::kHeaderSize + w::kHandoffBody);
  // view offset + size beyond the memory: malformed
  m.view_offset = 65536 - 4096 + 64;
  size_t n = w::encode(m, buf, sizeof buf);
  CHECK(w::parse(buf, n, 0, &back, &err) == HURRAY_E_PROTOCOL);
  m.view_offset = UINT64_MAX - 100;  // wraps: malformed
  n = w::encode(m, buf, sizeof buf);
  CHECK(w::parse(buf, n, 0, &back, &err) == HURRAY_E_PROTOCOL);
  m.view_offset = 65536 - 4096;  // the last page fits
  n = w::encode(m, buf, sizeof buf);
  CHECK(w::parse(buf, n, 0, &back, &err) == HURRAY_OK);
  // the long form with a zero view offset is not canonical: malformed
  m.view_offset = 8192;
  n = w::encode(m, buf, sizeof buf);
  std::memset(buf + w::kHeaderSize + w::kHandoffBody, 0, 8);
  CHECK(w::parse(buf, n, 0, &back, &err) == HURRAY_E_PROTOCOL);
  CHECK(err.byte_offset == 232);
  // CPU memory carries its offset in the memfd's handle, never here
  const hurray_buffer_handle c = {4096, 4096, HURRAY_DEVICE_CPU, 0, HURRAY_MEMORY_STANDARD, 0};
  REQUIRE(hurray_handle_encode(&c, m.handle, sizeof m.handle, nullptr) == HURRAY_OK);
  m.memory.has_fd = 1;
  n = w::encode(m, buf, sizeof buf);
  CHECK(w::parse(buf, n, 1, &back, &err) == HURRAY_E_PROTOCOL);
  // a 220-byte body is neither form
  m.memory.has_fd = 0;
  REQUIRE(hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr) == HURRAY_OK);
  n = w::encode(m, buf, sizeof buf);
  buf[8] = static_cast<uint8_t>(w::kHandoffBody + 4);
  CHECK(w::parse(buf, w::kHeaderSize + w::kHandoffBody + 4, 0, &back, &err) == HURRAY_E_PROTOCOL);
}

namespace {
// The bytes a HANDOFF of Vulkan device 0 carries beyond its body for a peer
// of `version`: the device's identity (docs/spec/identity.md) when the
// device has one and the peer reads it (version 2).
// A channel on sv[0] to a hand-made peer on sv[1] that announced protocol
// `version` and CPU + Vulkan (every class), and from version 2 on an empty
// DEVICES; this side's HELLO (and DEVICES) are read off sv[1] before it returns.
hurray_ipc_channel *channel_to_hello(const int sv[2], uint32_t version) {
  namespace w = hurray::ipc;
  w::Message hello{};
  hello.type = w::Type::Hello;
  hello.protocol_version = version;
  hello.device_count = 2;
  hello.devices[0] = {HURRAY_DEVICE_CPU, 1u};
  hello.devices[1] = {HURRAY_DEVICE_VULKAN, 0x7u};
  uint8_t buf[w::kMaxMessage];
  const size_t len = w::encode(hello, buf, sizeof buf);
  REQUIRE(write(sv[1], buf, len) == static_cast<ssize_t>(len));
  if (version >= w::kDevicesProtocol) {  // then its DEVICES (none: the ordinal fallback)
    w::Message none{};
    none.type = w::Type::Devices;
    const size_t k = w::encode(none, buf, sizeof buf);
    REQUIRE(write(sv[1], buf, k) == static_cast<ssize_t>(k));
  }
  const uint8_t tags[1] = {HURRAY_DEVICE_VULKAN};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = tags;
  hurray_ipc_channel *ch = nullptr;
  hurray_error err{};
  REQUIRE(hurray_ipc_channel_from_fd(sv[0], &o, &ch, &err) == HURRAY_OK);
  REQUIRE(read(sv[1], buf, sizeof buf) > 0);  // this side's HELLO
  if (version >= w::kDevicesProtocol) REQUIRE(read(sv[1], buf, sizeof buf) > 0);  // its DEVICES
  return ch;
}

size_t vulkan_identity_bytes(uint32_t version) {
  hurray_backend_device_identity id{};
  REQUIRE(hurray_device_identity(nullptr, HURRAY_DEVICE_VULKAN, 0, &id, nullptr) == HURRAY_OK);
  return version >= 2 && id.kind != HURRAY_BACKEND_ID_NONE ? hurray::ipc::kIdentitySize : 0;
}
}  // namespace

TEST_CASE("ipc: a device view at an offset goes only to a peer of protocol version 2",
          "[vulkan]") {
  namespace w = hurray::ipc;
  int32_t n = 0;
  REQUIRE(hurray_device_count(nullptr, HURRAY_DEVICE_VULKAN, &n, nullptr) == HURRAY_OK);
  for (uint32_t version : {1u, 2u}) {
    INFO("peer protocol version " << version);
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    // the peer's HELLO, waiting in the socket: CPU and Vulkan (every class)
    uint8_t buf[w::kMaxMessage];
    hurray_ipc_channel *ch = channel_to_hello(sv, version);
    hurray_error err{};
    hurray_buffer *p = alloc(HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD, 65536);
    hurray_buffer *at0 = view_of(p, 0, 4096), *at8k = view_of(p, 8192, 4096);
    // offset 0: the 216-byte form (a version-2 peer also gets the identity)
    REQUIRE(hurray_ipc_send(ch, at0, nullptr, nullptr, &err) == HURRAY_OK);
    ssize_t got = recv(sv[1], buf, sizeof buf, 0);  // its descriptor is dropped with the socket
    CHECK(got == static_cast<ssize_t>(w::kHeaderSize + w::kHandoffBody +
                                      vulkan_identity_bytes(version)));
    const hurray_status st = hurray_ipc_send(ch, at8k, nullptr, nullptr, &err);
    if (version == 1) {
      CHECK(st == HURRAY_E_UNSUPPORTED);
      CHECK(std::string(err.message).find("protocol version 1") != std::string::npos);
      CHECK(sent_count(ch) == 1);
    } else {
      REQUIRE(st == HURRAY_OK);
      got = recv(sv[1], buf, sizeof buf, 0);
      REQUIRE(got == static_cast<ssize_t>(w::kHeaderSize + w::kHandoffViewBody +
                                          vulkan_identity_bytes(version)));
      w::Message m{};
      REQUIRE(w::parse(buf, static_cast<size_t>(got), 1, &m, &err) == HURRAY_OK);
      CHECK(m.view_offset == 8192);
      CHECK(m.memory.offset == 0);  // the backend's export of the parent, unchanged
    }
    hurray_buffer_unref(at0);
    hurray_buffer_unref(at8k);
    hurray_buffer_unref(p);
    hurray_ipc_close(ch);
    close(sv[1]);
  }
}

namespace {

// recvmsg one datagram and the descriptor that came with it (-1 if none).
ssize_t recv_with_fd(int sock, uint8_t *buf, size_t cap, int *fd) {
  std::vector<int> fds;
  const ssize_t n = hurray_test::recv_with_fds(sock, buf, cap, &fds);
  *fd = fds.empty() ? -1 : fds[0];
  return n;
}

void send_with_fd(int sock, const uint8_t *buf, size_t n, int fd) {
  REQUIRE(hurray_test::send_with_fd(sock, buf, n, fd));
}

}  // namespace

TEST_CASE("ipc: a received view offset is checked against the view's alignment (hostile peer)",
          "[vulkan]") {
  namespace w = hurray::ipc;
  int32_t count = 0;
  REQUIRE(hurray_device_count(nullptr, HURRAY_DEVICE_VULKAN, &count, nullptr) == HURRAY_OK);
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  uint8_t buf[w::kMaxMessage];
  hurray_ipc_channel *ch = channel_to_hello(sv, 2);
  hurray_error err{};
  // a real Vulkan export of a view, as this side's peer receives it
  hurray_buffer *p = alloc(HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD, 65536);
  hurray_buffer *v = view_of(p, 8192, 4096);
  REQUIRE(hurray_ipc_send(ch, v, nullptr, nullptr, &err) == HURRAY_OK);
  hurray_buffer_unref(v);
  int fd = -1;
  const ssize_t got = recv_with_fd(sv[1], buf, sizeof buf, &fd);
  REQUIRE(got == static_cast<ssize_t>(w::kHeaderSize + w::kHandoffViewBody +
                                      vulkan_identity_bytes(2)));
  REQUIRE(fd >= 0);
  w::Message m{};
  REQUIRE(w::parse(buf, static_cast<size_t>(got), 1, &m, &err) == HURRAY_OK);
  // sent back as it came: the consumer's handoff is the opaque handle and the offset
  m.id = 1;
  size_t len = w::encode(m, buf, sizeof buf);
  send_with_fd(sv[1], buf, len, fd);
  hurray_handoff h;
  const hurray_status st = hurray_ipc_receive(ch, 5000, &h, nullptr, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  CHECK((h.flags & HURRAY_HANDOFF_OPAQUE_DATA));
  CHECK((h.flags & HURRAY_HANDOFF_OPAQUE_OFFSET));
  CHECK(h.reserved[0] == 8192);
  CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK);
  CHECK(hurray_handoff_release(&h, &err) == HURRAY_OK);
  // a view offset that breaks the handle's 4096 alignment: malformed, the channel closes
  m.id = 2;
  m.view_offset = 8192 + 64;
  len = w::encode(m, buf, sizeof buf);
  send_with_fd(sv[1], buf, len, fd);
  CHECK(hurray_ipc_receive(ch, 5000, &h, nullptr, &err) == HURRAY_E_PROTOCOL);
  CHECK(std::string(err.message).find("BP-VIEW-BOUNDS") != std::string::npos);
  close(fd);
  hurray_buffer_unref(p);
  hurray_ipc_close(ch);
  close(sv[1]);
}
