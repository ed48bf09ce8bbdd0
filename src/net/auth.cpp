// The bootstrap's shared key and MACs (auth.h).
#include "auth.h"

#include "ucx.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace hurray::net {

hurray_status load_key(const char *key, const char *key_file, const char *who, Key *out,
                       hurray_error *err) {
  out->bytes.clear();
  if (key != nullptr && key_file != nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: %s: give key or key_file, not both", kAuthId, who);
  // no memory for the key: to the barrier of the entry point that asked
  if (key != nullptr) {
    out->bytes = key;
  } else if (key_file != nullptr) {
    FILE *f = std::fopen(key_file, "rb");
    if (f == nullptr)
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "%s: %s: cannot read the key file %s: %s", kAuthId, who, key_file,
                  std::strerror(errno));
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && out->bytes.size() <= kMaxKeySize)
      out->bytes.append(buf, n);
    std::fclose(f);
    if (!out->bytes.empty() && out->bytes.back() == '\n') out->bytes.pop_back();
    if (!out->bytes.empty() && out->bytes.back() == '\r') out->bytes.pop_back();
  } else {
    return HURRAY_OK;
  }
  if (out->bytes.size() < kMinKeySize || out->bytes.size() > kMaxKeySize) {
    const size_t n = out->bytes.size();
    out->bytes.assign(out->bytes.size(), '\0');
    out->bytes.clear();
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: %s: the key has %zu bytes; it needs %zu to %zu", kAuthId, who, n,
                kMinKeySize, kMaxKeySize);
  }
  return HURRAY_OK;
}

bool mac_of(const Key &key, const char *label, const unsigned char *a, size_t na,
            const unsigned char *b, size_t nb, const unsigned char *c, size_t nc,
            unsigned char mac[kMacSize]) noexcept {
  std::memset(mac, 0, kMacSize);
  // Kept: not a boundary but an answer (no MAC, so the peer is refused).
  try {
    std::string msg(label);
    msg.append(reinterpret_cast<const char *>(a), na);
    msg.append(reinterpret_cast<const char *>(b), nb);
    msg.append(reinterpret_cast<const char *>(c), nc);
    unsigned int len = 0;
    return HMAC(EVP_sha256(), key.bytes.data(), static_cast<int>(key.bytes.size()),
                reinterpret_cast<const unsigned char *>(msg.data()), msg.size(), mac,
                &len) != nullptr &&
           len == kMacSize;
  } catch (...) {
    return false;  // no memory: the caller refuses the peer
  }
}

bool same_mac(const unsigned char *a, const unsigned char *b) noexcept {
  return CRYPTO_memcmp(a, b, kMacSize) == 0;
}

bool fresh_nonce(unsigned char out[kNonceSize]) noexcept {
  size_t got = 0;
  while (got < kNonceSize) {
    const ssize_t n = getrandom(out + got, kNonceSize - got, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace hurray::net
