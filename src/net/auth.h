// The shared key of the bootstrap's challenge-response (docs/spec/network.md
// section 4): loading it from the configuration or a file, HMAC-SHA256
// (OpenSSL's libcrypto), a constant-time comparison, fresh nonces. The key
// never goes on the wire; only MACs of the peers' nonces and addresses do.
#pragma once

#include <hurray_net.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace hurray::net {

inline constexpr size_t kMacSize = 32;    // HMAC-SHA256
inline constexpr size_t kNonceSize = 32;
inline constexpr size_t kMinKeySize = 16;  // bytes
inline constexpr size_t kMaxKeySize = 4096;
inline constexpr const char *kAuthId = "NET-AUTH";

struct Key {
  std::string bytes;  // empty: no key
  bool empty() const noexcept { return bytes.empty(); }
};

// The key named by `key` (its bytes) or `key_file` (the file's bytes, one
// trailing newline dropped); both NULL: no key. HURRAY_E_INVALID_ARGUMENT
// when both are given, the file cannot be read, or the key is shorter than
// kMinKeySize bytes (or longer than kMaxKeySize). `who` starts the message.
// Throws std::bad_alloc (the caller runs it inside its barrier).
hurray_status load_key(const char *key, const char *key_file, const char *who, Key *out,
                       hurray_error *err);

// HMAC-SHA256 under `key` of label || a || b || c into mac; false when it
// cannot be computed (the caller then refuses the peer).
bool mac_of(const Key &key, const char *label, const unsigned char *a, size_t na,
            const unsigned char *b, size_t nb, const unsigned char *c, size_t nc,
            unsigned char mac[kMacSize]) noexcept;

// Whether two MACs are equal, in time that does not depend on where they differ.
bool same_mac(const unsigned char *a, const unsigned char *b) noexcept;

// kNonceSize bytes from the kernel's random source; false if it fails.
bool fresh_nonce(unsigned char out[kNonceSize]) noexcept;

}  // namespace hurray::net
