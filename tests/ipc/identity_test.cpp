// Stable device identity (docs/spec/identity.md) across real processes:
// the HANDOFF carries the identity of the buffer's device and the consumer
// imports on its own device of that identity (BP-IPC-DEVICE-ID), with the
// stand-in plugin (fake_gpu_plugin.c) in two device orders; the identity's
// wire bytes (hostile ones refused); a version-1 peer gets no identity; the
// real Vulkan and OpenCL devices report the same identity in two processes.
// The [.reorder] cases run with HURRAY_IPCFAKE_IDENTITY=A- (CMakeLists.txt):
// device 0 is "A", device 1 has no identity.
#include <catch2/catch.hpp>

#include <hurray_backend.h>
#include <hurray_ipc.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "../../src/ipc/wire.h"
#include "../common/child_process.h"
#include "../common/shareable_alloc.h"
#include "../common/ipcfake_identity.h"

#ifndef HURRAY_IPC_IDENTITY_PEER
#error "HURRAY_IPC_IDENTITY_PEER (path of hurray_ipc_identity_peer) is not defined"
#endif

extern char **environ;

namespace wire = hurray::ipc;

namespace {

// The peer process, with HURRAY_IPCFAKE_IDENTITY=`order` (nullptr: as ours).
struct Child : hurray_test::ChildProcess {
  Child(std::vector<std::string> args, const char *order, int keep_fd = -1) {
    std::vector<std::string> env;
    for (char **e = environ; *e; ++e)
      if (!order || std::strncmp(*e, "HURRAY_IPCFAKE_IDENTITY=", 24) != 0) env.emplace_back(*e);
    if (order) env.push_back(std::string("HURRAY_IPCFAKE_IDENTITY=") + order);
    std::vector<char *> argv, envp;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto &e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    int pfd[2];
    REQUIRE(pipe2(pfd, O_CLOEXEC) == 0);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(pfd[1], 1);
      if (keep_fd >= 0) fcntl(keep_fd, F_SETFD, 0);  // crosses exec
      execve(argv[0], argv.data(), envp.data());
      _exit(127);
    }
    close(pfd[1]);
    out = pfd[0];
  }
  std::string output() {
    std::string s;
    char buf[256];
    pollfd p{out, POLLIN, 0};
    for (int i = 0; i < 100 && poll(&p, 1, 30000) == 1; ++i) {
      const ssize_t r = read(out, buf, sizeof buf);
      if (r <= 0) break;
      s.append(buf, static_cast<size_t>(r));
    }
    return s;
  }
};

// A channel to a peer running `mode` with `args`, the peer's devices in `order`.
struct Pair {
  hurray_ipc_channel *ch = nullptr;
  Child *child = nullptr;
  hurray_status made = HURRAY_OK;  // the channel's creation
  hurray_error made_err{};
  Pair(const char *mode, const char *order, std::vector<std::string> args = {},
       bool may_fail = false) {
    int sv[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    std::vector<std::string> a = {HURRAY_IPC_IDENTITY_PEER, mode, std::to_string(sv[1])};
    a.insert(a.end(), args.begin(), args.end());
    child = new Child(a, order, sv[1]);
    close(sv[1]);
    const uint8_t tags[] = {HURRAY_DEVICE_CUDA};
    hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
    o.device_count = 1;
    o.device_tags = tags;
    made = hurray_ipc_channel_from_fd(sv[0], &o, &ch, &made_err);
    INFO(made_err.message);
    if (!may_fail) REQUIRE(made == HURRAY_OK);
  }
  ~Pair() {
    if (ch) hurray_ipc_close(ch);
    delete child;
  }
};

hurray_buffer *on_device(int32_t ordinal) {
  return hurray_test::alloc_shareable(4096, HURRAY_IPC_ALIGNMENT, HURRAY_DEVICE_CUDA,
                                      HURRAY_MEMORY_STANDARD, ordinal);
}

struct Backs {
  std::vector<hurray_ipc_release_reason> reasons;
  static void on(void *user, uint64_t, hurray_ipc_release_reason reason) {
    static_cast<Backs *>(user)->reasons.push_back(reason);
  }
};

// Send one buffer on each of `ordinals`; every one comes back released.
void send_each(Pair &p, std::vector<int32_t> ordinals) {
  Backs backs;
  hurray_ipc_set_release_callback(p.ch, Backs::on, &backs, nullptr);
  for (int32_t o : ordinals) {
    hurray_buffer *b = on_device(o);
    hurray_error err{};
    const hurray_status st = hurray_ipc_send(p.ch, b, nullptr, nullptr, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
    hurray_buffer_unref(b);
  }
  hurray_status st = HURRAY_OK;
  while (backs.reasons.size() < ordinals.size() && st == HURRAY_OK)
    st = hurray_ipc_progress(p.ch, 10000, nullptr, nullptr);
  REQUIRE(backs.reasons.size() == ordinals.size());
  for (auto r : backs.reasons) CHECK(r == HURRAY_IPC_RELEASED);
}

hurray_backend_device_identity uuid_of(char letter) { return hurray_test::ipcfake_uuid(letter); }

}  // namespace

TEST_CASE("identity: the public lookup, on the stand-in plugin's devices", "[.reorder]") {
  hurray_error err{};
  hurray_backend_device_identity id;
  REQUIRE(hurray_device_identity(nullptr, HURRAY_DEVICE_CUDA, 0, &id, &err) == HURRAY_OK);
  const hurray_backend_device_identity a = uuid_of('A');
  CHECK(id.kind == HURRAY_BACKEND_ID_UUID);
  CHECK(std::memcmp(id.bytes, a.bytes, 16) == 0);
  REQUIRE(hurray_device_identity(nullptr, HURRAY_DEVICE_CUDA, 1, &id, &err) == HURRAY_OK);
  CHECK(id.kind == HURRAY_BACKEND_ID_NONE);  // '-': no identity
  CHECK(hurray_device_identity(nullptr, HURRAY_DEVICE_CUDA, 2, &id, &err) != HURRAY_OK);
  int32_t ordinal = -7;
  REQUIRE(hurray_device_find(nullptr, HURRAY_DEVICE_CUDA, &a, &ordinal, &err) == HURRAY_OK);
  CHECK(ordinal == 0);
  const hurray_backend_device_identity c = uuid_of('C');
  CHECK(hurray_device_find(nullptr, HURRAY_DEVICE_CUDA, &c, &ordinal, &err) ==
        HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(ordinal == -1);
  CHECK(std::string(err.message).find("BP-DEV-ID") == 0);
  hurray_backend_device_identity none{};
  CHECK(hurray_device_find(nullptr, HURRAY_DEVICE_CUDA, &none, &ordinal, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  // the CPU has no identity (one host device in every process)
  REQUIRE(hurray_device_identity(nullptr, HURRAY_DEVICE_CPU, 0, &id, &err) == HURRAY_OK);
  CHECK(id.kind == HURRAY_BACKEND_ID_NONE);
  // stable across processes: the peer, in the same order, reports the same bytes
  Child c2({HURRAY_IPC_IDENTITY_PEER, "print", "1", "0"}, nullptr);
  CHECK(c2.output() == "1 69706366616b652064657669636520" + std::string("41\n"));
  CHECK(c2.wait_exit() == 0);
}

TEST_CASE("identity: a plugin's malformed identity is refused by the dispatch layer",
          "[.reorder]") {
  Child bad_kind({HURRAY_IPC_IDENTITY_PEER, "print", "1", "0"}, "!?");
  const std::string k = bad_kind.output();
  CHECK(bad_kind.wait_exit() == 1);
  CHECK(k.find("error HURRAY_E_BACKEND") == 0);
  CHECK(k.find("unknown kind 7") != std::string::npos);
  Child bad_reserved({HURRAY_IPC_IDENTITY_PEER, "print", "1", "1"}, "!?");
  const std::string r = bad_reserved.output();
  CHECK(bad_reserved.wait_exit() == 1);
  CHECK(r.find("error HURRAY_E_BACKEND") == 0);
  CHECK(r.find("non-zero reserved") != std::string::npos);
}

TEST_CASE("identity: a consumer with the devices in another order imports on the device of "
          "the same identity",
          "[.reorder]") {
  // ours: 0 = A, 1 = none; the consumer's: 0 = B, 1 = A. The buffer on our
  // device 0 lands on its device 1; the one on our device 1 (no identity)
  // keeps its ordinal.
  Pair p("consume", "BA", {"1", "1"});
  send_each(p, {0, 1});
  CHECK(p.child->wait_exit() == 0);
}

TEST_CASE("identity: the producer refuses, naming BP-IPC-DEVICE-ID, a device whose identity "
          "the consumer's DEVICES lacks, and sends nothing",
          "[.reorder]") {
  // ours: 0 = A, 1 = none; the consumer's: C, D. The DEVICES message told
  // this side so: device 0 is refused before a byte is sent; device 1 (no
  // identity here) keeps its ordinal.
  Pair p("consume", "CD", {"1"});
  hurray_buffer *b = on_device(0);
  hurray_error err{};
  CHECK(hurray_ipc_send(p.ch, b, nullptr, nullptr, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.message).rfind("BP-IPC-DEVICE-ID:", 0) == 0);
  CHECK(std::string(err.message).find("did not announce in its DEVICES") != std::string::npos);
  hurray_buffer_unref(b);
  hurray_ipc_stats s;
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(p.ch, &s, nullptr) == HURRAY_OK);
  CHECK(s.sent == 0);
  CHECK(s.outstanding == 0);
  send_each(p, {1});  // the channel is fine
  CHECK(p.child->wait_exit() == 0);
}

TEST_CASE("identity: a consumer without the device of the identity refuses it, naming "
          "BP-IPC-DEVICE-ID, and gives it back (a hand-made producer)",
          "[.reorder]") {
  Pair p("foreign", nullptr);
  hurray_handoff h;
  hurray_error err{};
  CHECK(hurray_ipc_receive(p.ch, 10000, &h, nullptr, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.message).rfind("BP-IPC-DEVICE-ID:", 0) == 0);
  hurray_ipc_close(p.ch);
  p.ch = nullptr;
  CHECK(p.child->wait_exit() == 0);  // the RELEASE came back
}

TEST_CASE("identity: a consumer whose devices have no identity falls back to the ordinal",
          "[.reorder]") {
  Pair p("consume", "--", {"0"});
  send_each(p, {0});
  CHECK(p.child->wait_exit() == 0);
}

TEST_CASE("identity: a version-1 peer gets the HANDOFF without an identity", "[.reorder]") {
  Pair p("v1", nullptr);
  Backs backs;
  hurray_ipc_set_release_callback(p.ch, Backs::on, &backs, nullptr);
  hurray_buffer *b = on_device(0);  // device A: it has an identity
  hurray_error err{};
  REQUIRE(hurray_ipc_send(p.ch, b, nullptr, nullptr, &err) == HURRAY_OK);
  hurray_buffer_unref(b);
  hurray_status st = HURRAY_OK;
  while (backs.reasons.empty() && st == HURRAY_OK)
    st = hurray_ipc_progress(p.ch, 10000, nullptr, nullptr);
  REQUIRE(backs.reasons.size() == 1);
  CHECK(backs.reasons[0] == HURRAY_IPC_RELEASED);
  hurray_ipc_close(p.ch);
  p.ch = nullptr;
  CHECK(p.child->wait_exit() == 0);  // it saw the 216-byte form
}

TEST_CASE("identity: hostile: a HANDOFF whose identity has an unknown kind closes the channel",
          "[.reorder]") {
  // the HANDOFF may come with the HELLO: then the channel is refused at once
  Pair p("bad-kind", nullptr, {}, true);
  hurray_handoff h;
  hurray_error err = p.made_err;
  if (p.made == HURRAY_OK)
    CHECK(hurray_ipc_receive(p.ch, 10000, &h, nullptr, &err) == HURRAY_E_PROTOCOL);
  else
    CHECK(p.made == HURRAY_E_PROTOCOL);
  CHECK(err.byte_offset == 232);
  CHECK(std::string(err.message).find("identity of kind 9") != std::string::npos);
  if (p.ch) {
    CHECK(hurray_ipc_receive(p.ch, 0, &h, nullptr, &err) != HURRAY_OK);  // closed
    hurray_ipc_close(p.ch);
    p.ch = nullptr;
  }
  CHECK(p.child->wait_exit() == 0);
}

// ---- the wire form ----

namespace {

wire::Message device_handoff() {
  wire::Message m{};
  m.type = wire::Type::Handoff;
  m.id = 5;
  const hurray_buffer_handle h = {4096, 4096, HURRAY_DEVICE_VULKAN, HURRAY_SYNC_PRODUCER_SYNCED,
                                  HURRAY_MEMORY_STANDARD, 0};
  hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr);
  m.memory.kind = 0x314D4B56u;
  m.memory.byte_size = 16384;
  m.id_kind = HURRAY_BACKEND_ID_UUID;
  for (int i = 0; i < 16; ++i) m.id_bytes[i] = static_cast<uint8_t>(0xA0 + i);
  return m;
}

// parse(bytes) with byte `at` set to `v`: its error's offset, or -1 if accepted
int64_t refused_at(const uint8_t *buf, size_t n, size_t at, uint8_t v) {
  std::vector<uint8_t> b(buf, buf + n);
  b[at] = v;
  wire::Message back;
  hurray_error err{};
  if (wire::parse(b.data(), n, 0, &back, &err) == HURRAY_OK) return -1;
  CHECK(err.status == HURRAY_E_PROTOCOL);
  return err.byte_offset;
}

}  // namespace

TEST_CASE("identity: wire: a HANDOFF's device identity round-trips, with and without a view, "
          "and hostile identity bytes are refused at their offset") {
  uint8_t buf[wire::kMaxMessage + 8];
  wire::Message m = device_handoff(), back{};
  hurray_error err{};
  size_t n = wire::encode(m, buf, sizeof buf);
  REQUIRE(n == 16 + 216 + 24);
  REQUIRE(wire::parse(buf, n, 0, &back, &err) == HURRAY_OK);
  CHECK(back.id_kind == HURRAY_BACKEND_ID_UUID);
  CHECK(std::memcmp(back.id_bytes, m.id_bytes, 16) == 0);
  CHECK(back.view_offset == 0);
  uint8_t again[wire::kMaxMessage];
  REQUIRE(wire::encode(back, again, sizeof again) == n);
  CHECK(std::memcmp(buf, again, n) == 0);

  // hostile bytes in the identity at 232: kind (0 none, 4 unknown), reserved, all zero
  CHECK(refused_at(buf, n, 232, 0) == 232);
  CHECK(refused_at(buf, n, 232, 4) == 232);
  CHECK(refused_at(buf, n, 236, 1) == 236);
  {
    std::vector<uint8_t> z(buf, buf + n);
    std::memset(z.data() + 240, 0, 16);
    wire::Message b2;
    CHECK(wire::parse(z.data(), n, 0, &b2, &err) == HURRAY_E_PROTOCOL);
    CHECK(err.byte_offset == 240);
  }
  // a LUID uses 8 bytes and a PCI address 7: the rest must be zero
  m.id_kind = HURRAY_BACKEND_ID_LUID;
  n = wire::encode(m, buf, sizeof buf);
  CHECK(refused_at(buf, n, 232, HURRAY_BACKEND_ID_LUID) == 248);
  std::memset(m.id_bytes + 8, 0, 8);
  n = wire::encode(m, buf, sizeof buf);
  CHECK(refused_at(buf, n, 232, HURRAY_BACKEND_ID_LUID) == -1);
  CHECK(refused_at(buf, n, 232, HURRAY_BACKEND_ID_PCI) == 247);
  // CPU memory has no identity
  m = device_handoff();
  m.handle[12] = HURRAY_DEVICE_CPU;
  m.memory.kind = wire::kKindMemfd;
  m.memory.has_fd = 0;
  n = wire::encode(m, buf, sizeof buf);
  CHECK(refused_at(buf, n, 12, 0) == 232);

  // with a view: 224 + 24 bytes, the identity after the view offset
  m = device_handoff();
  m.view_offset = 4096;
  m.memory.byte_size = 16384;
  n = wire::encode(m, buf, sizeof buf);
  REQUIRE(n == 16 + 224 + 24);
  REQUIRE(n == wire::kMaxHandoff);
  REQUIRE(wire::parse(buf, n, 0, &back, &err) == HURRAY_OK);
  CHECK(back.view_offset == 4096);
  CHECK(back.id_kind == HURRAY_BACKEND_ID_UUID);
  CHECK(refused_at(buf, n, 240, 9) == 240);
  // no identity: the forms of before, 216 and 224 bytes
  m.id_kind = 0;
  std::memset(m.id_bytes, 0, 16);
  CHECK(wire::encode(m, buf, sizeof buf) == 16 + 224);
  m.view_offset = 0;
  CHECK(wire::encode(m, buf, sizeof buf) == 16 + 216);
  // a length of none of the four forms
  m = device_handoff();
  n = wire::encode(m, buf, sizeof buf);
  const uint32_t longer = 216 + 25;
  std::memcpy(buf + 8, &longer, 4);
  buf[n] = 0;
  CHECK(wire::parse(buf, n + 1, 0, &back, &err) == HURRAY_E_PROTOCOL);
  CHECK(err.byte_offset == 8);
}
