// Batches (protocol version 4, docs/spec/ipc.md "Batches"):
// hurray_ipc_send_many sends up to kMaxBatch handoffs in one HANDOFF_MANY
// datagram, their descriptors in one SCM_RIGHTS message, each within the
// peer's window as a HANDOFF of its own; hurray_ipc_release_many releases
// many received handoffs and tells each producer in RELEASE_MANY messages.
// A peer of an older version gets the same, one HANDOFF or RELEASE at a time.
#include <hurray_ipc.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <vector>

#include "../core/internal.h"
#include "internal.h"
#include "wire.h"

using namespace hurray::detail;
using namespace hurray::ipc;
namespace wire = hurray::ipc;

namespace {

// How many of prepared handoffs [0, n) fit the peer's window now (under mu).
size_t window_room(const hurray_ipc_channel *ch, const Prepared *p, size_t n) {
  if (!ch->got_window) return n;
  size_t k = 0, fds = ch->out_fds, out = ch->out.size();
  while (k < n && out + 1 <= ch->window_handoffs &&
         fds + static_cast<size_t>(p[k].nfds) <= ch->window_fds) {
    fds += static_cast<size_t>(p[k].nfds);
    ++out;
    ++k;
  }
  return k;
}

// Send prepared handoffs p[0, n) (n <= kMaxBatch) in HANDOFF_MANY messages,
// as many at a time as the window lets through, waiting for its RELEASEs up
// to io_timeout_ms. *done: how many went (their ids set); the rest are not
// sent.
hurray_status send_prepared(hurray_ipc_channel *ch, Prepared *p, size_t n, size_t *done,
                            hurray_error *err) {
  *done = 0;
  const int64_t start = now_ms();
  std::vector<uint8_t> buf(wire::kMaxBatchMessage);
  std::vector<Message> entries(n);
  while (*done < n) {
    Deferred d;
    std::unique_lock<std::mutex> lock(ch->mu);
    const size_t k = ch->closed ? n - *done : window_room(ch, p + *done, n - *done);
    if (k == 0) {  // the window is full: read the RELEASEs that open it
      const int32_t limit = ch->opts.io_timeout_ms;
      if (limit >= 0 && left_ms(limit, start) == 0)
        return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                    "hurray_ipc_send_many: the peer's window (%u handoffs, %u descriptors) "
                    "stayed full for %d ms (io_timeout_ms); %zu of %zu sent, the channel stays "
                    "open",
                    ch->window_handoffs, ch->window_fds, limit, *done, n);
      lock.unlock();
      uint32_t handled = 0;
      hurray_error ignored;
      const int left = left_ms(limit, start);
      (void)read_round(ch, left < 0 || left > 10 ? 10 : left, now_ms(), d, &handled, &ignored,
                       [&] { return ch->closed || window_room(ch, p + *done, 1) == 1; });
      finish(d);
      continue;
    }
    int fds[wire::kMaxBatchFds];
    size_t nfds = 0;
    SlotUndo undo[wire::kMaxBatch];
    for (size_t i = 0; i < k; ++i) {
      // memory the peer holds goes without its descriptor
      assign_slot(ch, &p[*done + i], &undo[i]);
      entries[i] = p[*done + i].m;
      entries[i].id = ch->next_id + i;
      for (int j = 0; j < p[*done + i].nfds; ++j) fds[nfds++] = p[*done + i].fds[j];
    }
    const size_t len = wire::encode_many(entries.data(), k, buf.data(), buf.size());
    const hurray_status st = send_msg(ch, buf.data(), len, fds, nfds, d, err);
    if (st != HURRAY_OK)  // not sent: the table as it was (in reverse)
      for (size_t i = k; i-- > 0;) unassign_slot(ch, &p[*done + i], undo[i]);
    if (st == HURRAY_OK) {
      for (size_t i = 0; i < k; ++i) {
        Prepared &q = p[*done + i];
        q.m.id = ch->next_id++;
        ch->out.emplace(q.m.id, hurray_ipc_channel::Out{q.local, static_cast<uint8_t>(q.nfds)});
        ch->out_fds += static_cast<size_t>(q.nfds);
        ++ch->stats.sent;
        ++ch->stats.outstanding;
      }
      *done += k;
    }
    lock.unlock();
    finish(d);
    if (st != HURRAY_OK) return st;
  }
  return HURRAY_OK;
}

hurray_status send_many(hurray_ipc_channel *ch, hurray_buffer *const *buffers, size_t count,
                        const hurray_export_desc *desc, uint64_t *ids, size_t *sent,
                        hurray_error *err) {
  if (ch->peer.protocol_version < wire::kBatchProtocol) {  // one HANDOFF at a time
    for (size_t i = 0; i < count; ++i) {
      if (const hurray_status st =
              hurray_ipc_send(ch, buffers[i], desc, ids ? &ids[i] : nullptr, err))
        return st;
      ++*sent;
    }
    return HURRAY_OK;
  }
  std::vector<Prepared> p(std::min(count, wire::kMaxBatch));
  for (size_t at = 0; at < count; at += wire::kMaxBatch) {
    const size_t n = std::min(count - at, wire::kMaxBatch);
    size_t ready = 0;
    hurray_status st = HURRAY_OK;
    for (; ready < n && st == HURRAY_OK; ++ready) {
      st = prepare(ch, buffers[at + ready], desc, &p[ready], err);
      if (st != HURRAY_OK) break;
    }
    size_t done = 0;
    if (st == HURRAY_OK) st = send_prepared(ch, p.data(), n, &done, err);
    for (size_t i = 0; i < ready; ++i) {
      discard(p[i], i < done);
      if (ids && i < done) ids[at + i] = p[i].m.id;
    }
    *sent += done;
    if (st != HURRAY_OK) return st;
  }
  return HURRAY_OK;
}

// Tell each producer of the collected releases, in RELEASE_MANY messages of
// up to kMaxBatch IDs (one RELEASE each to a peer before version 4); drops
// the collected channel references. The first failure goes to *err.
hurray_status send_collected(std::vector<Collected> &c, hurray_error *err) {
  hurray_status first = HURRAY_OK;
  // channel by channel, in the order their first release came
  for (size_t i = 0; i < c.size(); ++i) {
    hurray_ipc_channel *const ch = c[i].ch;
    if (!ch) continue;
    Message m{};
    m.type = Type::ReleaseMany;
    std::vector<uint64_t> ids;
    for (size_t j = i; j < c.size(); ++j)
      if (c[j].ch == ch) {
        ids.push_back(c[j].id);
        if (j != i) {
          channel_unref(ch);  // one reference per channel is enough from here on
          c[j].ch = nullptr;
        }
      }
    hurray_error e{};
    hurray_status st = HURRAY_OK;
    const bool batches = ch->peer.protocol_version >= wire::kBatchProtocol;
    if (!batches) {
      for (const uint64_t id : ids)
        if (const hurray_status s1 = send_release(ch, id, &e); st == HURRAY_OK) st = s1;
    } else {
      for (size_t at = 0; at < ids.size(); at += wire::kMaxBatch) {
        m.count = static_cast<uint16_t>(std::min(ids.size() - at, wire::kMaxBatch));
        std::memcpy(m.ids64, ids.data() + at, m.count * sizeof(uint64_t));
        uint8_t buf[wire::kHeaderSize + wire::kReleaseManyFixed + 8 * wire::kMaxBatch];
        const size_t len = wire::encode(m, buf, sizeof buf);
        Deferred d;
        hurray_status s1;
        {
          std::lock_guard<std::mutex> lock(ch->mu);
          s1 = send_msg(ch, buf, len, nullptr, 0, d, &e);
          if (s1 == HURRAY_OK)
            ch->stats.releases_sent += m.count;
          else
            ch->stats.releases_failed += m.count;
        }
        finish(d);
        if (st == HURRAY_OK) st = s1;
      }
    }
    if (st != HURRAY_OK && first == HURRAY_OK) {
      first = st;
      if (err) *err = e;
    }
    channel_unref(ch);
    c[i].ch = nullptr;
  }
  return first;
}

}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_ipc_send_many(hurray_ipc_channel *ch,
                                              hurray_buffer *const *buffers, size_t count,
                                              const hurray_export_desc *desc, uint64_t *ids,
                                              size_t *sent, hurray_error *err) {
  size_t dummy = 0;
  size_t *n = sent ? sent : &dummy;
  *n = 0;
  if (ids)
    for (size_t i = 0; i < count; ++i) ids[i] = 0;
  if (!ch || (count && !buffers))
    return null_argument(err, "hurray_ipc_send_many", ch ? "buffers" : "channel");
  for (size_t i = 0; i < count; ++i)
    if (!buffers[i])
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "hurray_ipc_send_many: buffers[%zu] is NULL", i);
  return barrier([&] { return send_many(ch, buffers, count, desc, ids, n, err); }, [&] {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                "hurray_ipc_send_many: out of memory (%zu of %zu sent)", *n, count);
  });
}

HURRAY_API hurray_status hurray_ipc_release_many(hurray_handoff *handoffs, size_t count,
                                                 hurray_error *err) {
  if (count && !handoffs) return null_argument(err, "hurray_ipc_release_many", "handoffs");
  std::vector<Collected> c;
  // Kept: not a boundary but a best effort (the RELEASEs go in one message
  // when there is room to collect them; each on its own when there is not).
  try {
    c.reserve(count);
  } catch (...) {
    // collected one by one below; any that cannot be is sent on its own
  }
  std::vector<Collected> *const saved = t_collect;
  t_collect = &c;
  hurray_status first = HURRAY_OK;
  hurray_error e{};
  for (size_t i = 0; i < count; ++i) {
    const hurray_status st = hurray_handoff_release(&handoffs[i], &e);
    if (st != HURRAY_OK && first == HURRAY_OK) {
      first = st;
      if (err) *err = e;
    }
  }
  t_collect = saved;
  hurray_error *const to = first == HURRAY_OK ? err : nullptr;
  const hurray_status sent =
      guarded(to, "hurray_ipc_release_many", [&] { return send_collected(c, to); });
  return first != HURRAY_OK ? first : sent;
}

}  // extern "C"
