// What the process can allocate, and the budgets derived from it (budget.h).
#include "budget.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace hurray::net {

uint64_t Room::left() const noexcept {
  const uint64_t as = as_limit == UINT64_MAX ? UINT64_MAX
                      : as_limit > as_used   ? as_limit - as_used
                                             : 0;
  return std::min(as, available);
}

Room room_now() noexcept {
  Room r;
  rlimit lim{};
  if (getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    r.as_limit = static_cast<uint64_t>(lim.rlim_cur);
  if (r.as_limit != UINT64_MAX) {
    if (FILE *f = std::fopen("/proc/self/statm", "re")) {
      unsigned long long pages = 0;
      if (std::fscanf(f, "%llu", &pages) == 1)
        r.as_used = pages * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
      std::fclose(f);
    }
  }
  if (FILE *f = std::fopen("/proc/meminfo", "re")) {
    char line[128];
    while (std::fgets(line, sizeof line, f) != nullptr) {
      unsigned long long kib = 0;
      if (std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
        r.available = kib * 1024;
        break;
      }
    }
    std::fclose(f);
  }
  return r;
}

void derive_budgets(const Room &room, const hurray_net_limits *in, Limits *l) noexcept {
  const uint64_t left = room.left();
  auto fit = [](uint64_t v, uint64_t cap) { return std::max(std::min(v, cap), kMinBudget); };
  if (in == nullptr || in->total_bytes_in_flight == 0)
    l->total_bytes_in_flight = fit(left / 2, uint64_t{1} << 32);
  if (in == nullptr || in->conn_bytes_in_flight == 0)
    l->conn_bytes_in_flight = fit(l->total_bytes_in_flight / 2, uint64_t{1} << 31);
  if (in == nullptr || in->max_put_bytes == 0)
    l->max_put_bytes = fit(l->conn_bytes_in_flight, uint64_t{1} << 30);
}

}  // namespace hurray::net
