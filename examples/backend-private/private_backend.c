/* A complete libhurray backend plugin, in C99, for private device tag 0xF0:
 * a "device" whose memory is host memory and whose streams run every piece
 * of work at once, so events are counters that are always reached. It shows
 * the whole contract of hurray_backend.h in the fewest lines; a real plugin
 * dlopens its vendor runtime in probe() and translates the vendor's errors.
 *
 * Build: cc -std=c99 -shared -fPIC -fvisibility=hidden private_backend.c \
 *          -o libhurray-example-private.so
 * Use:   HURRAY_BACKEND_PATH=<its folder> and agree to tag 0xF0 in the
 *        context's policy (hurray_policy_allow_private_tag). */
#define _POSIX_C_SOURCE 200112L
#include <hurray_backend.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PRIVATE_TAG 0xF0

struct state {
  unsigned long long events_recorded; /* the "timeline" of the one stream */
};

static hurray_status fail_with(hurray_error *err, hurray_status st, const char *msg) {
  if (err) {
    memset(err, 0, sizeof *err);
    err->status = st;
    err->buffer_index = -1;
    err->byte_offset = -1;
    snprintf(err->message, sizeof err->message, "example-private: %s", msg);
  }
  return st;
}

static hurray_status probe(void **state, hurray_error *err) {
  struct state *s = (struct state *)calloc(1, sizeof *s);
  if (!s) return fail_with(err, HURRAY_E_OUT_OF_MEMORY, "out of memory");
  if (getenv("HURRAY_EXAMPLE_PRIVATE_ABSENT"))
    return free(s), fail_with(err, HURRAY_E_DEVICE_UNAVAILABLE, "the device is switched off");
  *state = s;
  return HURRAY_OK;
}

static void shutdown(void *state) { free(state); }
static int32_t device_count(void *state) { (void)state; return 1; }

static hurray_status device_info(void *state, int32_t device, hurray_backend_device_info *out,
                                 hurray_error *err) {
  (void)state; (void)device; (void)err;
  snprintf(out->name, sizeof out->name, "example private device");
  out->memory_classes = 1u << HURRAY_MEMORY_STANDARD;
  out->ipc = 0;
  out->min_alignment = 64;
  snprintf(out->detail, sizeof out->detail, "STANDARD: host memory (posix_memalign)");
  return HURRAY_OK;
}

static hurray_status alloc(void *state, int32_t device, uint8_t memory_class, uint64_t size,
                           uint32_t alignment, uint32_t flags, hurray_backend_allocation *out,
                           hurray_error *err) {
  void *p = NULL;
  (void)state;
  if (memory_class != HURRAY_MEMORY_STANDARD)
    return fail_with(err, HURRAY_E_DEVICE_UNAVAILABLE, "only STANDARD memory exists here");
  if (flags & HURRAY_ALLOC_SHAREABLE)
    return fail_with(err, HURRAY_E_UNSUPPORTED, "no memory crosses processes here");
  if (size && posix_memalign(&p, alignment, (size_t)size) != 0)
    return fail_with(err, HURRAY_E_OUT_OF_MEMORY, "posix_memalign failed");
  memset(out, 0, sizeof *out);
  out->data = out->host = p;
  out->byte_size = size;
  out->alignment = alignment;
  out->device = device;
  out->memory_class = memory_class;
  return HURRAY_OK;
}

static void release_memory(void *state, hurray_backend_allocation *a) { (void)state; free(a->data); }

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

/* The event is the stream's counter value; the "stream" is done with all work
 * at once, so a wait only checks that the value was ever recorded. */
static hurray_status event_record(void *state, int32_t device, void *stream, void **event,
                                  uint64_t *value, hurray_error *err) {
  struct state *s = (struct state *)state;
  (void)device; (void)stream; (void)err;
  *value = ++s->events_recorded;
  *event = s;
  return HURRAY_OK;
}

static hurray_status event_wait(void *state, int32_t device, void *event, uint64_t value,
                                void *stream, hurray_error *err) {
  struct state *s = (struct state *)state;
  (void)device; (void)stream;
  if (event != s || value == 0 || value > s->events_recorded)
    return fail_with(err, HURRAY_E_INVALID_ARGUMENT, "waiting for an event never recorded");
  return HURRAY_OK;
}

static void event_release(void *state, int32_t device, void *event) {
  (void)state; (void)device; (void)event; /* counters need no freeing */
}

static const hurray_backend_v1 table = {
    HURRAY_BACKEND_API_VERSION, sizeof(hurray_backend_v1), "example-private", PRIVATE_TAG,
    {0}, probe, shutdown, device_count, device_info, alloc, release_memory, to_host, from_host,
    NULL /* classify */, event_record, event_wait, event_release,
    NULL, NULL, NULL, NULL /* no IPC */, NULL /* no native handles */,
    NULL /* no device identity */, NULL /* release_after: libhurray waits */,
    NULL /* ipc_export_pointer: wrapped memory is not sent */, {NULL}};

__attribute__((visibility("default"))) const hurray_backend_v1 *hurray_backend_entry(void) {
  return &table;
}
