// The server's side of the bootstrap (bootwire.h; docs/spec/network.md
// section 2.1): a TCP listener libhurray-net owns and parses itself, in
// place of UCX's socket-address listener. A connection is admitted (allow
// list, connection limits) before anything is allocated for it; its HELLO,
// AUTH and their bytes are bounded in size and in time
// (handshake_timeout_ms); only then is a UCX endpoint created, to the
// client's worker address, and the server's own address sent back.
#include "bootstrap.h"
#include "bootwire.h"
#include "server_state.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace hurray::net;

namespace {
void server_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status) {
  auto *s = static_cast<hurray_net_server *>(arg);
  Conn *c = s->conn_of(ep);
  if (c != nullptr && !c->dead) {
    c->dead = true;
    c->why = status;
    log_debug("server: a client went away (%s)", ucs_status_string(status));
  }
}

// A refusal as a CHALLENGE (before AUTH) or a DONE (after), into out.
void refusal(bool after_auth, hurray_status st, const char *message,
             std::vector<unsigned char> *out) {
  if (!after_auth) {
    Challenge c;
    c.status = st;
    std::snprintf(c.message, sizeof c.message, "%s", message);
    out->assign(kChallengeSize, 0);
    encode(c, out->data());
  } else {
    DoneFixed d;
    d.status = st;
    std::snprintf(d.message, sizeof d.message, "%s", message);
    out->assign(kDoneFixed, 0);
    encode(d, out->data());
  }
}
}  // namespace

ucp_err_handler_cb_t hurray_net_server::error_handler() { return server_ep_error; }

hurray_status hurray_net_server::open_bootstrap(const char *address, uint16_t want_port,
                                                hurray_error *err) {
  addrinfo *res = nullptr;
  if (const hurray_status st =
          resolve_tcp(address, want_port, AI_PASSIVE | AI_NUMERICSERV, &res, err))
    return st;
  int last = 0;
  for (addrinfo *a = res; a != nullptr && listen_fd < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                            a->ai_protocol);
    if (fd < 0) {
      last = errno;
      continue;
    }
    const int one = 1;
    (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
      last = errno;
      ::close(fd);
      continue;
    }
    listen_fd = fd;
    sockaddr_storage ss;
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr *>(&ss), &len) == 0) {
      if (ss.ss_family == AF_INET)
        port = ntohs(reinterpret_cast<const sockaddr_in *>(&ss)->sin_port);
      else if (ss.ss_family == AF_INET6)
        port = ntohs(reinterpret_cast<const sockaddr_in6 *>(&ss)->sin6_port);
      loopback = is_loopback(reinterpret_cast<const sockaddr *>(&ss));
    }
  }
  ::freeaddrinfo(res);
  if (listen_fd < 0)
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: cannot listen on %s:%u: %s",
                address, static_cast<unsigned>(want_port), std::strerror(last));
  ucp_address_t *a = nullptr;
  size_t n = 0;
  if (ucp_worker_get_address(w.worker, &a, &n) != UCS_OK || n == 0 || n > kMaxWorkerAddress) {
    if (a != nullptr) ucp_worker_release_address(w.worker, a);
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "UCX: cannot get the worker's address");
  }
  my_address.assign(reinterpret_cast<const unsigned char *>(a),
                    reinterpret_cast<const unsigned char *>(a) + n);
  ucp_worker_release_address(w.worker, a);
  return HURRAY_OK;
}

void hurray_net_server::close_bootstrap() {
  for (auto &b : boots) {
    if (b->ep != nullptr) close_ep(w, b->ep, false, 100);
    unwatch(b->fd);
    ::close(b->fd);
  }
  boots.clear();
  unwatch(listen_fd);
  if (listen_fd >= 0) ::close(listen_fd);
  listen_fd = -1;
}

void hurray_net_server::drop_boot(Boot &b) {
  if (b.ep != nullptr) close_ep(w, b.ep, false, 100);
  b.ep = nullptr;
  unwatch(b.fd);
  ::close(b.fd);
  b.fd = -1;
  forget(b.peer);
}

// One step of a bootstrap connection: false when it is over (done or dropped).
bool hurray_net_server::step(Boot &b) {
  // Answers going out (a CHALLENGE, a DONE, a refusal).
  while (b.sent < b.out.size()) {
    const ssize_t k = ::send(b.fd, b.out.data() + b.sent, b.out.size() - b.sent, MSG_NOSIGNAL);
    if (k > 0) {
      b.sent += static_cast<size_t>(k);
    } else if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      return true;
    } else {
      drop_boot(b);
      return false;
    }
  }
  if (b.stage == Boot::kRefused) {  // said why; nothing more
    drop_boot(b);
    return false;
  }
  if (b.stage == Boot::kDone) {  // the client has our address: a connection
    auto c = std::make_unique<Conn>();
    c->ep = b.ep;
    c->peer = b.peer;  // its place in per_peer passes to the connection
    c->addr = b.addr;
    b.ep = nullptr;
    unwatch(b.fd);
    ::close(b.fd);
    b.fd = -1;
    ++stats.connections;
    log_debug("server: client accepted (%s)", c->peer.c_str());
    conns[c->ep] = std::move(c);
    return false;
  }
  // Bytes coming in: exactly what the stage needs, never more.
  while (b.in.size() < b.need) {
    unsigned char buf[1024];
    const size_t want = std::min(sizeof buf, b.need - b.in.size());
    const ssize_t k = ::recv(b.fd, buf, want, 0);
    if (k > 0) {
      b.in.insert(b.in.end(), buf, buf + k);
    } else if (k < 0 && (errno == EAGAIN || errno == EINTR)) {
      return true;
    } else {  // closed or failed before the bootstrap ended
      drop_boot(b);
      return false;
    }
  }
  auto refuse = [&](hurray_status st, const char *message) {
    log_debug("server: a bootstrap from %s is refused: %s", b.peer.c_str(), message);
    refusal(b.stage == Boot::kAuth || b.stage == Boot::kAddress, st, message, &b.out);
    b.sent = 0;
    b.stage = Boot::kRefused;
    return step(b);
  };
  char m[kMessageSize];
  if (b.stage == Boot::kHello) {
    BootHello h;
    if (!parse_boot_hello(b.in.data(), b.in.size(), &h))
      return refuse(HURRAY_E_PROTOCOL, "hurray-net: not a hurray-net bootstrap HELLO");
    if (h.version != kBootVersion)
      return refuse(HURRAY_E_PROTOCOL, "hurray-net: this server speaks bootstrap version 1 only");
    std::memcpy(b.client_nonce, h.nonce, kNonceSize);
    Challenge c;
    c.key_required = key.empty() ? 0 : 1;
    if (!fresh_nonce(c.nonce))
      return refuse(HURRAY_E_IO, "hurray-net: the server has no random bytes");
    std::memcpy(b.server_nonce, c.nonce, kNonceSize);
    b.out.assign(kChallengeSize, 0);
    encode(c, b.out.data());
    b.sent = 0;
    b.in.clear();
    b.stage = Boot::kAuth;
    b.need = kAuthFixed;
    return step(b);
  }
  if (b.stage == Boot::kAuth) {
    AuthFixed a;
    if (!parse_auth_fixed(b.in.data(), b.in.size(), &a))
      return refuse(HURRAY_E_PROTOCOL,
                    "hurray-net: malformed AUTH (an address of 1 to 8192 bytes expected)");
    std::memcpy(b.mac, a.mac, kMacSize);
    b.stage = Boot::kAddress;
    b.need = kAuthFixed + a.address_length;
    return step(b);
  }
  // kAddress: the client's MAC and worker address are here.
  const unsigned char *addr = b.in.data() + kAuthFixed;
  const size_t addr_len = b.in.size() - kAuthFixed;
  DoneFixed d;
  if (!key.empty()) {
    unsigned char want[kMacSize];
    if (!mac_of(key, "hurray-net client", b.server_nonce, kNonceSize, b.client_nonce,
                kNonceSize, addr, addr_len, want) ||
        !same_mac(want, b.mac)) {
      std::snprintf(m, sizeof m, "%s: the client's key does not match this server's", kAuthId);
      return refuse(HURRAY_E_PROTOCOL, m);
    }
    if (!mac_of(key, "hurray-net server", b.client_nonce, kNonceSize, b.server_nonce,
                kNonceSize, my_address.data(), my_address.size(), d.mac))
      return refuse(HURRAY_E_OUT_OF_MEMORY, "hurray-net: out of memory");
  }
  const ucs_status_t us = ep_to_worker(w, addr, addr_len, server_ep_error, this, &b.ep);
  if (us != UCS_OK) {
    b.ep = nullptr;
    std::snprintf(m, sizeof m, "hurray-net: the server cannot reach the client's worker: %s",
                  ucs_status_string(us));
    return refuse(HURRAY_E_IO, m);
  }
  d.address_length = static_cast<uint32_t>(my_address.size());
  b.out.assign(kDoneFixed + my_address.size(), 0);
  encode(d, b.out.data());
  std::memcpy(b.out.data() + kDoneFixed, my_address.data(), my_address.size());
  b.sent = 0;
  b.stage = Boot::kDone;
  return step(b);
}

bool hurray_net_server::bootstrap_due() {
  for (size_t i = 1; i < wait_fds.size(); ++i)
    if (wait_fds[i].revents != 0) return true;
  return Clock::now() >= next_bootstrap;
}

void hurray_net_server::bootstrap_progress() {
  next_bootstrap = Clock::now() + std::chrono::milliseconds(2);
  // New connections: admitted before anything is allocated for them. A
  // refused one is told why in one CHALLENGE, sent without waiting.
  for (int round = 0; round < 64 && listen_fd >= 0; ++round) {
    sockaddr_storage ss;
    socklen_t len = sizeof ss;
    const int fd = ::accept4(listen_fd, reinterpret_cast<sockaddr *>(&ss), &len,
                             SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;  // none waiting, or no descriptor left: next round
    std::string peer;
    if (!admit(reinterpret_cast<const sockaddr *>(&ss), &peer)) {
      static unsigned char refused[kChallengeSize];
      Challenge c;
      c.status = HURRAY_E_PROTOCOL;
      std::snprintf(c.message, sizeof c.message,
                    "%s: this address is not admitted (the allow list, or the connection "
                    "limits max_connections / max_connections_per_peer)",
                    kAdmitId);
      encode(c, refused);
      (void)::send(fd, refused, sizeof refused, MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(fd);
      continue;
    }
    // Kept: not a boundary but the accept loop going on without this one.
    try {
      auto b = std::make_unique<Boot>();
      b->fd = fd;
      b->peer = peer;
      b->addr = ss;
      b->deadline = Clock::now() + std::chrono::milliseconds(limits.handshake_timeout_ms);
      b->need = kBootHelloSize;
      boots.push_back(std::move(b));
    } catch (...) {
      ::close(fd);
      forget(peer);
    }
  }
  // Bootstraps under way; those past their time are dropped.
  const auto now = Clock::now();
  std::erase_if(boots, [&](std::unique_ptr<Boot> &b) {
    if (now > b->deadline) {
      log_debug("server: a bootstrap from %s took too long (handshake_timeout_ms)",
                b->peer.c_str());
      drop_boot(*b);
      return true;
    }
    return !step(*b);
  });
  // What poll() waits on, besides UCX's event fd.
  wait_fds.clear();
  wait_fds.push_back({w.efd, POLLIN, 0});
  if (listen_fd >= 0) wait_fds.push_back({listen_fd, POLLIN, 0});
  for (auto &b : boots)
    wait_fds.push_back({b->fd, static_cast<short>(b->sent < b->out.size() ? POLLOUT : POLLIN), 0});
  w.extra = wait_fds.data();
  w.n_extra = wait_fds.size();
  for (pollfd &p : wait_fds) p.revents = 0;
}
