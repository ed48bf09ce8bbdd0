// The dispatch layer: the only code outside src/backends that calls or reads
// a plugin's table (hurray_backend_v1); the loader (backends.cpp) checks and
// probes a table through it too. One inline function per entry, so that the
// handoff and allocation paths compile to the same direct call as before;
// what the entries have in common is decided here once:
//  - A NULL optional entry (classify, the four IPC entries, native) is
//    HURRAY_E_UNSUPPORTED with one message format (a NULL release_after
//    waits on the host instead),
//    "[RULE-ID: ]<plugin>: <entry>: UNSUPPORTED: <why>" (see unsupported()
//    below); a NULL shutdown does nothing.
//  - Errors this layer finds in what a plugin returned use the same prefix,
//    "<plugin>: <entry>: <STATUS>: ...". A plugin's own error message is
//    passed on as the plugin wrote it (the rule ID first where there is one).
//    The format is docs/errors.md's.
//  - File descriptors: a descriptor a plugin returns (the ipc_export_*
//    entries, out->fd) belongs to the caller once the entry succeeds; on any
//    failure, the plugin's or this layer's, it is closed here and out->fd is
//    -1. A descriptor the caller passes in (the ipc_import_* entries) stays
//    the caller's: the plugin duplicates what it keeps.
//  - out structs are zeroed (descriptors -1) before the plugin sees them.
// The loader's own guarantees to a plugin (valid ordinal, handles checked)
// are in include/hurray_backend.h; the callers here keep them.
#pragma once

#include <hurray.h>
#include <hurray_backend.h>

#include <cstring>

#include "backend.h"

namespace hurray::detail::dispatch {

// ---- cold paths (dispatch.cpp) ----

// "[RULE-ID: ]<plugin>: <entry>: UNSUPPORTED: <why>" (the ID of `rule`
// when one applies; why never types it).
hurray_status unsupported(const Backend &b, const char *entry, hurray_rule rule,
                          const char *why, hurray_error *err) noexcept;
// "<plugin>: <entry>: <status name>: <detail>": what this layer found wrong
// in what the plugin returned.
hurray_status refuse(const Backend &b, const char *entry, hurray_status status,
                     hurray_error *err, const char *fmt, ...) noexcept
    __attribute__((format(printf, 5, 6)));
// Close a descriptor a plugin returned and that nobody took (fd >= 0).
void close_returned(int fd) noexcept;
// An exported IPC handle is well formed (kind not 0, fd -1 or a descriptor);
// on refusal the descriptor is closed and *err says which entry.
hurray_status check_exported(const Backend &b, const char *entry, hurray_backend_ipc_handle *h,
                             hurray_error *err) noexcept;

// ---- what every ipc_export_* entry does around the plugin's call ----

// Before the call: the plugin sees a zeroed handle without a descriptor.
inline void clear_exported(hurray_backend_ipc_handle *out) noexcept {
  std::memset(out, 0, sizeof *out);
  out->fd = -1;
}

// After the call, which answered `st`: on failure the descriptor the plugin
// may have returned is closed (out->fd -1) and `st` returned; on success the
// handle is checked (check_exported).
inline hurray_status finish_export(const Backend &b, const char *entry, hurray_status st,
                                   hurray_backend_ipc_handle *out, hurray_error *err) noexcept {
  if (st == HURRAY_OK) return check_exported(b, entry, out, err);
  close_returned(out->fd);
  out->fd = -1;
  return st;
}

// ---- the loader: a table before it is probed (dispatch.cpp) ----

inline const char *name(const hurray_backend_v1 &t) noexcept { return t.name; }
inline uint8_t device_tag(const hurray_backend_v1 &t) noexcept { return t.device_tag; }
// Why the table a plugin's hurray_backend_entry returned cannot be used (its
// ABI version, its size, a required entry NULL), as text into why (n bytes);
// false when it can be.
bool refuse_table(const hurray_backend_v1 *t, char *why, size_t n) noexcept;
// Probe the table: *out is its Backend (the table and the plugin's state).
// An exception from the plugin is HURRAY_E_INTERNAL ("probe threw an
// exception"), a runtime without a device HURRAY_E_DEVICE_UNAVAILABLE ("the
// runtime reports no device"); err->message stays empty when the plugin
// wrote none.
hurray_status probe(const hurray_backend_v1 *t, Backend *out, hurray_error *err) noexcept;

// ---- the table ----

inline const char *name(const Backend &b) noexcept { return name(*b.table); }
inline uint8_t device_tag(const Backend &b) noexcept { return device_tag(*b.table); }

// Optional: a NULL shutdown has nothing to release.
inline void shutdown(const Backend &b) noexcept {
  if (b.table->shutdown) b.table->shutdown(b.state);
}

inline int32_t device_count(const Backend &b) noexcept { return b.table->device_count(b.state); }

inline hurray_status device_info(const Backend &b, int32_t device, hurray_backend_device_info *out,
                                 hurray_error *err) noexcept {
  std::memset(out, 0, sizeof *out);
  return b.table->device_info(b.state, device, out, err);
}

inline hurray_status alloc(const Backend &b, int32_t device, uint8_t memory_class,
                           uint64_t byte_size, uint32_t alignment, uint32_t flags,
                           hurray_backend_allocation *out, hurray_error *err) noexcept {
  *out = hurray_backend_allocation{};
  return b.table->alloc(b.state, device, memory_class, byte_size, alignment, flags, out, err);
}

inline void free(const Backend &b, hurray_backend_allocation *a) noexcept {
  b.table->free(b.state, a);
}

inline hurray_status copy_to_host(const Backend &b, const hurray_backend_allocation *src,
                                  uint64_t offset, void *dst, uint64_t n,
                                  hurray_error *err) noexcept {
  return b.table->copy_to_host(b.state, src, offset, dst, n, err);
}

inline hurray_status copy_from_host(const Backend &b, hurray_backend_allocation *dst,
                                    uint64_t offset, const void *src, uint64_t n,
                                    hurray_error *err) noexcept {
  return b.table->copy_from_host(b.state, dst, offset, src, n, err);
}

inline hurray_status classify(const Backend &b, const void *ptr, int32_t *device,
                              uint8_t *memory_class, hurray_error *err) noexcept {
  if (!b.table->classify)
    return unsupported(b, "classify", HURRAY_RULE_NONE, "this backend cannot classify pointers",
                       err);
  return b.table->classify(b.state, ptr, device, memory_class, err);
}

inline hurray_status event_record(const Backend &b, int32_t device, void *stream, void **event,
                                  uint64_t *value, hurray_error *err) noexcept {
  *event = nullptr;
  *value = 0;
  return b.table->event_record(b.state, device, stream, event, value, err);
}

inline hurray_status event_wait(const Backend &b, int32_t device, void *event, uint64_t value,
                                void *stream, hurray_error *err) noexcept {
  return b.table->event_wait(b.state, device, event, value, stream, err);
}

inline void event_release(const Backend &b, int32_t device, void *event) noexcept {
  b.table->event_release(b.state, device, event);
}

// Whether the backend has both memory IPC entries (what a channel announces).
inline bool has_memory_ipc(const Backend &b) noexcept {
  return b.table->ipc_export_memory && b.table->ipc_import_memory;
}

// On success out->fd (if >= 0) is the caller's to pass on and close.
inline hurray_status ipc_export_memory(const Backend &b, const hurray_backend_allocation *a,
                                       hurray_backend_ipc_handle *out,
                                       hurray_error *err) noexcept {
  clear_exported(out);
  if (!b.table->ipc_export_memory)
    return unsupported(b, "ipc_export_memory", HURRAY_RULE_NONE, "this backend has no IPC", err);
  const hurray_status st = b.table->ipc_export_memory(b.state, a, out, err);
  return finish_export(b, "ipc_export_memory", st, out, err);
}

// ipc_export_memory for a send that holds the allocation until sendmsg has
// returned: the built-in CPU backend lends the allocation's own memfd
// (*lent true: out->fd is not the caller's, never close it; sendmsg takes
// its own reference) instead of a descriptor dup'ed and closed per send;
// any other backend exports as ipc_export_memory (*lent false).
hurray_status ipc_lend_memory(const Backend &b, const hurray_backend_allocation *a,
                              hurray_backend_ipc_handle *out, bool *lent,
                              hurray_error *err) noexcept;

// Memory the plugin did not allocate (a wrapped buffer): the plugin exports
// the allocation that holds it (ipc_export_pointer). On success out->fd (if
// >= 0) is the caller's to pass on and close.
inline hurray_status ipc_export_pointer(const Backend &b, int32_t device, uint8_t memory_class,
                                        const void *data, uint64_t byte_size,
                                        hurray_backend_ipc_handle *out,
                                        hurray_error *err) noexcept {
  clear_exported(out);
  if (!b.table->ipc_export_pointer)
    return unsupported(b, "ipc_export_pointer", HURRAY_RULE_NONE,
                       "wrapped memory cannot be sent (the plugin exports only what it "
                       "allocated: allocate it with hurray_buffer_alloc() and "
                       "HURRAY_ALLOC_SHAREABLE)",
                       err);
  const hurray_status st =
      b.table->ipc_export_pointer(b.state, device, memory_class, data, byte_size, out, err);
  return finish_export(b, "ipc_export_pointer", st, out, err);
}

// handle->fd stays the caller's.
inline hurray_status ipc_import_memory(const Backend &b, int32_t device,
                                       const hurray_backend_ipc_handle *handle,
                                       uint8_t memory_class, hurray_backend_allocation *out,
                                       hurray_error *err) noexcept {
  *out = hurray_backend_allocation{};
  if (!b.table->ipc_import_memory)
    return unsupported(b, "ipc_import_memory", HURRAY_RULE_NONE, "this backend has no IPC", err);
  return b.table->ipc_import_memory(b.state, device, handle, memory_class, out, err);
}

// On success out->fd (if >= 0) is the caller's to pass on and close.
inline hurray_status ipc_export_event(const Backend &b, int32_t device, void *event,
                                      hurray_backend_ipc_handle *out,
                                      hurray_error *err) noexcept {
  clear_exported(out);
  if (!b.table->ipc_export_event)
    return unsupported(b, "ipc_export_event", HURRAY_RULE_SYNC_IPC,
                       "this backend cannot export events", err);
  const hurray_status st = b.table->ipc_export_event(b.state, device, event, out, err);
  return finish_export(b, "ipc_export_event", st, out, err);
}

// handle->fd stays the caller's.
inline hurray_status ipc_import_event(const Backend &b, int32_t device,
                                      const hurray_backend_ipc_handle *handle, void **event,
                                      hurray_error *err) noexcept {
  *event = nullptr;
  if (!b.table->ipc_import_event)
    return unsupported(b, "ipc_import_event", HURRAY_RULE_SYNC_IPC,
                       "this backend cannot import events", err);
  return b.table->ipc_import_event(b.state, device, handle, event, err);
}

inline hurray_status native(const Backend &b, int32_t device, hurray_backend_native *out,
                            hurray_error *err) noexcept {
  std::memset(out, 0, sizeof *out);
  if (!b.table->native)
    return unsupported(b, "native", HURRAY_RULE_NONE, "this backend has no native handles", err);
  return b.table->native(b.state, device, out, err);
}

// Optional: a NULL entry is no identity (kind NONE), not an error. What the
// plugin returned is checked (a known kind, reserved0 zero, bytes beyond the
// kind's length zero); NONE has all bytes zero.
hurray_status check_identity(const Backend &b, hurray_backend_device_identity *out,
                             hurray_error *err) noexcept;
inline hurray_status device_identity(const Backend &b, int32_t device,
                                     hurray_backend_device_identity *out,
                                     hurray_error *err) noexcept {
  std::memset(out, 0, sizeof *out);
  if (!b.table->device_identity) return HURRAY_OK;
  if (const hurray_status st = b.table->device_identity(b.state, device, out, err)) {
    std::memset(out, 0, sizeof *out);
    return st;
  }
  return check_identity(b, out, err);
}

// Whether the backend defers a release to its completion (release_after
// entry); without one, release_after below waits on the host.
inline bool has_release_after(const Backend &b) noexcept { return b.table->release_after != nullptr; }

// A NULL release_after: wait on the host for (event, value), or for an event
// recorded on `stream`, then call done (dispatch.cpp).
hurray_status release_after_wait(const Backend &b, int32_t device, void *stream, void *event,
                                 uint64_t value, void (*done)(void *), void *user,
                                 hurray_error *err) noexcept;

// done(user) exactly once when the work completes; never on an error return.
inline hurray_status release_after(const Backend &b, int32_t device, void *stream, void *event,
                                   uint64_t value, void (*done)(void *), void *user,
                                   hurray_error *err) noexcept {
  if (!b.table->release_after)
    return release_after_wait(b, device, stream, event, value, done, user, err);
  return b.table->release_after(b.state, device, stream, event, value, done, user, err);
}

}  // namespace hurray::detail::dispatch
