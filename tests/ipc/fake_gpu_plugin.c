/* A stand-in device plugin for the IPC tests: it serves device_tag CUDA
 * (0x01) as "ipcfake" (load it with HURRAY_BACKEND_PATH=<its folder> and
 * HURRAY_BACKENDS=cpu,ipcfake), so that the device path of the IPC channel,
 * memory and events through the backend table's ipc_* functions, runs for
 * real between processes on a machine without a GPU.
 *
 *  memory  a memfd mapped in the process (data is a host address); exported
 *          as kind 0x51 with a dup() of the memfd, imported by mapping it.
 *  events  an eventfd; "reached" when it is readable. event_record makes one
 *          that is reached at once, unless HURRAY_IPCFAKE_DEFER=1: then the
 *          test reaches it by writing to the eventfd, whose number is
 *          (uintptr_t)event - 1. Exported as kind 0x52 with a dup(), imported
 *          as a dup() of what arrived. event_wait polls it (up to 30 s).
 *  HURRAY_IPCFAKE_BAD_EXPORT (read at each export of memory), for the
 *          dispatch layer's descriptor rules: "fail" returns a dup() in
 *          out->fd and HURRAY_E_BACKEND; "kind0" returns a dup() with kind 0
 *          and HURRAY_OK.
 *  HURRAY_IPCFAKE_IDENTITY (read at each call), for the device-identity
 *          tests: one letter per device, in this process's order, 1 to 4
 *          devices ("AB": two; "BA": the same two, reversed). Device X's
 *          identity is the UUID "ipcfake device X"; '-' is a device without
 *          one (kind NONE); '!' and '?' report malformed identities (kind 7;
 *          reserved0 1), for the dispatch layer's check. Exported memory
 *          carries its device's letter in bytes[15], and an import on a
 *          device of another letter fails (the import landed on the wrong
 *          device). Unset: one device, NONE. */
#define _GNU_SOURCE
#include <hurray_backend.h>

#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#define KIND_MEMORY 0x51u
#define KIND_EVENT 0x52u

static hurray_status fail_with(hurray_error *err, hurray_status st, const char *msg) {
  if (err) {
    memset(err, 0, sizeof *err);
    err->status = st;
    err->buffer_index = -1;
    err->byte_offset = -1;
    snprintf(err->message, sizeof err->message, "ipcfake: %s", msg);
  }
  return st;
}

static void *to_event(int fd) { return (void *)(uintptr_t)(fd + 1); }
static int from_event(void *e) { return (int)((uintptr_t)e - 1); }

static hurray_status probe(void **state, hurray_error *err) {
  (void)err;
  *state = NULL;
  return HURRAY_OK;
}
static const char *identities(void) {
  const char *v = getenv("HURRAY_IPCFAKE_IDENTITY");
  return v && *v && strlen(v) <= 4 ? v : NULL;
}
/* device's letter, or 0 when the devices have no letters */
static char letter_of(int32_t device) {
  const char *v = identities();
  return v && device >= 0 && (size_t)device < strlen(v) ? v[device] : 0;
}
static int32_t device_count(void *state) {
  (void)state;
  return identities() ? (int32_t)strlen(identities()) : 1;
}
static hurray_status device_identity(void *state, int32_t device,
                                     hurray_backend_device_identity *out, hurray_error *err) {
  const char c = letter_of(device);
  (void)state, (void)err;
  memset(out, 0, sizeof *out);
  if (c == 0 || c == '-') return HURRAY_OK; /* NONE */
  if (c == '!') out->kind = 7;                /* malformed: an unknown kind */
  if (c == '?') out->reserved0 = 1;           /* malformed: reserved bytes */
  if (c == '!' || c == '?') return HURRAY_OK;
  out->kind = HURRAY_BACKEND_ID_UUID;
  memcpy(out->bytes, "ipcfake device ", 15);
  out->bytes[15] = (uint8_t)c;
  return HURRAY_OK;
}
static hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                                 hurray_error *err) {
  (void)state, (void)device, (void)err;
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "ipcfake (memfd memory, eventfd events)");
  out->memory_classes = 1u << HURRAY_MEMORY_STANDARD;
  out->ipc = HURRAY_BACKEND_IPC_MEMORY | HURRAY_BACKEND_IPC_EVENTS;
  out->min_alignment = 4096;
  return HURRAY_OK;
}

/* plugin_data: the memfd (or -1 for an import); reserved[0]: mapping length */
static hurray_status map_fd(int fd, uint64_t size, int own, hurray_backend_allocation *out,
                            hurray_error *err) {
  const size_t len = (size_t)((size + 4095) / 4096 * 4096);
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return fail_with(err, HURRAY_E_BACKEND, "mmap failed");
  memset(out, 0, sizeof *out);
  out->data = out->host = p;
  out->byte_size = size;
  out->alignment = 4096;
  out->memory_class = HURRAY_MEMORY_STANDARD;
  out->plugin_data = (void *)(intptr_t)(own ? fd : -1);
  out->reserved[0] = len;
  return HURRAY_OK;
}

static hurray_status alloc_fn(void *state, int32_t device, uint8_t mc, uint64_t size,
                              uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                              hurray_error *err) {
  int fd;
  hurray_status st;
  (void)state, (void)device, (void)flags;
  if (mc != HURRAY_MEMORY_STANDARD || alignment > 4096 || size == 0)
    return fail_with(err, HURRAY_E_DEVICE_UNAVAILABLE, "STANDARD, non-empty, alignment <= 4096");
  fd = memfd_create("ipcfake", MFD_CLOEXEC);
  if (fd < 0 || ftruncate(fd, (off_t)((size + 4095) / 4096 * 4096)) != 0) {
    if (fd >= 0) close(fd);
    return fail_with(err, HURRAY_E_OUT_OF_MEMORY, "memfd failed");
  }
  st = map_fd(fd, size, 1, out, err);
  if (st != HURRAY_OK) close(fd);
  out->device = device;
  return st;
}
static void free_fn(void *state, hurray_backend_allocation *a) {
  const int fd = (int)(intptr_t)a->plugin_data;
  (void)state;
  munmap(a->data, (size_t)a->reserved[0]);
  if (fd >= 0) close(fd);
}
static hurray_status to_host(void *state, const hurray_backend_allocation *src, uint64_t off,
                             void *dst, uint64_t n, hurray_error *err) {
  (void)state;
  if (off > src->byte_size || n > src->byte_size - off)
    return fail_with(err, HURRAY_E_INVALID_ARGUMENT, "copy out of range");
  memcpy(dst, (const char *)src->data + off, (size_t)n);
  return HURRAY_OK;
}
static hurray_status from_host(void *state, hurray_backend_allocation *dst, uint64_t off,
                               const void *src, uint64_t n, hurray_error *err) {
  (void)state;
  if (off > dst->byte_size || n > dst->byte_size - off)
    return fail_with(err, HURRAY_E_INVALID_ARGUMENT, "copy out of range");
  memcpy((char *)dst->data + off, src, (size_t)n);
  return HURRAY_OK;
}

static hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                                  uint64_t *value, hurray_error *err) {
  const char *defer = getenv("HURRAY_IPCFAKE_DEFER");
  int fd;
  (void)state, (void)device, (void)stream;
  fd = eventfd(0, EFD_CLOEXEC);
  if (fd < 0) return fail_with(err, HURRAY_E_BACKEND, "eventfd failed");
  if (!(defer && strcmp(defer, "1") == 0)) {
    const uint64_t one = 1;
    if (write(fd, &one, sizeof one) != (ssize_t)sizeof one) {
      close(fd);
      return fail_with(err, HURRAY_E_BACKEND, "eventfd write failed");
    }
  }
  *event = to_event(fd);
  *value = 1;
  return HURRAY_OK;
}
static hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value,
                                void *stream, hurray_error *err) {
  struct pollfd p;
  (void)state, (void)device, (void)value, (void)stream;
  p.fd = from_event(event);
  p.events = POLLIN;
  p.revents = 0;
  if (poll(&p, 1, 30000) != 1) return fail_with(err, HURRAY_E_BACKEND, "event never reached");
  return HURRAY_OK;
}
static void event_release(void *state, int32_t device, void *event) {
  (void)state, (void)device;
  close(from_event(event));
}

static hurray_status export_memory(void *state, const hurray_backend_allocation *a,
                                   hurray_backend_ipc_handle *out, hurray_error *err) {
  const int fd = (int)(intptr_t)a->plugin_data;
  (void)state;
  if (fd < 0) return fail_with(err, HURRAY_E_UNSUPPORTED, "imported memory is not re-exported");
  const char *bad = getenv("HURRAY_IPCFAKE_BAD_EXPORT");
  memset(out, 0, sizeof *out);
  out->kind = KIND_MEMORY;
  out->fd = dup(fd);
  out->byte_size = (uint64_t)a->reserved[0];
  memcpy(out->bytes, "ipcfake memory", 14);
  out->bytes[15] = (uint8_t)letter_of(a->device);
  if (out->fd < 0) return fail_with(err, HURRAY_E_BACKEND, "dup failed");
  if (bad && strcmp(bad, "fail") == 0)  /* a descriptor left in out on failure */
    return fail_with(err, HURRAY_E_BACKEND, "export failed on purpose");
  if (bad && strcmp(bad, "kind0") == 0) out->kind = 0;
  return HURRAY_OK;
}
static hurray_status import_memory(void *state, int32_t device,
                                   const hurray_backend_ipc_handle *h, uint8_t mc,
                                   hurray_backend_allocation *out, hurray_error *err) {
  (void)state, (void)device;
  if (h->kind != KIND_MEMORY || h->fd < 0 || mc != HURRAY_MEMORY_STANDARD ||
      memcmp(h->bytes, "ipcfake memory", 14) != 0)
    return fail_with(err, HURRAY_E_INVALID_ARGUMENT, "not an ipcfake memory handle");
  if (h->bytes[15] && h->bytes[15] != '-' && letter_of(device) &&
      letter_of(device) != '-' && h->bytes[15] != letter_of(device))
    return fail_with(err, HURRAY_E_INVALID_ARGUMENT,
                     "ipcfake: the memory of one device imported on another");
  return map_fd(h->fd, h->byte_size, 0, out, err);
}
static hurray_status export_event(void *state, int32_t device, void *event,
                                  hurray_backend_ipc_handle *out, hurray_error *err) {
  (void)state, (void)device;
  memset(out, 0, sizeof *out);
  out->kind = KIND_EVENT;
  out->fd = dup(from_event(event));
  return out->fd < 0 ? fail_with(err, HURRAY_E_BACKEND, "dup failed") : HURRAY_OK;
}
static hurray_status import_event(void *state, int32_t device, const hurray_backend_ipc_handle *h,
                                  void **event, hurray_error *err) {
  int fd;
  (void)state, (void)device;
  if (h->kind != KIND_EVENT || h->fd < 0)
    return fail_with(err, HURRAY_E_INVALID_ARGUMENT, "not an ipcfake event handle");
  fd = dup(h->fd);
  if (fd < 0) return fail_with(err, HURRAY_E_BACKEND, "dup failed");
  *event = to_event(fd);
  return HURRAY_OK;
}

static const hurray_backend_v1 kTable = {
    HURRAY_BACKEND_API_VERSION, sizeof(hurray_backend_v1), "ipcfake", HURRAY_DEVICE_CUDA,
    {0}, probe, NULL, device_count, device_info, alloc_fn, free_fn, to_host, from_host, NULL,
    event_record, event_wait, event_release, export_memory, import_memory, export_event,
    import_event, NULL, device_identity, NULL, NULL, {NULL}};

__attribute__((visibility("default"))) const hurray_backend_v1 *hurray_backend_entry(void) {
  return &kTable;
}
