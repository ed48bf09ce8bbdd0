// The WebGPU entry points, resolved at run time (the plugin links no WebGPU
// library), and the names of the enum values it reports.
#include "api.h"
#include "kit/library.h"
#include "state.h"

namespace hurray::webgpu {

const char *load_api(void *lib, hwgpu_api *api) noexcept {
  return kit::load_symbols<hwgpu_api>(lib, kFunctions, api);
}

const char *backend_name(uint32_t backend) noexcept {
  switch (backend) {
    case HWGPU_BACKEND_NULL: return "Null";
    case HWGPU_BACKEND_WEBGPU: return "WebGPU";
    case HWGPU_BACKEND_D3D11: return "D3D11";
    case HWGPU_BACKEND_D3D12: return "D3D12";
    case HWGPU_BACKEND_METAL: return "Metal";
    case HWGPU_BACKEND_VULKAN: return "Vulkan";
    case HWGPU_BACKEND_OPENGL: return "OpenGL";
    case HWGPU_BACKEND_OPENGLES: return "OpenGLES";
    default: return "an unknown backend";
  }
}

std::string to_string(WGPUStringView v) {
  if (v.data == nullptr) return {};
  if (v.length == SIZE_MAX) return std::string(v.data);
  return std::string(v.data, v.length);
}

}  // namespace hurray::webgpu
