/*
 * ABI probe of the Dawn library the WebGPU plugin loads: every struct layout,
 * enum value and callback signature of src/backends/webgpu/wgpu_abi.h that
 * the plugin relies on is checked by calling Dawn (HURRAY_WEBGPU_LIBRARY)
 * and looking at results that depend on it. A new Dawn revision that moves
 * a field, renumbers an enum or changes a callback's arguments fails here,
 * loudly and by name, before the plugin misbehaves.
 * Usage: webgpu_abi_probe (with HURRAY_WEBGPU_LIBRARY and EGL_PLATFORM set).
 */
#define _GNU_SOURCE /* memmem */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "webgpu/wgpu_abi.h"

static hwgpu_api w;
static int failures;

#define CHECK(cond, ...)                     \
  do {                                       \
    if (!(cond)) {                           \
      printf("ABI MISMATCH: " __VA_ARGS__);  \
      printf(" [%s]\n", #cond);              \
      failures++;                            \
    }                                        \
  } while (0)

/* What each callback saw: its status, the handle, and both user pointers,
 * which the caller sets to two distinct marks. */
struct seen {
  int calls;
  uint32_t status, type;
  void *handle;
  WGPUStringView message;
  void *u1, *u2;
};
static char mark1, mark2;

static void on_adapter(uint32_t st, WGPUAdapter a, WGPUStringView m, void *u1, void *u2) {
  struct seen *s = u1;
  s->calls++, s->status = st, s->handle = a, s->message = m, s->u1 = u1, s->u2 = u2;
}
static void on_device(uint32_t st, WGPUDevice d, WGPUStringView m, void *u1, void *u2) {
  struct seen *s = u1;
  s->calls++, s->status = st, s->handle = d, s->message = m, s->u1 = u1, s->u2 = u2;
}
static void on_map(uint32_t st, WGPUStringView m, void *u1, void *u2) {
  struct seen *s = u1;
  s->calls++, s->status = st, s->message = m, s->u1 = u1, s->u2 = u2;
}
static void on_pop(uint32_t st, uint32_t type, WGPUStringView m, void *u1, void *u2) {
  struct seen *s = u1;
  s->calls++, s->status = st, s->type = type, s->message = m, s->u1 = u1, s->u2 = u2;
}
/* The work-done callback is declared with a message (2025 revisions): an
 * argument list without it would put the user pointers where the message
 * is, which the checks see (it records into a global, not through them). */
static struct seen done_seen;
static void on_done(uint32_t st, WGPUStringView m, void *u1, void *u2) {
  struct seen *s = &done_seen;
  s->calls++, s->status = st, s->message = m, s->u1 = u1, s->u2 = u2;
}

static void wait_for(WGPUInstance in, WGPUFuture f, const char *what) {
  for (long i = 0; i < 10000000; i++) {
    WGPUFutureWaitInfo info = {f, 0};
    uint32_t r = w.wgpuInstanceWaitAny(in, 1, &info, 0);
    if (info.completed) {
      CHECK(r == HWGPU_WAIT_SUCCESS, "WGPUWaitStatus_Success is %u, not 1 (%s)", r, what);
      return;
    }
    CHECK(r == HWGPU_WAIT_TIMED_OUT, "WGPUWaitStatus_TimedOut is %u, not 2 (%s)", r, what);
    if (r != HWGPU_WAIT_TIMED_OUT) return;
  }
  CHECK(0, "%s never completed", what);
}

static int userdata_ok(const struct seen *s, const char *what) {
  CHECK(s->calls == 1, "%s callback ran %d times, not once", what, s->calls);
  CHECK(s->u1 == &mark1 || s->u1 == s, "%s callback's userdata1 is %p", what, s->u1);
  return s->calls == 1;
}

/* Every function of hwgpu_api by name and place (C has no way to read a
 * member's name; the plugin's table is src/backends/webgpu/api.h). */
typedef void (*any_fn)(void);
static const struct {
  const char *name;
  size_t offset;
} functions[] = {
    {"wgpuCreateInstance", offsetof(hwgpu_api, wgpuCreateInstance)},
    {"wgpuInstanceRequestAdapter", offsetof(hwgpu_api, wgpuInstanceRequestAdapter)},
    {"wgpuInstanceProcessEvents", offsetof(hwgpu_api, wgpuInstanceProcessEvents)},
    {"wgpuInstanceWaitAny", offsetof(hwgpu_api, wgpuInstanceWaitAny)},
    {"wgpuInstanceRelease", offsetof(hwgpu_api, wgpuInstanceRelease)},
    {"wgpuAdapterGetInfo", offsetof(hwgpu_api, wgpuAdapterGetInfo)},
    {"wgpuAdapterInfoFreeMembers", offsetof(hwgpu_api, wgpuAdapterInfoFreeMembers)},
    {"wgpuAdapterRequestDevice", offsetof(hwgpu_api, wgpuAdapterRequestDevice)},
    {"wgpuAdapterRelease", offsetof(hwgpu_api, wgpuAdapterRelease)},
    {"wgpuDeviceGetQueue", offsetof(hwgpu_api, wgpuDeviceGetQueue)},
    {"wgpuDeviceCreateBuffer", offsetof(hwgpu_api, wgpuDeviceCreateBuffer)},
    {"wgpuDeviceCreateCommandEncoder", offsetof(hwgpu_api, wgpuDeviceCreateCommandEncoder)},
    {"wgpuDevicePushErrorScope", offsetof(hwgpu_api, wgpuDevicePushErrorScope)},
    {"wgpuDevicePopErrorScope", offsetof(hwgpu_api, wgpuDevicePopErrorScope)},
    {"wgpuDeviceDestroy", offsetof(hwgpu_api, wgpuDeviceDestroy)},
    {"wgpuDeviceRelease", offsetof(hwgpu_api, wgpuDeviceRelease)},
    {"wgpuBufferMapAsync", offsetof(hwgpu_api, wgpuBufferMapAsync)},
    {"wgpuBufferGetConstMappedRange", offsetof(hwgpu_api, wgpuBufferGetConstMappedRange)},
    {"wgpuBufferUnmap", offsetof(hwgpu_api, wgpuBufferUnmap)},
    {"wgpuBufferGetSize", offsetof(hwgpu_api, wgpuBufferGetSize)},
    {"wgpuBufferGetUsage", offsetof(hwgpu_api, wgpuBufferGetUsage)},
    {"wgpuBufferDestroy", offsetof(hwgpu_api, wgpuBufferDestroy)},
    {"wgpuBufferRelease", offsetof(hwgpu_api, wgpuBufferRelease)},
    {"wgpuCommandEncoderCopyBufferToBuffer",
     offsetof(hwgpu_api, wgpuCommandEncoderCopyBufferToBuffer)},
    {"wgpuCommandEncoderFinish", offsetof(hwgpu_api, wgpuCommandEncoderFinish)},
    {"wgpuCommandEncoderRelease", offsetof(hwgpu_api, wgpuCommandEncoderRelease)},
    {"wgpuCommandBufferRelease", offsetof(hwgpu_api, wgpuCommandBufferRelease)},
    {"wgpuQueueSubmit", offsetof(hwgpu_api, wgpuQueueSubmit)},
    {"wgpuQueueWriteBuffer", offsetof(hwgpu_api, wgpuQueueWriteBuffer)},
    {"wgpuQueueOnSubmittedWorkDone", offsetof(hwgpu_api, wgpuQueueOnSubmittedWorkDone)},
    {"wgpuQueueRelease", offsetof(hwgpu_api, wgpuQueueRelease)},
};
/* As many entries as hwgpu_api has members (C99 has no _Static_assert). */
enum { function_count = sizeof functions / sizeof functions[0] };
typedef char
    functions_cover_hwgpu_api[function_count * sizeof(any_fn) == sizeof(hwgpu_api) ? 1 : -1];

/* Resolves every entry of functions into w: 0, else 1 with the FAIL line
 * printed. */
static int resolve(void *lib, const char *path) {
  size_t i;
  for (i = 0; i < function_count; i++) {
    any_fn f = (any_fn)(uintptr_t)dlsym(lib, functions[i].name);
    if (f == NULL) {
      printf("FAIL: %s has no %s\n", path, functions[i].name);
      return 1;
    }
    memcpy((char *)&w + functions[i].offset, &f, sizeof f);
  }
  /* An entry named twice leaves another member NULL. */
  for (i = 0; i < sizeof w / sizeof(any_fn); i++) {
    any_fn f;
    memcpy(&f, (const char *)&w + i * sizeof f, sizeof f);
    if (f == NULL) {
      printf("FAIL: member %u of hwgpu_api is not in the probe's table\n", (unsigned)i);
      return 1;
    }
  }
  return 0;
}

int main(void) {
  const char *path = getenv("HURRAY_WEBGPU_LIBRARY");
  if (path == NULL || *path == '\0') {
    printf("FAIL: HURRAY_WEBGPU_LIBRARY is not set (scripts/webgpu.sh prints it)\n");
    return 1;
  }
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    printf("FAIL: dlopen %s: %s\n", path, dlerror());
    return 1;
  }
  if (resolve(lib, path) != 0) return 1;

  WGPUInstance in = w.wgpuCreateInstance(NULL);
  CHECK(in != NULL, "wgpuCreateInstance(NULL) gave NULL");
  if (in == NULL) return 1;

  /* RequestAdapterOptions: featureLevel and backendType in place and
   * numbered as declared: OpenGL ES at Compatibility gives an OpenGL ES
   * adapter (a misplaced field would give Dawn's Null adapter or none). */
  WGPURequestAdapterOptions o;
  memset(&o, 0, sizeof o);
  o.featureLevel = HWGPU_FEATURE_LEVEL_COMPATIBILITY;
  o.backendType = HWGPU_BACKEND_OPENGLES;
  struct seen sa = {0};
  WGPURequestAdapterCallbackInfo ai = {NULL, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY, on_adapter, &sa,
                                       &mark2};
  wait_for(in, w.wgpuInstanceRequestAdapter(in, &o, ai), "wgpuInstanceRequestAdapter");
  if (!userdata_ok(&sa, "request adapter")) return 1;
  CHECK(sa.u2 == &mark2, "request adapter: userdata2 is %p", sa.u2);
  CHECK(sa.status == HWGPU_STATUS_SUCCESS, "WGPURequestAdapterStatus_Success is %u, not 1",
        sa.status);
  WGPUAdapter adapter = sa.handle;
  if (adapter == NULL) {
    printf("FAIL: no OpenGL ES adapter (EGL_PLATFORM=surfaceless and libEGL.so needed)\n");
    return 1;
  }

  /* AdapterInfo: Dawn writes exactly sizeof(WGPUAdapterInfo) bytes (the tail
   * stays as set), with the fields where they are declared. */
  struct {
    WGPUAdapterInfo info;
    unsigned char tail[64];
  } ai_out;
  memset(&ai_out, 0xa5, sizeof ai_out);
  ai_out.info.nextInChain = NULL;
  CHECK(w.wgpuAdapterGetInfo(adapter, &ai_out.info) == HWGPU_STATUS_OK,
        "wgpuAdapterGetInfo is not WGPUStatus_Success (1)");
  for (size_t i = 0; i < sizeof ai_out.tail; i++)
    CHECK(ai_out.tail[i] == 0xa5, "WGPUAdapterInfo is longer than %zu bytes (byte %zu written)",
          sizeof ai_out.info, sizeof ai_out.info + i);
  const WGPUAdapterInfo *info = &ai_out.info;
  CHECK(info->backendType == HWGPU_BACKEND_OPENGLES,
        "WGPUAdapterInfo.backendType is %u, not OpenGLES (8)", info->backendType);
  /* ... and it is one: Dawn's description names the API (the enum's value
   * is checked against what the adapter is, not against itself). */
  CHECK(info->description.data != NULL &&
            memmem(info->description.data, info->description.length, "OpenGL ES", 9) != NULL,
        "backend %u (OpenGLES in wgpu_abi.h) gave an adapter described as '%.*s'",
        HWGPU_BACKEND_OPENGLES, (int)info->description.length,
        info->description.data != NULL ? info->description.data : "");
  CHECK(info->adapterType >= HWGPU_ADAPTER_DISCRETE_GPU && info->adapterType <= HWGPU_ADAPTER_UNKNOWN,
        "WGPUAdapterInfo.adapterType is %u", info->adapterType);
  CHECK(info->device.data != NULL && info->device.length > 0 && info->device.length < 256,
        "WGPUAdapterInfo.device is not a string view (length %zu)", info->device.length);
  CHECK(info->description.data != NULL && info->description.length < 1024,
        "WGPUAdapterInfo.description is not a string view (length %zu)",
        info->description.length);
  CHECK(info->subgroupMinSize >= 1 && info->subgroupMinSize <= info->subgroupMaxSize &&
            info->subgroupMaxSize <= 1024,
        "WGPUAdapterInfo.subgroupMin/MaxSize are %u, %u", info->subgroupMinSize,
        info->subgroupMaxSize);
  printf("adapter: %.*s (%.*s)\n", (int)info->device.length, info->device.data,
         (int)info->description.length, info->description.data);
  w.wgpuAdapterInfoFreeMembers(ai_out.info);

  struct seen sd = {0};
  WGPURequestDeviceCallbackInfo di = {NULL, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY, on_device, &sd,
                                      &mark2};
  wait_for(in, w.wgpuAdapterRequestDevice(adapter, NULL, di), "wgpuAdapterRequestDevice");
  if (!userdata_ok(&sd, "request device")) return 1;
  CHECK(sd.status == HWGPU_STATUS_SUCCESS && sd.handle != NULL,
        "WGPURequestDeviceStatus_Success is %u, not 1", sd.status);
  WGPUDevice dev = sd.handle;
  if (dev == NULL) return 1;
  WGPUQueue q = w.wgpuDeviceGetQueue(dev);

  /* BufferDescriptor: size and usage where declared (Dawn gives both back).
   * The usage bits' values are checked by behaviour where the plugin relies
   * on them: CopySrc and CopyDst by the copy below, MapRead by the map;
   * Storage only by value (binding it needs a bind-group-layout entry, whose
   * layout differs between Dawn revisions). */
  const WGPUFlags usage =
      HWGPU_BUFFER_USAGE_COPY_SRC | HWGPU_BUFFER_USAGE_COPY_DST | HWGPU_BUFFER_USAGE_STORAGE;
  WGPUBufferDescriptor bd = {NULL, {"abi probe", SIZE_MAX}, usage, 1028, 0};
  WGPUBuffer src = w.wgpuDeviceCreateBuffer(dev, &bd);
  CHECK(w.wgpuBufferGetSize(src) == 1028, "WGPUBufferDescriptor.size: got %llu, not 1028",
        (unsigned long long)w.wgpuBufferGetSize(src));
  CHECK(w.wgpuBufferGetUsage(src) == usage, "WGPUBufferDescriptor.usage: got 0x%llx, not 0x%llx",
        (unsigned long long)w.wgpuBufferGetUsage(src), (unsigned long long)usage);
  WGPUBufferDescriptor sdsc = {NULL, {NULL, 0},
                               HWGPU_BUFFER_USAGE_MAP_READ | HWGPU_BUFFER_USAGE_COPY_DST, 16, 0};
  WGPUBuffer staging = w.wgpuDeviceCreateBuffer(dev, &sdsc);
  CHECK(w.wgpuBufferGetUsage(staging) == (HWGPU_BUFFER_USAGE_MAP_READ | HWGPU_BUFFER_USAGE_COPY_DST),
        "MapRead|CopyDst is 0x%llx", (unsigned long long)w.wgpuBufferGetUsage(staging));

  /* Error scopes and error types: no error is NoError (1), a 4-byte rule
   * broken is Validation (2), each with its status and user pointers. */
  struct seen sp = {0};
  WGPUPopErrorScopeCallbackInfo pi = {NULL, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY, on_pop, &sp, &mark2};
  w.wgpuDevicePushErrorScope(dev, HWGPU_ERROR_FILTER_VALIDATION);
  wait_for(in, w.wgpuDevicePopErrorScope(dev, pi), "wgpuDevicePopErrorScope");
  userdata_ok(&sp, "pop error scope");
  CHECK(sp.status == HWGPU_STATUS_SUCCESS && sp.type == HWGPU_ERROR_TYPE_NO_ERROR,
        "an empty error scope: status %u type %u, not 1 and NoError (1)", sp.status, sp.type);
  memset(&sp, 0, sizeof sp);
  unsigned char bytes[1028];
  for (int i = 0; i < 1028; i++) bytes[i] = (unsigned char)(i * 7 + 1);
  w.wgpuDevicePushErrorScope(dev, HWGPU_ERROR_FILTER_VALIDATION);
  w.wgpuQueueWriteBuffer(q, src, 1, bytes, 4);
  wait_for(in, w.wgpuDevicePopErrorScope(dev, pi), "wgpuDevicePopErrorScope");
  CHECK(sp.type == HWGPU_ERROR_TYPE_VALIDATION && sp.message.data != NULL && sp.message.length > 0,
        "an odd WriteBuffer offset: type %u, not Validation (2), with a message", sp.type);
  /* The out-of-memory filter lets a validation error pass to the outer scope. */
  memset(&sp, 0, sizeof sp);
  w.wgpuDevicePushErrorScope(dev, HWGPU_ERROR_FILTER_VALIDATION);
  w.wgpuDevicePushErrorScope(dev, HWGPU_ERROR_FILTER_OUT_OF_MEMORY);
  WGPUBufferDescriptor huge = bd;
  huge.size = (uint64_t)1 << 40;
  WGPUBuffer hb = w.wgpuDeviceCreateBuffer(dev, &huge);
  wait_for(in, w.wgpuDevicePopErrorScope(dev, pi), "wgpuDevicePopErrorScope");
  CHECK(sp.type == HWGPU_ERROR_TYPE_NO_ERROR, "OutOfMemory (2) filter caught type %u", sp.type);
  memset(&sp, 0, sizeof sp);
  wait_for(in, w.wgpuDevicePopErrorScope(dev, pi), "wgpuDevicePopErrorScope");
  CHECK(sp.type == HWGPU_ERROR_TYPE_VALIDATION, "an oversized buffer: type %u, not Validation",
        sp.type);
  if (hb != NULL) w.wgpuBufferRelease(hb);

  /* WriteBuffer (offset, data, size) and CopyBufferToBuffer (source,
   * source offset, destination, destination offset, size) in the declared
   * order: bytes [20, 28) of the written pattern land at [4, 12) of the
   * staging buffer, read back through MapAsync(Read). */
  w.wgpuQueueWriteBuffer(q, src, 0, bytes, 1028);
  WGPUCommandEncoder enc = w.wgpuDeviceCreateCommandEncoder(dev, NULL);
  w.wgpuCommandEncoderCopyBufferToBuffer(enc, src, 20, staging, 4, 8);
  WGPUCommandBuffer cmd = w.wgpuCommandEncoderFinish(enc, NULL);
  w.wgpuQueueSubmit(q, 1, &cmd);
  w.wgpuCommandBufferRelease(cmd);
  w.wgpuCommandEncoderRelease(enc);

  WGPUQueueWorkDoneCallbackInfo wi = {NULL, HWGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS, on_done,
                                      &mark1, &mark2};
  WGPUFuture done = w.wgpuQueueOnSubmittedWorkDone(q, wi);
  CHECK(done.id != 0, "wgpuQueueOnSubmittedWorkDone gave no future");
  wait_for(in, done, "wgpuQueueOnSubmittedWorkDone");
  CHECK(done_seen.calls == 1, "the work-done callback ran %d times", done_seen.calls);
  CHECK(done_seen.u1 == &mark1 && done_seen.u2 == &mark2,
        "the work-done callback takes no message (userdata at %p, %p)", done_seen.u1, done_seen.u2);
  CHECK(done_seen.status == HWGPU_STATUS_SUCCESS, "WGPUQueueWorkDoneStatus_Success is %u", done_seen.status);
  /* A completed future stays completed for a second wait (the plugin's
   * events are waited on by each consumer). */
  wait_for(in, done, "wgpuQueueOnSubmittedWorkDone, again");
  w.wgpuInstanceProcessEvents(in);
  wait_for(in, done, "wgpuQueueOnSubmittedWorkDone, after ProcessEvents");
  CHECK(done_seen.calls == 1, "the work-done callback ran %d times", done_seen.calls);

  struct seen sm = {0};
  WGPUBufferMapCallbackInfo mi = {NULL, HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY, on_map, &sm, &mark2};
  wait_for(in, w.wgpuBufferMapAsync(staging, HWGPU_MAP_MODE_READ, 0, 16, mi), "wgpuBufferMapAsync");
  userdata_ok(&sm, "map");
  CHECK(sm.u2 == &mark2, "map: userdata2 is %p", sm.u2);
  CHECK(sm.status == HWGPU_STATUS_SUCCESS, "WGPUMapAsyncStatus_Success is %u (MapMode_Read 1?)",
        sm.status);
  const unsigned char *m = w.wgpuBufferGetConstMappedRange(staging, 0, 16);
  CHECK(m != NULL, "wgpuBufferGetConstMappedRange gave NULL");
  if (m != NULL) {
    unsigned char want[16] = {0};
    memcpy(want + 4, bytes + 20, 8);
    CHECK(memcmp(m, want, 16) == 0, "CopyBufferToBuffer or WriteBuffer moved the wrong bytes");
  }
  w.wgpuBufferUnmap(staging);

  w.wgpuBufferDestroy(src);
  w.wgpuBufferRelease(src);
  w.wgpuBufferRelease(staging);
  w.wgpuQueueRelease(q);
  w.wgpuDeviceDestroy(dev);
  w.wgpuDeviceRelease(dev);
  w.wgpuAdapterRelease(adapter);
  w.wgpuInstanceProcessEvents(in);
  w.wgpuInstanceRelease(in);
  if (failures != 0) {
    printf("FAIL: %d ABI mismatches between wgpu_abi.h and %s\n", failures, path);
    return 1;
  }
  printf("ok: the layouts, enums and callbacks of wgpu_abi.h match %s\n", path);
  return 0;
}
