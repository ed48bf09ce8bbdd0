// Descriptor slots (protocol version 5, docs/spec/ipc.md "Slots"). A
// consumer keeps the memfds of up to `slots` of its producer's memories; the
// producer manages that table (it alone decides what goes where, as HPACK's
// encoder does, so no eviction on the consumer's side can race with a send)
// and hands memory the consumer holds over without a descriptor: no
// descriptor installed by the kernel, no fstat of it for the mapping cache's
// key, no close. The producer keys its table by the memory object's serial
// (never reused, unlike an address or a descriptor number) and access: a
// read-only handoff is never served from a slot a writable one installed, or
// the other way round, and the consumer checks it (BP-IPC-SLOT).
#include <hurray_ipc.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../core/internal.h"
#include "internal.h"
#include "wire.h"

using namespace hurray::detail;
namespace wire = hurray::ipc;

namespace hurray::ipc {

namespace {

// Slots a consumer announces: a HANDOFF_MANY's worth, so that a producer
// cycling a pool of up to 64 buffers sends none of their descriptors again.
constexpr uint32_t kSlots = 64;

const char *mode_name(uint8_t mode) { return mode == 1 ? "read-only" : "writable"; }

}  // namespace

uint32_t announce_slots(hurray_ipc_channel *ch) {
  // nothing to receive (send-only), or a table already set up
  if (ch->opts.devices.empty() || ch->slots) return ch->slots;
  // Slots hold descriptors for the channel's life: all channels' slots and
  // queues together stay within half of the process's descriptor budget,
  // so that queued handoffs always find room; beyond it a channel works
  // without slots (each handoff carries its descriptor, as before version 5).
  if (fd_budget_held() + kSlots > fd_budget() / 2 || !fd_budget_take(kSlots)) return 0;
  ch->slot_mode.assign(kSlots, 0);
  ch->slot_fds.assign(kSlots, hurray_ipc_channel::SlotFd{-1, 0, 0});
  ch->slots = kSlots;
  return kSlots;
}

void drop_slots(hurray_ipc_channel *ch) {
  for (hurray_ipc_channel::SlotFd &s : ch->slot_fds)
    if (s.fd >= 0) close(s.fd);
  ch->slot_fds.clear();
  ch->slot_mode.clear();
  if (ch->slots) fd_budget_give(ch->slots);
  ch->slots = 0;
}

hurray_status check_slot(hurray_ipc_channel *ch, const Message &m, size_t at, hurray_error *err) {
  const WireHandle &w = m.memory;
  if (w.slot_op == kSlotNone) return HURRAY_OK;
  const int64_t field = static_cast<int64_t>(at + 62);  // the memory handle's slot
  if (ch->slots == 0) {
    fill(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, HURRAY_SEVERITY_ERROR, -1, field,
         "BP-IPC-SLOT: a HANDOFF %s slot %u, but this side announced no slots (the peer's "
         "protocol version %u)",
         w.slot_op == kSlotInstall ? "installs" : "uses", w.slot, ch->peer.protocol_version);
    return HURRAY_E_PROTOCOL;
  }
  if (w.slot >= ch->slots) {
    fill(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, HURRAY_SEVERITY_ERROR, -1, field,
         "BP-IPC-SLOT: slot %u of the %u this side announced", w.slot, ch->slots);
    return HURRAY_E_PROTOCOL;
  }
  const uint8_t mode = (m.flags & HURRAY_HANDOFF_READ_ONLY) ? 1 : 2;
  uint8_t &held = ch->slot_mode[w.slot];
  if (w.slot_op == kSlotInstall) {
    held = mode;
    return HURRAY_OK;
  }
  if (held == 0) {
    fill(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, HURRAY_SEVERITY_ERROR, -1, field,
         "BP-IPC-SLOT: a HANDOFF uses slot %u, which holds nothing", w.slot);
    return HURRAY_E_PROTOCOL;
  }
  if (held != mode) {
    fill(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, HURRAY_SEVERITY_ERROR, -1, field,
         "BP-IPC-SLOT: a %s HANDOFF uses slot %u, which a %s one installed", mode_name(mode),
         w.slot, mode_name(held));
    return HURRAY_E_PROTOCOL;
  }
  return HURRAY_OK;
}

hurray_status resolve_slot(hurray_ipc_channel *ch, Pending *p, hurray_error *err) {
  WireHandle &w = p->m.memory;
  if (w.slot_op == kSlotNone) return HURRAY_OK;
  if (w.slot >= ch->slot_fds.size()) {  // dropped with a closed channel
    close_fds(*p);
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                "hurray_ipc_receive: the channel's slots are gone (%s)", ch->why_closed);
  }
  hurray_ipc_channel::SlotFd &s = ch->slot_fds[w.slot];
  if (w.slot_op == kSlotInstall) {  // the descriptor goes into the slot
    struct stat sb;
    if (fstat(p->fds[0], &sb) != 0) {
      const int e = errno;
      close_fds(*p);
      return io_fail(err, "fstat", e);
    }
    if (s.fd >= 0) close(s.fd);  // mappings made of it stay valid
    s = hurray_ipc_channel::SlotFd{p->fds[0], sb.st_dev, sb.st_ino};
    p->fds[0] = -1;
    p->nfds = 0;
    w.has_fd = 0;
  }
  if (s.fd < 0)  // check_slot saw it installed, in order
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-SLOT: slot %u holds nothing", w.slot);
  hurray_buffer_handle h;
  hurray_handle_decode(p->m.handle, sizeof p->m.handle, &h, nullptr);
  const bool writable = !(p->m.flags & HURRAY_HANDOFF_READ_ONLY);
  // a mapping of the slot's file kept from an earlier release (oldest
  // first, as receive.cpp's lookup)
  for (auto it = ch->maps.begin(); it != ch->maps.end(); ++it) {
    if (it->dev == s.dev && it->ino == s.ino && it->kind == w.kind && it->offset == w.offset &&
        it->byte_size == w.byte_size && it->writable == writable &&
        reinterpret_cast<uintptr_t>(it->alloc.data) % h.alignment == 0) {
      p->hit = true;
      p->cached = *it;
      ch->map_bytes -= it->byte_size;
      ch->maps.erase(it);
      return HURRAY_OK;
    }
  }
  // none: the import maps a copy of the slot's descriptor (the slot may be
  // replaced meanwhile)
  const int fd = fcntl(s.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return io_fail(err, "fcntl(F_DUPFD_CLOEXEC)", errno);
  p->fds[0] = fd;
  p->nfds = 1;
  w.has_fd = 1;
  p->keyed = true;
  p->cached = CachedMap{s.dev, s.ino, w.kind, w.offset, w.byte_size, writable, {}, {}};
  return HURRAY_OK;
}

void assign_slot(hurray_ipc_channel *ch, Prepared *p, SlotUndo *undo) {
  undo->slot = -1;
  WireHandle &w = p->m.memory;
  if (ch->peer_slots.empty() || p->serial == 0 || p->nfds != 1 || w.kind != kKindMemfd ||
      !w.has_fd || p->m.event.kind != kKindNone)
    return;
  const bool ro = (p->m.flags & HURRAY_HANDOFF_READ_ONLY) != 0;
  const uint64_t now = ++ch->slot_clock;
  size_t pick = 0;
  for (size_t i = 0; i < ch->peer_slots.size(); ++i) {
    hurray_ipc_channel::PeerSlot &e = ch->peer_slots[i];
    if (e.serial == p->serial && e.read_only == ro) {  // the peer holds it: no descriptor
      undo->slot = static_cast<int>(i);
      undo->was = e;
      e.used = now;
      w.slot_op = kSlotUse;
      w.slot = static_cast<uint16_t>(i);
      w.has_fd = 0;
      p->nfds = 0;
      return;
    }
    // an empty slot (used 0), else the least recently used
    if (e.used < ch->peer_slots[pick].used) pick = i;
  }
  undo->slot = static_cast<int>(pick);
  undo->was = ch->peer_slots[pick];
  ch->peer_slots[pick] = hurray_ipc_channel::PeerSlot{p->serial, ro, now};
  w.slot_op = kSlotInstall;
  w.slot = static_cast<uint16_t>(pick);
}

void unassign_slot(hurray_ipc_channel *ch, Prepared *p, const SlotUndo &undo) {
  if (undo.slot < 0) return;
  ch->peer_slots[static_cast<size_t>(undo.slot)] = undo.was;
  WireHandle &w = p->m.memory;
  if (w.slot_op == kSlotUse) {
    w.has_fd = 1;
    p->nfds = 1;
  }
  w.slot_op = kSlotNone;
  w.slot = 0;
}

}  // namespace hurray::ipc
