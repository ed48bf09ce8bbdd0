// Sending: writing one message to the channel's socket (send_msg: when the
// socket is full it reads what the peer sent meanwhile, and a peer that
// reads nothing for io_timeout_ms gets its channel closed), and
// hurray_ipc_send, which checks a buffer under the IPC rules and the peer's
// devices before a byte is sent, describes its memory (a memfd, or the
// backend's IPC handle) and its event, and keeps the export that holds it
// alive until the peer's RELEASE (BP-REFCOUNT, BP-IPC-RELEASE).
#include <hurray_ipc.h>
#include <hurray_backend.h>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <mutex>

#include "../core/internal.h"
#include "../handoff/handoff.h"
#include "../runtime/backends.h"
#include "../runtime/dispatch.h"
#include "internal.h"
#include "wire.h"
#include "../core/struct_size.h"

using namespace hurray::detail;
using namespace hurray::ipc;
namespace wire = hurray::ipc;

namespace hurray::ipc {

// Send one message (under mu). When the socket is full, read what the peer
// sent meanwhile (so two sides sending at each other cannot deadlock), for
// at most the channel's io_timeout_ms: a peer that stops reading gets its
// channel closed, the caller is not blocked for ever.
hurray_status send_msg(hurray_ipc_channel *ch, const uint8_t *bytes, size_t n, const int *fds,
                       size_t nfds, Deferred &d, hurray_error *err, bool *blocked) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * wire::kMaxBatchFds)];
  int64_t start = -1;  // of the wait for room, once the socket was full
  for (;;) {
    const int fd = ch->sock;
    if (ch->closed)
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the channel is closed (%s)",
                  ch->why_closed);
    iovec iov{const_cast<uint8_t *>(bytes), n};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds) {
      std::memset(control, 0, sizeof control);
      mh.msg_control = control;
      mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
      cmsghdr *c = CMSG_FIRSTHDR(&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
      std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    const ssize_t r = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r == static_cast<ssize_t>(n)) {
      if (blocked) watch_room(ch, false);  // a try_send got through: stop watching for room
      return HURRAY_OK;
    }
    if (r >= 0) return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "[sendmsg] short write");
    const int e = errno;
    if (e == EINTR) continue;
    if ((e == EAGAIN || e == EWOULDBLOCK) && blocked) {  // not waited for
      *blocked = true;
      watch_room(ch, true);
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: no room in the socket");
    }
    if (e == EAGAIN || e == EWOULDBLOCK) {
      if (start < 0) start = now_ms();
      const int32_t limit = ch->opts.io_timeout_ms;
      if (limit >= 0 && left_ms(limit, start) == 0) {
        shut(ch, HURRAY_IPC_PEER_GONE, "the peer stopped reading", false, d);
        return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                    "hurray_ipc: the peer read nothing for %d ms (io_timeout_ms); the channel "
                    "is closed",
                    limit);
      }
      pollfd pfd{fd, POLLOUT | POLLIN, 0};
      int pr;
      do pr = poll(&pfd, 1, left_ms(limit, start));
      while (pr < 0 && errno == EINTR);
      if ((pfd.revents & POLLIN) && ch->rd.try_lock()) {
        Batch *b = ch->rbatch;  // the reader's: rd is held
        recv_batch(fd, false, b);
        uint32_t handled = 0;
        const Read rd = handle_batch(ch, *b, d, &handled, err);
        ch->rd.unlock();
        if (rd == Read::Closed || rd == Read::Error)
          return rd == Read::Error ? HURRAY_E_PROTOCOL : HURRAY_E_IO;
      } else if (!(pfd.revents & POLLOUT)) {
        // the reader is busy elsewhere: give it a moment
        poll(nullptr, 0, 1);
      }
      continue;
    }
    if (e == EPIPE || e == ECONNRESET || e == ENOTCONN) {
      shut(ch, HURRAY_IPC_PEER_GONE, "the peer hung up or died", false, d);
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the peer is gone (%s)",
                  std::strerror(e));
    }
    return io_fail(err, "sendmsg", e);
  }
}

}  // namespace hurray::ipc

namespace {

// Build the memory part of a HANDOFF for `buffer`. *fd is the descriptor to
// pass, -1 if none; *own_fd says whether it is ours to close once sent (a
// CPU allocation's memfd is lent, not dup'ed: the buffer outlives the send).
hurray_status describe_memory(hurray_buffer *buffer, const hurray_buffer_handle &h,
                              WireHandle *mem, int *fd, bool *own_fd, hurray_error *err) {
  *fd = -1;
  *own_fd = false;
  std::memset(mem, 0, sizeof *mem);
  if (!h.byte_size) return HURRAY_OK;
  // The backend's own IPC handle: a memfd for the CPU ('CMFD'), an
  // OPAQUE_FD for Vulkan, a vendor handle in `bytes` for CUDA, HIP, Level
  // Zero.
  Backend be;
  hurray_backend_allocation a;
  hurray_backend_ipc_handle ih;
  bool lent = false;  // ih.fd is the allocation's own (the CPU backend's memfd): not closed
  if (buffer_allocation(buffer, &be, &a)) {
    // no dup and close per send where the backend lends its descriptor: the
    // buffer (held by the caller, then by the export) keeps it open, and
    // sendmsg takes its own reference; else ih.fd is ours to close
    if (const hurray_status st = dispatch::ipc_lend_memory(be, &a, &ih, &lent, err)) return st;
  } else if (h.device_tag == HURRAY_DEVICE_CPU) {
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc_send: this CPU buffer cannot be shared with another process; "
                "allocate it with hurray_buffer_alloc() and HURRAY_ALLOC_SHAREABLE");
  } else {
    // wrapped device memory: its plugin exports the allocation that holds it
    if (const hurray_status st = export_wrapped(buffer, &be, &ih, err)) return st;  // ih.fd is ours
  }
  if (ih.byte_size < h.byte_size) {
    const unsigned long long got = ih.byte_size;
    if (!lent) dispatch::close_returned(ih.fd);
    return dispatch::refuse(be, "ipc_export_memory", HURRAY_E_BACKEND, err,
                            "exported %llu bytes for a %llu-byte buffer", got,
                            static_cast<unsigned long long>(h.byte_size));
  }
  if (h.device_tag == HURRAY_DEVICE_CPU) {
    // a CPU view travels as its parent's memfd at the view's offset (a
    // device view's offset rides beside the backend's handle: view_offset)
    const uint64_t at = buffer_view_offset(buffer);
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    if (at % page) {
      if (!lent) dispatch::close_returned(ih.fd);
      return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                  "hurray_ipc_send: a CPU view at offset %llu is not page-aligned (%llu); a "
                  "memfd is mapped by pages",
                  static_cast<unsigned long long>(at), static_cast<unsigned long long>(page));
    }
    ih.offset += at;     // the memory sent starts at the view
    ih.byte_size -= at;  // and runs to the memfd's end (at < byte_size: inside it)
  }
  mem->kind = ih.kind;
  mem->has_fd = ih.fd >= 0 ? 1 : 0;
  mem->byte_size = ih.byte_size;
  mem->offset = ih.offset;
  std::memcpy(mem->bytes, ih.bytes, sizeof mem->bytes);
  *fd = ih.fd;
  *own_fd = ih.fd >= 0 && !lent;
  return HURRAY_OK;
}

bool peer_supports(const Message &peer, uint8_t tag, uint8_t mc) {
  for (uint16_t i = 0; i < peer.device_count; ++i)
    if (peer.devices[i].tag == tag) return mc < 32 && ((peer.devices[i].classes >> mc) & 1u);
  return false;
}

}  // namespace

namespace hurray::ipc {

// Everything of a send before the channel's lock (see internal.h).
hurray_status prepare(hurray_ipc_channel *ch, hurray_buffer *buffer,
                      const hurray_export_desc *desc, Prepared *p, hurray_error *err) {
  if (!ch || !buffer) return null_argument(err, "hurray_ipc_send", ch ? "buffer" : "channel");
  // Everything is checked before a byte is sent: the handle under the IPC
  // rules (BP-ALIGN-IPC, BP-SYNC-IPC), the peer's devices, shareability.
  hurray_buffer_handle h;
  if (const hurray_status st = hurray_buffer_get_handle(buffer, &h, err)) return st;
  SizeRefusal small;
  if (desc && below_first_size<hurray_export_desc>("hurray_ipc_send", desc->size, &small))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s", small.text);
  if (desc) {
    if (desc->sync_mode > 0xFF)
      return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_VALUE,
                  "BP-SYNC-VALUE: sync_mode %u is not defined", desc->sync_mode);
    h.sync_mode = static_cast<uint8_t>(desc->sync_mode);
  }
  if (const hurray_status st = hurray_handle_validate(&h, &ipc_policy(), err)) return st;
  if (h.sync_mode == HURRAY_SYNC_CONSUMER_STREAM)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_IPC,
                "BP-SYNC-IPC: sending %s buffers for a consumer stream is not implemented yet "
                "(PRODUCER_SYNCED and EVENT are)",
                hurray_device_tag_name(h.device_tag));
  if (!peer_supports(ch->peer, h.device_tag, h.memory_class))
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                "BP-PUT-DEVICE: the peer (pid %d) did not announce %s memory of class %s",
                ch->peer_pid, hurray_device_tag_name(h.device_tag),
                hurray_memory_class_name(h.memory_class));
  // an untrusted consumer gets memory of its own (HURRAY_IPC_COPY_PER_SEND)
  hurray_buffer *copy = nullptr;
  if ((ch->opts.flags & HURRAY_IPC_COPY_PER_SEND) && h.device_tag == HURRAY_DEVICE_CPU &&
      h.byte_size) {
    if (const hurray_status st = hurray::ipc::fresh_copy(buffer, h, &copy, err)) return st;
    buffer = copy;
  }
  struct Drop {  // the export holds its own reference to the copy
    hurray_buffer *b;
    ~Drop() {
      if (b) hurray_buffer_unref(b);
    }
  } drop{copy};
  *p = Prepared{};
  Message &m = p->m;
  m.type = Type::Handoff;
  int *const fds = p->fds;
  bool &own_fd = p->own_fd;
  int &nfds = p->nfds;
  int &event_fd = p->event_fd;  // ours to close
  hurray_handoff &local = p->local;
  if (const hurray_status st = describe_memory(buffer, h, &m.memory, &fds[0], &own_fd, err))
    return st;
  nfds = fds[0] >= 0 ? 1 : 0;
  // the memory object, for the peer's slots (not a fresh copy: never again)
  if (h.device_tag == HURRAY_DEVICE_CPU && !copy) p->serial = buffer_memory_serial(buffer);
  // a view of device memory: the backend exported its parent's, the offset rides beside
  if (h.device_tag != HURRAY_DEVICE_CPU && h.byte_size) m.view_offset = buffer_view_offset(buffer);
  if (m.view_offset && ch->peer.protocol_version < wire::kViewProtocol) {
    if (own_fd) close(fds[0]);
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc_send: the peer speaks IPC protocol version %u, which cannot carry "
                "a view's offset (version %u can)",
                ch->peer.protocol_version, wire::kViewProtocol);
  }
  if (h.sync_mode == HURRAY_SYNC_EVENT) {
    // the event travels as the backend's IPC handle (BP-SYNC-IPC allowed it)
    Backend be;
    hurray_backend_allocation a;
    hurray_backend_ipc_handle eh;
    eh.fd = -1;
    hurray_status est = HURRAY_OK;
    if (!buffer_allocation(buffer, &be, &a))  // device memory that crosses is always ours
      est = fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_IPC,
                 "BP-SYNC-IPC: no backend allocation behind this %s buffer",
                 hurray_device_tag_name(h.device_tag));
    if (est == HURRAY_OK && !desc->sync_object)
      est = fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_PAYLOAD, "BP-SYNC-PAYLOAD: EVENT needs an event");
    if (est == HURRAY_OK)  // eh.fd is ours once it succeeds
      est = dispatch::ipc_export_event(be, a.device, desc->sync_object, &eh, err);
    if (est != HURRAY_OK) {  // dispatch closed eh.fd of a failed export
      if (own_fd) close(fds[0]);
      return est;
    }
    m.event.kind = eh.kind;
    m.event.has_fd = eh.fd >= 0 ? 1 : 0;
    m.event.byte_size = eh.byte_size;
    m.event.offset = eh.offset;
    std::memcpy(m.event.bytes, eh.bytes, sizeof m.event.bytes);
    m.sync_value = desc->sync_value;
    if (eh.fd >= 0) fds[nfds++] = event_fd = eh.fd;
  }
  if (const hurray_status est = hurray_buffer_export(buffer, desc, &local, err); est != HURRAY_OK) {
    if (own_fd) close(fds[0]);
    if (event_fd >= 0) close(event_fd);
    return est;
  }
  hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr);
  m.flags = local.flags & wire::kHandoffFlags;
  m.device_ordinal = local.device_ordinal;
  if (ch->peer.protocol_version >= wire::kIdentityProtocol)  // the device's identity too
    hurray::ipc::describe_identity(h.device_tag, m.device_ordinal, &m);
  // BP-IPC-DEVICE-ID: not to a peer whose DEVICES shows it lacks that device
  if (const hurray_status ist = hurray::ipc::check_peer_identity(ch, m, err); ist != HURRAY_OK) {
    if (own_fd) close(fds[0]);
    if (event_fd >= 0) close(event_fd);
    (void)hurray_handoff_release(&local, nullptr);
    return ist;
  }
  if ((m.flags & HURRAY_HANDOFF_READ_ONLY) && h.device_tag == HURRAY_DEVICE_CPU && fds[0] >= 0) {
    // BP-IPC-RO: the consumer gets a descriptor it cannot map writable
    const int ro = hurray::ipc::reopen_read_only(fds[0], err);
    if (ro < 0) {
      if (own_fd) close(fds[0]);
      if (event_fd >= 0) close(event_fd);
      (void)hurray_handoff_release(&local, nullptr);
      return err ? static_cast<hurray_status>(err->status) : HURRAY_E_UNSUPPORTED;
    }
    if (own_fd) close(fds[0]);
    fds[0] = ro;
    own_fd = true;
  }
  return HURRAY_OK;
}

void discard(Prepared &p, bool sent) {
  if (p.own_fd) close(p.fds[0]);  // the peer has its own copies now (or nothing was sent)
  if (p.event_fd >= 0) close(p.event_fd);
  p.own_fd = false;
  p.event_fd = -1;
  if (!sent) (void)hurray_handoff_release(&p.local, nullptr);
}

}  // namespace hurray::ipc

namespace {

// hurray_ipc_send, and hurray_ipc_try_send (`blocked` non-NULL: a full
// socket is *blocked = true, HURRAY_OK, nothing sent or held).
hurray_status send_one(hurray_ipc_channel *ch, hurray_buffer *buffer,
                       const hurray_export_desc *desc, uint64_t *id, bool *blocked,
                       hurray_error *err) {
  Prepared prep;
  if (const hurray_status st = prepare(ch, buffer, desc, &prep, err)) return st;
  Message &m = prep.m;
  const int *fds = prep.fds;
  const int nfds = prep.nfds;
  const hurray_handoff &local = prep.local;
  Deferred d;
  // through the barrier here, not at the entry point: the prepared export
  // is discarded and the deferred work done whatever happens
  hurray_status st = HURRAY_OK;
  st = guarded(err, "hurray_ipc_send", [&] {
    const int64_t start = now_ms();
    // flow control: not beyond the window a peer of version 3 announced
    const auto open = [ch, nfds] {
      return !ch->got_window || (ch->out.size() < ch->window_handoffs &&
                                 ch->out_fds + static_cast<size_t>(nfds) <= ch->window_fds);
    };
    for (;;) {
      std::unique_lock<std::mutex> lock(ch->mu);
      if (!ch->closed && !open()) {
        const int32_t limit = ch->opts.io_timeout_ms;
        if (blocked) {  // try_send: the RELEASE that opens it makes hurray_ipc_fd readable
          *blocked = true;
          st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the peer's window is full");
          break;
        }
        const bool waited_out = limit >= 0 && left_ms(limit, start) == 0;
        if (waited_out) {
          st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                    "hurray_ipc_send: the peer's window (%u handoffs, %u descriptors) stayed "
                    "full for %d ms (io_timeout_ms); nothing was sent, the channel stays open",
                    ch->window_handoffs, ch->window_fds, limit);
          break;
        }
        lock.unlock();  // read the RELEASEs that open it (a closed channel: sent below fails)
        uint32_t handled = 0;
        hurray_error ignored;
        // in slices of 10 ms at most: another thread may be the one reading them
        const int left = left_ms(limit, start);
        (void)read_round(ch, left < 0 || left > 10 ? 10 : left, now_ms(), d, &handled, &ignored,
                         [&] { return ch->closed || open(); });
        finish(d);
        continue;
      }
      m.id = ch->next_id++;
      SlotUndo undo;
      assign_slot(ch, &prep, &undo);  // memory the peer holds goes without its descriptor
      uint8_t buf[wire::kMaxMessage];
      const size_t n = wire::encode(m, buf, sizeof buf);
      st = send_msg(ch, buf, n, fds, static_cast<size_t>(prep.nfds), d, err, blocked);
      if (st != HURRAY_OK) unassign_slot(ch, &prep, undo);
      if (st == HURRAY_OK) {
        ch->out.emplace(m.id, hurray_ipc_channel::Out{local, static_cast<uint8_t>(prep.nfds)});
        ch->out_fds += static_cast<size_t>(prep.nfds);
        ++ch->stats.sent;
        ++ch->stats.outstanding;
      }
      break;
    }
    return st;
  });
  discard(prep, st == HURRAY_OK);
  finish(d);
  if (st == HURRAY_OK && id) *id = m.id;
  if (blocked && *blocked) {  // nothing went: the ID is not used
    if (err) *err = hurray_error{};
    return HURRAY_OK;
  }
  return st;
}

}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_ipc_send(hurray_ipc_channel *ch, hurray_buffer *buffer,
                                         const hurray_export_desc *desc, uint64_t *id,
                                         hurray_error *err) {
  return send_one(ch, buffer, desc, id, nullptr, err);
}

HURRAY_API hurray_status hurray_ipc_try_send(hurray_ipc_channel *ch, hurray_buffer *buffer,
                                             const hurray_export_desc *desc, uint64_t *id,
                                             hurray_error *err) {
  if (!id) return null_argument(err, "hurray_ipc_try_send", "id");
  *id = 0;
  bool blocked = false;
  return send_one(ch, buffer, desc, id, &blocked, err);
}

}  // extern "C"
