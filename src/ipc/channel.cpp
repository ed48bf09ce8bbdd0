// The channel's lifecycle (hurray_ipc.h): making a channel of a connected
// socket (the HELLO exchange), closing it, and what the channel says of itself
// (descriptor, peer, stats, release callback). Its references and shutting it
// are lifetime.cpp; the time and error helpers and the IPC policy of the layer
// helpers.cpp. The channel object and its locking are described in internal.h;
// sending is send.cpp, reading the socket read.cpp, the consumer's side of a
// received buffer receive.cpp.
#include <hurray_ipc.h>

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>

#include "../core/internal.h"
#include "internal.h"
#include "wire.h"
#include "../core/struct_size.h"

using namespace hurray::detail;
using namespace hurray::ipc;
namespace wire = hurray::ipc;

namespace hurray::ipc {

size_t encode_hello(const Options &o, uint8_t *buf) {
  Message hello{};
  hello.type = Type::Hello;
  hello.protocol_version = HURRAY_IPC_PROTOCOL_VERSION;
  hello.device_count = static_cast<uint16_t>(o.devices.size());
  for (size_t i = 0; i < o.devices.size(); ++i) hello.devices[i] = o.devices[i];
  return wire::encode(hello, buf, wire::kMaxMessage);
}

namespace {
// For a channel only this thread knows yet: dropping it closes it.
struct Unref {
  void operator()(hurray_ipc_channel *ch) const { channel_unref(ch); }
};
}  // namespace

hurray_status new_channel(int fd, const Options &o, const ucred &cred, bool hello_sent,
                          hurray_ipc_channel **out, hurray_error *err) {
  auto *ch = new (std::nothrow) hurray_ipc_channel;
  if (ch) ch->rbatch = new (std::nothrow) Batch;
  if (!ch || !ch->rbatch) {
    delete ch;
    close(fd);
    return out_of_memory(err, "hurray_ipc");
  }
  ch->sock = fd;
  ch->stats.size = sizeof ch->stats;
  ch->peer_pid = cred.pid;
  ch->peer_uid = cred.uid;
  ch->peer_gid = cred.gid;
  // closes the socket and frees ch on an early return, also when the copy
  // of the options throws (to the entry point's barrier)
  std::unique_ptr<hurray_ipc_channel, Unref> owned(ch);
  ch->opts = o;
  Deferred d;
  if (!hello_sent) {
    uint8_t buf[wire::kMaxMessage];
    const size_t n = encode_hello(o, buf);
    std::lock_guard<std::mutex> lock(ch->mu);
    if (const hurray_status st = send_msg(ch, buf, n, nullptr, 0, d, err)) return st;
  }
  *out = owned.release();
  return HURRAY_OK;
}

// Only this thread knows ch until the handshake is done: nothing is out, no
// other reader; the locks are taken for the functions that expect them.
hurray_status handshake(hurray_ipc_channel *ch, int32_t ms, int64_t start, bool *done,
                        hurray_error *err) {
  *done = false;
  Deferred d;
  hurray_status st = HURRAY_OK;
  bool gone = false;  // the peer hung up (after what it sent, which counts)
  for (;;) {
    bool send_devices, complete;
    {
      std::lock_guard<std::mutex> lock(ch->mu);
      const bool v2 = ch->got_hello && ch->peer.protocol_version >= wire::kDevicesProtocol;
      send_devices = v2 && !ch->devices_sent;
      // all the peer owes: its HELLO, and its DEVICES from version 2 on
      complete = ch->got_hello && (!v2 || ch->got_devices);
      // and its WINDOW from version 3 on
      if (ch->got_hello && ch->peer.protocol_version >= wire::kWindowProtocol)
        complete = complete && ch->got_window;
    }
    // a peer that hung up after its part is made a channel, the hang-up its
    // news (as after the handshake); DEVICES is not sent to it
    if (complete && (gone || !send_devices)) {
      *done = true;
      break;
    }
    if (gone) {
      st = HURRAY_E_IO;
      break;
    }
    if (send_devices) {  // the peer's HELLO said it reads DEVICES
      Message m{};
      describe_devices(ch->opts, &m);
      uint8_t buf[wire::kMaxMessage];
      const size_t n = wire::encode(m, buf, sizeof buf);
      std::lock_guard<std::mutex> lock(ch->mu);
      ch->devices_sent = true;
      st = send_msg(ch, buf, n, nullptr, 0, d, err);
      if (st == HURRAY_OK && ch->peer.protocol_version >= wire::kWindowProtocol) {
        Message w{};  // this side's window: its inbox's limits (BP-IPC-LIMIT)
        w.type = Type::Window;
        w.window_handoffs = ch->opts.max_queued;
        // (at least one HANDOFF's descriptors, as WINDOW must say)
        w.window_fds = ch->opts.max_queued_fds < wire::kMaxFds ? static_cast<uint32_t>(wire::kMaxFds)
                                                               : ch->opts.max_queued_fds;
        if (ch->peer.protocol_version >= wire::kSlotProtocol) {  // and its slots
          w.window_slots_form = true;
          w.window_slots = announce_slots(ch);
        }
        const size_t k = wire::encode(w, buf, sizeof buf);
        st = send_msg(ch, buf, k, nullptr, 0, d, err);
      }
      if (st != HURRAY_OK) break;
      continue;
    }
    uint32_t handled = 0;
    const Read r = read_round(ch, ms, start, d, &handled, err, [] { return false; });
    if (r == Read::Error) {  // e.g. HELLO and a malformed message in one batch
      st = HURRAY_E_PROTOCOL;
      break;
    }
    gone = r == Read::Closed;
    if (r == Read::Nothing && (ms == 0 || (ms > 0 && left_ms(ms, start) == 0))) break;
  }
  finish(d);
  return st;
}

hurray_status make_channel(int fd, const Options &o, const ucred &cred, bool hello_sent,
                           int32_t hello_ms, hurray_ipc_channel **out, hurray_error *err) {
  hurray_ipc_channel *ch = nullptr;
  if (const hurray_status st = new_channel(fd, o, cred, hello_sent, &ch, err)) return st;
  bool done = false;
  hurray_status st = handshake(ch, hello_ms, now_ms(), &done, err);
  if (st == HURRAY_OK && !done)
    st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: no %s from the peer within %d ms",
              ch->got_hello ? "DEVICES" : "HELLO", hello_ms);
  if (st != HURRAY_OK) {
    channel_unref(ch);
    return st;
  }
  *out = ch;
  return HURRAY_OK;
}

}  // namespace hurray::ipc

extern "C" {

namespace {

// The body of hurray_ipc_channel_from_fd (it may throw: the entry point runs
// it through guarded()).
hurray_status channel_from_fd(int fd, const hurray_ipc_options *opts, hurray_ipc_channel **out,
                              hurray_error *err) {
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
  Options o;
  hurray_status st = read_options(opts, &o, err);
  ucred cred;
  if (st == HURRAY_OK) st = hurray::ipc::check_peer(fd, o, &cred, err);
  if (st != HURRAY_OK) {
    close(fd);
    return st;
  }
  return make_channel(fd, o, cred, false, o.hello_timeout_ms, out, err);
}

}  // namespace

HURRAY_API hurray_status hurray_ipc_channel_from_fd(int fd, const hurray_ipc_options *opts,
                                                    hurray_ipc_channel **out, hurray_error *err) {
  return guarded(err, "hurray_ipc", [&] { return channel_from_fd(fd, opts, out, err); });
}

HURRAY_API void hurray_ipc_close(hurray_ipc_channel *ch) {
  if (!ch) return;
  Deferred d;
  {
    std::lock_guard<std::mutex> lock(ch->mu);
    // Kept: not a boundary but the fallback of a close, which returns
    // nothing and must finish: when the list of releases to call back
    // cannot grow, the handoffs are released here, without the callback.
    try {
      shut(ch, HURRAY_IPC_CLOSED, "closed by hurray_ipc_close", true, d);
    } catch (...) {
      // out of memory for the list: release in place, without the callback
      for (auto &[id, o] : ch->out) (void)hurray_handoff_release(&o.handoff, nullptr);
      ch->out.clear();
    }
  }
  finish(d);
  channel_unref(ch);
}

HURRAY_API int hurray_ipc_fd(const hurray_ipc_channel *channel) {
  if (!channel || !channel->open.load()) return -1;
  auto *ch = const_cast<hurray_ipc_channel *>(channel);
  std::lock_guard<std::mutex> lock(ch->mu);
  if (ch->ep >= 0 || ch->closed) return ch->closed ? -1 : ch->ep;
  // the readiness set, made now: the socket and the inbox's eventfd
  const int ep = epoll_create1(EPOLL_CLOEXEC);
  const int ready = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = ch->sock;
  bool ok = ep >= 0 && ready >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, ch->sock, &ev) == 0;
  ev.data.fd = ready;
  ok = ok && epoll_ctl(ep, EPOLL_CTL_ADD, ready, &ev) == 0;
  if (!ok) {  // out of descriptors: -1, as for a closed channel
    if (ep >= 0) close(ep);
    if (ready >= 0) close(ready);
    return -1;
  }
  ch->ep = ep;
  ch->ready = ready;
  update_ready(ch);
  return ep;
}

HURRAY_API hurray_status hurray_ipc_peer(const hurray_ipc_channel *ch, hurray_ipc_peer_info *out,
                                         hurray_error *err) {
  if (!ch || !out) return null_argument(err, "hurray_ipc_peer", ch ? "out" : "channel");
  // the struct grows at its end (../core/struct_size.h): a caller built
  // against a later version gets the fields this library knows
  if (const hurray_status st = refuse_below_first(out, "hurray_ipc_peer", err, fail)) return st;
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
  if (!ch || !out) return null_argument(err, "hurray_ipc_get_stats", ch ? "out" : "channel");
  if (const hurray_status st = refuse_below_first(out, "hurray_ipc_get_stats", err, fail))
    return st;
  auto *c = const_cast<hurray_ipc_channel *>(ch);
  std::lock_guard<std::mutex> lock(c->mu);
  *out = c->stats;
  out->size = sizeof *out;
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_ipc_set_release_callback(hurray_ipc_channel *ch,
                                                         hurray_ipc_release_fn fn, void *user,
                                                         hurray_error *err) {
  if (!ch) return null_argument(err, "hurray_ipc_set_release_callback", "channel");
  std::lock_guard<std::mutex> lock(ch->mu);
  ch->fn = fn;
  ch->user = user;
  return HURRAY_OK;
}

}  // extern "C"
