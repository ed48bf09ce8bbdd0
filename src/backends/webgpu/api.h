// What src/backends/webgpu/api.cpp offers the rest of the plugin: the table
// of Dawn functions (wgpu_abi.h), resolved with dlsym. Not installed.
#pragma once

#include "kit/library.h"
#include "wgpu_abi.h"

namespace hurray::webgpu {

// Every member of hwgpu_api, looked up by its name, all required
// (kit/library.h). tests/backends/webgpu resolves its own copy of the
// functions with it too.
inline constexpr kit::Symbol<hwgpu_api> kFunctions[] = {
    kit::required<&hwgpu_api::wgpuCreateInstance>,
    kit::required<&hwgpu_api::wgpuInstanceRequestAdapter>,
    kit::required<&hwgpu_api::wgpuInstanceProcessEvents>,
    kit::required<&hwgpu_api::wgpuInstanceWaitAny>,
    kit::required<&hwgpu_api::wgpuInstanceRelease>,
    kit::required<&hwgpu_api::wgpuAdapterGetInfo>,
    kit::required<&hwgpu_api::wgpuAdapterInfoFreeMembers>,
    kit::required<&hwgpu_api::wgpuAdapterRequestDevice>,
    kit::required<&hwgpu_api::wgpuAdapterRelease>,
    kit::required<&hwgpu_api::wgpuDeviceGetQueue>,
    kit::required<&hwgpu_api::wgpuDeviceCreateBuffer>,
    kit::required<&hwgpu_api::wgpuDeviceCreateCommandEncoder>,
    kit::required<&hwgpu_api::wgpuDevicePushErrorScope>,
    kit::required<&hwgpu_api::wgpuDevicePopErrorScope>,
    kit::required<&hwgpu_api::wgpuDeviceDestroy>,
    kit::required<&hwgpu_api::wgpuDeviceRelease>,
    kit::required<&hwgpu_api::wgpuBufferMapAsync>,
    kit::required<&hwgpu_api::wgpuBufferGetConstMappedRange>,
    kit::required<&hwgpu_api::wgpuBufferUnmap>,
    kit::required<&hwgpu_api::wgpuBufferGetSize>,
    kit::required<&hwgpu_api::wgpuBufferGetUsage>,
    kit::required<&hwgpu_api::wgpuBufferDestroy>,
    kit::required<&hwgpu_api::wgpuBufferRelease>,
    kit::required<&hwgpu_api::wgpuCommandEncoderCopyBufferToBuffer>,
    kit::required<&hwgpu_api::wgpuCommandEncoderFinish>,
    kit::required<&hwgpu_api::wgpuCommandEncoderRelease>,
    kit::required<&hwgpu_api::wgpuCommandBufferRelease>,
    kit::required<&hwgpu_api::wgpuQueueSubmit>,
    kit::required<&hwgpu_api::wgpuQueueWriteBuffer>,
    kit::required<&hwgpu_api::wgpuQueueOnSubmittedWorkDone>,
    kit::required<&hwgpu_api::wgpuQueueRelease>,
};
static_assert(kit::names_every_member(kFunctions));

// Resolve every function of kFunctions from `lib` (a dlopen handle).
// Returns nullptr on success, else the name of the first one missing.
const char *load_api(void *lib, hwgpu_api *api) noexcept;

}  // namespace hurray::webgpu
