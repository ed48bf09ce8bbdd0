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
#include <tuple>

namespace hurray::detail {

// One struct's row: its name in messages, its first published size, and the
// macro a caller starts from (HURRAY_..._INIT), nullptr for a struct the
// library writes into, whose caller sets `size` to its sizeof.
template <class T>
struct SizeFirstRow {
  using type = T;
  const char *name;
  uint32_t first;
  const char *init;
};

// clang-format off
inline constexpr std::tuple kSizeFirst{
    SizeFirstRow<hurray_buffer_desc>{          "hurray_buffer_desc",           56,  "HURRAY_BUFFER_DESC_INIT"},
    SizeFirstRow<hurray_export_desc>{          "hurray_export_desc",           48,  "HURRAY_EXPORT_DESC_INIT"},
    SizeFirstRow<hurray_alloc_desc>{           "hurray_alloc_desc",            32,  "HURRAY_ALLOC_DESC_INIT"},
    SizeFirstRow<hurray_backend_v1>{           "hurray_backend_v1",            224, nullptr},
    SizeFirstRow<hurray_dlpack_import_options>{"hurray_dlpack_import_options", 24,  "HURRAY_DLPACK_IMPORT_OPTIONS_INIT"},
    SizeFirstRow<hurray_ipc_options>{          "hurray_ipc_options",           64,  "HURRAY_IPC_OPTIONS_INIT"},
    SizeFirstRow<hurray_ipc_peer_info>{        "hurray_ipc_peer_info",         152, nullptr},
    SizeFirstRow<hurray_ipc_stats>{            "hurray_ipc_stats",             80,  nullptr},
    SizeFirstRow<hurray_net_limits>{           "hurray_net_limits",            72,  "HURRAY_NET_LIMITS_INIT"},
    SizeFirstRow<hurray_net_server_config>{    "hurray_net_server_config",     96,  "HURRAY_NET_SERVER_CONFIG_INIT"},
    SizeFirstRow<hurray_net_client_config>{    "hurray_net_client_config",     48,  "HURRAY_NET_CLIENT_CONFIG_INIT"},
    SizeFirstRow<hurray_net_transfer_desc>{    "hurray_net_transfer_desc",     24,  "HURRAY_NET_TRANSFER_DESC_INIT"},
    SizeFirstRow<hurray_net_received>{         "hurray_net_received",          48,  nullptr},
};
// clang-format on

// A first size above its struct's sizeof would refuse every caller.
static_assert(std::apply(
                  [](auto... row) {
                    return ((row.first <= sizeof(typename decltype(row)::type)) && ...);
                  },
                  kSizeFirst),
              "kSizeFirst: a first size exceeds its struct");

// T's row as constants; a T with no row (or two) does not compile.
template <class T>
struct SizeFirst {
  static constexpr SizeFirstRow<T> row = std::get<SizeFirstRow<T>>(kSizeFirst);
  static constexpr const char *name = row.name;
  static constexpr uint32_t first = row.first;
  static constexpr const char *init = row.init;
};

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
  // Then how to set it: "start from X_INIT", else "set it to sizeof(x)".
  constexpr bool has_init = S::init != nullptr;
  std::snprintf(out->text, sizeof out->text,
                "%s%s%s.size is %u, below %u (its size in libhurray 1.0, the first "
                "published); %s%s%s",
                who ? who : "", who ? ": " : "", S::name, static_cast<unsigned>(size),
                static_cast<unsigned>(S::first), has_init ? "start from " : "set it to sizeof(",
                has_init ? S::init : S::name, has_init ? "" : ")");
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
