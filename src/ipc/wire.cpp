// The IPC channel's wire format: parse and encode (see wire.h and
// docs/spec/ipc.md). Little-endian on any host; no I/O, no allocation.
#include "wire.h"

#include <cstdarg>
#include <cstdio>
#include <cstring>

namespace hurray::ipc {
namespace {

uint16_t get16(const uint8_t *p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }
uint32_t get32(const uint8_t *p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}
uint64_t get64(const uint8_t *p) {
  return static_cast<uint64_t>(get32(p)) | static_cast<uint64_t>(get32(p + 4)) << 32;
}
void put16(uint8_t *p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
bool zero(const uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}

__attribute__((format(printf, 3, 4))) hurray_status bad(hurray_error *err, size_t offset,
                                                        const char *fmt, ...) {
  if (err) {
    std::memset(err, 0, sizeof *err);
    err->status = HURRAY_E_PROTOCOL;
    err->rule = HURRAY_RULE_NONE;
    err->severity = HURRAY_SEVERITY_ERROR;
    err->buffer_index = -1;
    err->byte_offset = static_cast<int64_t>(offset);
    const int k = std::snprintf(err->message, sizeof err->message, "ipc message: ");
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err->message + k, sizeof err->message - static_cast<size_t>(k), fmt, ap);
    va_end(ap);
  }
  return HURRAY_E_PROTOCOL;
}

// A body of `fixed` bytes and then `count` entries of `entry` bytes (each one
// of `unit`) is exactly `length` long, and message `name` carries no
// descriptors (`fds` of them).
hurray_status check_entries(const char *name, uint32_t length, size_t fixed, size_t entry,
                            size_t count, const char *unit, uint8_t fds, hurray_error *err) {
  const size_t want = fixed + entry * count;
  if (length != want)
    return bad(err, 8, "%s body of %u bytes for %zu %s (expected %zu)", name, length, count, unit,
               want);
  if (fds) return bad(err, 12, "%s carries no descriptors", name);
  return HURRAY_OK;
}

// A WireHandle at p (kIpcHandleSize bytes), field offsets reported from `at`.
hurray_status parse_handle(const uint8_t *p, size_t at, const char *what, WireHandle *h,
                           hurray_error *err) {
  h->kind = get32(p);
  h->has_fd = p[4];
  h->slot_op = p[5];
  h->slot = get16(p + 6);
  h->byte_size = get64(p + 8);
  h->offset = get64(p + 16);
  std::memcpy(h->bytes, p + 24, sizeof h->bytes);
  if (h->has_fd > 1)
    return bad(err, at + 4, "%s.has_fd is %u (0 or 1)", what, h->has_fd);
  // the slot of a memory handle (protocol version 5): BP-IPC-SLOT
  if (h->slot_op > kSlotUse)
    return bad(err, at + 5, "BP-IPC-SLOT: %s slot operation %u (0 none, 1 install, 2 use)", what,
               h->slot_op);
  if (h->slot_op == kSlotNone && h->slot)
    return bad(err, at + 6, "BP-IPC-SLOT: %s names slot %u without a slot operation", what,
               h->slot);
  if (h->slot_op == kSlotInstall && !h->has_fd)
    return bad(err, at + 4, "BP-IPC-SLOT: %s installs slot %u without a descriptor", what,
               h->slot);
  if (h->slot_op == kSlotUse && h->has_fd)
    return bad(err, at + 4, "BP-IPC-SLOT: %s uses slot %u but a descriptor is attached", what,
               h->slot);
  if (h->kind == kKindNone && !zero(p + 4, kIpcHandleSize - 4))
    return bad(err, at + 4, "%s has kind 0 (none) but non-zero fields", what);
  return HURRAY_OK;
}

// An identity's kind and 16 bytes (at `kind_at` and `bytes_at` in the
// message): a known kind, the bytes the kind does not use zero, and not all
// zero; NONE only where `none_ok`, then with all 16 bytes zero.
hurray_status check_identity(uint32_t kind, const uint8_t *bytes, size_t kind_at,
                             size_t bytes_at, bool none_ok, const char *what, hurray_error *err) {
  size_t used;
  switch (kind) {
    case HURRAY_BACKEND_ID_UUID: used = 16; break;
    case HURRAY_BACKEND_ID_LUID: used = 8; break;
    case HURRAY_BACKEND_ID_PCI: used = 7; break;
    case HURRAY_BACKEND_ID_NONE:
      if (none_ok) {
        if (!zero(bytes, 16)) return bad(err, bytes_at, "%s of kind 0 (none) but bytes", what);
        return HURRAY_OK;
      }
      [[fallthrough]];
    default:
      return bad(err, kind_at, "%s of kind %u (%s1 UUID, 2 LUID or 3 PCI)", what, kind,
                 none_ok ? "0 none, " : "");
  }
  if (!zero(bytes + used, 16 - used))
    return bad(err, bytes_at + used, "%s: bytes beyond its kind's %zu", what, used);
  if (zero(bytes, used)) return bad(err, bytes_at, "%s of all-zero bytes", what);
  return HURRAY_OK;
}

// The identity block of a HANDOFF at p (kIdentitySize bytes), offsets
// reported from `at`: a known kind other than NONE (the shorter form says
// NONE), reserved zero.
hurray_status parse_identity(const uint8_t *p, size_t at, Message *out, hurray_error *err) {
  out->id_kind = get32(p);
  std::memcpy(out->id_bytes, p + 8, sizeof out->id_bytes);
  const bool known =
      out->id_kind >= HURRAY_BACKEND_ID_UUID && out->id_kind <= HURRAY_BACKEND_ID_PCI;
  if (known && get32(p + 4))
    return bad(err, at + 4, "HANDOFF device identity: reserved bytes");
  return check_identity(out->id_kind, p + 8, at, at + 8, false, "HANDOFF device identity", err);
}

// The body of a DEVICES message at b (`length` bytes).
hurray_status parse_devices(const uint8_t *b, uint32_t length, uint8_t fds, Message *out,
                            hurray_error *err) {
  if (length < kDevicesFixed)
    return bad(err, 8, "DEVICES body of %u bytes (at least %zu)", length, kDevicesFixed);
  out->id_count = get16(b);
  if (out->id_count > kMaxDeviceIds)
    return bad(err, 16, "DEVICES of %u devices (at most %zu)", out->id_count, kMaxDeviceIds);
  if (get16(b + 2)) return bad(err, 18, "DEVICES reserved bytes are not zero");
  if (const hurray_status st = check_entries("DEVICES", length, kDevicesFixed, kDeviceIdEntry,
                                             out->id_count, "devices", fds, err))
    return st;
  for (size_t i = 0; i < out->id_count; ++i) {
    const uint8_t *e = b + kDevicesFixed + kDeviceIdEntry * i;
    const size_t at = kHeaderSize + kDevicesFixed + kDeviceIdEntry * i;
    DeviceId &d = out->ids[i];
    d.tag = e[0];
    d.ordinal = get16(e + 2);
    d.kind = get32(e + 4);
    std::memcpy(d.bytes, e + 8, sizeof d.bytes);
    if (d.tag == HURRAY_DEVICE_INVALID || d.tag == HURRAY_DEVICE_CPU)
      return bad(err, at, "DEVICES device %zu: tag 0x%02X (not the CPU, not 0xFF)", i, d.tag);
    if (e[1]) return bad(err, at + 1, "DEVICES device %zu: reserved byte", i);
    for (size_t j = 0; j < i; ++j)
      if (out->ids[j].tag == d.tag && out->ids[j].ordinal == d.ordinal)
        return bad(err, at, "DEVICES device %zu: tag 0x%02X ordinal %u listed twice", i, d.tag,
                   d.ordinal);
    char what[48];
    std::snprintf(what, sizeof what, "DEVICES device %zu: identity", i);
    if (const hurray_status st = check_identity(d.kind, d.bytes, at + 4, at + 8, true, what, err))
      return st;
  }
  return HURRAY_OK;
}

// The body of a HANDOFF at b (`length` bytes; offsets reported as in a
// HANDOFF message, the body at 16), with `fds` descriptors when check_fds.
hurray_status parse_handoff(const uint8_t *b, uint32_t length, uint8_t fds, bool check_fds,
                            Message *out, hurray_error *err) {
  out->type = Type::Handoff;
  // protocol version 2: a device view (its offset), a device identity, or both
  const bool view = length == kHandoffViewBody || length == kHandoffViewBody + kIdentitySize;
  const bool ident =
      length == kHandoffBody + kIdentitySize || length == kHandoffViewBody + kIdentitySize;
  if (view || ident) {
    // read below
  } else if (length != kHandoffBody)
    return bad(err, 8,
               "HANDOFF body of %u bytes (expected %zu; %zu for a view, %zu with a device "
               "identity, %zu for both)",
               length, kHandoffBody, kHandoffViewBody, kHandoffBody + kIdentitySize,
               kHandoffViewBody + kIdentitySize);
  out->id = get64(b);
  std::memcpy(out->handle, b + 8, HURRAY_HANDLE_SIZE);
  out->device_ordinal = static_cast<int32_t>(get32(b + 24));
  out->flags = get32(b + 28);
  out->sync_value = get64(b + 32);
  if (out->id == 0) return bad(err, 16, "HANDOFF id 0");
  if (out->device_ordinal < 0)
    return bad(err, 40, "HANDOFF device ordinal %d", out->device_ordinal);
  if (out->flags & ~kHandoffFlags)
    return bad(err, 44, "HANDOFF unknown flags 0x%X", out->flags & ~kHandoffFlags);
  if (const hurray_status st = parse_handle(b + 40, 56, "memory", &out->memory, err))
    return st;
  if (const hurray_status st = parse_handle(b + 40 + kIpcHandleSize, 144, "event",
                                            &out->event, err))
    return st;
  const uint64_t size = get64(out->handle);
  if (size && out->memory.kind == kKindNone)
    return bad(err, 56, "HANDOFF of %llu bytes without memory",
               static_cast<unsigned long long>(size));
  if (view) {  // a view of device memory (views.md)
    out->view_offset = get64(b + kHandoffBody);
    if (out->view_offset == 0)
      return bad(err, 232, "HANDOFF view offset 0 (the 216-byte form says that)");
    if (out->handle[12] == HURRAY_DEVICE_CPU)
      return bad(err, 232, "HANDOFF view offset on CPU memory (a memfd's offset says it)");
    if (out->memory.kind == kKindNone)
      return bad(err, 232, "HANDOFF view offset without memory");
  }
  if (out->memory.kind != kKindNone && size > out->memory.byte_size)
    return bad(err, 64, "HANDOFF of %llu bytes in %llu bytes of memory",
               static_cast<unsigned long long>(size),
               static_cast<unsigned long long>(out->memory.byte_size));
  // (a view offset comes with memory, so size <= byte_size here: no wrap)
  if (out->view_offset > out->memory.byte_size - size)
    return bad(err, 232, "HANDOFF view of %llu bytes at offset %llu beyond %llu bytes of memory",
               static_cast<unsigned long long>(size),
               static_cast<unsigned long long>(out->view_offset),
               static_cast<unsigned long long>(out->memory.byte_size));
  if (ident) {  // the device's identity (identity.md)
    const size_t at = view ? kHandoffViewBody : kHandoffBody;
    if (const hurray_status st = parse_identity(b + at, kHeaderSize + at, out, err)) return st;
    if (out->handle[12] == HURRAY_DEVICE_CPU)
      return bad(err, kHeaderSize + at, "HANDOFF device identity on CPU memory");
  }
  const bool event = out->handle[13] == HURRAY_SYNC_EVENT;
  if (!event && (out->event.kind != kKindNone || out->sync_value))
    return bad(err, 144, "HANDOFF carries an event but its sync mode is not EVENT");
  if (event && out->event.kind == kKindNone)
    return bad(err, 144, "HANDOFF of sync mode EVENT carries no event");
  if (out->event.slot_op != kSlotNone)
    return bad(err, 149, "BP-IPC-SLOT: an event handle in a slot (only memory has slots)");
  if (out->memory.slot_op != kSlotNone && (out->memory.kind != kKindMemfd || event))
    return bad(err, 61, "BP-IPC-SLOT: a slot for memory of kind 0x%08X%s (a memfd's only)",
               out->memory.kind, event ? " with an event" : "");
  if (check_fds && fds != handoff_fds(*out))
    return bad(err, 12, "HANDOFF announces %u descriptors, its handles %u", fds,
               handoff_fds(*out));
  return HURRAY_OK;
}

// The entries of a HANDOFF_MANY at b (`length` bytes, entries from
// b + kManyFixed): calls each(i, entry body, its length, offset of the
// body in the message) until it returns non-OK.
template <class Each>
hurray_status walk_many(const uint8_t *b, uint32_t length, uint16_t count, Each each) {
  size_t at = kManyFixed;
  for (size_t i = 0; i < count; ++i) {
    if (length - at < kEntryHeader)
      return each(i, nullptr, 0u, kHeaderSize + at);  // truncated: no room for the entry header
    const uint32_t n = get32(b + at);
    if (n > length - at - kEntryHeader) return each(i, nullptr, n, kHeaderSize + at);
    if (const hurray_status st = each(i, b + at, n, kHeaderSize + at)) return st;
    at += kEntryHeader + n;
  }
  return at == length ? HURRAY_OK : each(count, nullptr, 0u, kHeaderSize + at);
}

// The body of a HANDOFF_MANY (docs/spec/ipc.md): 1..kMaxBatch entries,
// each a HANDOFF body (every check of HANDOFF, its offsets reported inside
// the entry), IDs distinct, the descriptors of all entries those that came.
hurray_status parse_many(const uint8_t *b, uint32_t length, uint8_t fds, Message *out,
                         hurray_error *err) {
  if (length < kManyFixed)
    return bad(err, 8, "HANDOFF_MANY body of %u bytes (at least %zu)", length, kManyFixed);
  out->count = get16(b);
  if (out->count == 0 || out->count > kMaxBatch)
    return bad(err, 16, "HANDOFF_MANY of %u handoffs (1 to %zu)", out->count, kMaxBatch);
  if (get16(b + 2)) return bad(err, 18, "HANDOFF_MANY reserved bytes are not zero");
  size_t total_fds = 0;
  Message e;
  const hurray_status st = walk_many(b, length, out->count, [&](size_t i, const uint8_t *x,
                                                                 uint32_t n, size_t at) {
    if (i == out->count)
      return bad(err, at, "HANDOFF_MANY: %u bytes after its %u entries",
                 static_cast<unsigned>(kHeaderSize + length - at), out->count);
    if (!x)  // (at the body's end: the count promised more, offset 16)
      return bad(err, at < kHeaderSize + length ? at : 16,
                 "HANDOFF_MANY entry %zu: truncated (%u bytes left, its header says %u)",
                 i, static_cast<unsigned>(kHeaderSize + length - at), n);
    if (get32(x + 4)) return bad(err, at + 4, "HANDOFF_MANY entry %zu: reserved bytes", i);
    std::memset(&e, 0, sizeof e);
    if (parse_handoff(x + kEntryHeader, n, 0, false, &e, err) != HURRAY_OK) {
      if (err) {  // the entry's offsets, in the message; its index in the text
        char was[sizeof err->message];
        std::memcpy(was, err->message, sizeof was);
        const char *what = std::strncmp(was, "ipc message: ", 13) == 0 ? was + 13 : was;
        const int64_t inside = err->byte_offset < static_cast<int64_t>(kHeaderSize)
                                   ? 0  // the HANDOFF's length: the entry header's
                                   : err->byte_offset - static_cast<int64_t>(kHeaderSize) +
                                         static_cast<int64_t>(kEntryHeader);
        bad(err, at + static_cast<size_t>(inside), "HANDOFF_MANY entry %zu: %s", i, what);
      }
      return HURRAY_E_PROTOCOL;
    }
    for (size_t j = 0; j < i; ++j)
      if (out->ids64[j] == e.id)
        return bad(err, at + kEntryHeader, "HANDOFF_MANY entry %zu: id %llu again (entry %zu)",
                   i, static_cast<unsigned long long>(e.id), j);
    out->ids64[i] = e.id;
    total_fds += handoff_fds(e);
    return HURRAY_OK;
  });
  if (st != HURRAY_OK) return st;
  if (fds != total_fds)
    return bad(err, 12, "HANDOFF_MANY announces %u descriptors, its entries' handles %zu", fds,
               total_fds);
  return HURRAY_OK;
}

// The body of a RELEASE_MANY: 1..kMaxBatch IDs, none 0, none twice.
hurray_status parse_release_many(const uint8_t *b, uint32_t length, uint8_t fds, Message *out,
                                 hurray_error *err) {
  if (length < kReleaseManyFixed)
    return bad(err, 8, "RELEASE_MANY body of %u bytes (at least %zu)", length,
               kReleaseManyFixed);
  const uint32_t count = get32(b);
  if (count == 0 || count > kMaxBatch)
    return bad(err, 16, "RELEASE_MANY of %u IDs (1 to %zu)", count, kMaxBatch);
  if (get32(b + 4)) return bad(err, 20, "RELEASE_MANY reserved bytes are not zero");
  if (const hurray_status st =
          check_entries("RELEASE_MANY", length, kReleaseManyFixed, 8, count, "IDs", fds, err))
    return st;
  out->count = static_cast<uint16_t>(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t at = kHeaderSize + kReleaseManyFixed + 8 * i;
    out->ids64[i] = get64(b + kReleaseManyFixed + 8 * i);
    if (out->ids64[i] == 0) return bad(err, at, "RELEASE_MANY id %zu is 0", i);
    for (size_t j = 0; j < i; ++j)
      if (out->ids64[j] == out->ids64[i])
        return bad(err, at, "RELEASE_MANY id %zu: %llu again (id %zu; BP-REL-ONCE)", i,
                   static_cast<unsigned long long>(out->ids64[i]), j);
  }
  return HURRAY_OK;
}

void encode_handle(const WireHandle &h, uint8_t *p) {
  put32(p, h.kind);
  p[4] = static_cast<uint8_t>(h.has_fd);
  p[5] = h.slot_op;
  put16(p + 6, h.slot);
  put64(p + 8, h.byte_size);
  put64(p + 16, h.offset);
  std::memcpy(p + 24, h.bytes, sizeof h.bytes);
}

}  // namespace

hurray_status parse(const uint8_t *p, size_t n, size_t nfds, Message *out,
                    hurray_error *err) noexcept {
  if (!p || !out) return bad(err, 0, "no input");
  if (n < kHeaderSize) return bad(err, 0, "%zu bytes, shorter than the 16-byte header", n);
  if (get32(p) != kMagic) return bad(err, 0, "bad magic 0x%08X", get32(p));
  if (get16(p + 4) != kWireVersion)
    return bad(err, 4, "wire version %u, this library reads %u", get16(p + 4), kWireVersion);
  const uint16_t type = get16(p + 6);
  const uint32_t length = get32(p + 8);
  if (length != n - kHeaderSize)
    return bad(err, 8, "length field says %u body bytes, %zu arrived", length, n - kHeaderSize);
  const uint8_t fds = p[12];
  if (fds != nfds)
    return bad(err, 12, "header announces %u descriptors, %zu arrived", fds, nfds);
  const size_t max_fds = type == static_cast<uint16_t>(Type::HandoffMany) ? kMaxBatchFds : kMaxFds;
  if (fds > max_fds) return bad(err, 12, "%u descriptors (at most %zu)", fds, max_fds);
  if (!zero(p + 13, 3)) return bad(err, 13, "reserved header bytes are not zero");

  std::memset(out, 0, sizeof *out);
  out->fd_count = fds;
  const uint8_t *b = p + kHeaderSize;
  switch (type) {
    case static_cast<uint16_t>(Type::Hello): {
      out->type = Type::Hello;
      if (length < kHelloFixed) return bad(err, 8, "HELLO body of %u bytes (at least 8)", length);
      out->protocol_version = get32(b);
      out->device_count = get16(b + 4);
      if (out->protocol_version == 0) return bad(err, 16, "HELLO protocol version 0");
      if (out->device_count > kMaxDevices)
        return bad(err, 20, "HELLO announces %u devices (at most %zu)", out->device_count,
                   kMaxDevices);
      if (get16(b + 6)) return bad(err, 22, "HELLO reserved bytes are not zero");
      if (const hurray_status st = check_entries("HELLO", length, kHelloFixed, kDeviceEntry,
                                                 out->device_count, "devices", fds, err))
        return st;
      for (size_t i = 0; i < out->device_count; ++i) {
        const uint8_t *e = b + kHelloFixed + kDeviceEntry * i;
        const size_t at = kHeaderSize + kHelloFixed + kDeviceEntry * i;
        out->devices[i].tag = e[0];
        out->devices[i].classes = get32(e + 4);
        if (!zero(e + 1, 3)) return bad(err, at + 1, "HELLO device %zu: reserved bytes", i);
        if (e[0] == HURRAY_DEVICE_INVALID)
          return bad(err, at, "HELLO device %zu: device tag 0xFF is invalid", i);
        for (size_t j = 0; j < i; ++j)
          if (out->devices[j].tag == e[0])
            return bad(err, at, "HELLO device %zu: tag 0x%02X announced twice", i, e[0]);
      }
      return HURRAY_OK;
    }
    case static_cast<uint16_t>(Type::Handoff):
      return parse_handoff(b, length, fds, true, out, err);
    case static_cast<uint16_t>(Type::Release): {
      out->type = Type::Release;
      if (length != kReleaseBody)
        return bad(err, 8, "RELEASE body of %u bytes (expected %zu)", length, kReleaseBody);
      out->id = get64(b);
      if (out->id == 0) return bad(err, 16, "RELEASE id 0");
      if (fds) return bad(err, 12, "RELEASE carries no descriptors");
      return HURRAY_OK;
    }
    case static_cast<uint16_t>(Type::Devices):
      out->type = Type::Devices;
      return parse_devices(b, length, fds, out, err);
    case static_cast<uint16_t>(Type::Window):
      out->type = Type::Window;
      if (length != kWindowBody && length != kWindowSlotBody)
        return bad(err, 8, "WINDOW body of %u bytes (expected %zu; %zu from version 5)", length,
                   kWindowBody, kWindowSlotBody);
      out->window_handoffs = get32(b);
      out->window_fds = get32(b + 4);
      if (length == kWindowSlotBody) {
        out->window_slots_form = true;
        out->window_slots = get32(b + 8);
        if (out->window_slots > kMaxSlots)
          return bad(err, 24, "BP-IPC-SLOT: WINDOW of %u slots (at most %u)", out->window_slots,
                     kMaxSlots);
        if (get32(b + 12)) return bad(err, 28, "WINDOW reserved bytes are not zero");
      }
      if (out->window_handoffs == 0) return bad(err, 16, "WINDOW of 0 handoffs");
      if (out->window_fds < kMaxFds)
        return bad(err, 20, "WINDOW of %u descriptors (at least %zu: one handoff's)",
                   out->window_fds, kMaxFds);
      if (fds) return bad(err, 12, "WINDOW carries no descriptors");
      return HURRAY_OK;
    case static_cast<uint16_t>(Type::HandoffMany):
      out->type = Type::HandoffMany;
      return parse_many(b, length, fds, out, err);
    case static_cast<uint16_t>(Type::ReleaseMany):
      out->type = Type::ReleaseMany;
      return parse_release_many(b, length, fds, out, err);
    default:
      return bad(err, 6, "unknown message type %u", type);
  }
}

hurray_status check_devices(const Message &hello, const Message &devices,
                            hurray_error *err) noexcept {
  for (size_t i = 0; i < devices.id_count && i < kMaxDeviceIds; ++i) {
    bool announced = false;
    for (size_t j = 0; j < hello.device_count && j < kMaxDevices; ++j)
      announced = announced || hello.devices[j].tag == devices.ids[i].tag;
    if (!announced)
      return bad(err, kHeaderSize + kDevicesFixed + kDeviceIdEntry * i,
                 "DEVICES device %zu: tag 0x%02X, which the peer's HELLO did not announce", i,
                 devices.ids[i].tag);
  }
  return HURRAY_OK;
}

size_t encode(const Message &m, uint8_t *out, size_t cap) noexcept {
  size_t body;
  uint8_t fds = 0;
  switch (m.type) {
    case Type::Hello:
      if (m.device_count > kMaxDevices) return 0;
      body = kHelloFixed + kDeviceEntry * m.device_count;
      break;
    case Type::Handoff:
      body = (m.view_offset ? kHandoffViewBody : kHandoffBody) + (m.id_kind ? kIdentitySize : 0);
      fds = handoff_fds(m);
      break;
    case Type::Release:
      body = kReleaseBody;
      break;
    case Type::Devices:
      if (m.id_count > kMaxDeviceIds) return 0;
      body = kDevicesFixed + kDeviceIdEntry * m.id_count;
      break;
    case Type::Window:
      body = m.window_slots_form ? kWindowSlotBody : kWindowBody;
      break;
    case Type::ReleaseMany:
      if (m.count == 0 || m.count > kMaxBatch) return 0;
      body = kReleaseManyFixed + 8 * size_t{m.count};
      break;
    default:  // HANDOFF_MANY: encode_many
      return 0;
  }
  if (!out || cap < kHeaderSize + body) return 0;
  std::memset(out, 0, kHeaderSize + body);
  put32(out, kMagic);
  put16(out + 4, kWireVersion);
  put16(out + 6, static_cast<uint16_t>(m.type));
  put32(out + 8, static_cast<uint32_t>(body));
  out[12] = fds;
  uint8_t *b = out + kHeaderSize;
  switch (m.type) {
    case Type::Hello:
      put32(b, m.protocol_version);
      put16(b + 4, m.device_count);
      for (size_t i = 0; i < m.device_count; ++i) {
        uint8_t *e = b + kHelloFixed + kDeviceEntry * i;
        e[0] = m.devices[i].tag;
        put32(e + 4, m.devices[i].classes);
      }
      break;
    case Type::Handoff:
      put64(b, m.id);
      std::memcpy(b + 8, m.handle, HURRAY_HANDLE_SIZE);
      put32(b + 24, static_cast<uint32_t>(m.device_ordinal));
      put32(b + 28, m.flags);
      put64(b + 32, m.sync_value);
      encode_handle(m.memory, b + 40);
      encode_handle(m.event, b + 40 + kIpcHandleSize);
      if (m.view_offset) put64(b + kHandoffBody, m.view_offset);
      if (m.id_kind) {
        uint8_t *e = b + (m.view_offset ? kHandoffViewBody : kHandoffBody);
        put32(e, m.id_kind);
        std::memcpy(e + 8, m.id_bytes, sizeof m.id_bytes);
      }
      break;
    case Type::Release:
      put64(b, m.id);
      break;
    case Type::Devices:
      put16(b, m.id_count);
      for (size_t i = 0; i < m.id_count; ++i) {
        uint8_t *e = b + kDevicesFixed + kDeviceIdEntry * i;
        e[0] = m.ids[i].tag;
        put16(e + 2, m.ids[i].ordinal);
        put32(e + 4, m.ids[i].kind);
        std::memcpy(e + 8, m.ids[i].bytes, sizeof m.ids[i].bytes);
      }
      break;
    case Type::Window:
      put32(b, m.window_handoffs);
      put32(b + 4, m.window_fds);
      if (m.window_slots_form) put32(b + 8, m.window_slots);
      break;
    case Type::ReleaseMany:
      put32(b, m.count);
      for (size_t i = 0; i < m.count; ++i) put64(b + kReleaseManyFixed + 8 * i, m.ids64[i]);
      break;
    case Type::HandoffMany:
      break;
  }
  return kHeaderSize + body;
}

size_t split_many(const uint8_t *p, size_t n, Message *entries) noexcept {
  if (n < kHeaderSize + kManyFixed) return 0;
  const uint8_t *b = p + kHeaderSize;
  const uint16_t count = get16(b);
  if (count > kMaxBatch) return 0;
  size_t got = 0;
  (void)walk_many(b, static_cast<uint32_t>(n - kHeaderSize), count,
                  [&](size_t i, const uint8_t *x, uint32_t len, size_t) {
                    if (!x || i >= count) return HURRAY_E_PROTOCOL;
                    Message &e = entries[i];
                    std::memset(&e, 0, sizeof e);
                    if (parse_handoff(x + kEntryHeader, len, 0, false, &e, nullptr))
                      return HURRAY_E_PROTOCOL;
                    e.fd_count = handoff_fds(e);
                    got = i + 1;
                    return HURRAY_OK;
                  });
  return got;
}

size_t encode_many(const Message *entries, size_t count, uint8_t *out, size_t cap) noexcept {
  if (!entries || !out || count == 0 || count > kMaxBatch || cap < kHeaderSize + kManyFixed)
    return 0;
  size_t at = kHeaderSize + kManyFixed, fds = 0;
  for (size_t i = 0; i < count; ++i) {
    if (entries[i].type != Type::Handoff || cap - at < kEntryHeader) return 0;
    uint8_t one[kMaxHandoff];
    const size_t k = encode(entries[i], one, sizeof one);
    if (k == 0 || cap - at - kEntryHeader < k - kHeaderSize) return 0;
    put32(out + at, static_cast<uint32_t>(k - kHeaderSize));
    put32(out + at + 4, 0);
    std::memcpy(out + at + kEntryHeader, one + kHeaderSize, k - kHeaderSize);
    at += kEntryHeader + k - kHeaderSize;
    fds += handoff_fds(entries[i]);
  }
  std::memset(out, 0, kHeaderSize + kManyFixed);
  put32(out, kMagic);
  put16(out + 4, kWireVersion);
  put16(out + 6, static_cast<uint16_t>(Type::HandoffMany));
  put32(out + 8, static_cast<uint32_t>(at - kHeaderSize));
  out[12] = static_cast<uint8_t>(fds);
  put16(out + kHeaderSize, static_cast<uint16_t>(count));
  return at;
}

}  // namespace hurray::ipc
