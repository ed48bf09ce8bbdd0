// The other process of the device-identity tests (identity_test.cpp execs
// it), with the stand-in plugin (fake_gpu_plugin.c) serving tag CUDA in the
// device order its HURRAY_IPCFAKE_IDENTITY gives (the test sets it).
//
//   hurray_ipc_identity_peer consume FD E...  announce CUDA; per E receive one
//        handoff: E an ordinal: received on that local device (the plugin
//        checks the import landed on the device of the same letter); E
//        "refuse": refused, HURRAY_E_DEVICE_UNAVAILABLE naming
//        BP-IPC-DEVICE-ID. Releases each.
//   hurray_ipc_identity_peer print TAG ORDINAL  print the device's identity
//        as "<kind> <32 hex digits>" (exit 0), or "error <STATUS>: <message>"
//   hurray_ipc_identity_peer v1 FD   a version-1 peer, on the wire itself:
//        HELLO (protocol 1, CPU and CUDA), then one HANDOFF must come in the
//        216-byte form; RELEASE it, wait for the hang-up
//   hurray_ipc_identity_peer bad-kind FD   HELLO (protocol 2, CPU and CUDA)
//        and DEVICES (none) both ways, then a HANDOFF of an empty CUDA buffer whose identity has kind 9;
//        wait for the victim to hang up
//   hurray_ipc_identity_peer foreign FD    HELLO and DEVICES (none) both ways, then
//        a HANDOFF of an empty CUDA buffer on a device of identity "ipcfake
//        device Z" (the victim has none such); its RELEASE must come back
// Every wait is bounded (30 s). Exit status 0 when everything held.
#include <hurray_ipc.h>

#include <hurray_backend.h>

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "../../src/ipc/wire.h"
#include "../common/scm_rights.h"

namespace wire = hurray::ipc;

namespace {

int die(const char *what, const hurray_error *err = nullptr) {
  std::fprintf(stderr, "identity peer: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
  return 1;
}

bool send_raw(int fd, const uint8_t *b, size_t n) { return hurray_test::send_with_fd(fd, b, n); }

// One datagram within 10 s: its length, 0 at end of file, -1 otherwise;
// *nfds: the descriptors that came with it (closed here).
ssize_t recv_raw(int fd, uint8_t *b, size_t cap, size_t *nfds = nullptr) {
  std::vector<int> fds;
  const ssize_t r = hurray_test::recv_with_fds(fd, b, cap, &fds, 2, 10000);
  const size_t n = hurray_test::close_all(fds);
  if (nfds) *nfds = n;
  return r;
}

int hello(int fd, uint32_t version) {
  wire::Message m{};
  m.type = wire::Type::Hello;
  m.protocol_version = version;
  m.device_count = 2;
  m.devices[0] = {HURRAY_DEVICE_CPU, 1u << HURRAY_MEMORY_STANDARD};
  m.devices[1] = {HURRAY_DEVICE_CUDA, 1u << HURRAY_MEMORY_STANDARD};
  uint8_t b[wire::kMaxMessage];
  const size_t n = wire::encode(m, b, sizeof b);
  if (!send_raw(fd, b, n)) return die("send HELLO");
  wire::Message peer;
  const ssize_t r = recv_raw(fd, b, sizeof b);
  if (r <= 0 || wire::parse(b, static_cast<size_t>(r), 0, &peer, nullptr) != HURRAY_OK ||
      peer.type != wire::Type::Hello)
    return die("no HELLO from the victim");
  if (version < wire::kDevicesProtocol) return 0;
  // version 2: DEVICES both ways (this peer lists none: the ordinal fallback)
  wire::Message none{};
  none.type = wire::Type::Devices;
  const size_t k = wire::encode(none, b, sizeof b);
  if (!send_raw(fd, b, k)) return die("send DEVICES");
  const ssize_t d = recv_raw(fd, b, sizeof b);
  if (d <= 0 || wire::parse(b, static_cast<size_t>(d), 0, &peer, nullptr) != HURRAY_OK ||
      peer.type != wire::Type::Devices)
    return die("no DEVICES from the victim");
  return 0;
}

// HANDOFF 1 of an empty CUDA buffer whose device identity is a UUID of 0x5A bytes.
wire::Message empty_cuda_handoff() {
  wire::Message m{};
  m.type = wire::Type::Handoff;
  m.id = 1;
  const hurray_buffer_handle h = {0, 4096, HURRAY_DEVICE_CUDA, HURRAY_SYNC_PRODUCER_SYNCED,
                                  HURRAY_MEMORY_STANDARD, 0};
  hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr);
  m.id_kind = HURRAY_BACKEND_ID_UUID;
  std::memset(m.id_bytes, 0x5A, sizeof m.id_bytes);
  return m;
}

int wait_eof(int fd) {
  uint8_t b[wire::kMaxMessage];
  for (int i = 0; i < 100; ++i) {
    const ssize_t r = recv_raw(fd, b, sizeof b);
    if (r == 0 || (r < 0 && errno == ECONNRESET)) return 0;
    if (r < 0) break;
  }
  return die("the victim did not hang up");
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) return die("usage: hurray_ipc_identity_peer MODE ARGS");
  const std::string mode = argv[1];
  hurray_error err{};
  if (mode == "print" && argc == 4) {
    hurray_backend_device_identity id;
    if (hurray_device_identity(nullptr, static_cast<uint8_t>(std::atoi(argv[2])),
                               std::atoi(argv[3]), &id, &err) != HURRAY_OK) {
      std::printf("error %s: %s\n", hurray_status_name(static_cast<hurray_status>(err.status)),
                  err.message);
      return 1;
    }
    std::printf("%u ", id.kind);
    for (uint8_t x : id.bytes) std::printf("%02x", x);
    std::printf("\n");
    return 0;
  }
  const int fd = std::atoi(argv[2]);
  if (mode == "consume") {
    const uint8_t tags[] = {HURRAY_DEVICE_CUDA};
    hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
    o.device_count = 1;
    o.device_tags = tags;
    hurray_ipc_channel *ch = nullptr;
    if (hurray_ipc_channel_from_fd(fd, &o, &ch, &err) != HURRAY_OK) return die("channel", &err);
    for (int i = 3; i < argc; ++i) {
      hurray_handoff h;
      const hurray_status st = hurray_ipc_receive(ch, 30000, &h, nullptr, &err);
      if (std::strcmp(argv[i], "refuse") == 0) {
        if (st != HURRAY_E_DEVICE_UNAVAILABLE || !std::strstr(err.message, "BP-IPC-DEVICE-ID"))
          return die("expected a refusal naming BP-IPC-DEVICE-ID", &err);
        continue;
      }
      if (st != HURRAY_OK) return die("receive", &err);
      if (h.device_ordinal != std::atoi(argv[i])) {
        std::fprintf(stderr, "identity peer: handoff %d on local device %d, expected %s\n", i - 2,
                     h.device_ordinal, argv[i]);
        return 1;
      }
      if (hurray_ipc_release(&h, &err) != HURRAY_OK) return die("release", &err);
    }
    hurray_ipc_close(ch);
    return 0;
  }
  if (mode == "v1") {
    if (hello(fd, 1)) return 1;
    uint8_t b[wire::kMaxMessage];
    size_t nfds = 0;
    const ssize_t r = recv_raw(fd, b, sizeof b, &nfds);
    if (r != static_cast<ssize_t>(wire::kHeaderSize + wire::kHandoffBody)) {
      std::fprintf(stderr, "identity peer: a %zd-byte HANDOFF to a version-1 peer\n", r);
      return 1;
    }
    wire::Message m;
    if (wire::parse(b, static_cast<size_t>(r), nfds, &m, &err) != HURRAY_OK)
      return die("parse", &err);
    wire::Message rel{};
    rel.type = wire::Type::Release;
    rel.id = m.id;
    const size_t n = wire::encode(rel, b, sizeof b);
    if (!send_raw(fd, b, n)) return die("send RELEASE");
    std::fputs("R", stdout);
    std::fflush(stdout);
    return wait_eof(fd);
  }
  if (mode == "foreign") {
    if (hello(fd, 2)) return 1;
    wire::Message m = empty_cuda_handoff();
    std::memcpy(m.id_bytes, "ipcfake device Z", 16);
    uint8_t b[wire::kMaxMessage];
    const size_t n = wire::encode(m, b, sizeof b);
    if (!send_raw(fd, b, n)) return die("send HANDOFF");
    wire::Message rel;
    const ssize_t r = recv_raw(fd, b, sizeof b);
    if (r <= 0 || wire::parse(b, static_cast<size_t>(r), 0, &rel, &err) != HURRAY_OK ||
        rel.type != wire::Type::Release || rel.id != 1)
      return die("no RELEASE of the refused HANDOFF", &err);
    return wait_eof(fd);
  }
  if (mode == "bad-kind") {
    if (hello(fd, 2)) return 1;
    wire::Message m = empty_cuda_handoff();
    uint8_t b[wire::kMaxMessage];
    const size_t n = wire::encode(m, b, sizeof b);
    b[wire::kHeaderSize + wire::kHandoffBody] = 9;  // the identity's kind: unknown
    if (!send_raw(fd, b, n)) return die("send HANDOFF");
    return wait_eof(fd);
  }
  return die("unknown mode");
}
