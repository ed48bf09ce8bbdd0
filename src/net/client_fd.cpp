// hurray_net_client_fd: one descriptor an event loop polls for a client
// (docs/spec/network.md N21): an epoll set of UCX's event fd (armed after
// each call, ucp_worker_arm) and an eventfd made readable while a PUT in
// flight has finished (hurray_net_client_put_test would say done) or UCX
// has events not yet progressed.
#include "barrier.h"
#include "client_state.h"
#include "readiness.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

using namespace hurray::net;

hurray_status hurray_net_client::make_fd(hurray_error *err) {
  if (epfd >= 0) return HURRAY_OK;
  epfd = epoll_create1(EPOLL_CLOEXEC);
  wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (epfd < 0 || wake < 0 || !epoll_add_all(epfd, {w.efd, wake})) {
    const int e = errno;
    close_fd();
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_net_client_fd: %s", std::strerror(e));
  }
  rearm();
  return HURRAY_OK;
}

void hurray_net_client::close_fd() noexcept {
  for (int *fd : {&epfd, &wake}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void hurray_net_client::rearm() noexcept {
  if (epfd < 0 || w.worker == nullptr) return;
  drain_fd(wake);
  bool now = !incoming.empty() || failed;
  for (auto &[id, op] : puts) now = now || finished(*op);
  if (!now) now = ucp_worker_arm(w.worker) == UCS_ERR_BUSY;  // else its fd wakes on news
  if (now && !signal_fd(wake)) log_debug("readiness: eventfd write failed");
}

extern "C" HURRAY_API int hurray_net_client_fd(hurray_net_client *c, hurray_error *err) {
  if (c == nullptr) {
    fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "hurray_net_client_fd: no client");
    return -1;
  }
  return guarded(err, [&] { return c->make_fd(err); }) == HURRAY_OK ? c->epfd : -1;
}
