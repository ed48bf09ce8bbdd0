// One datagram with its descriptors (SCM_RIGHTS) over a SEQPACKET socket,
// for the hostile peers and the tests that play the IPC wire by hand
// (tests/ipc, tests/views). Plain POSIX: usable in peer programs that do not
// link Catch2.
#pragma once

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace hurray_test {

// sendmsg n bytes of buf with the descriptors fds attached (none: no
// control message; MSG_NOSIGNAL: a peer that hung up is EPIPE, not SIGPIPE).
// True when all of it went.
inline bool send_with_fds(int sock, const void *buf, size_t n, const std::vector<int> &fds) {
  iovec iov{const_cast<void *>(buf), n};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  std::vector<cmsghdr> control(CMSG_SPACE(sizeof(int) * fds.size()) / sizeof(cmsghdr) + 1);
  if (!fds.empty()) {
    mh.msg_control = control.data();
    mh.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  return sendmsg(sock, &mh, MSG_NOSIGNAL) == static_cast<ssize_t>(n);
}

// The same with one descriptor, pass_fd, attached when it is >= 0.
inline bool send_with_fd(int sock, const void *buf, size_t n, int pass_fd = -1) {
  return send_with_fds(sock, buf, n, pass_fd >= 0 ? std::vector<int>{pass_fd} : std::vector<int>{});
}

// recvmsg one datagram into buf, room for max_fds descriptors; wait_ms >= 0:
// poll that long first. Returns its length, 0 at end of file, -1 on timeout
// or error; *fds gets every descriptor that came (the caller owns them).
inline ssize_t recv_with_fds(int sock, void *buf, size_t cap, std::vector<int> *fds,
                             size_t max_fds = 2, int wait_ms = -1) {
  fds->clear();
  if (wait_ms >= 0) {
    pollfd p{sock, POLLIN, 0};
    if (poll(&p, 1, wait_ms) != 1) return -1;
  }
  std::vector<cmsghdr> control(CMSG_SPACE(sizeof(int) * max_fds) / sizeof(cmsghdr) + 1);
  iovec iov{buf, cap};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  mh.msg_control = control.data();
  mh.msg_controllen = CMSG_SPACE(sizeof(int) * max_fds);
  const ssize_t r = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
  if (r < 0) return r;
  for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < k; ++i) {
        int f;
        std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
        fds->push_back(f);
      }
    }
  return r;
}

// Close every descriptor of fds; their number.
inline size_t close_all(const std::vector<int> &fds) {
  for (int f : fds) close(f);
  return fds.size();
}

}  // namespace hurray_test
