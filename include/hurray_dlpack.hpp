/*
 * hurray_dlpack.hpp - a header-only C++17 layer over hurray_dlpack.h, in the
 * style of hurray.hpp (which it includes): DLPack tensors of handoffs and
 * handoffs of DLPack tensors, zero-copy. It adds no export and needs no
 * dlpack.h (hurray_dlpack.h mirrors DLPack's structs).
 *
 *  - hurray::dlpack::tensor (a DLManagedTensorVersioned) and
 *    hurray::dlpack::legacy_tensor (a DLManagedTensor) are move-only and
 *    call the tensor's deleter exactly once, in the destructor, unless the
 *    tensor was handed on (import() or into_raw()).
 *  - export_versioned() / export_legacy() move a hurray::handoff into a
 *    tensor; import() moves a tensor into a hurray::handoff. On failure
 *    nothing moves: the handoff or the tensor is still the caller's (and
 *    still released or deleted exactly once by its owner).
 *  - Errors as in hurray.hpp: hurray::error, or the std::nothrow overloads
 *    (the only ones declared under -fno-exceptions).
 *
 * Thread safety is the C API's: a tensor's deleter may run on any thread.
 */
#ifndef HURRAY_DLPACK_HPP
#define HURRAY_DLPACK_HPP

#include "hurray.hpp"
#include "hurray_dlpack.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

namespace hurray {
namespace dlpack {

namespace detail {
template <class T>
struct tensor_deleter {
  void operator()(T *t) const noexcept {
    if (t != nullptr && t->deleter != nullptr) t->deleter(t);
  }
};
}  // namespace detail

/** An owning DLPack tensor: T is hurray_dl_managed_tensor_versioned (alias
 *  `tensor`) or hurray_dl_managed_tensor (alias `legacy_tensor`). The
 *  destructor calls its deleter exactly once. Move-only. */
template <class T>
class basic_tensor {
 public:
  basic_tensor() noexcept = default;
  /** Take ownership of `owned` (its deleter will be called once). */
  explicit basic_tensor(T *owned) noexcept : t_(owned) {}
  T *get() const noexcept { return t_.get(); }
  T *operator->() const noexcept { return t_.get(); }
  /** Give the tensor away (to a DLPack consumer, a Python capsule): the
   *  receiver calls its deleter. */
  T *into_raw() noexcept { return t_.release(); }
  explicit operator bool() const noexcept { return t_ != nullptr; }
  /** The DLTensor (the tensor must be held). */
  const hurray_dl_tensor &dl_tensor() const noexcept { return t_->dl_tensor; }
  /** The elements' bytes where the host can address them (CPU, CUDA host,
   *  ROCm host or CUDA managed memory), for a compact row-major tensor;
   *  empty otherwise. */
  host_span<std::byte> bytes() const noexcept {
    if (!t_) return {};
    const hurray_dl_tensor &d = t_->dl_tensor;
    const std::int32_t type = d.device.device_type;
    if (d.data == nullptr || (type != HURRAY_DL_CPU && type != HURRAY_DL_CUDA_HOST &&
                              type != HURRAY_DL_ROCM_HOST && type != HURRAY_DL_CUDA_MANAGED))
      return {};
    std::uint64_t n = 1;
    std::int64_t expect = 1;  // compact row-major strides, innermost first
    for (std::int32_t i = d.ndim; i-- > 0;) {
      if (d.strides != nullptr && d.shape[i] > 1 && d.strides[i] != expect) return {};
      expect *= d.shape[i];
      n *= static_cast<std::uint64_t>(d.shape[i]);
    }
    const std::uint64_t lane_bits = static_cast<std::uint64_t>(d.dtype.bits) * d.dtype.lanes;
    return {static_cast<std::byte *>(d.data) + d.byte_offset,
            static_cast<std::size_t>(n * ((lane_bits + 7) / 8))};
  }

 private:
  std::unique_ptr<T, detail::tensor_deleter<T>> t_;
};
using tensor = basic_tensor<hurray_dl_managed_tensor_versioned>;
using legacy_tensor = basic_tensor<hurray_dl_managed_tensor>;

/** The DLPack element type of T: dtype<float>() is {kDLFloat, 32, 1}. */
template <class T>
constexpr hurray_dl_data_type dtype() noexcept {
  static_assert(std::is_arithmetic<T>::value, "dtype<T>: an arithmetic type");
  hurray_dl_data_type d{};
  d.code = static_cast<std::uint8_t>(
      std::is_same<T, bool>::value            ? HURRAY_DL_BOOL
      : std::is_floating_point<T>::value      ? HURRAY_DL_FLOAT
      : std::is_signed<T>::value              ? HURRAY_DL_INT
                                              : HURRAY_DL_UINT);
  d.bits = static_cast<std::uint8_t>(sizeof(T) * 8);
  d.lanes = 1;
  return d;
}

/** A shape or strides: a pointer and a count (ndim); empty strides mean
 *  compact row-major. */
using extents = host_span<const std::int64_t>;

// ------------------------------------------------------------ device mapping

/** The DLDeviceType of (device_tag, memory_class) (TABLES.md section 6). */
inline hurray_status device_to_dl(std::nothrow_t, std::uint8_t device_tag,
                                  std::uint8_t memory_class, std::int32_t &out,
                                  hurray_error *err = nullptr) noexcept {
  return hurray_dlpack_device_to_dl(device_tag, memory_class, &out, err);
}
/** The (device_tag, memory_class) of a DLDeviceType. */
inline hurray_status device_from_dl(std::nothrow_t, std::int32_t dl_device_type,
                                    std::uint8_t &device_tag, std::uint8_t &memory_class,
                                    hurray_error *err = nullptr) noexcept {
  return hurray_dlpack_device_from_dl(dl_device_type, &device_tag, &memory_class, err);
}

// ---------------------------------------------------------- handoff -> tensor

/** Move `h` into a DLPack 1.x tensor (hurray_dlpack_export_versioned): on
 *  success `h` holds nothing and `out` owns the tensor, whose deleter
 *  releases the handoff; on failure both are unchanged. */
inline hurray_status export_versioned(std::nothrow_t, handoff &h, hurray_dl_data_type dt,
                                      extents shape, tensor &out, extents strides = {},
                                      std::uint64_t byte_offset = 0,
                                      hurray_error *err = nullptr) noexcept {
  hurray_dl_managed_tensor_versioned *t = nullptr;
  const hurray_status s = hurray_dlpack_export_versioned(
      &h.raw(), dt, static_cast<std::int32_t>(shape.size()), shape.data(),
      strides.empty() ? nullptr : strides.data(), byte_offset, &t, err);
  if (s == HURRAY_OK) out = tensor(t);  // h.raw().release is NULL now: h holds nothing
  return s;
}
/** As export_versioned(), a legacy DLManagedTensor (no READ_ONLY flag: a
 *  READ_ONLY or QPARAM handoff is refused, BP-ZC-NOMUT). */
inline hurray_status export_legacy(std::nothrow_t, handoff &h, hurray_dl_data_type dt,
                                   extents shape, legacy_tensor &out, extents strides = {},
                                   std::uint64_t byte_offset = 0,
                                   hurray_error *err = nullptr) noexcept {
  hurray_dl_managed_tensor *t = nullptr;
  const hurray_status s = hurray_dlpack_export_legacy(
      &h.raw(), dt, static_cast<std::int32_t>(shape.size()), shape.data(),
      strides.empty() ? nullptr : strides.data(), byte_offset, &t, err);
  if (s == HURRAY_OK) out = legacy_tensor(t);
  return s;
}

// ---------------------------------------------------------- tensor -> handoff

/** Move `t` into a handoff (hurray_dlpack_import_versioned_opts; opts NULL:
 *  PRODUCER_SYNCED): on success `t` holds nothing and the handoff's release
 *  calls the tensor's deleter; on failure `t` still owns the tensor. */
inline hurray_status import(std::nothrow_t, tensor &t, handoff &out,
                            const hurray_dlpack_import_options *opts = nullptr,
                            const context &ctx = context(), hurray_error *err = nullptr) noexcept {
  hurray_handoff raw;
  std::memset(&raw, 0, sizeof raw);
  const hurray_status s = hurray_dlpack_import_versioned_opts(ctx.get(), t.get(), opts, &raw, err);
  if (s == HURRAY_OK) {
    (void)t.into_raw();  // the handoff owns it now
    out = handoff::adopt(raw);
  }
  return s;
}
/** As import(), for a legacy tensor (never READ_ONLY). */
inline hurray_status import(std::nothrow_t, legacy_tensor &t, handoff &out,
                            const hurray_dlpack_import_options *opts = nullptr,
                            const context &ctx = context(), hurray_error *err = nullptr) noexcept {
  hurray_handoff raw;
  std::memset(&raw, 0, sizeof raw);
  const hurray_status s = hurray_dlpack_import_legacy_opts(ctx.get(), t.get(), opts, &raw, err);
  if (s == HURRAY_OK) {
    (void)t.into_raw();
    out = handoff::adopt(raw);
  }
  return s;
}

#if HURRAY_HPP_EXCEPTIONS
inline std::int32_t device_to_dl(std::uint8_t device_tag, std::uint8_t memory_class) {
  std::int32_t out = 0;
  hurray_error e = no_error();
  hurray::detail::check(device_to_dl(std::nothrow, device_tag, memory_class, out, &e), e);
  return out;
}
/** (device_tag, memory_class). */
inline std::pair<std::uint8_t, std::uint8_t> device_from_dl(std::int32_t dl_device_type) {
  std::pair<std::uint8_t, std::uint8_t> out{0, 0};
  hurray_error e = no_error();
  hurray::detail::check(device_from_dl(std::nothrow, dl_device_type, out.first, out.second, &e),
                        e);
  return out;
}
inline tensor export_versioned(handoff &h, hurray_dl_data_type dt, extents shape,
                               extents strides = {}, std::uint64_t byte_offset = 0) {
  tensor out;
  hurray_error e = no_error();
  hurray::detail::check(export_versioned(std::nothrow, h, dt, shape, out, strides, byte_offset, &e),
                        e);
  return out;
}
/** A handoff moved in by value: released by its destructor if the export
 *  fails. */
inline tensor export_versioned(handoff &&h, hurray_dl_data_type dt, extents shape,
                               extents strides = {}, std::uint64_t byte_offset = 0) {
  handoff mine = std::move(h);
  return export_versioned(mine, dt, shape, strides, byte_offset);
}
inline legacy_tensor export_legacy(handoff &h, hurray_dl_data_type dt, extents shape,
                                   extents strides = {}, std::uint64_t byte_offset = 0) {
  legacy_tensor out;
  hurray_error e = no_error();
  hurray::detail::check(export_legacy(std::nothrow, h, dt, shape, out, strides, byte_offset, &e),
                        e);
  return out;
}
/** On failure `t` still owns the tensor (its destructor deletes it). */
inline handoff import(tensor &t, const context &ctx = context(),
                      const hurray_dlpack_import_options *opts = nullptr) {
  handoff out;
  hurray_error e = no_error();
  hurray::detail::check(import(std::nothrow, t, out, opts, ctx, &e), e);
  return out;
}
inline handoff import(legacy_tensor &t, const context &ctx = context(),
                      const hurray_dlpack_import_options *opts = nullptr) {
  handoff out;
  hurray_error e = no_error();
  hurray::detail::check(import(std::nothrow, t, out, opts, ctx, &e), e);
  return out;
}
#endif

}  // namespace dlpack
}  // namespace hurray

#endif /* HURRAY_DLPACK_HPP */
