// The client's side of the bootstrap (bootstrap.h).
#include "bootstrap.h"

#include "barrier.h"

#include "bootwire.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace hurray::net {

ucs_status_t ep_to_worker(Worker &w, const unsigned char *address, size_t length,
                          ucp_err_handler_cb_t cb, void *arg, ucp_ep_h *out) noexcept {
  (void)length;  // UCX reads the address's own length from its bytes
  ucp_ep_params_t p;
  std::memset(&p, 0, sizeof p);
  p.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                 UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  p.address = reinterpret_cast<const ucp_address_t *>(address);
  p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  p.err_handler.cb = cb;
  p.err_handler.arg = arg;
  return ucp_ep_create(w.worker, &p, out);
}

hurray_status resolve_tcp(const char *host, uint16_t port, int flags, addrinfo **res,
                          hurray_error *err) noexcept {
  addrinfo hints;
  std::memset(&hints, 0, sizeof hints);
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = flags;
  char service[8];
  std::snprintf(service, sizeof service, "%u", static_cast<unsigned>(port));
  *res = nullptr;
  const int rc = ::getaddrinfo(host, service, &hints, res);
  if (rc != 0 || *res == nullptr)
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: cannot resolve %s: %s", host,
                gai_strerror(rc));
  return HURRAY_OK;
}

bool local_address_for(const char *host, uint16_t port, char *out, size_t n) noexcept {
  addrinfo *res = nullptr;
  if (resolve_tcp(host, port, 0, &res, nullptr) != HURRAY_OK) return false;
  bool found = false;
  for (addrinfo *a = res; a != nullptr && !found; a = a->ai_next) {
    // A datagram socket's connect sends nothing: it only picks the route.
    const int fd = ::socket(a->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr *>(&local), &len) == 0) {
      const void *addr = local.ss_family == AF_INET
          ? static_cast<const void *>(&reinterpret_cast<const sockaddr_in *>(&local)->sin_addr)
          : static_cast<const void *>(&reinterpret_cast<const sockaddr_in6 *>(&local)->sin6_addr);
      found = inet_ntop(local.ss_family, addr, out, static_cast<socklen_t>(n)) != nullptr;
    }
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return found;
}

namespace {
struct Socket {
  int fd = -1;
  ~Socket() {
    if (fd >= 0) ::close(fd);
  }
};

// Wait until fd is ready for `events` or the deadline passes.
bool ready(int fd, short events, const Deadline &d) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, d.left_ms(1000));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
    if (d.passed()) return false;
  }
}

// Exactly n bytes through `io(at, left)` (one send or recv of the bytes
// from `at` on), waiting for `events` while fd would block; false when the
// peer closed, on an error, at the deadline.
template <class Io>
bool move_all(int fd, short events, size_t n, const Deadline &d, Io io) {
  size_t at = 0;
  while (at < n) {
    const ssize_t k = io(at, n - at);
    if (k > 0) {
      at += static_cast<size_t>(k);
    } else if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!ready(fd, events, d)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// The bootstrap's messages, out and in: exactly n bytes, or false.
bool send_all(int fd, const unsigned char *p, size_t n, const Deadline &d) {
  return move_all(fd, POLLOUT, n, d,
                  [&](size_t at, size_t left) { return ::send(fd, p + at, left, MSG_NOSIGNAL); });
}

bool recv_all(int fd, unsigned char *p, size_t n, const Deadline &d) {
  return move_all(fd, POLLIN, n, d,
                  [&](size_t at, size_t left) { return ::recv(fd, p + at, left, 0); });
}

hurray_status dial(const char *host, uint16_t port, const Deadline &d, Socket *s,
                   hurray_error *err) {
  addrinfo *res = nullptr;
  if (const hurray_status st = resolve_tcp(host, port, 0, &res, err)) return st;
  int last = ECONNREFUSED;
  for (addrinfo *a = res; a != nullptr; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            a->ai_protocol);
    if (fd < 0) {
      last = errno;
      continue;
    }
    if (::connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
        (errno == EINPROGRESS && ready(fd, POLLOUT, d))) {
      int e = 0;
      socklen_t len = sizeof e;
      if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &len) == 0 && e == 0) {
        ::freeaddrinfo(res);
        s->fd = fd;
        return HURRAY_OK;
      }
      last = e != 0 ? e : ETIMEDOUT;
    } else {
      last = errno == EINPROGRESS ? ETIMEDOUT : errno;
    }
    ::close(fd);
  }
  ::freeaddrinfo(res);
  return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: cannot connect to %s:%u: %s", host,
              static_cast<unsigned>(port), std::strerror(last));
}
}  // namespace

hurray_status bootstrap_connect(Worker &w, const char *host, uint16_t port, const Key &key,
                                const Deadline &d, ucp_err_handler_cb_t cb, void *arg,
                                ucp_ep_h *out, hurray_error *err) noexcept {
  *out = nullptr;
  if (host == nullptr || host[0] == '\0')
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray-net: the server address is empty");
  ucp_address_t *mine = nullptr;
  size_t mine_len = 0;
  return guarded(err, [&] {
    Socket s;
    if (hurray_status st = dial(host, port, d, &s, err)) return st;
    auto lost = [&](const char *when) {
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                  "hurray-net: %s:%u closed the connection or stopped answering %s", host,
                  static_cast<unsigned>(port), when);
    };
    // The server's answer of n bytes (the challenge, the fixed part of DONE),
    // read by `parse_as` into *into: lost, malformed (`malformed` says how), or a
    // refusal with the server's status and reason.
    auto answer = [&](size_t n, auto parse_as, auto *into, const char *when,
                      const char *malformed) -> hurray_status {
      unsigned char bytes[std::max(kChallengeSize, kDoneFixed)];
      if (!recv_all(s.fd, bytes, n, d)) return lost(when);
      if (!parse_as(bytes, n, into))
        return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, "hurray-net: %s:%u %s", host,
                    static_cast<unsigned>(port), malformed);
      if (into->status != 0)
        return fail(err, static_cast<hurray_status>(into->status), HURRAY_RULE_NONE,
                    "%s:%u refused the connection: %s", host, static_cast<unsigned>(port),
                    into->message);
      return HURRAY_OK;
    };
    BootHello hello;
    hello.version = kBootVersion;
    if (!fresh_nonce(hello.nonce))
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: no random bytes for a nonce");
    unsigned char hb[kBootHelloSize];
    encode(hello, hb);
    if (!send_all(s.fd, hb, sizeof hb, d)) return lost("before the HELLO");
    Challenge ch;
    if (hurray_status st = answer(kChallengeSize, parse_challenge, &ch, "after the HELLO",
                                  "does not speak the hurray-net bootstrap"))
      return st;
    if (ch.key_required && key.empty())
      return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "%s: %s:%u requires a shared key; this client has none "
                  "(hurray_net_client_config.key or key_file)",
                  kAuthId, host, static_cast<unsigned>(port));
    if (ucp_worker_get_address(w.worker, &mine, &mine_len) != UCS_OK || mine_len == 0 ||
        mine_len > kMaxWorkerAddress) {
      if (mine != nullptr) ucp_worker_release_address(w.worker, mine);
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "UCX: cannot get this worker's address");
    }
    const auto *my = reinterpret_cast<const unsigned char *>(mine);
    AuthFixed auth;
    auth.address_length = static_cast<uint32_t>(mine_len);
    if (ch.key_required &&
        !mac_of(key, "hurray-net client", ch.nonce, kNonceSize, hello.nonce, kNonceSize, my,
                mine_len, auth.mac)) {
      ucp_worker_release_address(w.worker, mine);
      return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
    }
    std::vector<unsigned char> ab(kAuthFixed + mine_len);
    encode(auth, ab.data());
    std::memcpy(ab.data() + kAuthFixed, my, mine_len);
    ucp_worker_release_address(w.worker, mine);
    mine = nullptr;
    if (!send_all(s.fd, ab.data(), ab.size(), d)) return lost("before the AUTH");
    DoneFixed done;
    if (hurray_status st = answer(kDoneFixed, parse_done_fixed, &done, "after the AUTH",
                                  "sent a malformed bootstrap answer"))
      return st;
    std::vector<unsigned char> theirs(done.address_length);
    if (!recv_all(s.fd, theirs.data(), theirs.size(), d)) return lost("in its address");
    if (ch.key_required) {
      unsigned char want[kMacSize];
      if (!mac_of(key, "hurray-net server", hello.nonce, kNonceSize, ch.nonce, kNonceSize,
                  theirs.data(), theirs.size(), want) ||
          !same_mac(want, done.mac))
        return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                    "%s: %s:%u did not prove that it holds the key; not connected", kAuthId,
                    host, static_cast<unsigned>(port));
    }
    const ucs_status_t us = ep_to_worker(w, theirs.data(), theirs.size(), cb, arg, out);
    if (us != UCS_OK) {
      *out = nullptr;
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: cannot connect to %s:%u: %s",
                  host, static_cast<unsigned>(port), ucs_status_string(us));
    }
    return HURRAY_OK;
  }, [&] {
    if (mine != nullptr) ucp_worker_release_address(w.worker, mine);
  });
}

}  // namespace hurray::net
