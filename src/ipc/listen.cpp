// Opening channels over a socket path (hurray_ipc_listen, _accept, _connect;
// docs/spec/ipc.md "Socket files and access"):
//  - the socket file is made mode 0600 whatever the umask (chmod between
//    bind and listen: nobody can connect before listen), and only when no
//    listener answers at the path (BP-IPC-LISTEN); at close only the inode
//    this listener made is unlinked;
//  - every peer's credentials pass check_peer (BP-IPC-PEER) before a byte
//    is exchanged, on both sides;
//  - accept's handshake is asynchronous: a connection waits in the
//    listener's list, with this side's HELLO sent, until the peer's HELLO
//    (and, from a peer of protocol version 2 or later, its DEVICES, this
//    side's sent when the HELLO came) is there, read without waiting, or
//    its hello_timeout_ms has passed (then it is closed). A silent or slow
//    connection holds up neither accept nor another connection;
//  - hurray_ipc_listener_fd() is an epoll descriptor holding the listening
//    socket and every waiting handshake's socket: it is readable whenever
//    accept(l, 0) would make progress (a new connection, or a HELLO or
//    DEVICES that came for a waiting handshake), so a poll loop loses none.
#include <fcntl.h>
#include <sys/epoll.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "../core/internal.h"
#include "internal.h"

using hurray::detail::fail;
using hurray::detail::guarded;
using hurray::detail::null_argument;
using hurray::detail::out_of_memory;
using namespace hurray::ipc;

namespace {

// Connections accepted whose handshake is not done yet, per listener at most
// this many (the oldest is dropped for a new one).
constexpr size_t kMaxHandshakes = 64;

struct Handshake {
  hurray_ipc_channel *ch;  // HELLO sent; the handshake goes on (handshake())
  int64_t start;           // ms (now_ms)
  int64_t deadline;        // start + hello_timeout_ms; INT64_MAX: none
};

hurray_status unix_address(const char *path, sockaddr_un *a, hurray_error *err) {
  if (!path) return null_argument(err, "hurray_ipc", "path");
  std::memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof a->sun_path)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc: socket path longer than %zu bytes", sizeof a->sun_path - 1);
  std::memcpy(a->sun_path, path, std::strlen(path));
  return HURRAY_OK;
}

// Does a listener answer at this address? (connect succeeds, or its
// backlog is full.) A stale socket file refuses the connection.
bool answers(const sockaddr_un &a) {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  const int r = connect(fd, reinterpret_cast<const sockaddr *>(&a), sizeof a);
  const int e = errno;
  close(fd);
  return r == 0 || e == EAGAIN || e == EINPROGRESS;
}

// The listener's readiness set (epoll; level-triggered): add or remove a socket.
bool watch(int ep, int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  return epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == 0;
}
void unwatch(int ep, int fd) { (void)epoll_ctl(ep, EPOLL_CTL_DEL, fd, nullptr); }

}  // namespace

struct hurray_ipc_listener {
  int fd = -1;
  int ep = -1;  // epoll: fd and the handshakes' sockets (hurray_ipc_listener_fd)
  std::string path;
  dev_t dev = 0;  // the socket file this listener made
  ino_t ino = 0;
  Options opts;
  std::mutex mu;  // handshakes (one accept at a time)
  std::vector<Handshake> handshakes;
};

// The bodies of the entry points below; they may throw (a std::string, a
// vector growing): each entry point runs its body through guarded().
namespace {

hurray_status listen_at(const char *path, const hurray_ipc_options *opts,
                        hurray_ipc_listener **out, hurray_error *err) {
  if (!out) return null_argument(err, "hurray_ipc_listen", "out");
  sockaddr_un a;
  if (const hurray_status st = unix_address(path, &a, err)) return st;
  auto *l = new (std::nothrow) hurray_ipc_listener;
  if (!l) return out_of_memory(err, "hurray_ipc");
  std::unique_ptr<hurray_ipc_listener> owned(l);  // deletes it if what follows throws
  l->path = path;
  l->handshakes.reserve(kMaxHandshakes);
  if (const hurray_status st = read_options(opts, &l->opts, err)) return st;
  owned.release();
  struct stat sb;
  if (lstat(path, &sb) == 0 && S_ISSOCK(sb.st_mode)) {
    if (answers(a)) {
      delete l;
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                  "BP-IPC-LISTEN: a listener answers at %s; it is not replaced", path);
    }
    unlink(path);  // a stale socket of a listener that is gone
  }
  l->ep = epoll_create1(EPOLL_CLOEXEC);
  if (l->ep < 0) {
    const int e = errno;
    delete l;
    return io_fail(err, "epoll_create1", e);
  }
  l->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (l->fd < 0) {
    const int e = errno;
    close(l->ep);
    delete l;
    return io_fail(err, "socket", e);
  }
  const char *step = "bind";
  bool bound = false;
  if (bind(l->fd, reinterpret_cast<const sockaddr *>(&a), sizeof a) == 0) {
    bound = true;
    step = "chmod";
    if (lstat(path, &sb) == 0 && chmod(path, S_IRUSR | S_IWUSR) == 0) {
      l->dev = sb.st_dev;
      l->ino = sb.st_ino;
      step = "listen";
      if (listen(l->fd, 64) == 0 && watch(l->ep, l->fd)) {
        *out = l;
        return HURRAY_OK;
      }
    }
  }
  const int e = errno;
  close(l->fd);
  close(l->ep);
  if (bound) unlink(path);
  delete l;
  return io_fail(err, step, e, path);
}

hurray_status accept_one(hurray_ipc_listener *l, int32_t timeout_ms,
                         hurray_ipc_channel **out, hurray_error *err) {
  if (!l || !out)
    return null_argument(err, "hurray_ipc_accept", l ? "out" : "listener");
  std::lock_guard<std::mutex> lock(l->mu);
  auto &hs = l->handshakes;
  const int64_t start = now_ms();
  pollfd pfds[kMaxHandshakes + 1];
  for (;;) {
    // take every connection waiting: check who it is, send our HELLO
    for (;;) {
      const int fd = accept4(l->fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return io_fail(err, "accept4", errno);
      }
      ucred cred;
      if (const hurray_status st = check_peer(fd, l->opts, &cred, err); st != HURRAY_OK) {
        close(fd);  // refused before a byte is exchanged
        return st;
      }
      hurray_ipc_channel *ch = nullptr;
      hurray_error ignored;
      const hurray_status st = new_channel(fd, l->opts, cred, false, &ch, &ignored);  // takes fd
      if (st != HURRAY_OK) continue;  // gone already (a new socket has room for one message)
      if (hs.size() == kMaxHandshakes) {  // too many silent ones: drop the oldest
        unwatch(l->ep, hs.front().ch->sock);
        channel_unref(hs.front().ch);
        hs.erase(hs.begin());
      }
      if (!watch(l->ep, ch->sock)) {  // the poll set could not take it: not kept
        const int e = errno;
        channel_unref(ch);
        return io_fail(err, "epoll_ctl", e);
      }
      const int32_t hello = l->opts.hello_timeout_ms;
      const int64_t now = now_ms();
      hs.push_back({ch, now, hello < 0 ? INT64_MAX : now + hello});
    }
    // drop the connections whose handshake is late; wait for the first event
    const int64_t now = now_ms();
    int64_t wait = timeout_ms < 0 ? -1 : left_ms(timeout_ms, start);
    for (size_t i = 0; i < hs.size();) {
      if (hs[i].deadline <= now) {
        unwatch(l->ep, hs[i].ch->sock);
        channel_unref(hs[i].ch);
        hs.erase(hs.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      if (hs[i].deadline != INT64_MAX && (wait < 0 || hs[i].deadline - now < wait))
        wait = hs[i].deadline - now;
      ++i;
    }
    pfds[0] = {l->fd, POLLIN, 0};
    for (size_t i = 0; i < hs.size(); ++i) pfds[i + 1] = {hs[i].ch->sock, POLLIN, 0};
    int r;
    do r = poll(pfds, hs.size() + 1, static_cast<int>(wait));
    while (r < 0 && errno == EINTR);
    if (r < 0) return io_fail(err, "poll", errno);
    // a HELLO or DEVICES (or anything else) arrived: the handshake goes on
    // with what is there, without waiting. Done: this call's channel; a peer
    // that hung up is closed and forgotten; a malformed message is this
    // call's error; else it waits on in the list.
    for (size_t i = hs.size(); i-- > 0;) {
      if (!pfds[i + 1].revents) continue;
      const Handshake h = hs[i];
      bool done = false;
      // its own barrier: a handshake that runs out of memory is dropped below
      const hurray_status st =
          guarded(err, "hurray_ipc", [&] { return handshake(h.ch, 0, h.start, &done, err); });
      if (st == HURRAY_OK && !done) continue;
      unwatch(l->ep, h.ch->sock);
      hs.erase(hs.begin() + static_cast<std::ptrdiff_t>(i));
      if (st == HURRAY_OK) {
        *out = h.ch;
        return HURRAY_OK;
      }
      channel_unref(h.ch);
      if (st != HURRAY_E_IO) return st;
    }
    if (pfds[0].revents) continue;  // a new connection
    if (timeout_ms >= 0 && left_ms(timeout_ms, start) == 0)
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                  "hurray_ipc_accept: no connection with a HELLO within %d ms (%zu handshakes "
                  "waiting)",
                  timeout_ms, hs.size());
  }
}

hurray_status connect_to(const char *path, const hurray_ipc_options *opts,
                         hurray_ipc_channel **out, hurray_error *err) {
  if (!out) return null_argument(err, "hurray_ipc_connect", "out");
  sockaddr_un a;
  if (const hurray_status st = unix_address(path, &a, err)) return st;
  Options o;
  if (const hurray_status st = read_options(opts, &o, err)) return st;
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return io_fail(err, "socket", errno);
  if (connect(fd, reinterpret_cast<const sockaddr *>(&a), sizeof a) != 0) {
    const int e = errno;
    close(fd);
    return io_fail(err, "connect", e, path);
  }
  ucred cred;  // the listener's, as it was when it listened
  if (const hurray_status st = check_peer(fd, o, &cred, err); st != HURRAY_OK) {
    close(fd);
    return st;
  }
  return make_channel(fd, o, cred, false, o.hello_timeout_ms, out, err);
}

}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_ipc_listen(const char *path, const hurray_ipc_options *opts,
                                           hurray_ipc_listener **out, hurray_error *err) {
  return guarded(err, "hurray_ipc", [&] { return listen_at(path, opts, out, err); });
}

HURRAY_API int hurray_ipc_listener_fd(const hurray_ipc_listener *l) { return l ? l->ep : -1; }

HURRAY_API hurray_status hurray_ipc_accept(hurray_ipc_listener *l, int32_t timeout_ms,
                                           hurray_ipc_channel **out, hurray_error *err) {
  return guarded(err, "hurray_ipc", [&] { return accept_one(l, timeout_ms, out, err); });
}

HURRAY_API hurray_status hurray_ipc_connect(const char *path, const hurray_ipc_options *opts,
                                            hurray_ipc_channel **out, hurray_error *err) {
  return guarded(err, "hurray_ipc", [&] { return connect_to(path, opts, out, err); });
}

HURRAY_API void hurray_ipc_listener_destroy(hurray_ipc_listener *l) {
  if (!l) return;
  for (const Handshake &h : l->handshakes) channel_unref(h.ch);
  close(l->fd);
  close(l->ep);
  // only the socket file this listener made (another may have taken the path)
  struct stat sb;
  if (lstat(l->path.c_str(), &sb) == 0 && sb.st_dev == l->dev && sb.st_ino == l->ino)
    unlink(l->path.c_str());
  delete l;
}

}  // extern "C"
