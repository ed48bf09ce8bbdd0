// The consumer's side of a received buffer: hurray_ipc_receive takes the
// next queued HANDOFF (its handle checked under the IPC rules) and imports
// it: a memfd is checked (BP-IPC-SEAL) and mapped, or a mapping kept from
// an earlier release is reused; device memory and its event are opened
// through their backend. The result is wrapped with hurray_handoff_wrap(),
// whose free function unmaps (or caches the mapping) and sends RELEASE, so
// release-exactly-once (BP-REL-ONCE) is the handoff layer's own;
// hurray_ipc_release reports how sending that RELEASE went.
#include <hurray_ipc.h>
#include <hurray_backend.h>

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <mutex>
#include <new>

#include "../core/internal.h"
#include "../runtime/backends.h"
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
  void *map_base;          // CPU: what to munmap (or keep in the cache)
  size_t map_len;
  CachedMap key;           // CPU: the mapping's identity, for the cache
  bool backend_owned;      // another device: freed through its backend
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

hurray_status send_release(hurray_ipc_channel *ch, uint64_t id, hurray_error *err) {
  uint8_t buf[wire::kMaxMessage];
  Message m{};
  m.type = Type::Release;
  m.id = id;
  const size_t n = wire::encode(m, buf, sizeof buf);
  Deferred d;
  hurray_status st;
  try {  // called from a release, through C: nothing may escape
    std::lock_guard<std::mutex> lock(ch->mu);
    st = send_msg(ch, buf, n, nullptr, 0, d, err);
    if (st == HURRAY_OK)
      ++ch->stats.releases_sent;
    else
      ++ch->stats.releases_failed;
  } catch (...) {
    st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc: out of memory");
  }
  finish(d);
  return st;
}

void free_imported(void *user, void *) {
  auto *r = static_cast<Imported *>(user);
  if (r->map_len) {
    bool kept = false;
    try {
      std::lock_guard<std::mutex> lock(r->ch->mu);
      if (!r->ch->closed && r->map_len <= kCacheBytes) {
        r->ch->maps.push_back(r->key);
        r->ch->map_bytes += r->map_len;
        kept = true;
        while (r->ch->maps.size() > kCacheEntries || r->ch->map_bytes > kCacheBytes) {
          const CachedMap old = r->ch->maps.front();
          r->ch->maps.pop_front();
          r->ch->map_bytes -= old.len;
          munmap(old.base, old.len);
        }
      }
    } catch (...) {
      kept = false;  // the mapping was not recorded: unmap it below
    }
    if (!kept) munmap(r->map_base, r->map_len);
  }
  if (r->backend_owned) r->backend.table->free(r->backend.state, &r->alloc);
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
  if (ref) ref->backend.table->event_release(ref->backend.state, ref->device, event);
}

// Turn a received HANDOFF into a handoff of this process. Consumes p's fds.
hurray_status import(hurray_ipc_channel *ch, Pending &p, hurray_handoff *out, hurray_error *err) {
  const Message &m = p.m;
  hurray_buffer_handle h;
  hurray_handle_decode(m.handle, sizeof m.handle, &h, nullptr);
  auto *r = new (std::nothrow) Imported{};
  if (!r) {
    close_fds(p);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc: out of memory");
  }
  r->id = m.id;
  r->ch = ch;
  void *data = nullptr;
  uint32_t flags = 0;
  void *event = nullptr;                // EVENT: the imported event
  const DeviceRef *event_ref = nullptr;  // and where to release it
  hurray_status st = HURRAY_OK;
  if (h.device_tag == HURRAY_DEVICE_CPU) {
    if (h.byte_size) {
      const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
      struct stat sb;
      if (m.memory.kind != wire::kKindMemfd || !m.memory.has_fd)
        st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "ipc message: CPU memory of kind %u (a memfd is kind 1)", m.memory.kind);
      else if (m.memory.offset % page)
        st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "ipc message: memory offset %llu is not page-aligned",
                  static_cast<unsigned long long>(m.memory.offset));
      else if (fstat(p.fds[0], &sb) != 0 || !S_ISREG(sb.st_mode) ||
               static_cast<uint64_t>(sb.st_size) < m.memory.offset + h.byte_size)
        st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "ipc message: the descriptor is not a memory file of at least %llu bytes",
                  static_cast<unsigned long long>(m.memory.offset + h.byte_size));
      else if ((st = hurray::ipc::check_sealed(p.fds[0], err)) != HURRAY_OK) {
        // BP-IPC-SEAL: not mapped at all
      } else {
        const bool writable = !(m.flags & HURRAY_HANDOFF_READ_ONLY);
        const size_t len = static_cast<size_t>((h.byte_size + page - 1) / page * page);
        r->key = CachedMap{sb.st_dev, sb.st_ino, m.memory.offset, len, writable, nullptr};
        {  // the same memory, mapped before and released since?
          std::lock_guard<std::mutex> lock(ch->mu);
          for (auto it = ch->maps.end(); it != ch->maps.begin();) {
            --it;
            if (it->dev == sb.st_dev && it->ino == sb.st_ino && it->offset == m.memory.offset &&
                it->len == len && it->writable == writable &&
                reinterpret_cast<uintptr_t>(it->base) % h.alignment == 0) {
              data = it->base;
              r->map_len = len;
              ch->map_bytes -= len;
              ch->maps.erase(it);
              break;
            }
          }
        }
        if (!data) {
          data = hurray::ipc::map_aligned(p.fds[0], m.memory.offset, h.byte_size, h.alignment, writable,
                             &r->map_len, err);
          if (!data) st = err ? static_cast<hurray_status>(err->status) : HURRAY_E_IO;
        }
        r->map_base = r->key.base = data;
      }
    }
  } else {
    Backend be;
    st = backend_device(h.device_tag, m.device_ordinal, &be, err);
    if (st == HURRAY_OK && !be.table->ipc_import_memory)
      st = fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc: the %s backend cannot import memory", be.table->name);
    if (st == HURRAY_OK && m.handle[13] == HURRAY_SYNC_EVENT) {
      // the producer's event, opened here (BP-SYNC-WAIT happens at acquire)
      if (!be.table->ipc_import_event)
        st = fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_IPC,
                  "BP-SYNC-IPC: the %s backend cannot import events", be.table->name);
      else {
        hurray_backend_ipc_handle eh{};
        eh.kind = m.event.kind;
        eh.fd = m.event.has_fd ? p.fds[m.memory.has_fd] : -1;
        eh.byte_size = m.event.byte_size;
        eh.offset = m.event.offset;
        std::memcpy(eh.bytes, m.event.bytes, sizeof eh.bytes);
        st = be.table->ipc_import_event(be.state, m.device_ordinal, &eh, &event, err);
        if (st == HURRAY_OK) event_ref = device_ref(be, m.device_ordinal);
      }
    }
    if (st == HURRAY_OK && h.byte_size) {
      hurray_backend_ipc_handle ih{};
      ih.kind = m.memory.kind;
      ih.fd = m.memory.has_fd ? p.fds[0] : -1;
      ih.byte_size = m.memory.byte_size;
      ih.offset = m.memory.offset;
      std::memcpy(ih.bytes, m.memory.bytes, sizeof ih.bytes);
      st = be.table->ipc_import_memory(be.state, m.device_ordinal, &ih, h.memory_class,
                                       &r->alloc, err);
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
  }
  close_fds(p);
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
  if (r->map_len) munmap(r->map_base, r->map_len);
  if (r->backend_owned) r->backend.table->free(r->backend.state, &r->alloc);
  delete r;
  if (st == HURRAY_E_PROTOCOL) {  // what the peer sent is malformed: the channel closes
    Deferred d;
    try {
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
  ++ch->stats.received;
  return 1;
}

}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_ipc_receive(hurray_ipc_channel *ch, int32_t timeout_ms,
                                            hurray_handoff *out, uint64_t *id, hurray_error *err) {
  if (!ch || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "hurray_ipc_receive: %s is NULL",
                ch ? "out" : "channel");
  hurray_status st = HURRAY_OK;
  Pending p{};
  int got = 0;
  const int64_t start = now_ms();
  channel_ref(ch);  // keeps the socket open while this thread reads without mu
  for (;;) {
    Deferred d;
    Read r = Read::Nothing;
    try {
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
    } catch (...) {
      st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc_receive: out of memory");
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
