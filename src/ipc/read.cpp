// Reading the channel's socket: one thread at a time takes a batch of
// datagrams (recvmmsg) and handles them under the channel's mutex: the
// peer's HELLO and DEVICES, its RELEASEs of what this side sent (BP-IPC-RELEASE,
// BP-REL-ONCE), its HANDOFFs queued in the inbox when this side announced
// their memory and the inbox has room (BP-IPC-ANNOUNCED, BP-IPC-LIMIT);
// a malformed message closes the channel. Plus hurray_ipc_progress, which
// reads until nothing more is there or its timeout passes.
#include <hurray_ipc.h>

#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <vector>

#include "../core/internal.h"
#include "internal.h"
#include "wire.h"

using namespace hurray::detail;
using namespace hurray::ipc;
namespace wire = hurray::ipc;

namespace {

// A RELEASE from the peer (under mu).
void on_release(hurray_ipc_channel *ch, uint64_t id, Deferred &d) {
  const auto it = ch->out.find(id);
  if (it == ch->out.end()) {  // never sent, or already back (BP-REL-ONCE)
    ++ch->stats.releases_refused;
    return;
  }
  d.fn = ch->fn;
  d.user = ch->user;
  d.back.push_back({it->second.handoff, id, HURRAY_IPC_RELEASED});
  ch->out_fds -= it->second.nfds;
  ch->out.erase(it);
  ++ch->stats.released;
  --ch->stats.outstanding;
}

// The descriptors that came with a datagram (a HANDOFF_MANY's: up to
// kMaxBatchFds), the rest closed (then *too_many).
struct Fds {
  int fd[wire::kMaxBatchFds];
  size_t n = 0;
  void close_all() {
    for (size_t i = 0; i < n; ++i) close(fd[i]);
    n = 0;
  }
};
void take_fds(msghdr &mh, Fds *p, bool *too_many) {
  for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; ++i) {
      int f;
      std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
      if (p->n < wire::kMaxBatchFds)
        p->fd[p->n++] = f;
      else {
        close(f);
        *too_many = true;
      }
    }
  }
}

bool announced(const std::vector<wire::DeviceCaps> &devs, uint8_t tag, uint8_t mc) {
  for (const wire::DeviceCaps &dc : devs)
    if (dc.tag == tag) return mc < 32 && ((dc.classes >> mc) & 1u);
  return false;
}

// May this HANDOFF be queued (under mu)? Only memory this side announced in
// its HELLO (BP-IPC-ANNOUNCED: no backend is touched for anything else), and
// within the inbox's limits (BP-IPC-LIMIT).
// `before` handoffs holding `before_fds` descriptors of the same
// HANDOFF_MANY come first (each entry is admitted as a HANDOFF of its own).
hurray_status admit(const hurray_ipc_channel *ch, const Pending &p, hurray_error *err,
                    size_t before = 0, size_t before_fds = 0) {
  const uint8_t tag = p.m.handle[12], mc = p.m.handle[14];
  if (!announced(ch->opts.devices, tag, mc))
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-ANNOUNCED: a HANDOFF of %s memory of class %s, which this side did not "
                "announce in its HELLO%s",
                hurray_device_tag_name(tag), hurray_memory_class_name(mc),
                (ch->opts.flags & HURRAY_IPC_SEND_ONLY) ? " (it is send-only)" : "");
  if (ch->inbox.size() + before >= ch->opts.max_queued ||
      ch->queued_fds + before_fds + p.nfds > ch->opts.max_queued_fds)
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-LIMIT: %zu handoffs with %zu descriptors are queued unreceived (at most "
                "%u and %u)%s",
                ch->inbox.size() + before, ch->queued_fds + before_fds, ch->opts.max_queued,
                ch->opts.max_queued_fds, before ? " counting the HANDOFF_MANY's entries" : "");
  return HURRAY_OK;
}

// BP-IPC-HELLO: HELLO first and once; from a peer whose HELLO said protocol
// version 2 or later, DEVICES second and once (and its tags ones that HELLO
// announced); a version-1 peer sends no DEVICES. An out-of-order message is
// reported at its type field (offset 6).
hurray_status check_order(const hurray_ipc_channel *ch, const Message &m, hurray_error *err) {
  const auto refuse = [err](const char *what, uint32_t v) {
    fill(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, HURRAY_SEVERITY_ERROR, -1, 6,
         "BP-IPC-HELLO: %s (the peer's protocol version %u)", what, v);
    return HURRAY_E_PROTOCOL;
  };
  if (!ch->got_hello) {
    if (m.type == Type::Hello) return HURRAY_OK;
    fill(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, HURRAY_SEVERITY_ERROR, -1, 6,
         "BP-IPC-HELLO: the first message is not HELLO");
    return HURRAY_E_PROTOCOL;
  }
  const uint32_t v = ch->peer.protocol_version;
  if (m.type == Type::Hello) return refuse("HELLO after the handshake", v);
  const bool devices = v >= wire::kDevicesProtocol;
  if (m.type == Type::Devices) {
    if (!devices) return refuse("DEVICES from a peer that does not send it", v);
    if (ch->got_devices) return refuse("DEVICES again", v);
    return wire::check_devices(ch->peer, m, err);
  }
  if (devices && !ch->got_devices) return refuse("the message after HELLO is not DEVICES", v);
  const bool window = v >= wire::kWindowProtocol;
  if (m.type == Type::Window) {
    if (!window) return refuse("WINDOW from a peer that does not send it", v);
    if (ch->got_window) return refuse("WINDOW again", v);
    // the 16-byte form (slots) from a peer of version 5 or later, only
    if (m.window_slots_form != (v >= wire::kSlotProtocol))
      return refuse(v >= wire::kSlotProtocol ? "an 8-byte WINDOW (version 5 sends 16 bytes)"
                                             : "a 16-byte WINDOW (slots) before version 5",
                    v);
    return HURRAY_OK;
  }
  if (window && !ch->got_window) return refuse("the message after DEVICES is not WINDOW", v);
  if ((m.type == Type::HandoffMany || m.type == Type::ReleaseMany) && v < wire::kBatchProtocol)
    return refuse(m.type == Type::HandoffMany ? "HANDOFF_MANY from a peer that does not send it"
                                              : "RELEASE_MANY from a peer that does not send it",
                  v);
  return HURRAY_OK;
}

// BP-IPC-LIMIT across channels: n more descriptors do not fit the
// process's budget.
hurray_status over_budget(size_t n, hurray_error *err) {
  return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
              "BP-IPC-LIMIT: %zu more descriptors do not fit the process's IPC descriptor "
              "budget of %u (%zu held by handoffs queued on all channels; "
              "hurray_ipc_set_fd_budget)",
              n, fd_budget(), fd_budget_held());
}

// A HANDOFF_MANY (parsed and in order; `fds` its descriptors): every entry
// admitted as a HANDOFF of its own (BP-IPC-ANNOUNCED, BP-IPC-LIMIT), then all
// queued; or none, and the descriptors are left to the caller to close.
hurray_status queue_many(hurray_ipc_channel *ch, const uint8_t *bytes, size_t len, Fds &fds,
                         hurray_error *err) {
  // (64 entries of about 1.5 KiB each: on the heap, read once per batch)
  std::vector<Message> entries(wire::kMaxBatch);
  const size_t k = wire::split_many(bytes, len, entries.data());
  std::vector<Pending> ps(k);
  size_t used = 0;
  // where the entry's body starts, less a HANDOFF header: its offsets as in
  // a HANDOFF message, moved to the entry (the error's byte_offset)
  size_t at = wire::kManyFixed + wire::kEntryHeader;
  for (size_t i = 0; i < k; ++i) {
    ps[i].m = entries[i];
    for (uint8_t j = 0; j < entries[i].fd_count; ++j) ps[i].fds[j] = fds.fd[used + j];
    ps[i].nfds = entries[i].fd_count;
    hurray_status st = admit(ch, ps[i], err, i, used);
    if (st == HURRAY_OK) st = check_slot(ch, ps[i].m, at, err);
    at += wire::kEntryHeader +
          (entries[i].view_offset ? wire::kHandoffViewBody : wire::kHandoffBody) +
          (entries[i].id_kind ? wire::kIdentitySize : 0);
    if (st != HURRAY_OK) {
      for (Pending &p : ps) p.nfds = 0;  // still the caller's to close
      return st;
    }
    used += entries[i].fd_count;
  }
  if (!fd_budget_take(used)) return over_budget(used, err);
  fds.n = 0;  // the inbox's now (never closed twice, should a push throw)
  for (Pending &p : ps) {
    ch->inbox.push_back(p);
    ch->queued_fds += p.nfds;
  }
  return HURRAY_OK;
}

// A RELEASE_MANY: every ID one of this side's handoffs still out, or the
// message is malformed (BP-REL-ONCE; nothing of it is applied); then each
// released as by RELEASE.
hurray_status release_many(hurray_ipc_channel *ch, const Message &m, Deferred &d,
                           hurray_error *err) {
  for (size_t i = 0; i < m.count; ++i)
    if (ch->out.find(m.ids64[i]) == ch->out.end()) {
      ch->stats.releases_refused += 1;
      fill(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, HURRAY_SEVERITY_ERROR, -1,
           static_cast<int64_t>(wire::kHeaderSize + wire::kReleaseManyFixed + 8 * i),
           "BP-REL-ONCE: RELEASE_MANY id %zu (%llu) is no handoff of this side's that is out "
           "(never sent, or released already)",
           i, static_cast<unsigned long long>(m.ids64[i]));
      return HURRAY_E_PROTOCOL;
    }
  for (size_t i = 0; i < m.count; ++i) on_release(ch, m.ids64[i], d);
  return HURRAY_OK;
}

}  // namespace

namespace hurray::ipc {

// How long to wait for the first message: -1 forever, 0 not at all.
bool poll_in(int sock, int ms) {
  pollfd pfd{sock, POLLIN, 0};
  int r;
  do r = poll(&pfd, 1, ms);
  while (r < 0 && errno == EINTR);
  return r != 0;
}

// Read up to kBatch datagrams (rd held, not mu), waiting for the first
// when `block`. b->n == 0 and b->error == 0: nothing there.
void recv_batch(int sock, bool block, Batch *b) {
  for (unsigned i = 0; i < kBatch; ++i) {
    b->iov[i] = {b->dg[i].buf, sizeof b->dg[i].buf};
    std::memset(&b->hdr[i], 0, sizeof b->hdr[i]);
    b->hdr[i].msg_hdr.msg_iov = &b->iov[i];
    b->hdr[i].msg_hdr.msg_iovlen = 1;
    b->hdr[i].msg_hdr.msg_control = b->dg[i].control;
    b->hdr[i].msg_hdr.msg_controllen = sizeof b->dg[i].control;
  }
  int r;
  do r = recvmmsg(sock, b->hdr, kBatch,
                  MSG_CMSG_CLOEXEC | (block ? MSG_WAITFORONE : MSG_DONTWAIT), nullptr);
  while (r < 0 && errno == EINTR);
  b->n = r > 0 ? static_cast<unsigned>(r) : 0;
  b->error = r < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? errno : 0;
}

// Handle what recv_batch read (under mu). Returns Message when at least one
// message was handled and the channel is still open, Nothing when nothing
// was read, Closed when the peer is gone, Error for a malformed message.
// *handled counts the messages handled.
Read handle_batch(hurray_ipc_channel *ch, Batch &b, Deferred &d, uint32_t *handled,
                  hurray_error *err) {
  Read result = Read::Nothing;
  for (unsigned i = 0; i < b.n; ++i) {
    msghdr &mh = b.hdr[i].msg_hdr;
    Pending p{};
    Fds fds;
    bool too_many = false;
    take_fds(mh, &fds, &too_many);
    if (result == Read::Closed || result == Read::Error || ch->closed) {
      fds.close_all();  // after the end: only descriptors to close
      continue;
    }
    const size_t len = b.hdr[i].msg_len;
    if (len == 0) {  // end of file: the peer is gone
      shut(ch, HURRAY_IPC_PEER_GONE, "the peer hung up or died", false, d);
      fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the peer hung up or died");
      result = Read::Closed;
      continue;
    }
    hurray_status st;
    if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
      st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "ipc message: longer than %zu bytes or with too many descriptors",
                wire::kMaxBatchMessage);
    else if (too_many)
      st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "ipc message: more than %zu descriptors", wire::kMaxBatchFds);
    else
      st = wire::parse(b.dg[i].buf, len, fds.n, &p.m, err);
    if (st == HURRAY_OK) st = check_order(ch, p.m, err);
    if (st == HURRAY_OK && p.m.type == Type::Handoff) {
      for (size_t j = 0; j < fds.n; ++j) p.fds[j] = fds.fd[j];  // (parse: at most kMaxFds)
      p.nfds = static_cast<uint8_t>(fds.n);
      fds.n = 0;
      st = admit(ch, p, err);
      if (st == HURRAY_OK) st = check_slot(ch, p.m, 0, err);
      if (st == HURRAY_OK && !fd_budget_take(p.nfds)) st = over_budget(p.nfds, err);
    }
    if (st == HURRAY_OK && p.m.type == Type::HandoffMany) {
      // the entries' room: this side's shortage, but the batch is lost
      st = barrier([&] { return queue_many(ch, b.dg[i].buf, len, fds, err); }, [&] {
        return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                  "hurray_ipc: out of memory for a HANDOFF_MANY");
      });
    }
    if (st == HURRAY_OK && p.m.type == Type::ReleaseMany) st = release_many(ch, p.m, d, err);
    if (st != HURRAY_OK) {
      close_fds(p);
      fds.close_all();
      ++ch->stats.messages_rejected;
      // misbehaviour: nothing the peer sent is kept (every descriptor closed)
      shut(ch, HURRAY_IPC_PEER_GONE, "the peer sent a malformed message", true, d);
      result = Read::Error;
      continue;
    }
    switch (p.m.type) {
      case Type::Hello:
        ch->peer = p.m;
        ch->got_hello = true;
        break;
      case Type::Devices:
        ch->peer_devices = p.m;
        ch->got_devices = true;
        break;
      case Type::Window:
        ch->window_handoffs = p.m.window_handoffs;
        ch->window_fds = p.m.window_fds;
        ch->got_window = true;
        // the peer's slots (version 5), for this side's memfds; none for
        // fresh copies (HURRAY_IPC_COPY_PER_SEND), which are never sent again
        if (p.m.window_slots && !(ch->opts.flags & HURRAY_IPC_COPY_PER_SEND))
          ch->peer_slots.assign(p.m.window_slots, hurray_ipc_channel::PeerSlot{0, false, 0});
        break;
      case Type::Release:
        on_release(ch, p.m.id, d);
        break;
      case Type::Handoff:
        ch->inbox.push_back(p);
        ch->queued_fds += p.nfds;
        break;
      case Type::HandoffMany:  // queued above, entry by entry
      case Type::ReleaseMany:  // released above
        break;
    }
    ++*handled;
    result = Read::Message;
  }
  if (b.n == 0 && b.error && !ch->closed) {
    shut(ch, HURRAY_IPC_PEER_GONE, "the peer hung up or died", false, d);
    fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the peer is gone (%s)",
         std::strerror(b.error));
    result = Read::Closed;
  }
  update_ready(ch);  // a handoff queued: the readiness set says so
  return result;
}

bool lock_reader(hurray_ipc_channel *ch, int ms) {
  if (ms < 0) {
    ch->rd.lock();
    return true;
  }
  // Another thread reading the same channel is rare: poll for the lock
  // (std::timed_mutex's timed lock is invisible to ThreadSanitizer).
  const int64_t deadline = now_ms() + ms;
  for (;;) {
    if (ch->rd.try_lock()) return true;
    if (ms == 0 || now_ms() >= deadline) return false;
    const timespec pause{0, 200 * 1000};
    nanosleep(&pause, nullptr);
  }
}

}  // namespace hurray::ipc

extern "C" {

HURRAY_API hurray_status hurray_ipc_progress(hurray_ipc_channel *ch, int32_t timeout_ms,
                                             uint32_t *count, hurray_error *err) {
  if (count) *count = 0;
  if (!ch) return null_argument(err, "hurray_ipc_progress", "channel");
  hurray_status st = HURRAY_OK;
  uint32_t handled = 0;
  const int64_t start = now_ms();
  channel_ref(ch);  // keeps the socket open while this thread reads without mu
  for (;;) {
    Deferred d;
    const uint32_t before = handled;
    Read r = Read::Error;  // what the barrier leaves
    // through the barrier round by round: the callbacks below run anyway
    st = guarded(err, "hurray_ipc_progress", [&] {
      r = read_round(ch, timeout_ms, start, d, &handled, err, [] { return false; });
      return HURRAY_OK;
    });
    finish(d);  // callbacks run without the locks
    if (st != HURRAY_OK) break;
    if (r == Read::Closed || r == Read::Error) {
      st = r == Read::Error ? HURRAY_E_PROTOCOL : HURRAY_E_IO;
      break;
    }
    if (r == Read::Message) {
      if (handled - before < kBatch) break;
      timeout_ms = 0;  // a full batch: take what else is there, without waiting
      continue;
    }
    if (timeout_ms == 0 || (timeout_ms > 0 && left_ms(timeout_ms, start) == 0)) break;
  }
  channel_unref(ch);
  if (count) *count = handled;
  return st;
}

}  // extern "C"
