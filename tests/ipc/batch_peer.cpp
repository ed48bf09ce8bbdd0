// A hostile (or old) peer of the batch tests (tests/ipc/batch_test.cpp execs
// it): it speaks the wire format itself, with HANDOFF_MANY and RELEASE_MANY
// (protocol version 4), and breaks one rule per mode. Every wait is bounded
// (10 s).
//
//   hurray_ipc_batch_peer MODE FD [N]   on an inherited socket: HELLO (version
//   4; 3 for v3-*), the victim's HELLO, DEVICES and WINDOW read, an empty
//   DEVICES and WINDOW 128/128 sent; then it waits for the victim's first
//   HANDOFF or HANDOFF_MANY (its descriptors closed) and:
//     fds-short     a HANDOFF_MANY of 3 memfd entries with 2 descriptors (the
//                   header saying 2)
//     truncated     a HANDOFF_MANY whose count says 3 and that holds 2 entries
//     dup           a HANDOFF_MANY whose 2 entries have the same id
//     count65       a HANDOFF_MANY whose count says 65
//     over-window   HANDOFF_MANYs of 64, 50 and 64 memfd handoffs (178 > the
//                   victim's window of 128; the third passes it at its 15th
//                   entry), none released
//     release-unknown  a RELEASE_MANY of the first ID it got and ID 999999
//     release-dup   a RELEASE_MANY naming the first ID it got twice
//     v3-many       (HELLO of version 3) a HANDOFF_MANY
//     v3-count      (HELLO of version 3) takes N handoffs, releasing each with
//                   a RELEASE; prints 'H<HANDOFFs>/M<HANDOFF_MANYs>'
//     good N        takes N handoffs, releasing them with RELEASE_MANY per
//                   message; prints 'H<HANDOFFs>/M<HANDOFF_MANYs>'
//   then waits for the victim to hang up (10 s at most).
//
//   Slots (protocol version 5; the peer's HELLO says 5 and its WINDOW is the
//   16-byte form with no slots of its own): after the victim's first
//   HANDOFF (not released), it sends (see slots()):
//     slot-good      install slot 0 (bytes 0xA5), use it twice; then a
//                    HANDOFF_MANY: use 0, install slot 1 (bytes 0x5A), use 1
//     slot-range     an install of slot 64 (the victim announced 64)
//     slot-empty     a use of slot 3, never installed
//     slot-install-nofd  an install without a descriptor
//     slot-use-fd    a use with a descriptor attached
//     slot-mode      a writable install of slot 0, then a read-only use of it
//     slot-many-empty a HANDOFF_MANY: install 0, use 0, use 1 (never installed)
//     slot-unannounced (HELLO of version 4, 8-byte WINDOW) an install of slot 0
//
// Exit status: 0 as described; 1 anything else (a message on stderr).
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/ipc/wire.h"
#include "../common/scm_rights.h"

namespace {

namespace wire = hurray::ipc;
using hurray_test::send_with_fds;

int die(const char *what) {
  std::fprintf(stderr, "batch peer: %s (%s)\n", what, std::strerror(errno));
  return 1;
}

bool hung_up() { return errno == EPIPE || errno == ECONNRESET; }

bool send_msg(int fd, const wire::Message &m) {
  uint8_t buf[wire::kMaxMessage];
  const size_t n = wire::encode(m, buf, sizeof buf);
  return n && send_with_fds(fd, buf, n, {});
}

// One message within 10 s (its descriptors closed): -1 timeout or error, 0
// end of file, else its length; *m parsed, *entries those of a HANDOFF_MANY.
ssize_t recv_msg(int fd, wire::Message *m, std::vector<wire::Message> *entries) {
  std::vector<uint8_t> buf(wire::kMaxBatchMessage);
  std::vector<int> fds;
  const ssize_t r = hurray_test::recv_with_fds(fd, buf.data(), buf.size(), &fds, wire::kMaxBatchFds, 10000);
  const size_t nfds = hurray_test::close_all(fds);
  if (r <= 0) return r;
  if (wire::parse(buf.data(), static_cast<size_t>(r), nfds, m, nullptr) != HURRAY_OK) return -1;
  if (m->type == wire::Type::HandoffMany) {
    entries->resize(wire::kMaxBatch);
    entries->resize(wire::split_many(buf.data(), static_cast<size_t>(r), entries->data()));
  }
  return r;
}

int wait_eof(int fd) {
  for (int i = 0; i < 1000; ++i) {
    wire::Message m;
    std::vector<wire::Message> e;
    errno = 0;
    const ssize_t r = recv_msg(fd, &m, &e);
    if (r == 0 || (r < 0 && errno == ECONNRESET)) return 0;
    if (r < 0) break;
  }
  std::fprintf(stderr, "batch peer: the victim did not hang up within 10 s\n");
  return 1;
}

int sealed_memfd() {
  const int fd = memfd_create("batch-peer", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return -1;
  if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) return -1;
  return fd;
}

wire::Message handoff(uint64_t id, bool memory) {
  wire::Message m{};
  m.type = wire::Type::Handoff;
  m.id = id;
  const hurray_buffer_handle h = {memory ? 4096u : 0u, 4096, HURRAY_DEVICE_CPU,
                                  HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_STANDARD, 0};
  hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr);
  if (memory) {
    m.memory.kind = wire::kKindMemfd;
    m.memory.has_fd = 1;
    m.memory.byte_size = 4096;
  }
  return m;
}

// A HANDOFF_MANY of `count` handoffs from id `first`, each with the memfd
// mfd (when >= 0), `edit` applied to the bytes before it goes with `nfds`
// copies of mfd (all of them when nfds < 0).
template <class Edit>
bool send_many(int fd, uint64_t first, size_t count, int mfd, int nfds, Edit edit) {
  std::vector<wire::Message> e;
  for (size_t i = 0; i < count; ++i) e.push_back(handoff(first + i, mfd >= 0));
  std::vector<uint8_t> buf(wire::kMaxBatchMessage);
  size_t n = wire::encode_many(e.data(), e.size(), buf.data(), buf.size());
  if (!n) return false;
  edit(buf.data(), &n);
  const size_t k = nfds < 0 ? (mfd >= 0 ? count : 0) : static_cast<size_t>(nfds);
  return send_with_fds(fd, buf.data(), n, std::vector<int>(k, mfd));
}

// A HANDOFF of memfd memory naming a slot: `op` (install with a
// descriptor, use without) unless `has_fd` says otherwise.
wire::Message slot_handoff(uint64_t id, uint8_t op, uint16_t slot, bool read_only = false) {
  wire::Message m = handoff(id, true);
  m.memory.slot_op = op;
  m.memory.slot = slot;
  m.memory.has_fd = op == wire::kSlotUse ? 0 : 1;
  if (read_only) m.flags = HURRAY_HANDOFF_READ_ONLY;
  return m;
}

bool send_handoff(int fd, const wire::Message &m, int mfd) {
  uint8_t buf[wire::kMaxMessage];
  const size_t n = wire::encode(m, buf, sizeof buf);
  return n && send_with_fds(fd, buf, n, std::vector<int>(m.memory.has_fd, mfd));
}

// The slot modes (see the top), after the handshake.
int slots(const std::string &mode, int fd) {
  const int a = sealed_memfd(), b = sealed_memfd();
  if (a < 0 || b < 0) return die("memfd");
  std::vector<uint8_t> bytes(4096, 0xA5);
  if (pwrite(a, bytes.data(), 4096, 0) != 4096) return die("pwrite");
  std::fill(bytes.begin(), bytes.end(), 0x5A);
  if (pwrite(b, bytes.data(), 4096, 0) != 4096) return die("pwrite");
  bool ok = true;
  using wire::kSlotInstall, wire::kSlotUse;
  if (mode == "slot-good") {
    ok = send_handoff(fd, slot_handoff(1, kSlotInstall, 0), a) &&
         send_handoff(fd, slot_handoff(2, kSlotUse, 0), a) &&
         send_handoff(fd, slot_handoff(3, kSlotUse, 0), a);
    const wire::Message e[3] = {slot_handoff(4, kSlotUse, 0), slot_handoff(5, kSlotInstall, 1),
                                slot_handoff(6, kSlotUse, 1)};
    std::vector<uint8_t> buf(wire::kMaxBatchMessage);
    const size_t n = wire::encode_many(e, 3, buf.data(), buf.size());
    ok = ok && n && send_with_fds(fd, buf.data(), n, {b});
  } else if (mode == "slot-range" || mode == "slot-unannounced") {
    ok = send_handoff(fd, slot_handoff(1, kSlotInstall, mode == "slot-range" ? 64 : 0), a);
  } else if (mode == "slot-empty") {
    ok = send_handoff(fd, slot_handoff(1, kSlotUse, 3), a);
  } else if (mode == "slot-install-nofd" || mode == "slot-use-fd") {
    wire::Message m = slot_handoff(1, mode == "slot-use-fd" ? kSlotUse : kSlotInstall, 0);
    m.memory.has_fd = mode == "slot-use-fd" ? 1 : 0;  // (encode writes what it is given)
    ok = send_handoff(fd, m, a);
  } else if (mode == "slot-mode") {
    ok = send_handoff(fd, slot_handoff(1, kSlotInstall, 0), a) &&
         send_handoff(fd, slot_handoff(2, kSlotUse, 0, true), a);
  } else if (mode == "slot-many-empty") {
    const wire::Message e[3] = {slot_handoff(1, kSlotInstall, 0), slot_handoff(2, kSlotUse, 0),
                                slot_handoff(3, kSlotUse, 1)};
    std::vector<uint8_t> buf(wire::kMaxBatchMessage);
    const size_t n = wire::encode_many(e, 3, buf.data(), buf.size());
    ok = n && send_with_fds(fd, buf.data(), n, {a});
  } else {
    return die("unknown slot mode");
  }
  close(a);
  close(b);
  if (!ok && !hung_up()) return die("send");
  return wait_eof(fd);
}

int run(const std::string &mode, int fd, long n) {
  const bool v3 = mode.rfind("v3-", 0) == 0;
  const bool v5 = mode.rfind("slot-", 0) == 0 && mode != "slot-unannounced";
  wire::Message h{};
  h.type = wire::Type::Hello;
  h.protocol_version = v3 ? 3 : v5 ? 5 : 4;
  h.device_count = 1;
  h.devices[0] = {HURRAY_DEVICE_CPU, 1u << HURRAY_MEMORY_STANDARD};
  if (!send_msg(fd, h)) return die("send HELLO");
  wire::Message m{};
  std::vector<wire::Message> entries;
  for (wire::Type t : {wire::Type::Hello, wire::Type::Devices, wire::Type::Window})
    if (recv_msg(fd, &m, &entries) <= 0 || m.type != t) return die("no HELLO, DEVICES, WINDOW");
  wire::Message dev{}, win{};
  dev.type = wire::Type::Devices;
  win.type = wire::Type::Window;
  win.window_handoffs = win.window_fds = 128;
  win.window_slots_form = v5;  // (version 5: and no slots of its own)
  if (!send_msg(fd, dev) || !send_msg(fd, win)) return die("send DEVICES, WINDOW");

  long handoffs = 0, singles = 0, manys = 0;
  uint64_t first_id = 0;
  const long want = mode == "good" || mode == "v3-count" ? n : 1;
  while (handoffs < want) {  // the victim's handoffs
    if (recv_msg(fd, &m, &entries) <= 0) return die("no HANDOFF from the victim");
    std::vector<uint64_t> ids;
    if (m.type == wire::Type::Handoff) {
      ids.push_back(m.id);
      ++singles;
    } else if (m.type == wire::Type::HandoffMany) {
      ++manys;
      for (const wire::Message &e : entries) ids.push_back(e.id);
    } else {
      continue;
    }
    if (!first_id) first_id = ids[0];
    handoffs += static_cast<long>(ids.size());
    if (mode == "good") {
      wire::Message rel{};
      rel.type = wire::Type::ReleaseMany;
      rel.count = static_cast<uint16_t>(ids.size());
      std::memcpy(rel.ids64, ids.data(), ids.size() * sizeof(uint64_t));
      if (!send_msg(fd, rel)) return die("send RELEASE_MANY");
    } else if (mode == "v3-count") {
      for (const uint64_t id : ids) {
        wire::Message rel{};
        rel.type = wire::Type::Release;
        rel.id = id;
        if (!send_msg(fd, rel)) return die("send RELEASE");
      }
    }
  }
  if (mode.rfind("slot-", 0) == 0) return slots(mode, fd);
  if (mode == "good" || mode == "v3-count") {
    const std::string s = "H" + std::to_string(singles) + "/M" + std::to_string(manys);
    if (write(1, s.data(), s.size()) != static_cast<ssize_t>(s.size())) return die("write");
    return wait_eof(fd);
  }
  const auto no_edit = [](uint8_t *, size_t *) {};
  const int mfd = sealed_memfd();
  if (mfd < 0) return die("memfd");
  bool ok = true;
  if (mode == "fds-short") {
    ok = send_many(fd, 1, 3, mfd, 2, [](uint8_t *b, size_t *) { b[12] = 2; });
  } else if (mode == "truncated") {
    ok = send_many(fd, 1, 3, mfd, 2, [](uint8_t *b, size_t *len) {
      const size_t last = wire::kEntryHeader + (wire::kHandoffBody);
      *len -= last;  // the third entry left out, the length field and fd count saying so
      const uint32_t body = static_cast<uint32_t>(*len - wire::kHeaderSize);
      std::memcpy(b + 8, &body, 4);
      b[12] = 2;
    });
  } else if (mode == "dup") {
    ok = send_many(fd, 1, 2, mfd, -1, [](uint8_t *b, size_t *) {
      // the second entry's id (at its body's start) made the first's
      const size_t second = wire::kHeaderSize + wire::kManyFixed + 2 * wire::kEntryHeader +
                            wire::kHandoffBody;
      b[second] = 1;
    });
  } else if (mode == "count65") {
    ok = send_many(fd, 1, 2, mfd, -1, [](uint8_t *b, size_t *) { b[wire::kHeaderSize] = 65; });
  } else if (mode == "over-window") {
    // 64 + 50 fit the window of 128; the third's 15th entry does not
    ok = send_many(fd, 1, 64, mfd, -1, no_edit) && send_many(fd, 65, 50, mfd, -1, no_edit) &&
         send_many(fd, 115, 64, mfd, -1, no_edit);
  } else if (mode == "release-unknown" || mode == "release-dup") {
    wire::Message rel{};
    rel.type = wire::Type::ReleaseMany;
    rel.count = 2;
    rel.ids64[0] = first_id;
    rel.ids64[1] = mode == "release-dup" ? first_id : 999999;
    uint8_t buf[wire::kMaxMessage];
    // (encode takes any IDs: the victim's parser is what is tested)
    const size_t k = wire::encode(rel, buf, sizeof buf);
    ok = k && send_with_fds(fd, buf, k, {});
  } else if (mode == "v3-many") {
    ok = send_many(fd, 1, 2, mfd, -1, no_edit);
  } else {
    close(mfd);
    return die("unknown mode");
  }
  close(mfd);
  if (!ok && !hung_up()) return die("send");
  return wait_eof(fd);
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: hurray_ipc_batch_peer MODE FD [N]\n");
    return 1;
  }
  return run(argv[1], std::atoi(argv[2]), argc > 3 ? std::atol(argv[3]) : 1);
}
