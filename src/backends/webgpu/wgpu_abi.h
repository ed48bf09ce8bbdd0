/*
 * The part of Dawn's C API (the WebGPU native API of mid-2025) that
 * libhurray-webgpu.so calls, declared here because no webgpu.h ships with
 * the library it loads (the npm package bun-webgpu-linux-x64 0.1.7 carries
 * libwebgpu_wrapper.so only). Written for this project: the names, struct
 * layouts and enum values below are the ABI facts the plugin relies on, and
 * tests/backends/webgpu/abi_probe_test.c checks each against the library by
 * calling functions whose results depend on them.
 *
 * Only what the plugin uses is here; everything is a typedef (the plugin
 * resolves each function with dlsym: there is no prototype to link). Plain C,
 * so the C probe test and the C++ plugin share it.
 */
#ifndef HURRAY_WEBGPU_WGPU_ABI_H
#define HURRAY_WEBGPU_WGPU_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- handles (opaque pointers) ---------------------------------------- */
typedef struct WGPUInstanceImpl *WGPUInstance;
typedef struct WGPUAdapterImpl *WGPUAdapter;
typedef struct WGPUDeviceImpl *WGPUDevice;
typedef struct WGPUQueueImpl *WGPUQueue;
typedef struct WGPUBufferImpl *WGPUBuffer;
typedef struct WGPUCommandEncoderImpl *WGPUCommandEncoder;
typedef struct WGPUCommandBufferImpl *WGPUCommandBuffer;

typedef uint32_t WGPUBool;
typedef uint64_t WGPUFlags;

/* A string with its length; length SIZE_MAX means NUL-terminated. */
typedef struct WGPUStringView {
  const char *data;
  size_t length;
} WGPUStringView;

typedef struct WGPUChainedStruct {
  struct WGPUChainedStruct *next;
  uint32_t sType;
} WGPUChainedStruct;

/* The id of an asynchronous operation; 0 is no future. */
typedef struct WGPUFuture {
  uint64_t id;
} WGPUFuture;

typedef struct WGPUFutureWaitInfo {
  WGPUFuture future;
  WGPUBool completed;
} WGPUFutureWaitInfo;

/* ---- enums (32-bit) and flags (64-bit) --------------------------------- */
enum {
  HWGPU_CALLBACK_MODE_WAIT_ANY_ONLY = 1, HWGPU_CALLBACK_MODE_ALLOW_PROCESS_EVENTS = 2,
  HWGPU_CALLBACK_MODE_ALLOW_SPONTANEOUS = 3
};
enum { HWGPU_WAIT_SUCCESS = 1, HWGPU_WAIT_TIMED_OUT = 2, HWGPU_WAIT_ERROR = 3 };
enum { HWGPU_FEATURE_LEVEL_UNDEFINED = 0, HWGPU_FEATURE_LEVEL_COMPATIBILITY = 1, HWGPU_FEATURE_LEVEL_CORE = 2 };
enum {
  HWGPU_BACKEND_UNDEFINED = 0, HWGPU_BACKEND_NULL = 1, HWGPU_BACKEND_WEBGPU = 2,
  HWGPU_BACKEND_D3D11 = 3, HWGPU_BACKEND_D3D12 = 4, HWGPU_BACKEND_METAL = 5,
  HWGPU_BACKEND_VULKAN = 6, HWGPU_BACKEND_OPENGL = 7, HWGPU_BACKEND_OPENGLES = 8
};
enum {
  HWGPU_ADAPTER_DISCRETE_GPU = 1, HWGPU_ADAPTER_INTEGRATED_GPU = 2, HWGPU_ADAPTER_CPU = 3,
  HWGPU_ADAPTER_UNKNOWN = 4
};
/* RequestAdapter, RequestDevice, MapAsync, PopErrorScope, QueueWorkDone:
 * 1 is success in each; the plugin reports any other value by number. */
enum { HWGPU_STATUS_SUCCESS = 1 };
enum { HWGPU_STATUS_OK = 1, HWGPU_STATUS_ERROR = 2 }; /* WGPUStatus */
enum { HWGPU_ERROR_FILTER_VALIDATION = 1, HWGPU_ERROR_FILTER_OUT_OF_MEMORY = 2, HWGPU_ERROR_FILTER_INTERNAL = 3 };
enum {
  HWGPU_ERROR_TYPE_NO_ERROR = 1, HWGPU_ERROR_TYPE_VALIDATION = 2,
  HWGPU_ERROR_TYPE_OUT_OF_MEMORY = 3, HWGPU_ERROR_TYPE_INTERNAL = 4, HWGPU_ERROR_TYPE_UNKNOWN = 5
};

#define HWGPU_BUFFER_USAGE_MAP_READ ((WGPUFlags)0x1)
#define HWGPU_BUFFER_USAGE_MAP_WRITE ((WGPUFlags)0x2)
#define HWGPU_BUFFER_USAGE_COPY_SRC ((WGPUFlags)0x4)
#define HWGPU_BUFFER_USAGE_COPY_DST ((WGPUFlags)0x8)
#define HWGPU_BUFFER_USAGE_STORAGE ((WGPUFlags)0x80)
#define HWGPU_MAP_MODE_READ ((WGPUFlags)0x1)
#define HWGPU_MAP_MODE_WRITE ((WGPUFlags)0x2)

/* WebGPU's copy rule: buffer copy offsets and sizes are multiples of 4. */
#define HWGPU_COPY_ALIGNMENT 4u

/* ---- descriptors -------------------------------------------------------- */
typedef struct WGPURequestAdapterOptions {
  WGPUChainedStruct *nextInChain;
  uint32_t featureLevel;    /* HWGPU_FEATURE_LEVEL_* */
  uint32_t powerPreference; /* 0: undefined */
  WGPUBool forceFallbackAdapter;
  uint32_t backendType; /* HWGPU_BACKEND_* */
  void *compatibleSurface;
} WGPURequestAdapterOptions;

typedef struct WGPUAdapterInfo {
  WGPUChainedStruct *nextInChain;
  WGPUStringView vendor;
  WGPUStringView architecture;
  WGPUStringView device;
  WGPUStringView description;
  uint32_t backendType; /* HWGPU_BACKEND_* */
  uint32_t adapterType; /* HWGPU_ADAPTER_* */
  uint32_t vendorID;
  uint32_t deviceID;
  uint32_t subgroupMinSize;
  uint32_t subgroupMaxSize;
} WGPUAdapterInfo;

typedef struct WGPUBufferDescriptor {
  WGPUChainedStruct *nextInChain;
  WGPUStringView label;
  WGPUFlags usage; /* HWGPU_BUFFER_USAGE_* */
  uint64_t size;
  WGPUBool mappedAtCreation;
} WGPUBufferDescriptor;

typedef struct WGPUCommandEncoderDescriptor {
  WGPUChainedStruct *nextInChain;
  WGPUStringView label;
} WGPUCommandEncoderDescriptor;

/* ---- callbacks: each is given by a *CallbackInfo struct, by value -------- */
typedef void (*WGPURequestAdapterCallback)(uint32_t status, WGPUAdapter adapter,
                                           WGPUStringView message, void *userdata1,
                                           void *userdata2);
typedef void (*WGPURequestDeviceCallback)(uint32_t status, WGPUDevice device,
                                          WGPUStringView message, void *userdata1,
                                          void *userdata2);
typedef void (*WGPUBufferMapCallback)(uint32_t status, WGPUStringView message, void *userdata1,
                                      void *userdata2);
typedef void (*WGPUPopErrorScopeCallback)(uint32_t status, uint32_t type, WGPUStringView message,
                                          void *userdata1, void *userdata2);
/* (Revisions before 2025 passed no message here.) */
typedef void (*WGPUQueueWorkDoneCallback)(uint32_t status, WGPUStringView message,
                                          void *userdata1, void *userdata2);

/* Every *CallbackInfo has one shape: chain, mode (HWGPU_CALLBACK_MODE_*),
 * callback, two user pointers. */
typedef struct WGPURequestAdapterCallbackInfo {
  WGPUChainedStruct *nextInChain;
  uint32_t mode;
  WGPURequestAdapterCallback callback;
  void *userdata1;
  void *userdata2;
} WGPURequestAdapterCallbackInfo;
typedef struct WGPURequestDeviceCallbackInfo {
  WGPUChainedStruct *nextInChain;
  uint32_t mode;
  WGPURequestDeviceCallback callback;
  void *userdata1;
  void *userdata2;
} WGPURequestDeviceCallbackInfo;
typedef struct WGPUBufferMapCallbackInfo {
  WGPUChainedStruct *nextInChain;
  uint32_t mode;
  WGPUBufferMapCallback callback;
  void *userdata1;
  void *userdata2;
} WGPUBufferMapCallbackInfo;
typedef struct WGPUPopErrorScopeCallbackInfo {
  WGPUChainedStruct *nextInChain;
  uint32_t mode;
  WGPUPopErrorScopeCallback callback;
  void *userdata1;
  void *userdata2;
} WGPUPopErrorScopeCallbackInfo;
typedef struct WGPUQueueWorkDoneCallbackInfo {
  WGPUChainedStruct *nextInChain;
  uint32_t mode;
  WGPUQueueWorkDoneCallback callback;
  void *userdata1;
  void *userdata2;
} WGPUQueueWorkDoneCallbackInfo;

/* ---- functions ------------------------------------------------------------
 * The table of resolved functions, each member named as the symbol it holds
 * (the plugin looks each up by its member's name: api.cpp). The device
 * descriptor and the instance descriptor differ between Dawn revisions, so
 * the plugin passes NULL for both (Dawn's defaults). */
typedef struct hwgpu_api {
  WGPUInstance (*wgpuCreateInstance)(const void *descriptor);
  WGPUFuture (*wgpuInstanceRequestAdapter)(WGPUInstance instance,
                                           const WGPURequestAdapterOptions *options,
                                           WGPURequestAdapterCallbackInfo callback_info);
  void (*wgpuInstanceProcessEvents)(WGPUInstance instance);
  uint32_t (*wgpuInstanceWaitAny)(WGPUInstance instance, size_t count, WGPUFutureWaitInfo *futures,
                                  uint64_t timeout_ns);
  void (*wgpuInstanceRelease)(WGPUInstance instance);
  uint32_t (*wgpuAdapterGetInfo)(WGPUAdapter adapter, WGPUAdapterInfo *info);
  void (*wgpuAdapterInfoFreeMembers)(WGPUAdapterInfo info);
  WGPUFuture (*wgpuAdapterRequestDevice)(WGPUAdapter adapter, const void *descriptor,
                                         WGPURequestDeviceCallbackInfo callback_info);
  void (*wgpuAdapterRelease)(WGPUAdapter adapter);
  WGPUQueue (*wgpuDeviceGetQueue)(WGPUDevice device);
  WGPUBuffer (*wgpuDeviceCreateBuffer)(WGPUDevice device, const WGPUBufferDescriptor *descriptor);
  WGPUCommandEncoder (*wgpuDeviceCreateCommandEncoder)(
      WGPUDevice device, const WGPUCommandEncoderDescriptor *descriptor);
  void (*wgpuDevicePushErrorScope)(WGPUDevice device, uint32_t filter);
  WGPUFuture (*wgpuDevicePopErrorScope)(WGPUDevice device,
                                        WGPUPopErrorScopeCallbackInfo callback_info);
  void (*wgpuDeviceDestroy)(WGPUDevice device);
  void (*wgpuDeviceRelease)(WGPUDevice device);
  WGPUFuture (*wgpuBufferMapAsync)(WGPUBuffer buffer, WGPUFlags mode, size_t offset, size_t size,
                                   WGPUBufferMapCallbackInfo callback_info);
  const void *(*wgpuBufferGetConstMappedRange)(WGPUBuffer buffer, size_t offset, size_t size);
  void (*wgpuBufferUnmap)(WGPUBuffer buffer);
  uint64_t (*wgpuBufferGetSize)(WGPUBuffer buffer);
  WGPUFlags (*wgpuBufferGetUsage)(WGPUBuffer buffer);
  void (*wgpuBufferDestroy)(WGPUBuffer buffer);
  void (*wgpuBufferRelease)(WGPUBuffer buffer);
  void (*wgpuCommandEncoderCopyBufferToBuffer)(WGPUCommandEncoder encoder, WGPUBuffer source,
                                               uint64_t source_offset, WGPUBuffer destination,
                                               uint64_t destination_offset, uint64_t size);
  WGPUCommandBuffer (*wgpuCommandEncoderFinish)(WGPUCommandEncoder encoder, const void *descriptor);
  void (*wgpuCommandEncoderRelease)(WGPUCommandEncoder encoder);
  void (*wgpuCommandBufferRelease)(WGPUCommandBuffer command_buffer);
  void (*wgpuQueueSubmit)(WGPUQueue queue, size_t count, const WGPUCommandBuffer *commands);
  void (*wgpuQueueWriteBuffer)(WGPUQueue queue, WGPUBuffer buffer, uint64_t offset,
                               const void *data, size_t size);
  WGPUFuture (*wgpuQueueOnSubmittedWorkDone)(WGPUQueue queue,
                                             WGPUQueueWorkDoneCallbackInfo callback_info);
  void (*wgpuQueueRelease)(WGPUQueue queue);
} hwgpu_api;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HURRAY_WEBGPU_WGPU_ABI_H */
