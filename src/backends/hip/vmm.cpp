// What only HIP asks before it uses virtual memory management
// (gpu-stream/runtime_vmm.h; the calls are gpu-stream/runtime_vmm.cpp,
// shared with CUDA). HIP 5.2 has no device attribute for exportable VMM
// memory: the runtime's answer for the granularity (vmm_probe) stands for
// it. hipMemAllocationProp is laid out as the header the plugin is built
// against says (HIP 5.2 on Debian); HIP 6 reordered it, so VMM is used only
// with a runtime of the header's major version. Never run on an AMD GPU yet
// (docs/backends/hip.md).
#include "gpu-stream/driver.h"

namespace hurray::gpu_stream::rt {

bool vmm_device_can(const Api &hip, const DeviceRef &) noexcept {
  int version = 0;
  if (hip.hipRuntimeGetVersion(&version) != hipSuccess ||
      version_major(version) != HIP_VERSION_MAJOR)
    return false;
  return true;
}

}  // namespace hurray::gpu_stream::rt
