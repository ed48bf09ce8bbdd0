// What only CUDA asks before it uses virtual memory management
// (gpu-stream/runtime_vmm.h; the calls are gpu-stream/runtime_vmm.cpp):
// the device's own word that it has VMM and can export it as a POSIX file
// descriptor (CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR).
#include "gpu-stream/driver.h"

namespace hurray::gpu_stream::rt {

bool vmm_device_can(const Api &cu, const DeviceRef &d) noexcept {
  int vmm = 0, fd = 0;
  if (cu.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                              d.dev) != CUDA_SUCCESS ||
      cu.cuDeviceGetAttribute(&fd, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED,
                              d.dev) != CUDA_SUCCESS)
    return false;
  return vmm == 1 && fd == 1;
}

}  // namespace hurray::gpu_stream::rt
