// Size-first structs: every public struct whose first field is `uint32_t
// size`, which the caller sets to the sizeof it was compiled with (the
// struct's _INIT macro does). They are read as Linux's
// copy_struct_from_user reads openat2's struct open_how: a size below the
// struct's first published size (its OPEN_HOW_SIZE_VER0) is refused with
// HURRAY_E_INVALID_ARGUMENT, naming the struct and both sizes, and never
// read as an older layout; a larger size is a later version (its bytes
// beyond ours must be zero where the reader checks them).
//
// The first published sizes are libhurray 1.0.0's, written out as numbers
// so that a struct that grows later keeps its floor. Header-only: libhurray
// and libhurray-net (each with its own fail()) share it.
#pragma once

#include <hurray.h>
#include <hurray_backend.h>
#include <hurray_dlpack.h>
#include <hurray_ipc.h>
#include <hurray_net.h>

#include <cstdint>
#include <cstdio>

namespace hurray::detail {

template <class T>
struct SizeFirst;  // name, first published size, how to fill it

#define HURRAY_SIZE_FIRST(T, first_size, how)                                      \
  template <>                                                                     \
  struct SizeFirst<T> {                                                           \
    static constexpr const char *name = #T;                                       \
    static constexpr uint32_t first = first_size;                                 \
    static constexpr const char *fill = how;                                      \
    static_assert(first_size <= sizeof(T), #T ": the first size exceeds the struct"); \
  }

// clang-format off
HURRAY_SIZE_FIRST(hurray_buffer_desc,           56,  "start from HURRAY_BUFFER_DESC_INIT");
HURRAY_SIZE_FIRST(hurray_export_desc,           48,  "start from HURRAY_EXPORT_DESC_INIT");
HURRAY_SIZE_FIRST(hurray_alloc_desc,            32,  "start from HURRAY_ALLOC_DESC_INIT");
HURRAY_SIZE_FIRST(hurray_backend_v1,            224, "set it to sizeof(hurray_backend_v1)");
HURRAY_SIZE_FIRST(hurray_dlpack_import_options, 24,  "start from HURRAY_DLPACK_IMPORT_OPTIONS_INIT");
HURRAY_SIZE_FIRST(hurray_ipc_options,           64,  "start from HURRAY_IPC_OPTIONS_INIT");
HURRAY_SIZE_FIRST(hurray_ipc_peer_info,         152, "set it to sizeof(hurray_ipc_peer_info)");
HURRAY_SIZE_FIRST(hurray_ipc_stats,             80,  "set it to sizeof(hurray_ipc_stats)");
HURRAY_SIZE_FIRST(hurray_net_limits,            72,  "start from HURRAY_NET_LIMITS_INIT");
HURRAY_SIZE_FIRST(hurray_net_server_config,     96,  "start from HURRAY_NET_SERVER_CONFIG_INIT");
HURRAY_SIZE_FIRST(hurray_net_client_config,     48,  "start from HURRAY_NET_CLIENT_CONFIG_INIT");
HURRAY_SIZE_FIRST(hurray_net_transfer_desc,     24,  "start from HURRAY_NET_TRANSFER_DESC_INIT");
HURRAY_SIZE_FIRST(hurray_net_received,          48,  "set it to sizeof(hurray_net_received)");
// clang-format on
#undef HURRAY_SIZE_FIRST

// The refusal of a size below T's first published size, for fail(err,
// HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s", text): `who`, when
// not null, is the function refusing it.
struct SizeRefusal {
  char text[200];
};

template <class T>
bool below_first_size(const char *who, uint32_t size, SizeRefusal *out) noexcept {
  using S = SizeFirst<T>;
  if (size >= S::first) return false;
  std::snprintf(out->text, sizeof out->text,
                "%s%s%s.size is %u, below %u (its size in libhurray 1.0, the first "
                "published); %s",
                who ? who : "", who ? ": " : "", S::name, static_cast<unsigned>(size),
                static_cast<unsigned>(S::first), S::fill);
  return true;
}

// The whole check, for a layer's own fail(): HURRAY_E_INVALID_ARGUMENT with
// the refusal's text when p is not null and p->size is below T's first
// published size; HURRAY_OK otherwise (a null p is the caller's to refuse).
template <class T, class Fail>
hurray_status refuse_below_first(const T *p, const char *who, hurray_error *err,
                                 Fail fail) noexcept {
  SizeRefusal small;
  if (p != nullptr && below_first_size<T>(who, p->size, &small))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s", small.text);
  return HURRAY_OK;
}

}  // namespace hurray::detail
