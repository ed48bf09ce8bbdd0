// What the client's and the server's readiness descriptors share
// (client_fd.cpp, server_fd.cpp; docs/spec/network.md N21): an epoll set
// watching descriptors for input, and an eventfd emptied and signalled.
#pragma once

#include <sys/epoll.h>
#include <unistd.h>

#include <cstdint>
#include <initializer_list>

namespace hurray::net {

// Add each of `fds` to the epoll set `epfd` for EPOLLIN; false at the first
// failure (errno says why).
inline bool epoll_add_all(int epfd, std::initializer_list<int> fds) noexcept {
  for (const int fd : fds) {
    epoll_event e{};
    e.events = EPOLLIN;
    e.data.fd = fd;
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e) != 0) return false;
  }
  return true;
}

// Empty a non-blocking eventfd or timerfd: it is no longer readable.
inline void drain_fd(int fd) noexcept {
  uint64_t v = 0;
  while (::read(fd, &v, sizeof v) > 0) {
  }
}

// Make an eventfd readable; false if the write failed.
inline bool signal_fd(int fd) noexcept {
  const uint64_t v = 1;
  return ::write(fd, &v, sizeof v) == static_cast<ssize_t>(sizeof v);
}

}  // namespace hurray::net
