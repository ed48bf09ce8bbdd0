// The bootstrap's messages (docs/spec/network.md section 2.1): the TCP
// exchange with which a client is admitted and authenticated before any UCX
// endpoint exists, and learns the server's UCX worker address. Fixed-size,
// little-endian records (wire.h's helpers); every parser reads nothing past
// the bytes it is given and is fuzzed (tests/fuzz/fuzz_net_message.cpp).
//   client -> server  HELLO      magic, version, flags (0), client nonce
//   server -> client  CHALLENGE  magic, version, key required, status,
//                                message, server nonce (status != 0: a
//                                refusal, and the server closes)
//   client -> server  AUTH       MAC, address length, the client's address
//   server -> client  DONE       status, message, MAC, address length, the
//                                server's address (status != 0: a refusal)
// The MACs (auth.h) are HMAC-SHA256 under the shared key of
//   client: "hurray-net client" || server nonce || client nonce || client address
//   server: "hurray-net server" || client nonce || server nonce || server address
// and all zero when the server requires no key.
#pragma once

#include "auth.h"
#include "wire.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hurray::net {

inline constexpr uint32_t kBootMagic = 0x53424E48u;  // "HNBS" little-endian
inline constexpr uint16_t kBootVersion = 1;
inline constexpr uint32_t kMaxWorkerAddress = 8192;

inline constexpr size_t kBootHelloSize = 8 + kNonceSize;                        // 40
inline constexpr size_t kChallengeSize = 8 + 4 + kMessageSize + kNonceSize;      // 300
inline constexpr size_t kAuthFixed = kMacSize + 4;                                // 36
inline constexpr size_t kDoneFixed = 4 + kMessageSize + kMacSize + 4;            // 296

struct BootHello {
  uint16_t version = 0;
  uint16_t flags = 0;
  unsigned char nonce[kNonceSize] = {};
};
inline void encode(const BootHello &h, unsigned char *p) {
  put_u32(p, kBootMagic);
  put_u16(p + 4, h.version);
  put_u16(p + 6, h.flags);
  std::memcpy(p + 8, h.nonce, kNonceSize);
}
// False unless `length` is exactly kBootHelloSize with our magic; the
// version is the caller's to check (it answers another one with a refusal).
inline bool parse_boot_hello(const unsigned char *p, size_t length, BootHello *out) {
  if (p == nullptr || length != kBootHelloSize || get_u32(p) != kBootMagic) return false;
  out->version = get_u16(p + 4);
  out->flags = get_u16(p + 6);
  std::memcpy(out->nonce, p + 8, kNonceSize);
  return true;
}

struct Challenge {
  uint16_t version = kBootVersion;
  uint16_t key_required = 0;
  int32_t status = 0;
  char message[kMessageSize] = {};
  unsigned char nonce[kNonceSize] = {};
};
inline void encode(const Challenge &c, unsigned char *p) {
  put_u32(p, kBootMagic);
  put_u16(p + 4, c.version);
  put_u16(p + 6, c.key_required);
  put_u32(p + 8, static_cast<uint32_t>(c.status));
  std::memcpy(p + 12, c.message, kMessageSize);
  p[12 + kMessageSize - 1] = 0;
  std::memcpy(p + 12 + kMessageSize, c.nonce, kNonceSize);
}
inline bool parse_challenge(const unsigned char *p, size_t length, Challenge *out) {
  if (p == nullptr || length != kChallengeSize || get_u32(p) != kBootMagic) return false;
  out->version = get_u16(p + 4);
  out->key_required = get_u16(p + 6);
  out->status = static_cast<int32_t>(get_u32(p + 8));
  std::memcpy(out->message, p + 12, kMessageSize);
  out->message[kMessageSize - 1] = 0;
  std::memcpy(out->nonce, p + 12 + kMessageSize, kNonceSize);
  return true;
}

// AUTH and DONE: their fixed part, then `address_length` bytes of address.
struct AuthFixed {
  unsigned char mac[kMacSize] = {};
  uint32_t address_length = 0;
};
inline void encode(const AuthFixed &a, unsigned char *p) {
  std::memcpy(p, a.mac, kMacSize);
  put_u32(p + kMacSize, a.address_length);
}
// False unless exactly kAuthFixed bytes announcing 1..kMaxWorkerAddress bytes.
inline bool parse_auth_fixed(const unsigned char *p, size_t length, AuthFixed *out) {
  if (p == nullptr || length != kAuthFixed) return false;
  std::memcpy(out->mac, p, kMacSize);
  out->address_length = get_u32(p + kMacSize);
  return out->address_length > 0 && out->address_length <= kMaxWorkerAddress;
}

struct DoneFixed {
  int32_t status = 0;
  char message[kMessageSize] = {};
  unsigned char mac[kMacSize] = {};
  uint32_t address_length = 0;
};
inline void encode(const DoneFixed &d, unsigned char *p) {
  put_u32(p, static_cast<uint32_t>(d.status));
  std::memcpy(p + 4, d.message, kMessageSize);
  p[4 + kMessageSize - 1] = 0;
  std::memcpy(p + 4 + kMessageSize, d.mac, kMacSize);
  put_u32(p + 4 + kMessageSize + kMacSize, d.address_length);
}
// False unless exactly kDoneFixed bytes; a success announces
// 1..kMaxWorkerAddress bytes of address, a refusal none.
inline bool parse_done_fixed(const unsigned char *p, size_t length, DoneFixed *out) {
  if (p == nullptr || length != kDoneFixed) return false;
  out->status = static_cast<int32_t>(get_u32(p));
  std::memcpy(out->message, p + 4, kMessageSize);
  out->message[kMessageSize - 1] = 0;
  std::memcpy(out->mac, p + 4 + kMessageSize, kMacSize);
  out->address_length = get_u32(p + 4 + kMessageSize + kMacSize);
  if (out->status != 0) return out->address_length == 0;
  return out->address_length > 0 && out->address_length <= kMaxWorkerAddress;
}

}  // namespace hurray::net
