// What a server grants its peers (hurray_net_limits, docs/spec/network.md
// section 4) and whom it admits (hurray_net_server_config.allow): the limits
// with their defaults resolved, and the allowlist of addresses and CIDR
// blocks, checked on a connection request before the server accepts it.
#pragma once

#include <hurray_net.h>

#include <sys/socket.h>

#include <cstdint>
#include <string>
#include <vector>

#include "net_types.h"

namespace hurray::net {

// The limits `in` asks for (NULL: the defaults), each 0 at its default.
// HURRAY_E_INVALID_ARGUMENT when `in` is not a hurray_net_limits.
hurray_status resolve_limits(const hurray_net_limits *in, Limits *out, hurray_error *err) noexcept;

// The message of a refusal by a limit: "NET-LIMIT: <what> (<field> = N)".
// The ID names the family of rules of docs/spec/network.md section 4.
inline constexpr const char *kLimitId = "NET-LIMIT";
inline constexpr const char *kAdmitId = "NET-ADMIT";

class Allowlist {
 public:
  // A comma-separated list of IPv4/IPv6 addresses and CIDR blocks; NULL (or
  // empty): any peer. HURRAY_E_INVALID_ARGUMENT naming the entry that is not
  // one.
  hurray_status parse(const char *list, hurray_error *err) noexcept;
  bool any() const noexcept { return blocks_.empty(); }
  // Whether the peer at `sa` is admitted (an IPv4-mapped IPv6 address counts
  // as its IPv4 address). Anything but IPv4 and IPv6 is not.
  bool admits(const sockaddr *sa) const noexcept;

 private:
  struct Block {
    int family;               // AF_INET or AF_INET6
    unsigned char addr[16];   // network byte order, 4 or 16 bytes used
    int prefix;               // bits that must match
  };
  std::vector<Block> blocks_;
};

// Whether the address is a loopback one (127.0.0.0/8, ::1, or IPv4-mapped
// 127.0.0.0/8).
bool is_loopback(const sockaddr *sa) noexcept;

// The peer's address as text ("127.0.0.1", "::1"; an IPv4-mapped address as
// IPv4), without the port: the key of the per-peer connection count.
std::string peer_name(const sockaddr *sa);

}  // namespace hurray::net
