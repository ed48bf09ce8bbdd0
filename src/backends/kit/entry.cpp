// See entry.h.
#include "entry.h"

#include <exception>
#include <new>

namespace hurray::kit {

hurray_status caught(hurray_error *err, const char *entry) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc &) {
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, "%s: out of host memory (std::bad_alloc)", entry);
  } catch (const std::exception &e) {
    return refuse(err, HURRAY_E_INTERNAL, "%s: unexpected exception: %s", entry, e.what());
  } catch (...) {
    return refuse(err, HURRAY_E_INTERNAL, "%s: unexpected exception of unknown type", entry);
  }
}

hurray_status check_device(const void *state, int32_t device, size_t count,
                           hurray_error *err) noexcept {
  if (state == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "the plugin state is NULL (probe first)");
  if (device < 0 || static_cast<size_t>(device) >= count)
    return refuse(err, HURRAY_E_DEVICE_UNAVAILABLE,
                  "there is no device %d: it does not exist (%zu found)", static_cast<int>(device),
                  count);
  return HURRAY_OK;
}

hurray_status check_copy(const hurray_backend_allocation *alloc, uint64_t offset,
                         const void *host, uint64_t n, const char *what,
                         hurray_error *err) noexcept {
  if (alloc == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: the allocation is NULL", what);
  if (offset > alloc->byte_size || n > alloc->byte_size - offset)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "%s: %llu bytes at offset %llu do not fit in the %llu-byte allocation", what,
                  static_cast<unsigned long long>(n), static_cast<unsigned long long>(offset),
                  static_cast<unsigned long long>(alloc->byte_size));
  if (n == 0) return HURRAY_OK;
  if (host == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "%s: the host pointer is NULL", what);
  if (alloc->plugin_data == nullptr)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                  "%s: the allocation was not made by this plugin (or was freed)", what);
  return HURRAY_OK;
}

hurray_status check_alloc(uint32_t alignment, uint32_t flags, uint32_t floor, uint32_t *align,
                          hurray_error *err) noexcept {
  if (alignment == 0) alignment = HURRAY_MIN_ALIGNMENT;
  if ((alignment & (alignment - 1)) != 0)  // (std::has_single_bit calls libgcc's popcount)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "alloc: alignment %u is not a power of two",
                  alignment);
  if ((flags & ~static_cast<uint32_t>(HURRAY_ALLOC_SHAREABLE)) != 0)
    return refuse(err, HURRAY_E_INVALID_ARGUMENT, "alloc: unknown flags 0x%x",
                  flags & ~static_cast<uint32_t>(HURRAY_ALLOC_SHAREABLE));
  *align = alignment > floor ? alignment : floor;
  if (*align < HURRAY_MIN_ALIGNMENT) *align = HURRAY_MIN_ALIGNMENT;
  return HURRAY_OK;
}

hurray_status begin_alloc(const AllocAsked &asked, uint32_t floor, uint32_t out_flags,
                          uint64_t max_bytes, hurray_backend_allocation *out,
                          hurray_error *err) noexcept {
  uint32_t align = 0;
  if (const hurray_status st = check_alloc(asked.alignment, asked.flags, floor, &align, err))
    return st;
  out->byte_size = asked.byte_size;
  out->alignment = align;
  out->flags = out_flags;
  out->device = asked.device;
  out->memory_class = asked.memory_class;
  if (asked.byte_size > max_bytes)
    return refuse(err, HURRAY_E_OUT_OF_MEMORY, "%llu bytes cannot be allocated",
                  static_cast<unsigned long long>(asked.byte_size));
  return HURRAY_OK;
}

hurray_status check_binary_value(const char *entry, uint64_t value, const char *vendor,
                                 hurray_error *err) noexcept {
  if (value == 0) return HURRAY_OK;
  return refuse(err, HURRAY_E_INVALID_ARGUMENT,
                "%s: %s events are binary, the value must be 0 (not %llu)", entry, vendor,
                static_cast<unsigned long long>(value));
}

}  // namespace hurray::kit
