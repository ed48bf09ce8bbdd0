// A channel's references and state changes (internal.h): taking and dropping
// a reference (the last one frees the channel), the readiness eventfd, the
// socket's write watch, running what was deferred, and shutting the channel
// (every buffer still out taken back). Kept apart from channel.cpp (making a
// channel, its C API) so that sending and reading need not call back into it.
#include <hurray_ipc.h>

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../core/internal.h"
#include "internal.h"

using namespace hurray::detail;

namespace hurray::ipc {

void channel_ref(hurray_ipc_channel *ch) { ch->refs.fetch_add(1, std::memory_order_relaxed); }
void channel_unref(hurray_ipc_channel *ch) {
  if (ch->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    if (ch->sock >= 0) close(ch->sock);
    if (ch->ep >= 0) close(ch->ep);
    if (ch->ready >= 0) close(ch->ready);
    for (Pending &p : ch->inbox) close_fds(p);
    fd_budget_give(ch->queued_fds);
    drop_slots(ch);
    ch->drop_maps();
    delete ch->rbatch;
    delete ch;
  }
}

void update_ready(hurray_ipc_channel *ch) {
  if (ch->ready < 0) return;
  const bool want = !ch->inbox.empty() || ch->closed;
  if (want == ch->ready_signalled) return;
  uint64_t v = 1;
  if (want ? write(ch->ready, &v, sizeof v) == sizeof v : read(ch->ready, &v, sizeof v) == sizeof v)
    ch->ready_signalled = want;
}

void watch_room(hurray_ipc_channel *ch, bool on) {
  if (ch->ep < 0 || on == ch->room_watched || ch->closed) return;
  epoll_event ev{};
  ev.events = EPOLLIN | (on ? EPOLLOUT : 0u);
  ev.data.fd = ch->sock;
  if (epoll_ctl(ch->ep, EPOLL_CTL_MOD, ch->sock, &ev) == 0) ch->room_watched = on;
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
  if (drop_inbox) {
    for (Pending &p : ch->inbox) close_fds(p);
    ch->inbox.clear();
    fd_budget_give(ch->queued_fds);
    ch->queued_fds = 0;
  }
  // nothing left to receive: the slots' descriptors go now (else with the
  // last handoff taken, or the last reference)
  if (ch->inbox.empty()) drop_slots(ch);
  update_ready(ch);
  d.fn = ch->fn;
  d.user = ch->user;
  for (auto &[id, o] : ch->out) {
    d.back.push_back({o.handoff, id, reason});
    ++ch->stats.reclaimed;
  }
  ch->out.clear();
  ch->out_fds = 0;
  ch->stats.outstanding = 0;
}

}  // namespace hurray::ipc
