// IPC handle helpers of the plugin kit: handle kinds as four-character codes,
// packing a vendor handle of up to 64 bytes into hurray_backend_ipc_handle,
// and the close-on-exec duplicate of a descriptor that crosses the ABI.
#pragma once

#include <hurray_backend.h>

#include <cstddef>
#include <cstdint>

namespace hurray::kit {

constexpr uint32_t fourcc(char a, char b, char c, char d) noexcept {
  return static_cast<uint32_t>(static_cast<unsigned char>(a)) |
         static_cast<uint32_t>(static_cast<unsigned char>(b)) << 8 |
         static_cast<uint32_t>(static_cast<unsigned char>(c)) << 16 |
         static_cast<uint32_t>(static_cast<unsigned char>(d)) << 24;
}

// A kind as the messages show it: 'VKM1' (its four characters, first
// character in the lowest byte), or 0x0000007b when one is not printable.
struct KindName {
  char text[16];
};
KindName kind_name(uint32_t kind) noexcept;

// OK when h is not NULL and of `kind`; else INVALID_ARGUMENT
// "<plugin>: <what>: not <meaning>: its kind is 'XXXX', this plugin's is
// 'VKM1'" (meaning: "a Vulkan memory handle"). Every import checks it first.
hurray_status check_kind(const hurray_backend_ipc_handle *h, uint32_t kind, const char *what,
                         const char *meaning, hurray_error *err) noexcept;

// Fill *out: kind, fd -1, byte_size, offset, and the n vendor bytes (n <= 64)
// at the start of out->bytes, zeros after them.
void pack_ipc(uint32_t kind, const void *vendor, size_t n, uint64_t byte_size, uint64_t offset,
              hurray_backend_ipc_handle *out) noexcept;

// Check that *h is of `kind` and copy its first n vendor bytes (n <= 64) to
// `vendor`. On failure returns false and *why says what is wrong.
bool unpack_ipc(const hurray_backend_ipc_handle *h, uint32_t kind, void *vendor, size_t n,
                const char **why) noexcept;

// An import's unpacking, as a status: check_kind(h, kind, what, meaning),
// then the first n vendor bytes (n <= 64) copied to `vendor`
// (INVALID_ARGUMENT "<plugin>: <what>: <why>" when unpack_ipc refuses).
hurray_status unpack_ipc(const hurray_backend_ipc_handle *h, uint32_t kind, const char *what,
                         const char *meaning, void *vendor, size_t n, hurray_error *err) noexcept;

// A close-on-exec duplicate of fd in *out (-1 when fd < 0, which is no
// error). HURRAY_E_IO with "<plugin>: <what>: dup of fd N failed: reason".
hurray_status dup_fd(int fd, int *out, const char *what, hurray_error *err) noexcept;

}  // namespace hurray::kit
