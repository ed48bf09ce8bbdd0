// hurray_net_limits and the allowlist (net_limits.h).
#include "net_limits.h"

#include "barrier.h"
#include "budget.h"
#include "ucx.h"
#include "../core/struct_size.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstring>

namespace hurray::net {

hurray_status resolve_limits(const hurray_net_limits *in, Limits *out, hurray_error *err) noexcept {
  *out = kDefaultLimits;
  if (in == nullptr) {
    derive_budgets(room_now(), nullptr, out);
    return HURRAY_OK;
  }
  if (hurray_status st =
          hurray::detail::refuse_below_first(in, "hurray_net_server_create", err, fail))
    return st;
  if (in->size < sizeof(hurray_net_limits) || in->reserved0 != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_create: limits must come from HURRAY_NET_LIMITS_INIT "
                "(size %u, reserved0 zero)",
                static_cast<unsigned>(in->size));
  auto pick = [](auto v, auto &d) {
    if (v != 0) d = v;
  };
  pick(in->max_put_bytes, out->max_put_bytes);
  pick(in->conn_bytes_in_flight, out->conn_bytes_in_flight);
  pick(in->total_bytes_in_flight, out->total_bytes_in_flight);
  pick(in->conn_puts_in_flight, out->conn_puts_in_flight);
  pick(in->total_puts_in_flight, out->total_puts_in_flight);
  pick(in->conn_gets_in_flight, out->conn_gets_in_flight);
  pick(in->conn_unsent_answers, out->conn_unsent_answers);
  pick(in->max_connections, out->max_connections);
  pick(in->max_connections_per_peer, out->max_connections_per_peer);
  pick(in->stall_timeout_ms, out->stall_timeout_ms);
  pick(in->idle_timeout_ms, out->idle_timeout_ms);
  if (in->handshake_timeout_ms > 0) out->handshake_timeout_ms = in->handshake_timeout_ms;
  derive_budgets(room_now(), in, out);  // the byte budgets left at 0: what the process can hold
  return HURRAY_OK;
}

namespace {
// An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it maps.
bool unmap(const sockaddr *sa, int *family, unsigned char addr[16]) {
  if (sa == nullptr) return false;
  if (sa->sa_family == AF_INET) {
    const auto *v4 = reinterpret_cast<const sockaddr_in *>(sa);
    *family = AF_INET;
    std::memcpy(addr, &v4->sin_addr, 4);
    return true;
  }
  if (sa->sa_family == AF_INET6) {
    const auto *v6 = reinterpret_cast<const sockaddr_in6 *>(sa);
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (std::memcmp(&v6->sin6_addr, mapped, 12) == 0) {
      *family = AF_INET;
      std::memcpy(addr, reinterpret_cast<const unsigned char *>(&v6->sin6_addr) + 12, 4);
    } else {
      *family = AF_INET6;
      std::memcpy(addr, &v6->sin6_addr, 16);
    }
    return true;
  }
  return false;
}

bool prefix_matches(const unsigned char *a, const unsigned char *b, int bits) {
  const int whole = bits / 8, rest = bits % 8;
  if (std::memcmp(a, b, static_cast<size_t>(whole)) != 0) return false;
  if (rest == 0) return true;
  const auto mask = static_cast<unsigned char>(0xff << (8 - rest));
  return (a[whole] & mask) == (b[whole] & mask);
}
}  // namespace

hurray_status Allowlist::parse(const char *list, hurray_error *err) noexcept {
  blocks_.clear();
  if (list == nullptr) return HURRAY_OK;
  return guarded(err, [&] {
    const std::string all(list);
    size_t at = 0;
    while (at <= all.size()) {
      size_t end = all.find(',', at);
      if (end == std::string::npos) end = all.size();
      std::string entry = all.substr(at, end - at);
      at = end + 1;
      while (!entry.empty() && entry.front() == ' ') entry.erase(entry.begin());
      while (!entry.empty() && entry.back() == ' ') entry.pop_back();
      if (entry.empty()) {
        if (end == all.size()) break;
        continue;
      }
      Block b{};
      std::string host = entry;
      int prefix = -1;
      if (const size_t slash = entry.find('/'); slash != std::string::npos) {
        host = entry.substr(0, slash);
        const std::string bits = entry.substr(slash + 1);
        if (bits.empty() || bits.size() > 3 || bits.find_first_not_of("0123456789") != std::string::npos)
          return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                      "%s: allow entry \"%s\" has no prefix length after '/'", kAdmitId,
                      entry.c_str());
        prefix = std::stoi(bits);
      }
      struct Family {
        int af;
        int bits;
        const char *name;
      };
      for (const Family f : {Family{AF_INET, 32, "IPv4"}, Family{AF_INET6, 128, "IPv6"}}) {
        if (inet_pton(f.af, host.c_str(), b.addr) != 1) continue;
        b.family = f.af;
        if (prefix < 0) prefix = f.bits;
        if (prefix > f.bits)
          return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                      "%s: allow entry \"%s\": an %s prefix is at most %d bits", kAdmitId,
                      entry.c_str(), f.name, f.bits);
        break;
      }
      if (b.family == 0) {
        return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                    "%s: allow entry \"%s\" is not an IPv4 or IPv6 address or CIDR block "
                    "(host names are not resolved)",
                    kAdmitId, entry.c_str());
      }
      b.prefix = prefix;
      blocks_.push_back(b);
      if (end == all.size()) break;
    }
    if (blocks_.empty())
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "%s: the allow list \"%s\" names no address (NULL admits any peer)", kAdmitId,
                  list);
    return HURRAY_OK;
  });
}

bool Allowlist::admits(const sockaddr *sa) const noexcept {
  if (blocks_.empty()) return true;
  int family = 0;
  unsigned char addr[16];
  if (!unmap(sa, &family, addr)) return false;
  for (const Block &b : blocks_)
    if (b.family == family && prefix_matches(addr, b.addr, b.prefix)) return true;
  return false;
}

bool is_loopback(const sockaddr *sa) noexcept {
  int family = 0;
  unsigned char addr[16];
  if (!unmap(sa, &family, addr)) return false;
  if (family == AF_INET) return addr[0] == 127;
  static const unsigned char one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return std::memcmp(addr, one, 16) == 0;
}

std::string peer_name(const sockaddr *sa) {
  int family = 0;
  unsigned char addr[16];
  if (!unmap(sa, &family, addr)) return "?";
  char text[INET6_ADDRSTRLEN] = {};
  if (inet_ntop(family, addr, text, sizeof text) == nullptr) return "?";
  return text;
}

}  // namespace hurray::net
