// The cold paths of the dispatch layer (dispatch.h): the one message format
// for a NULL optional entry and for what a plugin returned wrong, closing a
// descriptor a plugin returned that nobody took, and the loader's check and
// probe of a table.
#include "dispatch.h"

#include <unistd.h>

#include <cstdarg>
#include <cstdio>

#include "../backends/cpu/cpu.h"
#include "../core/internal.h"
#include "../core/struct_size.h"

namespace hurray::detail::dispatch {

namespace {

// "UNSUPPORTED" for HURRAY_E_UNSUPPORTED.
const char *short_name(hurray_status st) noexcept {
  const char *n = hurray_status_name(st);
  constexpr char kPrefix[] = "HURRAY_E_";
  return std::strncmp(n, kPrefix, sizeof kPrefix - 1) == 0 ? n + sizeof kPrefix - 1 : n;
}

// The one format of this layer: "[RULE-ID: ]<plugin>: <entry>: <STATUS>: <text>".
hurray_status say(const Backend &b, const char *entry, hurray_status status, hurray_rule rule,
                  hurray_error *err, const char *text) noexcept {
  char who[96];
  std::snprintf(who, sizeof who, "%s: %s: %s", name(b), entry, short_name(status));
  return detail::refuse(err, status, rule, who, "%s", text);
}

}  // namespace

bool refuse_table(const hurray_backend_v1 *t, char *why, size_t n) noexcept {
  SizeRefusal small;
  if (t->api_version != HURRAY_BACKEND_API_VERSION)
    std::snprintf(why, n, "plugin ABI version %u, this libhurray speaks %u", t->api_version,
                  HURRAY_BACKEND_API_VERSION);
  else if (below_first_size<hurray_backend_v1>(nullptr, t->size, &small))
    std::snprintf(why, n, "%s", small.text);
  else if (!t->name || !t->probe || !t->device_count || !t->device_info || !t->alloc ||
           !t->free || !t->copy_to_host || !t->copy_from_host || !t->event_record ||
           !t->event_wait || !t->event_release)
    std::snprintf(why, n, "a required function of the table is NULL");
  else
    return false;
  return true;
}

hurray_status probe(const hurray_backend_v1 *t, Backend *out, hurray_error *err) noexcept {
  std::memset(err, 0, sizeof *err);
  *out = Backend{t, nullptr};
  hurray_status st;
  // Kept: not this layer's barrier but a call into a plugin, whose own
  // barrier (the kit's) a plugin not built on the kit may lack.
  try {
    st = t->probe(&out->state, err);
  } catch (...) {
    st = HURRAY_E_INTERNAL;
    std::snprintf(err->message, sizeof err->message, "probe threw an exception");
  }
  if (st == HURRAY_OK && device_count(*out) < 1) {
    st = HURRAY_E_DEVICE_UNAVAILABLE;
    std::snprintf(err->message, sizeof err->message, "the runtime reports no device");
  }
  return st;
}

hurray_status unsupported(const Backend &b, const char *entry, hurray_rule rule, const char *why,
                          hurray_error *err) noexcept {
  return say(b, entry, HURRAY_E_UNSUPPORTED, rule, err, why);
}

hurray_status refuse(const Backend &b, const char *entry, hurray_status status, hurray_error *err,
                     const char *fmt, ...) noexcept {
  if (!err) return status;
  char detail[HURRAY_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  return say(b, entry, status, HURRAY_RULE_NONE, err, detail);
}

void close_returned(int fd) noexcept {
  if (fd >= 0) close(fd);
}

hurray_status check_exported(const Backend &b, const char *entry, hurray_backend_ipc_handle *h,
                             hurray_error *err) noexcept {
  if (h->kind != 0 && h->fd >= -1) return HURRAY_OK;
  const unsigned kind = h->kind;
  const int fd = h->fd;
  close_returned(h->fd);
  h->fd = -1;
  return refuse(b, entry, HURRAY_E_BACKEND, err, "the plugin returned a handle of kind %u, fd %d",
                kind, fd);
}

hurray_status check_identity(const Backend &b, hurray_backend_device_identity *out,
                             hurray_error *err) noexcept {
  size_t used = 16;  // bytes the kind uses; the rest must be zero
  switch (out->kind) {
    case HURRAY_BACKEND_ID_NONE: used = 0; break;
    case HURRAY_BACKEND_ID_UUID: used = 16; break;
    case HURRAY_BACKEND_ID_LUID: used = 8; break;
    case HURRAY_BACKEND_ID_PCI: used = 7; break;
    default: {
      const unsigned kind = out->kind;
      std::memset(out, 0, sizeof *out);
      return refuse(b, "device_identity", HURRAY_E_BACKEND, err,
                    "the plugin returned an identity of unknown kind %u", kind);
    }
  }
  bool clean = out->reserved0 == 0;
  for (size_t i = used; i < sizeof out->bytes; ++i) clean = clean && out->bytes[i] == 0;
  if (!clean) {
    std::memset(out, 0, sizeof *out);
    return refuse(b, "device_identity", HURRAY_E_BACKEND, err,
                  "the plugin returned an identity with non-zero reserved or unused bytes");
  }
  return HURRAY_OK;
}

}  // namespace hurray::detail::dispatch

namespace hurray::detail::dispatch {

hurray_status release_after_wait(const Backend &b, int32_t device, void *stream, void *event,
                                 uint64_t value, void (*done)(void *), void *user,
                                 hurray_error *err) noexcept {
  if (event) {
    if (const hurray_status st = event_wait(b, device, event, value, nullptr, err)) return st;
  } else {
    void *recorded = nullptr;
    uint64_t v = 0;
    if (const hurray_status st = event_record(b, device, stream, &recorded, &v, err)) return st;
    const hurray_status st = event_wait(b, device, recorded, v, nullptr, err);
    event_release(b, device, recorded);
    if (st != HURRAY_OK) return st;
  }
  done(user);
  return HURRAY_OK;
}

hurray_status ipc_lend_memory(const Backend &b, const hurray_backend_allocation *a,
                              hurray_backend_ipc_handle *out, bool *lent,
                              hurray_error *err) noexcept {
  *lent = b.table->ipc_export_memory == &cpu_ipc_export_memory;
  if (!*lent) return ipc_export_memory(b, a, out, err);
  clear_exported(out);
  return cpu_ipc_describe_memory(a, out, err);
}

}  // namespace hurray::detail::dispatch
