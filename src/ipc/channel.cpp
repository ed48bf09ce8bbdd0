// The IPC channel (hurray_ipc.h): a connected AF_UNIX SOCK_SEQPACKET socket
// carrying the messages of wire.h, one datagram per message, descriptors
// attached with SCM_RIGHTS.
//
// Producer side: every sent buffer is an ordinary in-process export
// (hurray_buffer_export) kept in `out` under its ID; that export is the
// reference that keeps the memory alive (BP-REFCOUNT). A RELEASE message, the
// peer's death or closing the channel releases it (BP-IPC-RELEASE).
//
// Consumer side: a received buffer is mapped and wrapped with
// hurray_handoff_wrap(); the wrap's free function unmaps and sends RELEASE,
// so release-exactly-once (BP-REL-ONCE) is the handoff layer's own.
//
// Locking: one mutex per channel. Work that may call user code (dropping a
// producer reference can run a free function; the release callback) is
// collected in a Deferred list and done after the mutex is released.
#include <hurray_ipc.h>
#include <hurray_backend.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <cerrno>
#include <cstring>
#include <deque>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

#include "../core/internal.h"
#include "../runtime/backends.h"
#include "internal.h"
#include "wire.h"

namespace hurray::detail {
// src/handoff/handoff.cpp: the backend allocation behind a buffer made by
// hurray_buffer_alloc (false for wrapped memory).
bool buffer_allocation(const hurray_buffer *b, Backend *be,
                       hurray_backend_allocation *a) noexcept;
}  // namespace hurray::detail

using namespace hurray::detail;
using hurray::ipc::io_fail;
using hurray::ipc::left_ms;
using hurray::ipc::Message;
using hurray::ipc::now_ms;
using hurray::ipc::Options;
using hurray::ipc::Type;
using hurray::ipc::WireHandle;
namespace wire = hurray::ipc;

namespace {

// A consumer's mapping of a memfd the producer sent, kept after its release
// so that the same memory sent again is not mapped again (the common case:
// a producer cycling through a pool of buffers). At most kCacheEntries
// mappings and kCacheBytes per channel, least recently released first out;
// emptied when the channel closes. The key is the file's identity: a mapped
// file stays alive, so its inode number cannot be reused meanwhile.
struct CachedMap {
  dev_t dev;
  ino_t ino;
  uint64_t offset;
  size_t len;
  bool writable;
  void *base;
};
constexpr size_t kCacheEntries = 16;
constexpr size_t kCacheBytes = size_t{256} << 20;

// A message that arrived with its descriptors, waiting for hurray_ipc_receive.
struct Pending {
  Message m;
  int fds[wire::kMaxFds];
  uint8_t nfds;
};

void close_fds(Pending &p) {
  for (uint8_t i = 0; i < p.nfds; ++i) close(p.fds[i]);
  p.nfds = 0;
}

// Work to do once the channel's mutex is released.
struct Deferred {
  struct Back {
    hurray_handoff handoff;
    uint64_t id;
    hurray_ipc_release_reason reason;
  };
  std::vector<Back> back;
  hurray_ipc_release_fn fn = nullptr;
  void *user = nullptr;
};

const hurray_policy &ipc_policy() {
  static const hurray_policy p = [] {
    hurray_policy q;
    q.transport = HURRAY_TRANSPORT_IPC;
    return q;
  }();
  return p;
}

}  // namespace

namespace hurray::ipc {

int64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

int left_ms(int32_t timeout_ms, int64_t start) {
  if (timeout_ms < 0) return -1;
  const int64_t left = timeout_ms - (now_ms() - start);
  return left > 0 ? static_cast<int>(left) : 0;
}

hurray_status io_fail(hurray_error *err, const char *what, int e) {
  return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "[%s] %s", what, std::strerror(e));
}

}  // namespace hurray::ipc

struct hurray_ipc_channel {
  std::mutex rd;  // the one thread reading the socket (taken before mu)
  std::mutex mu;        // everything below
  bool got_hello = false;
  std::atomic<int64_t> refs{1};
  int sock = -1;  // closed when the last reference goes, so a waiter's fd stays valid
  std::atomic<bool> open{true};  // false once closed (hurray_ipc_fd says -1)
  bool closed = false;         // under mu
  const char *why_closed = "";  // static string, under mu
  int32_t peer_pid = 0;
  uint32_t peer_uid = 0, peer_gid = 0;
  size_t queued_fds = 0;  // descriptors held by the inbox (BP-IPC-LIMIT)
  Message peer{};  // the peer's HELLO
  Options opts;
  uint64_t next_id = 1;
  std::unordered_map<uint64_t, hurray_handoff> out;  // sent, not yet back
  std::deque<Pending> inbox;                          // received, not yet taken
  hurray_ipc_release_fn fn = nullptr;
  void *user = nullptr;
  hurray_ipc_stats stats{};
  std::deque<CachedMap> maps;  // the consumer's mapping cache (oldest first)
  size_t map_bytes = 0;

  void drop_maps() {  // under mu, or when the last reference goes
    for (const CachedMap &c : maps) munmap(c.base, c.len);
    maps.clear();
    map_bytes = 0;
  }
};

namespace {

void channel_ref(hurray_ipc_channel *ch) { ch->refs.fetch_add(1, std::memory_order_relaxed); }
void channel_unref(hurray_ipc_channel *ch) {
  if (ch->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (ch->sock >= 0) close(ch->sock);
    for (Pending &p : ch->inbox) close_fds(p);
    ch->drop_maps();
    delete ch;
  }
}

// Run what was deferred: drop producer references, then tell the user.
void finish(Deferred &d) {
  for (Deferred::Back &b : d.back) (void)hurray_handoff_release(&b.handoff, nullptr);
  if (d.fn)
    for (const Deferred::Back &b : d.back) d.fn(d.user, b.id, b.reason);
  d.back.clear();
}

// The channel is done (under mu): close the socket and take back every
// buffer still out. Queued handoffs stay receivable unless `drop_inbox`.
void shut(hurray_ipc_channel *ch, hurray_ipc_release_reason reason, const char *why,
          bool drop_inbox, Deferred &d) {
  if (!ch->closed) {
    ch->closed = true;
    ch->why_closed = why;
    ch->stats.closed = 1;
    ch->open.store(false);
    // wakes any thread waiting on the socket; the descriptor itself is
    // closed with the last reference
    shutdown(ch->sock, SHUT_RDWR);
    ch->drop_maps();
  }
  d.fn = ch->fn;
  d.user = ch->user;
  for (auto &[id, h] : ch->out) {
    d.back.push_back({h, id, reason});
    ++ch->stats.reclaimed;
  }
  ch->out.clear();
  ch->stats.outstanding = 0;
  if (drop_inbox) {
    for (Pending &p : ch->inbox) close_fds(p);
    ch->inbox.clear();
    ch->queued_fds = 0;
  }
}

// A RELEASE from the peer (under mu).
void on_release(hurray_ipc_channel *ch, uint64_t id, Deferred &d) {
  const auto it = ch->out.find(id);
  if (it == ch->out.end()) {  // never sent, or already back (BP-REL-ONCE)
    ++ch->stats.releases_refused;
    return;
  }
  d.fn = ch->fn;
  d.user = ch->user;
  d.back.push_back({it->second, id, HURRAY_IPC_RELEASED});
  ch->out.erase(it);
  ++ch->stats.released;
  --ch->stats.outstanding;
}

// ---- reading the socket ----
//
// One thread at a time reads (the channel's `rd` lock, taken before `mu` and
// never while holding it, except with try_lock), in batches with recvmmsg:
// one system call waits for the first message and takes what else is there.
// What was read is then handled under `mu`.

constexpr unsigned kBatch = 8;

struct Datagram {
  uint8_t buf[wire::kMaxMessage + 1];
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
};

struct Batch {
  Datagram dg[kBatch];
  mmsghdr hdr[kBatch];
  iovec iov[kBatch];
  unsigned n = 0;      // datagrams read
  int error = 0;       // errno of a failed read (not EAGAIN)
};

// How long to wait for the first message: -1 forever, 0 not at all.
bool poll_in(int sock, int ms) {
  pollfd pfd{sock, POLLIN, 0};
  int r;
  do r = poll(&pfd, 1, ms);
  while (r < 0 && errno == EINTR);
  return r != 0;
}

// Read up to kBatch datagrams (rd held, not mu), waiting for the first
// when `block`. b->n == 0 and b->error == 0: nothing there.
void recv_batch(int sock, bool block, Batch *b) {
  for (unsigned i = 0; i < kBatch; ++i) {
    b->iov[i] = {b->dg[i].buf, sizeof b->dg[i].buf};
    std::memset(&b->hdr[i], 0, sizeof b->hdr[i]);
    b->hdr[i].msg_hdr.msg_iov = &b->iov[i];
    b->hdr[i].msg_hdr.msg_iovlen = 1;
    b->hdr[i].msg_hdr.msg_control = b->dg[i].control;
    b->hdr[i].msg_hdr.msg_controllen = sizeof b->dg[i].control;
  }
  int r;
  do r = recvmmsg(sock, b->hdr, kBatch,
                  MSG_CMSG_CLOEXEC | (block ? MSG_WAITFORONE : MSG_DONTWAIT), nullptr);
  while (r < 0 && errno == EINTR);
  b->n = r > 0 ? static_cast<unsigned>(r) : 0;
  b->error = r < 0 && errno != EAGAIN && errno != EWOULDBLOCK ? errno : 0;
}

// The descriptors that came with a datagram: up to kMaxFds into p, the rest
// closed (then *too_many).
void take_fds(msghdr &mh, Pending *p, bool *too_many) {
  for (cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    const size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < k; ++i) {
      int f;
      std::memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
      if (p->nfds < wire::kMaxFds)
        p->fds[p->nfds++] = f;
      else {
        close(f);
        *too_many = true;
      }
    }
  }
}

enum class Read { Message, Nothing, Closed, Error };

bool announced(const std::vector<wire::DeviceCaps> &devs, uint8_t tag, uint8_t mc) {
  for (const wire::DeviceCaps &dc : devs)
    if (dc.tag == tag) return mc < 32 && ((dc.classes >> mc) & 1u);
  return false;
}

// May this HANDOFF be queued (under mu)? Only memory this side announced in
// its HELLO (BP-IPC-ANNOUNCED: no backend is touched for anything else), and
// within the inbox's limits (BP-IPC-LIMIT).
hurray_status admit(const hurray_ipc_channel *ch, const Pending &p, hurray_error *err) {
  const uint8_t tag = p.m.handle[12], mc = p.m.handle[14];
  if (!announced(ch->opts.devices, tag, mc))
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-ANNOUNCED: a HANDOFF of %s memory of class %s, which this side did not "
                "announce in its HELLO%s",
                hurray_device_tag_name(tag), hurray_memory_class_name(mc),
                (ch->opts.flags & HURRAY_IPC_SEND_ONLY) ? " (it is send-only)" : "");
  if (ch->inbox.size() >= ch->opts.max_queued ||
      ch->queued_fds + p.nfds > ch->opts.max_queued_fds)
    return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "BP-IPC-LIMIT: %zu handoffs with %zu descriptors are queued unreceived (at most "
                "%u and %u)",
                ch->inbox.size(), ch->queued_fds, ch->opts.max_queued, ch->opts.max_queued_fds);
  return HURRAY_OK;
}

// Handle what recv_batch read (under mu). Returns Message when at least one
// message was handled and the channel is still open, Nothing when nothing
// was read, Closed when the peer is gone, Error for a malformed message.
// *handled counts the messages handled.
Read handle_batch(hurray_ipc_channel *ch, Batch &b, Deferred &d, uint32_t *handled,
                  hurray_error *err) {
  Read result = Read::Nothing;
  for (unsigned i = 0; i < b.n; ++i) {
    msghdr &mh = b.hdr[i].msg_hdr;
    Pending p{};
    bool too_many = false;
    take_fds(mh, &p, &too_many);
    if (result == Read::Closed || result == Read::Error || ch->closed) {
      close_fds(p);  // after the end: only descriptors to close
      continue;
    }
    const size_t len = b.hdr[i].msg_len;
    if (len == 0) {  // end of file: the peer is gone
      shut(ch, HURRAY_IPC_PEER_GONE, "the peer hung up or died", false, d);
      fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the peer hung up or died");
      result = Read::Closed;
      continue;
    }
    hurray_status st;
    if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
      st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "ipc message: longer than %zu bytes or with too many descriptors",
                wire::kMaxMessage);
    else if (too_many)
      st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                "ipc message: more than %zu descriptors", wire::kMaxFds);
    else
      st = wire::parse(b.dg[i].buf, len, p.nfds, &p.m, err);
    if (st == HURRAY_OK && (p.m.type == Type::Hello) == ch->got_hello)
      st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                ch->got_hello ? "BP-IPC-HELLO: HELLO after the handshake"
                              : "BP-IPC-HELLO: the first message is not HELLO");
    if (st == HURRAY_OK && p.m.type == Type::Handoff) st = admit(ch, p, err);
    if (st != HURRAY_OK) {
      close_fds(p);
      ++ch->stats.messages_rejected;
      // misbehaviour: nothing the peer sent is kept (every descriptor closed)
      shut(ch, HURRAY_IPC_PEER_GONE, "the peer sent a malformed message", true, d);
      result = Read::Error;
      continue;
    }
    switch (p.m.type) {
      case Type::Hello:
        ch->peer = p.m;
        ch->got_hello = true;
        break;
      case Type::Release:
        on_release(ch, p.m.id, d);
        break;
      case Type::Handoff:
        ch->inbox.push_back(p);
        ch->queued_fds += p.nfds;
        break;
    }
    ++*handled;
    result = Read::Message;
  }
  if (b.n == 0 && b.error && !ch->closed) {
    shut(ch, HURRAY_IPC_PEER_GONE, "the peer hung up or died", false, d);
    fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the peer is gone (%s)",
         std::strerror(b.error));
    result = Read::Closed;
  }
  return result;
}

// Take the reader lock within `ms` (-1: forever).
bool lock_reader(hurray_ipc_channel *ch, int ms);

// Send one message (under mu). When the socket is full, read what the peer
// sent meanwhile (so two sides sending at each other cannot deadlock), for
// at most the channel's io_timeout_ms: a peer that stops reading gets its
// channel closed, the caller is not blocked for ever.
hurray_status send_msg(hurray_ipc_channel *ch, const uint8_t *bytes, size_t n, const int *fds,
                       size_t nfds, Deferred &d, hurray_error *err) {
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * wire::kMaxFds)];
  int64_t start = -1;  // of the wait for room, once the socket was full
  for (;;) {
    const int fd = ch->sock;
    if (ch->closed)
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the channel is closed (%s)",
                  ch->why_closed);
    iovec iov{const_cast<uint8_t *>(bytes), n};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    if (nfds) {
      std::memset(control, 0, sizeof control);
      mh.msg_control = control;
      mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
      cmsghdr *c = CMSG_FIRSTHDR(&mh);
      c->cmsg_level = SOL_SOCKET;
      c->cmsg_type = SCM_RIGHTS;
      c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
      std::memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    const ssize_t r = sendmsg(fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r == static_cast<ssize_t>(n)) return HURRAY_OK;
    if (r >= 0) return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "[sendmsg] short write");
    const int e = errno;
    if (e == EINTR) continue;
    if (e == EAGAIN || e == EWOULDBLOCK) {
      if (start < 0) start = now_ms();
      const int32_t limit = ch->opts.io_timeout_ms;
      if (limit >= 0 && left_ms(limit, start) == 0) {
        shut(ch, HURRAY_IPC_PEER_GONE, "the peer stopped reading", false, d);
        return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                    "hurray_ipc: the peer read nothing for %d ms (io_timeout_ms); the channel "
                    "is closed",
                    limit);
      }
      pollfd pfd{fd, POLLOUT | POLLIN, 0};
      int pr;
      do pr = poll(&pfd, 1, left_ms(limit, start));
      while (pr < 0 && errno == EINTR);
      if ((pfd.revents & POLLIN) && ch->rd.try_lock()) {
        Batch batch;  // on the stack (2.3 KiB): no allocation, no thread-local storage
        Batch *b = &batch;
        recv_batch(fd, false, b);
        uint32_t handled = 0;
        const Read rd = handle_batch(ch, *b, d, &handled, err);
        ch->rd.unlock();
        if (rd == Read::Closed || rd == Read::Error)
          return rd == Read::Error ? HURRAY_E_PROTOCOL : HURRAY_E_IO;
      } else if (!(pfd.revents & POLLOUT)) {
        // the reader is busy elsewhere: give it a moment
        poll(nullptr, 0, 1);
      }
      continue;
    }
    if (e == EPIPE || e == ECONNRESET || e == ENOTCONN) {
      shut(ch, HURRAY_IPC_PEER_GONE, "the peer hung up or died", false, d);
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the peer is gone (%s)",
                  std::strerror(e));
    }
    return io_fail(err, "sendmsg", e);
  }
}

bool lock_reader(hurray_ipc_channel *ch, int ms) {
  if (ms < 0) {
    ch->rd.lock();
    return true;
  }
  // Another thread reading the same channel is rare: poll for the lock
  // (std::timed_mutex's timed lock is invisible to ThreadSanitizer).
  const int64_t deadline = now_ms() + ms;
  for (;;) {
    if (ch->rd.try_lock()) return true;
    if (ms == 0 || now_ms() >= deadline) return false;
    const timespec pause{0, 200 * 1000};
    nanosleep(&pause, nullptr);
  }
}

// One round of reading for progress/receive/HELLO: take the reader lock
// within the time left, read a batch (waiting for the first message as the
// timeout says), handle it under mu. Returns what handle_batch says, or
// Nothing on a timeout. `stop_when` (under mu) ends the wait early when
// another reader already did the work (e.g. queued a handoff).
template <class Stop>
Read read_round(hurray_ipc_channel *ch, int32_t timeout_ms, int64_t start, Deferred &d,
                uint32_t *handled, hurray_error *err, Stop stop_when) {
  if (!lock_reader(ch, left_ms(timeout_ms, start))) return Read::Nothing;
  std::unique_lock<std::mutex> rlock(ch->rd, std::adopt_lock);
  {
    std::lock_guard<std::mutex> lock(ch->mu);
    if (stop_when()) return Read::Message;
    if (ch->closed) {
      fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the channel is closed (%s)",
           ch->why_closed);
      return Read::Closed;
    }
  }
  Batch batch;  // on the stack (2.3 KiB): no allocation, no thread-local storage
  Batch *b = &batch;
  if (timeout_ms > 0) {
    if (!poll_in(ch->sock, left_ms(timeout_ms, start))) return Read::Nothing;
    recv_batch(ch->sock, false, b);
  } else {
    recv_batch(ch->sock, timeout_ms < 0, b);
  }
  std::lock_guard<std::mutex> lock(ch->mu);
  return handle_batch(ch, *b, d, handled, err);
}

}  // namespace

namespace hurray::ipc {

size_t encode_hello(const Options &o, uint8_t *buf) {
  Message hello{};
  hello.type = Type::Hello;
  hello.protocol_version = HURRAY_IPC_PROTOCOL_VERSION;
  hello.device_count = static_cast<uint16_t>(o.devices.size());
  for (size_t i = 0; i < o.devices.size(); ++i) hello.devices[i] = o.devices[i];
  return wire::encode(hello, buf, wire::kMaxMessage);
}

hurray_status make_channel(int fd, const Options &o, const ucred &cred, bool hello_sent,
                           int32_t hello_ms, hurray_ipc_channel **out, hurray_error *err) {
  auto *ch = new (std::nothrow) hurray_ipc_channel;
  if (!ch) {
    close(fd);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc: out of memory");
  }
  ch->sock = fd;
  ch->stats.size = sizeof ch->stats;
  ch->peer_pid = cred.pid;
  ch->peer_uid = cred.uid;
  ch->peer_gid = cred.gid;
  Deferred d;
  hurray_status st = HURRAY_OK;
  try {
    ch->opts = o;
  } catch (...) {
    st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc: out of memory");
  }
  if (st == HURRAY_OK && !hello_sent) {
    uint8_t buf[wire::kMaxMessage];
    const size_t n = encode_hello(o, buf);
    std::lock_guard<std::mutex> lock(ch->mu);
    st = send_msg(ch, buf, n, nullptr, 0, d, err);
  }
  const int64_t start = now_ms();
  while (st == HURRAY_OK && !ch->got_hello) {  // only this thread knows ch yet
    uint32_t handled = 0;
    const Read r = read_round(ch, hello_ms, start, d, &handled, err,
                              [ch] { return ch->got_hello; });
    if (r == Read::Error)  // HELLO and a malformed message in one batch, say
      st = HURRAY_E_PROTOCOL;
    else if (ch->got_hello)
      break;
    else if (r == Read::Closed)
      st = HURRAY_E_IO;
    else if (r == Read::Nothing && hello_ms >= 0 && left_ms(hello_ms, start) == 0)
      st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                "hurray_ipc: no HELLO from the peer within %d ms", hello_ms);
  }
  if (st != HURRAY_OK) {
    channel_unref(ch);
    return st;
  }
  *out = ch;
  return HURRAY_OK;
}

}  // namespace hurray::ipc

namespace {

// ---- the consumer's side of a received buffer ----

// One received buffer: what its release undoes.
struct Imported {
  hurray_ipc_channel *ch;  // a reference
  uint64_t id;
  void *map_base;          // CPU: what to munmap (or keep in the cache)
  size_t map_len;
  CachedMap key;           // CPU: the mapping's identity, for the cache
  bool backend_owned;      // another device: freed through its backend
  Backend backend;
  hurray_backend_allocation alloc;
};

// hurray_ipc_release() asks the free function below how the release went.
struct Capture {
  bool called = false;
  hurray_status status = HURRAY_OK;
  hurray_error err{};
};
thread_local Capture *t_capture = nullptr;

hurray_status send_release(hurray_ipc_channel *ch, uint64_t id, hurray_error *err) {
  uint8_t buf[wire::kMaxMessage];
  Message m{};
  m.type = Type::Release;
  m.id = id;
  const size_t n = wire::encode(m, buf, sizeof buf);
  Deferred d;
  hurray_status st;
  try {  // called from a release, through C: nothing may escape
    std::lock_guard<std::mutex> lock(ch->mu);
    st = send_msg(ch, buf, n, nullptr, 0, d, err);
    if (st == HURRAY_OK)
      ++ch->stats.releases_sent;
    else
      ++ch->stats.releases_failed;
  } catch (...) {
    st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc: out of memory");
  }
  finish(d);
  return st;
}

void free_imported(void *user, void *) {
  auto *r = static_cast<Imported *>(user);
  if (r->map_len) {
    bool kept = false;
    try {
      std::lock_guard<std::mutex> lock(r->ch->mu);
      if (!r->ch->closed && r->map_len <= kCacheBytes) {
        r->ch->maps.push_back(r->key);
        r->ch->map_bytes += r->map_len;
        kept = true;
        while (r->ch->maps.size() > kCacheEntries || r->ch->map_bytes > kCacheBytes) {
          const CachedMap old = r->ch->maps.front();
          r->ch->maps.pop_front();
          r->ch->map_bytes -= old.len;
          munmap(old.base, old.len);
        }
      }
    } catch (...) {
      kept = false;  // the mapping was not recorded: unmap it below
    }
    if (!kept) munmap(r->map_base, r->map_len);
  }
  if (r->backend_owned) r->backend.table->free(r->backend.state, &r->alloc);
  Capture *c = t_capture;
  t_capture = nullptr;  // releases a release callback may make report elsewhere
  const hurray_status st = send_release(r->ch, r->id, c ? &c->err : nullptr);
  t_capture = c;
  if (c) {
    c->called = true;
    c->status = st;
  }
  channel_unref(r->ch);
  delete r;
}

// The event_free_fn of a received EVENT handoff: the backend's event_release.
void release_imported_event(void *user, void *event) {
  const auto *ref = static_cast<const DeviceRef *>(user);
  if (ref) ref->backend.table->event_release(ref->backend.state, ref->device, event);
}

// Turn a received HANDOFF into a handoff of this process. Consumes p's fds.
hurray_status import(hurray_ipc_channel *ch, Pending &p, hurray_handoff *out, hurray_error *err) {
  const Message &m = p.m;
  hurray_buffer_handle h;
  hurray_handle_decode(m.handle, sizeof m.handle, &h, nullptr);
  auto *r = new (std::nothrow) Imported{};
  if (!r) {
    close_fds(p);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc: out of memory");
  }
  r->id = m.id;
  r->ch = ch;
  void *data = nullptr;
  uint32_t flags = 0;
  void *event = nullptr;                // EVENT: the imported event
  const DeviceRef *event_ref = nullptr;  // and where to release it
  hurray_status st = HURRAY_OK;
  if (h.device_tag == HURRAY_DEVICE_CPU) {
    if (h.byte_size) {
      const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
      struct stat sb;
      if (m.memory.kind != wire::kKindMemfd || !m.memory.has_fd)
        st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "ipc message: CPU memory of kind %u (a memfd is kind 1)", m.memory.kind);
      else if (m.memory.offset % page)
        st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "ipc message: memory offset %llu is not page-aligned",
                  static_cast<unsigned long long>(m.memory.offset));
      else if (fstat(p.fds[0], &sb) != 0 || !S_ISREG(sb.st_mode) ||
               static_cast<uint64_t>(sb.st_size) < m.memory.offset + h.byte_size)
        st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "ipc message: the descriptor is not a memory file of at least %llu bytes",
                  static_cast<unsigned long long>(m.memory.offset + h.byte_size));
      else if ((st = hurray::ipc::check_sealed(p.fds[0], err)) != HURRAY_OK) {
        // BP-IPC-SEAL: not mapped at all
      } else {
        const bool writable = !(m.flags & HURRAY_HANDOFF_READ_ONLY);
        const size_t len = static_cast<size_t>((h.byte_size + page - 1) / page * page);
        r->key = CachedMap{sb.st_dev, sb.st_ino, m.memory.offset, len, writable, nullptr};
        {  // the same memory, mapped before and released since?
          std::lock_guard<std::mutex> lock(ch->mu);
          for (auto it = ch->maps.end(); it != ch->maps.begin();) {
            --it;
            if (it->dev == sb.st_dev && it->ino == sb.st_ino && it->offset == m.memory.offset &&
                it->len == len && it->writable == writable &&
                reinterpret_cast<uintptr_t>(it->base) % h.alignment == 0) {
              data = it->base;
              r->map_len = len;
              ch->map_bytes -= len;
              ch->maps.erase(it);
              break;
            }
          }
        }
        if (!data) {
          data = hurray::ipc::map_aligned(p.fds[0], m.memory.offset, h.byte_size, h.alignment, writable,
                             &r->map_len, err);
          if (!data) st = err ? static_cast<hurray_status>(err->status) : HURRAY_E_IO;
        }
        r->map_base = r->key.base = data;
      }
    }
  } else {
    Backend be;
    st = backend_device(h.device_tag, m.device_ordinal, &be, err);
    if (st == HURRAY_OK && !be.table->ipc_import_memory)
      st = fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc: the %s backend cannot import memory", be.table->name);
    if (st == HURRAY_OK && m.handle[13] == HURRAY_SYNC_EVENT) {
      // the producer's event, opened here (BP-SYNC-WAIT happens at acquire)
      if (!be.table->ipc_import_event)
        st = fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_IPC,
                  "BP-SYNC-IPC: the %s backend cannot import events", be.table->name);
      else {
        hurray_backend_ipc_handle eh{};
        eh.kind = m.event.kind;
        eh.fd = m.event.has_fd ? p.fds[m.memory.has_fd] : -1;
        eh.byte_size = m.event.byte_size;
        eh.offset = m.event.offset;
        std::memcpy(eh.bytes, m.event.bytes, sizeof eh.bytes);
        st = be.table->ipc_import_event(be.state, m.device_ordinal, &eh, &event, err);
        if (st == HURRAY_OK) event_ref = device_ref(be, m.device_ordinal);
      }
    }
    if (st == HURRAY_OK && h.byte_size) {
      hurray_backend_ipc_handle ih{};
      ih.kind = m.memory.kind;
      ih.fd = m.memory.has_fd ? p.fds[0] : -1;
      ih.byte_size = m.memory.byte_size;
      ih.offset = m.memory.offset;
      std::memcpy(ih.bytes, m.memory.bytes, sizeof ih.bytes);
      st = be.table->ipc_import_memory(be.state, m.device_ordinal, &ih, h.memory_class,
                                       &r->alloc, err);
      if (st == HURRAY_OK) {
        r->backend_owned = true;
        r->backend = be;
        data = r->alloc.data;
        flags = r->alloc.flags & HURRAY_HANDOFF_OPAQUE_DATA;
      }
    }
  }
  close_fds(p);
  if (st == HURRAY_OK) {
    hurray_buffer_desc bd = HURRAY_BUFFER_DESC_INIT;
    bd.handle = h;
    bd.handle.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
    bd.flags = flags | (m.flags & HURRAY_HANDOFF_QPARAM);
    bd.data = data;
    bd.device_ordinal = m.device_ordinal;
    bd.free_fn = free_imported;
    bd.free_user = r;
    hurray_export_desc ed = HURRAY_EXPORT_DESC_INIT;
    ed.flags = m.flags & HURRAY_HANDOFF_READ_ONLY;
    if (event) {  // acquire waits on it; it is released once (BP-EVREL-ONCE)
      ed.sync_mode = HURRAY_SYNC_EVENT;
      ed.sync_object = event;
      ed.sync_value = m.sync_value;
      ed.event_free_fn = release_imported_event;
      ed.event_user = const_cast<DeviceRef *>(event_ref);
    }
    channel_ref(ch);  // the record's, dropped by free_imported
    st = hurray_handoff_wrap(nullptr, &bd, &ed, out, err);
    if (st == HURRAY_OK) return HURRAY_OK;
    channel_unref(ch);
  }
  if (event) release_imported_event(const_cast<DeviceRef *>(event_ref), event);
  if (r->map_len) munmap(r->map_base, r->map_len);
  if (r->backend_owned) r->backend.table->free(r->backend.state, &r->alloc);
  delete r;
  if (st == HURRAY_E_PROTOCOL) {  // what the peer sent is malformed: the channel closes
    Deferred d;
    try {
      std::lock_guard<std::mutex> lock(ch->mu);
      ++ch->stats.messages_rejected;
      shut(ch, HURRAY_IPC_PEER_GONE, "the peer sent an unusable handoff", true, d);
    } catch (...) {
      // out of memory for the list of buffers to take back: they go at close
    }
    finish(d);
    return st;
  }
  // give the buffer back to the producer at once
  hurray_error ignored;
  (void)send_release(ch, m.id, &ignored);
  return st;
}

// Build the memory part of a HANDOFF for `buffer`. *fd is the descriptor to
// pass, -1 if none; *own_fd says whether it is ours to close once sent.
hurray_status describe_memory(hurray_buffer *buffer, const hurray_buffer_handle &h,
                              WireHandle *mem, int *fd, bool *own_fd, hurray_error *err) {
  *fd = -1;
  *own_fd = false;
  std::memset(mem, 0, sizeof *mem);
  if (!h.byte_size) return HURRAY_OK;
  if (h.device_tag == HURRAY_DEVICE_CPU) {
    const int f = hurray_buffer_fd(buffer);
    if (f < 0)
      return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                  "hurray_ipc_send: this CPU buffer cannot be shared with another process; "
                  "allocate it with hurray_buffer_alloc() and HURRAY_ALLOC_SHAREABLE");
    // the CPU backend sizes its memfd to whole pages (src/backends/cpu)
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    mem->kind = wire::kKindMemfd;
    mem->has_fd = 1;
    mem->byte_size = (h.byte_size + page - 1) / page * page;
    mem->offset = 0;
    *fd = f;
    return HURRAY_OK;
  }
  // Device memory: the backend's own IPC handle (Vulkan: an OPAQUE_FD;
  // CUDA, HIP, Level Zero: a vendor handle in `bytes`).
  Backend be;
  hurray_backend_allocation a;
  if (!buffer_allocation(buffer, &be, &a))
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc_send: wrapped %s memory cannot be shared by libhurray; allocate it "
                "with hurray_buffer_alloc() and HURRAY_ALLOC_SHAREABLE",
                hurray_device_tag_name(h.device_tag));
  if (!be.table->ipc_export_memory)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                "hurray_ipc_send: the %s backend cannot export memory to another process",
                be.table->name);
  hurray_backend_ipc_handle ih;
  std::memset(&ih, 0, sizeof ih);
  ih.fd = -1;
  HURRAY_RETURN_NOT_OK(be.table->ipc_export_memory(be.state, &a, &ih, err));
  if (ih.kind == 0 || ih.byte_size < h.byte_size) {
    if (ih.fd >= 0) close(ih.fd);
    return fail(err, HURRAY_E_BACKEND, HURRAY_RULE_NONE,
                "hurray_ipc_send: the %s backend exported kind %u, %llu bytes, for a "
                "%llu-byte buffer",
                be.table->name, ih.kind, static_cast<unsigned long long>(ih.byte_size),
                static_cast<unsigned long long>(h.byte_size));
  }
  mem->kind = ih.kind;
  mem->has_fd = ih.fd >= 0 ? 1 : 0;
  mem->byte_size = ih.byte_size;
  mem->offset = ih.offset;
  std::memcpy(mem->bytes, ih.bytes, sizeof mem->bytes);
  *fd = ih.fd;
  *own_fd = ih.fd >= 0;
  return HURRAY_OK;
}

bool peer_supports(const Message &peer, uint8_t tag, uint8_t mc) {
  for (uint16_t i = 0; i < peer.device_count; ++i)
    if (peer.devices[i].tag == tag) return mc < 32 && ((peer.devices[i].classes >> mc) & 1u);
  return false;
}

}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_ipc_channel_from_fd(int fd, const hurray_ipc_options *opts,
                                                    hurray_ipc_channel **out, hurray_error *err) {
  if (fd < 0 || !out) {
    if (fd >= 0) close(fd);
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_channel_from_fd: %s", fd < 0 ? "fd is negative" : "out is NULL");
  }
  int type = 0;
  socklen_t len = sizeof type;
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET) {
    close(fd);
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_channel_from_fd: fd is not a SOCK_SEQPACKET socket");
  }
  try {
    Options o;
    hurray_status st = read_options(opts, &o, err);
    ucred cred;
    if (st == HURRAY_OK) st = hurray::ipc::check_peer(fd, o, &cred, err);
    if (st != HURRAY_OK) {
      close(fd);
      return st;
    }
    return make_channel(fd, o, cred, false, o.hello_timeout_ms, out, err);
  } catch (...) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc: out of memory");
  }
}

HURRAY_API void hurray_ipc_close(hurray_ipc_channel *ch) {
  if (!ch) return;
  Deferred d;
  {
    std::lock_guard<std::mutex> lock(ch->mu);
    try {
      shut(ch, HURRAY_IPC_CLOSED, "closed by hurray_ipc_close", true, d);
    } catch (...) {
      // out of memory for the list: release in place, without the callback
      for (auto &[id, h] : ch->out) (void)hurray_handoff_release(&h, nullptr);
      ch->out.clear();
    }
  }
  finish(d);
  channel_unref(ch);
}

HURRAY_API int hurray_ipc_fd(const hurray_ipc_channel *ch) {
  return ch && ch->open.load() ? ch->sock : -1;
}

HURRAY_API hurray_status hurray_ipc_peer(const hurray_ipc_channel *ch, hurray_ipc_peer_info *out,
                                         hurray_error *err) {
  if (!ch || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "hurray_ipc_peer: %s is NULL",
                ch ? "out" : "channel");
  // the struct grows at its end: a caller built against the first version
  // (up to `devices`) gets those fields
  constexpr size_t first = offsetof(hurray_ipc_peer_info, uid);
  if (out->size < first)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_peer: out->size is %u, expected %zu", out->size, sizeof *out);
  const size_t n = out->size < sizeof *out ? out->size : sizeof *out;
  hurray_ipc_peer_info info;
  std::memset(&info, 0, sizeof info);
  info.size = static_cast<uint32_t>(n);
  info.protocol_version = ch->peer.protocol_version;
  info.pid = ch->peer_pid;
  info.uid = ch->peer_uid;
  info.gid = ch->peer_gid;
  info.device_count = ch->peer.device_count;
  for (uint16_t i = 0; i < ch->peer.device_count; ++i) {
    info.devices[i].device_tag = ch->peer.devices[i].tag;
    info.devices[i].memory_classes = ch->peer.devices[i].classes;
  }
  std::memcpy(out, &info, n);
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_ipc_get_stats(const hurray_ipc_channel *ch, hurray_ipc_stats *out,
                                              hurray_error *err) {
  if (!ch || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_get_stats: %s is NULL", ch ? "out" : "channel");
  if (out->size < sizeof *out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_get_stats: out->size is %u, expected %zu", out->size, sizeof *out);
  auto *c = const_cast<hurray_ipc_channel *>(ch);
  std::lock_guard<std::mutex> lock(c->mu);
  *out = c->stats;
  out->size = sizeof *out;
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_ipc_set_release_callback(hurray_ipc_channel *ch,
                                                         hurray_ipc_release_fn fn, void *user,
                                                         hurray_error *err) {
  if (!ch)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_set_release_callback: channel is NULL");
  std::lock_guard<std::mutex> lock(ch->mu);
  ch->fn = fn;
  ch->user = user;
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_ipc_send(hurray_ipc_channel *ch, hurray_buffer *buffer,
                                         const hurray_export_desc *desc, uint64_t *id,
                                         hurray_error *err) {
  if (!ch || !buffer)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "hurray_ipc_send: %s is NULL",
                ch ? "buffer" : "channel");
  // Everything is checked before a byte is sent: the handle under the IPC
  // rules (BP-ALIGN-IPC, BP-SYNC-IPC), the peer's devices, shareability.
  hurray_buffer_handle h;
  HURRAY_RETURN_NOT_OK(hurray_buffer_get_handle(buffer, &h, err));
  if (desc && desc->size >= offsetof(hurray_export_desc, reserved0)) {
    if (desc->sync_mode > 0xFF)
      return fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_VALUE,
                  "BP-SYNC-VALUE: sync_mode %u is not defined", desc->sync_mode);
    h.sync_mode = static_cast<uint8_t>(desc->sync_mode);
  }
  HURRAY_RETURN_NOT_OK(hurray_handle_validate(&h, &ipc_policy(), err));
  if (h.sync_mode == HURRAY_SYNC_CONSUMER_STREAM)
    return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_IPC,
                "BP-SYNC-IPC: sending %s buffers for a consumer stream is not implemented yet "
                "(PRODUCER_SYNCED and EVENT are)",
                hurray_device_tag_name(h.device_tag));
  if (!peer_supports(ch->peer, h.device_tag, h.memory_class))
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                "BP-PUT-DEVICE: the peer (pid %d) did not announce %s memory of class %s",
                ch->peer_pid, hurray_device_tag_name(h.device_tag),
                hurray_memory_class_name(h.memory_class));
  // an untrusted consumer gets memory of its own (HURRAY_IPC_COPY_PER_SEND)
  hurray_buffer *copy = nullptr;
  if ((ch->opts.flags & HURRAY_IPC_COPY_PER_SEND) && h.device_tag == HURRAY_DEVICE_CPU &&
      h.byte_size) {
    HURRAY_RETURN_NOT_OK(hurray::ipc::fresh_copy(buffer, h, &copy, err));
    buffer = copy;
  }
  struct Drop {  // the export holds its own reference to the copy
    hurray_buffer *b;
    ~Drop() {
      if (b) hurray_buffer_unref(b);
    }
  } drop{copy};
  Message m{};
  m.type = Type::Handoff;
  int fds[2] = {-1, -1};
  bool own_fd;
  HURRAY_RETURN_NOT_OK(describe_memory(buffer, h, &m.memory, &fds[0], &own_fd, err));
  int nfds = fds[0] >= 0 ? 1 : 0;
  int event_fd = -1;  // ours to close
  if (h.sync_mode == HURRAY_SYNC_EVENT) {
    // the event travels as the backend's IPC handle (BP-SYNC-IPC allowed it)
    Backend be;
    hurray_backend_allocation a;
    hurray_backend_ipc_handle eh;
    std::memset(&eh, 0, sizeof eh);
    eh.fd = -1;
    hurray_status est = HURRAY_OK;
    if (!buffer_allocation(buffer, &be, &a))  // device memory that crosses is always ours
      est = fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_IPC,
                 "BP-SYNC-IPC: no backend allocation behind this %s buffer",
                 hurray_device_tag_name(h.device_tag));
    if (est == HURRAY_OK && !be.table->ipc_export_event)
      est = fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_SYNC_IPC,
                 "BP-SYNC-IPC: the %s backend cannot export events", be.table->name);
    if (est == HURRAY_OK && !desc->sync_object)
      est = fail(err, HURRAY_E_SYNC, HURRAY_RULE_SYNC_PAYLOAD, "BP-SYNC-PAYLOAD: EVENT needs an event");
    if (est == HURRAY_OK)
      est = be.table->ipc_export_event(be.state, a.device, desc->sync_object, &eh, err);
    if (est == HURRAY_OK && eh.kind == 0)
      est = fail(err, HURRAY_E_BACKEND, HURRAY_RULE_NONE,
                 "hurray_ipc_send: the %s backend exported an event of kind 0", be.table->name);
    if (est != HURRAY_OK) {
      if (eh.fd >= 0) close(eh.fd);
      if (own_fd) close(fds[0]);
      return est;
    }
    m.event.kind = eh.kind;
    m.event.has_fd = eh.fd >= 0 ? 1 : 0;
    m.event.byte_size = eh.byte_size;
    m.event.offset = eh.offset;
    std::memcpy(m.event.bytes, eh.bytes, sizeof m.event.bytes);
    m.sync_value = desc->sync_value;
    if (eh.fd >= 0) fds[nfds++] = event_fd = eh.fd;
  }
  hurray_handoff local;
  if (const hurray_status est = hurray_buffer_export(buffer, desc, &local, err); est != HURRAY_OK) {
    if (own_fd) close(fds[0]);
    if (event_fd >= 0) close(event_fd);
    return est;
  }
  hurray_handle_encode(&h, m.handle, sizeof m.handle, nullptr);
  m.flags = local.flags & wire::kHandoffFlags;
  m.device_ordinal = local.device_ordinal;
  if ((m.flags & HURRAY_HANDOFF_READ_ONLY) && h.device_tag == HURRAY_DEVICE_CPU && fds[0] >= 0) {
    // BP-IPC-RO: the consumer gets a descriptor it cannot map writable
    const int ro = hurray::ipc::reopen_read_only(fds[0], err);
    if (ro < 0) {
      if (own_fd) close(fds[0]);
      if (event_fd >= 0) close(event_fd);
      (void)hurray_handoff_release(&local, nullptr);
      return err ? static_cast<hurray_status>(err->status) : HURRAY_E_UNSUPPORTED;
    }
    if (own_fd) close(fds[0]);
    fds[0] = ro;
    own_fd = true;
  }
  Deferred d;
  hurray_status st;
  try {
    std::lock_guard<std::mutex> lock(ch->mu);
    m.id = ch->next_id++;
    uint8_t buf[wire::kMaxMessage];
    const size_t n = wire::encode(m, buf, sizeof buf);
    st = send_msg(ch, buf, n, fds, static_cast<size_t>(nfds), d, err);
    if (st == HURRAY_OK) {
      ch->out.emplace(m.id, local);
      ++ch->stats.sent;
      ++ch->stats.outstanding;
    }
  } catch (...) {
    st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc_send: out of memory");
  }
  if (own_fd) close(fds[0]);  // the peer has its own copies now (or nothing was sent)
  if (event_fd >= 0) close(event_fd);
  if (st != HURRAY_OK) (void)hurray_handoff_release(&local, nullptr);
  finish(d);
  if (st == HURRAY_OK && id) *id = m.id;
  return st;
}

HURRAY_API hurray_status hurray_ipc_progress(hurray_ipc_channel *ch, int32_t timeout_ms,
                                             uint32_t *count, hurray_error *err) {
  if (count) *count = 0;
  if (!ch)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_progress: channel is NULL");
  hurray_status st = HURRAY_OK;
  uint32_t handled = 0;
  const int64_t start = now_ms();
  channel_ref(ch);  // keeps the socket open while this thread reads without mu
  for (;;) {
    Deferred d;
    const uint32_t before = handled;
    Read r;
    try {
      r = read_round(ch, timeout_ms, start, d, &handled, err, [] { return false; });
    } catch (...) {
      r = Read::Error;
      st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc_progress: out of memory");
    }
    finish(d);  // callbacks run without the locks
    if (st != HURRAY_OK) break;
    if (r == Read::Closed || r == Read::Error) {
      st = r == Read::Error ? HURRAY_E_PROTOCOL : HURRAY_E_IO;
      break;
    }
    if (r == Read::Message) {
      if (handled - before < kBatch) break;
      timeout_ms = 0;  // a full batch: take what else is there, without waiting
      continue;
    }
    if (timeout_ms == 0 || (timeout_ms > 0 && left_ms(timeout_ms, start) == 0)) break;
  }
  channel_unref(ch);
  if (count) *count = handled;
  return st;
}

namespace {

// Take the next queued handoff (under mu): 1 taken, 0 none, -1 refused (its
// handle breaks the IPC rules: the channel is closed, *st says why).
int take(hurray_ipc_channel *ch, Pending *p, Deferred &d, hurray_status *st, hurray_error *err) {
  if (ch->inbox.empty()) return 0;
  *p = ch->inbox.front();
  ch->inbox.pop_front();
  ch->queued_fds -= p->nfds;
  // the IPC rules, on the consumer's side too: a handle that breaks them is
  // a malformed message
  *st = hurray_table_validate(p->m.handle, sizeof p->m.handle, &ipc_policy(), err);
  if (*st != HURRAY_OK) {
    *st = HURRAY_E_PROTOCOL;  // err->rule still names the rule broken
    if (err) err->status = HURRAY_E_PROTOCOL;
    close_fds(*p);
    ++ch->stats.messages_rejected;
    shut(ch, HURRAY_IPC_PEER_GONE, "the peer sent a handle that breaks the IPC rules", true, d);
    return -1;
  }
  ++ch->stats.received;
  return 1;
}

}  // namespace

HURRAY_API hurray_status hurray_ipc_receive(hurray_ipc_channel *ch, int32_t timeout_ms,
                                            hurray_handoff *out, uint64_t *id, hurray_error *err) {
  if (!ch || !out)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "hurray_ipc_receive: %s is NULL",
                ch ? "out" : "channel");
  hurray_status st = HURRAY_OK;
  Pending p{};
  int got = 0;
  const int64_t start = now_ms();
  channel_ref(ch);  // keeps the socket open while this thread reads without mu
  for (;;) {
    Deferred d;
    Read r = Read::Nothing;
    try {
      {
        std::lock_guard<std::mutex> lock(ch->mu);
        got = take(ch, &p, d, &st, err);
        if (!got && ch->closed) {
          st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the channel is closed (%s)",
                    ch->why_closed);
          got = -1;
        }
      }
      if (!got) {
        uint32_t handled = 0;
        r = read_round(ch, timeout_ms, start, d, &handled, err,
                       [ch] { return !ch->inbox.empty(); });
        std::lock_guard<std::mutex> lock(ch->mu);
        got = take(ch, &p, d, &st, err);
      }
    } catch (...) {
      st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray_ipc_receive: out of memory");
      got = -1;
    }
    finish(d);
    if (got) break;
    if (r == Read::Closed || r == Read::Error) {
      st = r == Read::Error ? HURRAY_E_PROTOCOL : HURRAY_E_IO;
      break;
    }
    if (r == Read::Nothing &&
        (timeout_ms == 0 || (timeout_ms > 0 && left_ms(timeout_ms, start) == 0))) {
      st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                "hurray_ipc_receive: nothing arrived within %d ms", timeout_ms);
      break;
    }
  }
  if (got == 1) {
    const uint64_t mid = p.m.id;
    st = import(ch, p, out, err);
    if (st == HURRAY_OK && id) *id = mid;
  }
  channel_unref(ch);
  return st;
}

HURRAY_API hurray_status hurray_ipc_release(hurray_handoff *handoff, hurray_error *err) {
  Capture c;
  Capture *const saved = t_capture;
  t_capture = &c;
  const hurray_status st = hurray_handoff_release(handoff, err);
  t_capture = saved;
  if (st != HURRAY_OK || !c.called || c.status == HURRAY_OK) return st;
  if (err) *err = c.err;
  return c.status;
}

}  // extern "C"
