// What the server's process can really allocate (docs/spec/network.md,
// N19): the room left under its address-space limit and in
// the machine's available memory, the default byte budgets derived from it at
// create, and the check a large PUT passes before its destination is
// allocated, so that an admitted PUT is never refused by the allocator.
#pragma once

#include <hurray_net.h>

#include "net_types.h"

#include <cstdint>

namespace hurray::net {

struct Room {
  uint64_t as_limit = UINT64_MAX;   // RLIMIT_AS (soft); UINT64_MAX: none
  uint64_t as_used = 0;             // the process's mapped bytes (VmSize)
  uint64_t available = UINT64_MAX;  // MemAvailable of /proc/meminfo; UINT64_MAX: unknown
  // The bytes the process may still allocate: the smaller of the two.
  uint64_t left() const noexcept;
};

// The room now (getrlimit, /proc/self/statm, /proc/meminfo).
Room room_now() noexcept;

// The byte budgets of `l` that `in` leaves at their default (0, or `in`
// NULL), derived from `room`: total_bytes is half of room.left() (the other
// half for what the application holds, UCX's own buffers and the rest of the
// process), at most 2^32; conn_bytes half of total_bytes (no client takes it
// all), at most 2^31; max_put_bytes at most conn_bytes, at most 2^30. Each at
// least kMinBudget.
void derive_budgets(const Room &room, const hurray_net_limits *in, Limits *l) noexcept;

inline constexpr uint64_t kMinBudget = uint64_t{1} << 20;
// A PUT costing at least kCheckAbove bytes is admitted only while the room
// now exceeds its cost by kReserve (smaller ones fit in the half of the room
// the defaults leave): reading the room costs some 20 us, 1% of a 16 MiB PUT.
inline constexpr uint64_t kCheckAbove = uint64_t{16} << 20;
inline constexpr uint64_t kReserve = uint64_t{64} << 20;

}  // namespace hurray::net
