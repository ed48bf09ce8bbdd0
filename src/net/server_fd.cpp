// hurray_net_server_fd: one descriptor an event loop polls for a server
// (docs/spec/network.md N21). An epoll set of UCX's event fd (armed after
// each call, ucp_worker_arm), the bootstrap's listening socket and the
// sockets of bootstraps under way, an eventfd made readable when a call
// would make progress at once (a PUT landed and not taken, UCX events not
// yet progressed) and a timerfd for the next timeout (a bootstrap's
// handshake, a connection's stall or idle time).
#include "barrier.h"
#include "internal.h"
#include "server_state.h"
#include "readiness.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

using namespace hurray::net;

hurray_status hurray_net_server::make_fd(hurray_error *err) {
  if (epfd >= 0) return HURRAY_OK;
  epfd = epoll_create1(EPOLL_CLOEXEC);
  wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (epfd < 0 || wake < 0 || timer < 0 || !epoll_add_all(epfd, {w.efd, wake, timer})) {
    const int e = errno;
    close_fd();
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_net_server_fd: %s", std::strerror(e));
  }
  rearm();
  return HURRAY_OK;
}

void hurray_net_server::close_fd() {
  for (int *fd : {&epfd, &wake, &timer}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
  watched.clear();
}

void hurray_net_server::watch_sockets() {
  auto want = [&](int fd, uint32_t events) {
    if (fd < 0) return;
    epoll_event e{};
    e.events = events;
    e.data.fd = fd;
    auto it = watched.find(fd);
    if (it == watched.end()) {
      if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) == 0) watched[fd] = events;
    } else if (it->second != events && epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &e) == 0) {
      it->second = events;
    }
  };
  want(listen_fd, EPOLLIN);
  for (auto &b : boots)
    if (b->fd >= 0) want(b->fd, b->sent < b->out.size() ? EPOLLOUT : EPOLLIN);
}

void hurray_net_server::unwatch(int fd) {
  if (epfd < 0 || fd < 0) return;
  if (watched.erase(fd) != 0) (void)epoll_ctl(epfd, EPOLL_CTL_DEL, fd, nullptr);
}

void hurray_net_server::rearm() {
  if (epfd < 0) return;
  watch_sockets();
  drain_fd(wake);
  drain_fd(timer);
  bool now = !landed.empty() || !incoming.empty();
  // A bootstrap socket ready is looked at by the next call, not 2 ms later
  // (process() looks at the bootstrap every 2 ms otherwise).
  if (wait_fds.size() > 1) {
    for (pollfd &p : wait_fds) p.revents = 0;
    if (::poll(wait_fds.data() + 1, wait_fds.size() - 1, 0) > 0) {
      next_bootstrap = Clock::now();
      now = true;
    }
  }
  if (!now) now = ucp_worker_arm(w.worker) == UCS_ERR_BUSY;  // else its fd wakes on news
  if (now) {
    if (!signal_fd(wake)) log_debug("readiness: eventfd write failed");
    return;
  }
  // The next timeout: a bootstrap's handshake, a connection's stall (looked
  // at every stall_ms / 4, sample_progress) or idle time.
  Clock::time_point next = Clock::time_point::max();
  for (auto &b : boots) next = std::min(next, b->deadline);
  for (auto &[ep, c] : conns) {
    if (c->dead) continue;
    const bool busy = c->transfers > 0 || *c->unsent > 0;
    const int32_t ms =
        busy ? (limits.stall_timeout_ms < 0 ? -1 : std::max(limits.stall_timeout_ms / 4, 10))
             : limits.idle_timeout_ms;
    if (ms >= 0) next = std::min(next, c->last + std::chrono::milliseconds(ms + 1));
  }
  itimerspec t{};
  if (next != Clock::time_point::max()) {
    const auto ns = std::max<int64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(next - Clock::now()).count(), 1000000);
    t.it_value.tv_sec = static_cast<time_t>(ns / 1000000000);
    t.it_value.tv_nsec = static_cast<long>(ns % 1000000000);
  }
  (void)timerfd_settime(timer, 0, &t, nullptr);
}

extern "C" HURRAY_API int hurray_net_server_fd(hurray_net_server *s, hurray_error *err) {
  if (s == nullptr) {
    fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "hurray_net_server_fd: no server");
    return -1;
  }
  return guarded(err, [&] { return s->make_fd(err); }) == HURRAY_OK ? s->epfd : -1;
}
