// Admission, limits and timeouts of the server (docs/spec/network.md,
// section 4): what a peer may cost the server, checked before anything is
// allocated for it. Every refusal names the limit (NET-LIMIT) or the
// admission rule (NET-ADMIT) it applies.
#include "budget.h"
#include "server_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

using namespace hurray::net;

bool hurray_net_server::admit(const sockaddr *peer, std::string *name) {
  if (!allow.admits(peer)) {
    log_debug("server: %s: a connection from %s is refused (not in the allow list)", kAdmitId,
              peer_name(peer).c_str());
    return false;
  }
  *name = peer_name(peer);
  const size_t open = conns.size() + boots.size();
  if (open >= limits.max_connections) {
    log_debug("server: %s: a connection from %s is refused (max_connections = %u)", kLimitId,
              name->c_str(), limits.max_connections);
    return false;
  }
  uint32_t &mine = per_peer[*name];
  if (mine >= limits.max_connections_per_peer) {
    log_debug("server: %s: a connection from %s is refused (max_connections_per_peer = %u)",
              kLimitId, name->c_str(), limits.max_connections_per_peer);
    return false;
  }
  ++mine;
  return true;
}

void hurray_net_server::forget(const std::string &name) {
  auto it = per_peer.find(name);
  if (it == per_peer.end()) return;
  if (--it->second == 0) per_peer.erase(it);
}

hurray_status hurray_net_server::reserve_put(Conn &c, uint64_t declared, uint64_t cost,
                                             hurray_error *err) {
  auto over = [&](const char *what, const char *field, unsigned long long limit) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                "%s: the PUT of %llu bytes (costing %llu) is refused: %s (%s = %llu; in "
                "flight: %llu bytes on this connection, %llu on the server)",
                kLimitId, static_cast<unsigned long long>(declared),
                static_cast<unsigned long long>(cost), what, field, limit,
                static_cast<unsigned long long>(c.bytes),
                static_cast<unsigned long long>(total_bytes));
  };
  if (declared > limits.max_put_bytes)
    return over("larger than this server takes", "max_put_bytes",
                static_cast<unsigned long long>(limits.max_put_bytes));
  if (c.puts >= limits.conn_puts_in_flight)
    return over("too many PUTs of this connection in flight", "conn_puts_in_flight",
                limits.conn_puts_in_flight);
  if (total_puts >= limits.total_puts_in_flight)
    return over("too many PUTs in flight on this server", "total_puts_in_flight",
                limits.total_puts_in_flight);
  if (cost > limits.conn_bytes_in_flight || c.bytes > limits.conn_bytes_in_flight - cost)
    return over(c.bytes == 0 ? "more bytes than one connection may have in flight"
                             : "too many bytes of this connection in flight",
                "conn_bytes_in_flight",
                static_cast<unsigned long long>(limits.conn_bytes_in_flight));
  if (cost > limits.total_bytes_in_flight || total_bytes > limits.total_bytes_in_flight - cost)
    return over("too many bytes in flight on this server", "total_bytes_in_flight",
                static_cast<unsigned long long>(limits.total_bytes_in_flight));
  // What the process can allocate now, for a large PUT: the budgets were
  // derived at create, and the application may hold more since.
  if (cost >= kCheckAbove) {
    const Room room = room_now();
    const uint64_t left = room.left();
    if (left < kReserve || cost > left - kReserve) {
      auto ull = [](uint64_t v) { return static_cast<unsigned long long>(v); };
      return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                  "%s: the PUT of %llu bytes is refused: it costs %llu bytes and the process "
                  "can allocate %llu more now (address-space limit %llu with %llu mapped, "
                  "MemAvailable %llu; %llu kept in reserve)",
                  kLimitId, ull(declared), ull(cost), ull(left), ull(room.as_limit),
                  ull(room.as_used), ull(room.available), ull(kReserve));
    }
  }
  ++c.puts;
  ++total_puts;
  c.bytes += cost;
  total_bytes += cost;
  return HURRAY_OK;
}

void hurray_net_server::release_put(Conn *c, uint64_t cost) {
  if (c != nullptr) {
    --c->puts;
    c->bytes -= cost;
  }
  --total_puts;
  total_bytes -= cost;
}

hurray_status hurray_net_server::reserve_get(Conn &c, hurray_error *err) {
  if (c.gets >= limits.conn_gets_in_flight)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                "%s: the GET is refused: too many GETs of this connection in flight "
                "(conn_gets_in_flight = %u)",
                kLimitId, limits.conn_gets_in_flight);
  ++c.gets;
  return HURRAY_OK;
}

void hurray_net_server::release_get(Conn *c) {
  if (c != nullptr) --c->gets;
}

void hurray_net_server::disconnect(Conn &c, ucs_status_t why, const char *what) {
  if (c.dead) return;
  c.dead = true;
  c.why = why;
  log_debug("server: %s: the client at %s is disconnected: %s", kLimitId, c.peer.c_str(), what);
}

bool hurray_net_server::may_answer(Conn &c) {
  if (c.dead) return false;
  if (*c.unsent < limits.conn_unsent_answers) return true;
  disconnect(c, UCS_ERR_EXCEEDS_LIMIT,
             "it does not take its answers (conn_unsent_answers reached)");
  return false;
}

size_t hurray::net::resident_pages(const void *p, size_t n, std::vector<bool> *written_at) {
  if (written_at != nullptr) written_at->clear();
  if (p == nullptr || n == 0) return 0;
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t from = reinterpret_cast<uintptr_t>(p) / page;
  const uintptr_t to = (reinterpret_cast<uintptr_t>(p) + n + page - 1) / page;
  // /proc/self/pagemap: one word per page; bit 63 present, 62 swapped, 56
  // mapped by this process alone. A page only read maps the shared zero
  // page (present, not exclusive): written pages alone are bytes arrived.
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  if (written_at != nullptr) written_at->assign(to - from, false);
  size_t written = 0;
  uint64_t words[512];
  for (uintptr_t at = from; at < to;) {
    const size_t k = std::min<uintptr_t>(to - at, 512);
    const ssize_t got = ::pread(fd, words, k * 8, static_cast<off_t>(at * 8));
    if (got <= 0) break;
    const size_t m = static_cast<size_t>(got) / 8;
    for (size_t i = 0; i < m; ++i) {
      const uint64_t w = words[i];
      if ((w >> 62 & 1) == 0 && ((w >> 63 & 1) == 0 || (w >> 56 & 1) == 0)) continue;
      ++written;
      if (written_at != nullptr) (*written_at)[at - from + i] = true;
    }
    at += m;
  }
  ::close(fd);
  return written;
}

namespace {
// The mark of slot i: splitmix64 of seed + i, so that no two slots and no
// two transfers carry the same value, and arriving bytes equal one only by
// chance (then that slot shows no progress; the next one does).
uint64_t mark_of(uint64_t seed, size_t i) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (i + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
}  // namespace

std::vector<bool> hurray::net::set_marks(void *p, size_t n, uint64_t seed,
                                         const std::vector<bool> &written) {
  std::vector<bool> marked;
  if (p == nullptr || n < 8 || written.empty()) return marked;
  auto *bytes = static_cast<unsigned char *>(p);
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(p) / page;
  marked.assign((n - 8) / kMarkStride + 1, false);
  for (size_t i = 0; i < marked.size(); ++i) {
    unsigned char *slot = bytes + i * kMarkStride;
    const uintptr_t lo = reinterpret_cast<uintptr_t>(slot) / page - first;
    const uintptr_t hi = (reinterpret_cast<uintptr_t>(slot) + 7) / page - first;
    if (hi >= written.size() || !written[lo] || !written[hi])
      continue;  // a page not written yet: its filling shows
    const uint64_t mark = mark_of(seed, i);
    std::memcpy(slot, &mark, sizeof mark);
    marked[i] = true;
  }
  return marked;
}

size_t hurray::net::marks_overwritten(const void *p, size_t n, uint64_t seed,
                                      const std::vector<bool> &marked) {
  const auto *bytes = static_cast<const volatile unsigned char *>(p);
  size_t overwritten = 0;
  for (size_t i = 0; i < marked.size() && i * kMarkStride + 8 <= n; ++i) {
    if (!marked[i]) continue;
    unsigned char now[8];  // read each time: the receive writes behind the compiler's back
    for (size_t b = 0; b < 8; ++b) now[b] = bytes[i * kMarkStride + b];
    const uint64_t mark = mark_of(seed, i);
    if (std::memcmp(now, &mark, sizeof mark) != 0) ++overwritten;
  }
  return overwritten;
}

// A PUT whose receive is under way shows no message or completion until its
// last byte; its bytes arriving are its connection's progress: pages of its
// destination filling, or marks overwritten where its pages were resident
// from the start. Looked at every stall_ms / 4 on connections quiet
// that long: a PUT that moves is never cut off, one that stopped is within
// 1.25 stall_ms of its last byte.
void hurray_net_server::sample_progress(Clock::time_point now) {
  const auto every = std::chrono::milliseconds(std::max(limits.stall_timeout_ms / 4, 10));
  for (auto &t : transfers) {
    if (!t->put || t->request == nullptr || t->dst == nullptr || t->conn == nullptr ||
        t->conn->dead)
      continue;
    if (now - t->conn->last < every || now < t->next_sample) continue;
    t->next_sample = now + every;
    const size_t r = resident_pages(t->dst, t->length);
    const size_t o = marks_overwritten(t->dst, t->length, t->mark_seed, t->marked);
    if (r > t->resident || o > t->overwritten) {
      t->resident = std::max(r, t->resident);
      t->overwritten = std::max(o, t->overwritten);
      t->conn->last = now;
    }
  }
}

void hurray_net_server::enforce_timeouts() {
  if (limits.stall_timeout_ms < 0 && limits.idle_timeout_ms < 0) return;
  const auto now = Clock::now();
  if (now < next_timeouts) return;  // looked at every 10 ms at most
  next_timeouts = now + std::chrono::milliseconds(10);
  if (limits.stall_timeout_ms >= 0) sample_progress(now);
  for (auto &[ep, cp] : conns) {
    Conn &c = *cp;
    if (c.dead) continue;
    const auto quiet =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - c.last).count();
    const bool busy = c.transfers > 0 || *c.unsent > 0;
    if (busy && limits.stall_timeout_ms >= 0 && quiet > limits.stall_timeout_ms)
      disconnect(c, UCS_ERR_TIMED_OUT, "its transfers stalled (stall_timeout_ms passed)");
    else if (!busy && limits.idle_timeout_ms >= 0 && quiet > limits.idle_timeout_ms)
      disconnect(c, UCS_ERR_TIMED_OUT, "it was idle (idle_timeout_ms passed)");
  }
}

bool hurray_net_server::may_get(const Conn &c, const Registered &r) {
  return r.who == nullptr || r.who->admits(reinterpret_cast<const sockaddr *>(&c.addr));
}
