// The Vulkan functions the plugin calls, as tables of the plugin kit
// (kit/library.h): the loader's global functions, the instance's, the
// device's (core and extension), each looked up through the resolver
// Vulkan gives for its level (vkGetInstanceProcAddr, vkGetDeviceProcAddr).
// device.cpp resolves them in probe(); the rest of the plugin calls
// through State::fn and Device::fn.
//
// The structs and their tables (kLoaderSymbols, kGlobalSymbols,
// kInstanceSymbols, kDeviceSymbols, kMemoryFdSymbols, kSemaphoreFdSymbols)
// are in vulkan_symbols.h, which CMake writes from symbols.txt: a function
// is named once, in that list.
#pragma once

#include <vulkan/vulkan.h>

#include "kit/library.h"
#include "vulkan_symbols.h"

namespace hurray::vulkan {

// A device's functions, called as d->fn.vkX whichever table resolved them;
// each part is resolved into through its base (kit::resolve_symbols<Part>).
// Nothing is declared here directly, so the three tables cover it.
struct DeviceFns : DeviceCoreFns, MemoryFdFns, SemaphoreFdFns {};
static_assert(sizeof(DeviceFns) ==
              sizeof(DeviceCoreFns) + sizeof(MemoryFdFns) + sizeof(SemaphoreFdFns));

// get(handle, name) as a kit lookup: vkGetInstanceProcAddr with an instance
// (VK_NULL_HANDLE: the global functions), vkGetDeviceProcAddr with a device.
// The Resolver must outlive the lookup.
template <class Get, class Handle>
struct Resolver {
  Get get;
  Handle handle;
};
using InstanceResolver = Resolver<PFN_vkGetInstanceProcAddr, VkInstance>;
using DeviceResolver = Resolver<PFN_vkGetDeviceProcAddr, VkDevice>;

template <class Get, class Handle>
kit::Lookup lookup_in(const Resolver<Get, Handle> &at) noexcept {
  return kit::Lookup{[](void *context, const char *name) noexcept -> kit::AnyFunction {
                       const auto *r = static_cast<const Resolver<Get, Handle> *>(context);
                       return r->get(r->handle, name);
                     },
                     const_cast<Resolver<Get, Handle> *>(&at)};
}

}  // namespace hurray::vulkan
