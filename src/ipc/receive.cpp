// The consumer's side of a received buffer: hurray_ipc_receive takes the
// next queued HANDOFF (its handle checked under the IPC rules) and imports
// it through its backend (the CPU backend checks a memfd, BP-IPC-SEAL, and
// maps it), or reuses a CPU mapping kept from an earlier release; the event
// of an EVENT handoff is opened through the backend too. The result is
// wrapped with hurray_handoff_wrap(), whose free function frees the import
// through its backend (or caches a CPU mapping) and sends RELEASE, so
// release-exactly-once (BP-REL-ONCE) is the handoff layer's own;
// hurray_ipc_release reports how sending that RELEASE went.
#include <hurray_ipc.h>
#include <hurray_backend.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

#include "../core/internal.h"
#include "../runtime/backends.h"
#include "../runtime/dispatch.h"
#include "internal.h"
#include "wire.h"

using namespace hurray::detail;
using namespace hurray::ipc;
namespace wire = hurray::ipc;

namespace {

// ---- the consumer's side of a received buffer ----

// One received buffer: what its release undoes.
struct Imported {
  hurray_ipc_channel *ch;  // a reference
  uint64_t id;
  bool backend_owned;      // freed through its backend (or kept in the cache)
  bool cacheable;          // a CPU mapping: `key` is its identity
  CachedMap key;
  Backend backend;
  hurray_backend_allocation alloc;
};

// hurray_ipc_release() asks the free function below how the release went.
struct Capture {
  bool called = false;
  hurray_status status = HURRAY_OK;
  hurray_error err{};
};
thread_local Capture *t_capture = nullptr;

}  // namespace

namespace hurray::ipc {

thread_local std::vector<Collected> *t_collect = nullptr;

hurray_status send_release(hurray_ipc_channel *ch, uint64_t id, hurray_error *err) {
  uint8_t buf[wire::kMaxMessage];
  Message m{};
  m.type = Type::Release;
  m.id = id;
  const size_t n = wire::encode(m, buf, sizeof buf);
  Deferred d;
  // called from a release (the free function of an imported buffer),
  // through C: nothing may escape, and the deferred work runs anyway
  const hurray_status st = guarded(err, "hurray_ipc", [&] {
    std::lock_guard<std::mutex> lock(ch->mu);
    const hurray_status sent = send_msg(ch, buf, n, nullptr, 0, d, err);
    if (sent == HURRAY_OK)
      ++ch->stats.releases_sent;
    else
      ++ch->stats.releases_failed;
    return sent;
  });
  finish(d);
  return st;
}

}  // namespace hurray::ipc

namespace {

void free_imported(void *user, void *) {
  auto *r = static_cast<Imported *>(user);
  if (r->backend_owned && r->cacheable) {
    bool kept = false;
    // Kept (and the two below): fallbacks inside a free function called
    // through C, not boundaries: with no memory to cache the mapping it is
    // freed, with none to collect the RELEASE it is sent on its own, with
    // none to list the buffers to take back they go at close.
    try {
      std::lock_guard<std::mutex> lock(r->ch->mu);
      if (!r->ch->closed && r->key.byte_size <= kCacheBytes) {
        r->key.backend = r->backend;
        r->key.alloc = r->alloc;
        r->ch->maps.push_back(r->key);
        r->ch->map_bytes += r->key.byte_size;
        kept = true;
        while (r->ch->maps.size() > kCacheEntries || r->ch->map_bytes > kCacheBytes) {
          CachedMap old = r->ch->maps.front();
          r->ch->maps.pop_front();
          r->ch->map_bytes -= old.byte_size;
          dispatch::free(old.backend, &old.alloc);
        }
      }
    } catch (...) {
      kept = false;  // the mapping was not recorded: freed below
    }
    if (kept) r->backend_owned = false;
  }
  if (r->backend_owned) dispatch::free(r->backend, &r->alloc);
  if (t_collect) {  // hurray_ipc_release_many: its RELEASE goes with the batch
    try {
      t_collect->push_back({r->ch, r->id});  // with the record's channel reference
      delete r;
      return;
    } catch (...) {
      // no room to collect it: sent on its own below
    }
  }
  Capture *c = t_capture;
  t_capture = nullptr;  // releases a release callback may make report elsewhere
  const hurray_status st = send_release(r->ch, r->id, c ? &c->err : nullptr);
  t_capture = c;
  if (c) {
    c->called = true;
    c->status = st;
  }
  channel_unref(r->ch);
  delete r;
}

// The event_free_fn of a received EVENT handoff: the backend's event_release.
void release_imported_event(void *user, void *event) {
  const auto *ref = static_cast<const DeviceRef *>(user);
  if (ref) dispatch::event_release(ref->backend, ref->device, event);
}

// Import CPU memory (a memfd, *ih as it came; ih->fd stays p's) into
// r->alloc: a mapping kept from an earlier release of the same file, kind,
// offset, size and access when there is one, else the CPU backend's import,
// which checks the descriptor (BP-IPC-SEAL, its size) before mapping it. The
// backend maps writable what was opened read-write: a writable handoff needs
// such a descriptor, and a READ_ONLY one is imported through a read-only
// reopen of it (BP-IPC-RO, on this side too).
// A HANDOFF that named a slot (protocol version 5) was resolved when taken:
// a cached mapping, or a copy of the slot's descriptor whose key is known
// (no fstat).
hurray_status import_host(hurray_ipc_channel *ch, Imported *r, const Backend &be,
                          const hurray_buffer_handle &h, const Pending &p,
                          hurray_backend_ipc_handle *ih, hurray_error *err) {
  const Message &m = p.m;
  const bool writable = !(m.flags & HURRAY_HANDOFF_READ_ONLY);
  if (p.hit || p.keyed) {
    r->cacheable = true;
    r->key = p.cached;
    r->key.backend = be;
    r->key.alloc = hurray_backend_allocation{};
    if (p.hit) {
      r->alloc = p.cached.alloc;
      return HURRAY_OK;
    }
  }
  struct stat sb;
  if (!p.keyed && ih->fd >= 0 && fstat(ih->fd, &sb) == 0) {
    r->cacheable = true;
    r->key = CachedMap{sb.st_dev, sb.st_ino, ih->kind, ih->offset, ih->byte_size, writable, be,
                       hurray_backend_allocation{}};
    std::lock_guard<std::mutex> lock(ch->mu);
    // oldest first: a producer cycling through a pool sends again what was
    // released longest ago, found at once (any match maps the same memory)
    for (auto it = ch->maps.begin(); it != ch->maps.end(); ++it) {
      if (it->dev == sb.st_dev && it->ino == sb.st_ino && it->kind == ih->kind &&
          it->offset == ih->offset && it->byte_size == ih->byte_size &&
          it->writable == writable &&
          reinterpret_cast<uintptr_t>(it->alloc.data) % h.alignment == 0) {
        r->alloc = it->alloc;
        ch->map_bytes -= it->byte_size;
        ch->maps.erase(it);
        return HURRAY_OK;
      }
    }
  }
  int ro = -1;  // ours to close
  if (ih->fd >= 0) {
    const int mode = fcntl(ih->fd, F_GETFL);
    const bool rw = mode >= 0 && (mode & O_ACCMODE) == O_RDWR;
    if (writable && !rw)
      return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "ipc message: the memory descriptor of a writable handoff is read-only: it "
                  "cannot be mapped writable");
    if (!writable && rw) {
      ro = hurray::ipc::reopen_read_only(ih->fd, err);
      if (ro < 0) return err ? static_cast<hurray_status>(err->status) : HURRAY_E_UNSUPPORTED;
      ih->fd = ro;
    }
  }
  const hurray_status st =
      dispatch::ipc_import_memory(be, m.device_ordinal, ih, h.memory_class, &r->alloc, err);
  if (ro >= 0) close(ro);
  if (st == HURRAY_OK && reinterpret_cast<uintptr_t>(r->alloc.data) % h.alignment != 0) {
    const unsigned got = r->alloc.alignment;
    dispatch::free(be, &r->alloc);
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "ipc message: the memory handle asks for a mapping aligned to %u bytes; the "
                "buffer needs %u (BP-ALIGN-ADDR)",
                got, h.alignment);
  }
  return st;
}

// Turn a received HANDOFF into a handoff of this process. Consumes p's fds.
hurray_status import(hurray_ipc_channel *ch, Pending &p, hurray_handoff *out, hurray_error *err) {
  const Message &m = p.m;
  hurray_buffer_handle h;
  hurray_handle_decode(m.handle, sizeof m.handle, &h, nullptr);
  auto *r = new (std::nothrow) Imported{};
  if (!r) {
    close_fds(p);
    return out_of_memory(err, "hurray_ipc");
  }
  r->id = m.id;
  r->ch = ch;
  void *data = nullptr;
  uint32_t flags = 0;
  void *event = nullptr;                // EVENT: the imported event
  const DeviceRef *event_ref = nullptr;  // and where to release it
  Backend be;
  // the device of the identity it carries, on this side (BP-IPC-DEVICE-ID)
  hurray_status st = hurray::ipc::map_identity(&p.m, err);
  if (st == HURRAY_OK) st = backend_device(h.device_tag, m.device_ordinal, &be, err);
  if (st == HURRAY_OK && m.handle[13] == HURRAY_SYNC_EVENT) {
    // the producer's event, opened here (BP-SYNC-WAIT happens at acquire)
    hurray_backend_ipc_handle eh{};
    eh.kind = m.event.kind;
    eh.fd = m.event.has_fd ? p.fds[m.memory.has_fd] : -1;
    eh.byte_size = m.event.byte_size;
    eh.offset = m.event.offset;
    std::memcpy(eh.bytes, m.event.bytes, sizeof eh.bytes);
    st = dispatch::ipc_import_event(be, m.device_ordinal, &eh, &event, err);
    if (st == HURRAY_OK) event_ref = device_ref(be, m.device_ordinal);
  }
  if (st == HURRAY_OK && h.byte_size) {
    hurray_backend_ipc_handle ih{};
    ih.kind = m.memory.kind;
    ih.fd = m.memory.has_fd ? p.fds[0] : -1;
    ih.byte_size = m.memory.byte_size;
    ih.offset = m.memory.offset;
    std::memcpy(ih.bytes, m.memory.bytes, sizeof ih.bytes);
    if (h.device_tag == HURRAY_DEVICE_CPU)
      st = import_host(ch, r, be, h, p, &ih, err);
    else
      st = dispatch::ipc_import_memory(be, m.device_ordinal, &ih, h.memory_class, &r->alloc, err);
    if (st == HURRAY_OK) {
      r->backend_owned = true;
      r->backend = be;
      data = r->alloc.data;
      flags = r->alloc.flags & HURRAY_HANDOFF_OPAQUE_DATA;
      // a view: the buffer starts view_offset bytes into what was imported
      if (m.view_offset && (m.view_offset % h.alignment || m.view_offset > r->alloc.byte_size ||
                            h.byte_size > r->alloc.byte_size - m.view_offset))
        st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "ipc message: a %llu-byte view at offset %llu (alignment %u) of %llu "
                  "imported bytes (BP-VIEW-BOUNDS)",
                  static_cast<unsigned long long>(h.byte_size),
                  static_cast<unsigned long long>(m.view_offset), h.alignment,
                  static_cast<unsigned long long>(r->alloc.byte_size));
      else if (m.view_offset && !flags)
        data = static_cast<unsigned char *>(data) + m.view_offset;
    }
  }
  close_fds(p);
  // a cached mapping taken for a slot that no import used (a malformed
  // handoff, or one of 0 bytes)
  if (p.hit && !r->backend_owned) dispatch::free(p.cached.backend, &p.cached.alloc);
  if (st == HURRAY_OK) {
    hurray_buffer_desc bd = HURRAY_BUFFER_DESC_INIT;
    bd.handle = h;
    bd.handle.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
    bd.flags = flags | (m.flags & HURRAY_HANDOFF_QPARAM);
    bd.data = data;
    bd.device_ordinal = m.device_ordinal;
    bd.free_fn = free_imported;
    bd.free_user = r;
    hurray_export_desc ed = HURRAY_EXPORT_DESC_INIT;
    ed.flags = m.flags & HURRAY_HANDOFF_READ_ONLY;
    if (event) {  // acquire waits on it; it is released once (BP-EVREL-ONCE)
      ed.sync_mode = HURRAY_SYNC_EVENT;
      ed.sync_object = event;
      ed.sync_value = m.sync_value;
      ed.event_free_fn = release_imported_event;
      ed.event_user = const_cast<DeviceRef *>(event_ref);
    }
    channel_ref(ch);  // the record's, dropped by free_imported
    st = hurray_handoff_wrap(nullptr, &bd, &ed, out, err);
    if (st == HURRAY_OK && m.view_offset && (flags & HURRAY_HANDOFF_OPAQUE_DATA)) {
      out->flags |= HURRAY_HANDOFF_OPAQUE_OFFSET;  // a view of an opaque object
      out->reserved[0] = m.view_offset;
    }
    if (st == HURRAY_OK) return HURRAY_OK;
    channel_unref(ch);
  }
  if (event) release_imported_event(const_cast<DeviceRef *>(event_ref), event);
  if (r->backend_owned) dispatch::free(r->backend, &r->alloc);
  delete r;
  if (st == HURRAY_E_PROTOCOL) {  // what the peer sent is malformed: the channel closes
    Deferred d;
    try {  // kept: a fallback (see free_imported), the channel closes anyway
      std::lock_guard<std::mutex> lock(ch->mu);
      ++ch->stats.messages_rejected;
      shut(ch, HURRAY_IPC_PEER_GONE, "the peer sent an unusable handoff", true, d);
    } catch (...) {
      // out of memory for the list of buffers to take back: they go at close
    }
    finish(d);
    return st;
  }
  // give the buffer back to the producer at once
  hurray_error ignored;
  (void)send_release(ch, m.id, &ignored);
  return st;
}

// Take the next queued handoff (under mu): 1 taken, 0 none, -1 refused (its
// handle breaks the IPC rules: the channel is closed, *st says why).
int take(hurray_ipc_channel *ch, Pending *p, Deferred &d, hurray_status *st, hurray_error *err) {
  if (ch->inbox.empty()) return 0;
  *p = ch->inbox.front();
  ch->inbox.pop_front();
  ch->queued_fds -= p->nfds;
  fd_budget_give(p->nfds);
  update_ready(ch);
  // the IPC rules, on the consumer's side too: a handle that breaks them is
  // a malformed message
  *st = hurray_table_validate(p->m.handle, sizeof p->m.handle, &ipc_policy(), err);
  if (*st != HURRAY_OK) {
    *st = HURRAY_E_PROTOCOL;  // err->rule still names the rule broken
    if (err) err->status = HURRAY_E_PROTOCOL;
    close_fds(*p);
    ++ch->stats.messages_rejected;
    shut(ch, HURRAY_IPC_PEER_GONE, "the peer sent a handle that breaks the IPC rules", true, d);
    return -1;
  }
  // a slot (protocol version 5): filled, or read from, in the order sent
  *st = resolve_slot(ch, p, err);
  if (ch->closed && ch->inbox.empty()) drop_slots(ch);  // the last one taken
  if (*st != HURRAY_OK) {
    close_fds(*p);
    if (p->hit) dispatch::free(p->cached.backend, &p->cached.alloc);
    if (*st == HURRAY_E_PROTOCOL) ++ch->stats.messages_rejected;
    shut(ch, HURRAY_IPC_PEER_GONE, "a slot could not be resolved", true, d);
    return -1;
  }
  ++ch->stats.received;
  return 1;
}

}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_ipc_receive(hurray_ipc_channel *ch, int32_t timeout_ms,
                                            hurray_handoff *out, uint64_t *id, hurray_error *err) {
  if (!ch || !out) return null_argument(err, "hurray_ipc_receive", ch ? "out" : "channel");
  hurray_status st = HURRAY_OK;
  Pending p{};
  int got = 0;
  const int64_t start = now_ms();
  channel_ref(ch);  // keeps the socket open while this thread reads without mu
  for (;;) {
    Deferred d;
    Read r = Read::Nothing;
    // through the barrier round by round: the deferred work below runs anyway
    const hurray_status step = guarded(err, "hurray_ipc_receive", [&] {
      {
        std::lock_guard<std::mutex> lock(ch->mu);
        got = take(ch, &p, d, &st, err);
        if (!got && ch->closed) {
          st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the channel is closed (%s)",
                    ch->why_closed);
          got = -1;
        }
      }
      if (!got) {
        uint32_t handled = 0;
        r = read_round(ch, timeout_ms, start, d, &handled, err,
                       [ch] { return !ch->inbox.empty(); });
        std::lock_guard<std::mutex> lock(ch->mu);
        got = take(ch, &p, d, &st, err);
      }
      return HURRAY_OK;
    });
    if (step != HURRAY_OK) {
      st = step;
      got = -1;
    }
    finish(d);
    if (got) break;
    if (r == Read::Closed || r == Read::Error) {
      st = r == Read::Error ? HURRAY_E_PROTOCOL : HURRAY_E_IO;
      break;
    }
    if (r == Read::Nothing &&
        (timeout_ms == 0 || (timeout_ms > 0 && left_ms(timeout_ms, start) == 0))) {
      st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                "hurray_ipc_receive: nothing arrived within %d ms", timeout_ms);
      break;
    }
  }
  if (got == 1) {
    const uint64_t mid = p.m.id;
    st = import(ch, p, out, err);
    if (st == HURRAY_OK && id) *id = mid;
  }
  channel_unref(ch);
  return st;
}

HURRAY_API hurray_status hurray_ipc_release(hurray_handoff *handoff, hurray_error *err) {
  Capture c;
  Capture *const saved = t_capture;
  t_capture = &c;
  const hurray_status st = hurray_handoff_release(handoff, err);
  t_capture = saved;
  if (st != HURRAY_OK || !c.called || c.status == HURRAY_OK) return st;
  if (err) *err = c.err;
  return c.status;
}

}  // extern "C"
