// The server's PUT path (docs/spec/network.md): a PUT checked under the
// transport's rules, BP-PUT-DEVICE and the limits before anything is
// allocated, its destination (the application's allocator, checked, or the
// backend's, on exactly the declared device), its bytes received eagerly or
// by rendezvous (staged through host memory where the device's are not
// host-addressable), and finish(), where a transfer's data moved or could
// not: a PUT landed (queued for hurray_net_server_poll, answered now or with
// its window) or dropped, a GET's send released.
#include "internal.h"
#include "server_state.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

using namespace hurray::net;

// The destination of a PUT: from the application's allocator when it gave
// one (checked: exactly the declared device and memory class, BP-PUT-DEVICE,
// the declared size, at least the declared alignment), else allocated
// through the backend for exactly the declared device.
hurray_status hurray_net_server::alloc_dest(const hurray_buffer_handle &h, int32_t ordinal,
                                            uint64_t buffer_id, hurray_buffer **out,
                                            hurray_error *err) {
  *out = nullptr;
  if (alloc == nullptr) return alloc_exact(ctx, h, ordinal, out, err);
  hurray_alloc_desc a = alloc_desc_for(h, ordinal);
  hurray_error e;
  std::memset(&e, 0, sizeof e);
  hurray_buffer *b = nullptr;
  const hurray_status st = alloc(alloc_user, buffer_id, &a, &b, &e);
  if (st != HURRAY_OK) {
    hurray_buffer_unref(b);
    if (e.status == st && e.message[0] != '\0') {
      if (err != nullptr) *err = e;
      return st;
    }
    return fail(err, st, st == HURRAY_E_DEVICE_UNAVAILABLE ? HURRAY_RULE_PUT_DEVICE : HURRAY_RULE_NONE,
                "the server's allocator refused %llu bytes on %s device %d (%s)",
                static_cast<unsigned long long>(h.byte_size), hurray_device_tag_name(h.device_tag),
                ordinal, hurray_status_name(st));
  }
  hurray_buffer_handle got;
  if (b == nullptr || hurray_buffer_get_handle(b, &got, nullptr) != HURRAY_OK) {
    hurray_buffer_unref(b);
    return fail(err, HURRAY_E_INTERNAL, HURRAY_RULE_NONE,
                "hurray-net: the server's allocator returned no buffer");
  }
  hurray_status bad = HURRAY_OK;
  if (got.device_tag != h.device_tag || got.memory_class != h.memory_class)
    bad = fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
               "hurray-net: the server's allocator returned %s/%s memory where %s/%s was declared; the "
               "buffer is refused, never placed elsewhere",
               hurray_device_tag_name(got.device_tag), hurray_memory_class_name(got.memory_class),
               hurray_device_tag_name(h.device_tag), hurray_memory_class_name(h.memory_class));
  else if (got.byte_size != h.byte_size)
    bad = fail(err, HURRAY_E_INTERNAL, HURRAY_RULE_NONE,
               "hurray-net: the server's allocator returned %llu bytes where %llu were declared",
               static_cast<unsigned long long>(got.byte_size),
               static_cast<unsigned long long>(h.byte_size));
  else if (got.alignment < h.alignment)
    bad = fail(err, HURRAY_E_INTERNAL, HURRAY_RULE_NONE,
               "hurray-net: the server's allocator returned %u-byte alignment where %u was "
               "declared",
               static_cast<unsigned>(got.alignment), static_cast<unsigned>(h.alignment));
  if (bad != HURRAY_OK) {
    hurray_buffer_unref(b);
    return bad;
  }
  *out = b;
  return HURRAY_OK;
}

void hurray_net_server::on_put(Incoming &in) {
  Reply r;
  hurray_error e;
  Conn *counted = nullptr;  // the connection its cost is counted on (guard.cpp)
  uint64_t cost = 0;
  auto refuse = [&] {
    if (counted != nullptr) release_put(counted, cost);
    reply_from(e, &r);
    release_data(w.worker, in);
    ++stats.puts_refused;
    log_debug("server: PUT %llu refused: %s", static_cast<unsigned long long>(r.buffer_id),
              e.message);
    send_reply(in.ep, kPutRep, r);
  };
  if (in.header.size() >= kPrefixSize) r.request_id = request_id_of(in.header.data());
  // A PUT from a client already gone (its other PUTs in flight failed, or it
  // was closed): nothing to allocate, nobody to answer.
  if (Conn *c = conn_of(in.ep); c == nullptr || c->dead || c->closed) {
    release_data(w.worker, in);
    ++stats.transfers_failed;
    log_debug("server: a PUT of a client that is gone is dropped");
    return;
  }
  PutHeader ph;
  if (!parse_put(in.header.data(), in.header.size(), &ph)) {
    fail(&e, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
         "hurray-net: malformed PUT header (%zu bytes, protocol %u expected)", in.header.size(),
         static_cast<unsigned>(kVersion));
    return refuse();
  }
  r.buffer_id = ph.buffer_id;
  // The rules of the transport first (BP-SYNC-NET, BP-ALIGN-IPC...).
  if (hurray_table_validate(ph.handle, HURRAY_HANDLE_SIZE, policy, &e) != HURRAY_OK)
    return refuse();
  hurray_buffer_handle h;
  hurray_handle_decode(ph.handle, HURRAY_HANDLE_SIZE, &h, nullptr);
  if (h.byte_size != in.length) {
    fail(&e, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
         "hurray-net: truncated transfer: the handle declares %llu bytes, %zu came",
         static_cast<unsigned long long>(h.byte_size), in.length);
    return refuse();
  }
  if (check_offer(offers, h.device_tag, h.memory_class, ph.device_ordinal, "the server", &e))
    return refuse();
  // The limits, before anything is allocated: a destination that is not
  // host-addressable costs a host staging copy as well.
  const bool staged = !host_addressable(h.device_tag, h.memory_class, 0);
  cost = staged && h.byte_size > UINT64_MAX / 2 ? UINT64_MAX : h.byte_size * (staged ? 2 : 1);
  if (reserve_put(*conn_of(in.ep), h.byte_size, cost, &e) != HURRAY_OK) return refuse();
  counted = conn_of(in.ep);
  auto t = std::make_unique<Transfer>();
  t->put = true;
  t->conn = conn_of(in.ep);
  t->cost = cost;
  t->length = in.length;
  t->request_id = ph.request_id;
  t->buffer_id = ph.buffer_id;
  t->ordinal = ph.device_ordinal;
  t->in_flight = ph.in_flight;
  if (alloc_dest(h, ph.device_ordinal, ph.buffer_id, &t->buffer, &e) != HURRAY_OK)
    return refuse();
  ++stats.live_buffers;
  hurray_handoff probe;
  bool host = false;
  if (hold(t->buffer, &probe, &host, &e) != HURRAY_OK) {
    hurray_buffer_unref(t->buffer);
    --stats.live_buffers;
    return refuse();
  }
  void *dst = probe.data;
  const int32_t got_ordinal = probe.device_ordinal;
  hurray_handoff_release(&probe, nullptr);
  if (got_ordinal != ph.device_ordinal) {  // (only an application's allocator can)
    hurray_buffer_unref(t->buffer);
    --stats.live_buffers;
    fail(&e, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
         "hurray-net: the server's allocator returned device %d where %d was declared; the "
         "buffer is refused, never placed elsewhere",
         got_ordinal, ph.device_ordinal);
    return refuse();
  }
  if (host && h.device_tag == HURRAY_DEVICE_CPU) advise_huge(dst, in.length);
  if (!host && in.length > 0) {
    t->staging = alloc_staging(in.length);
    if (t->staging == nullptr) {
      hurray_buffer_unref(t->buffer);
      --stats.live_buffers;
      fail(&e, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
           "hurray-net: no host memory to stage %zu bytes", in.length);
      return refuse();
    }
    dst = t->staging;
  }
  Transfer &tr = *t;
  transfers.push_back(std::move(t));
  counted = nullptr;  // finish() releases it now
  if (tr.conn != nullptr) {
    ++tr.conn->transfers;
    ++(tr.length < kAckDeferMax ? tr.conn->small : tr.conn->large);
    tr.conn->in_flight = ph.in_flight;
  }
  ++stats.in_flight;
  trace::mark('r', tr.request_id);
  if (in.length == 0) return finish(tr, UCS_OK);
  if (!in.rndv) {
    std::memcpy(dst, in.data, in.length);
    release_data(w.worker, in);
    return finish(tr, UCS_OK);
  }
  tr.dst = dst;  // its pages filling are its progress (sample_progress)
  {
    std::vector<bool> written;
    tr.resident = resident_pages(dst, in.length, &written);
    tr.mark_seed = reinterpret_cast<uintptr_t>(&tr) ^
                   static_cast<uint64_t>(Clock::now().time_since_epoch().count());
    tr.marked = set_marks(dst, in.length, tr.mark_seed, written);
  }
  in.ucx_owned = false;  // recv_data takes the descriptor over
  ucs_status_ptr_t req = recv_data(w.worker, in.data, dst, in.length, tr.request_id);
  trace::mark('g', tr.request_id);
  if (req == nullptr) return finish(tr, UCS_OK);
  if (UCS_PTR_IS_ERR(req)) return finish(tr, UCS_PTR_STATUS(req));
  tr.request = req;
}

// A transfer's data moved (st == UCS_OK) or could not: land or drop it.
void hurray_net_server::finish(Transfer &t, ucs_status_t st) {
  --stats.in_flight;
  if (t.conn != nullptr) {
    --t.conn->transfers;
    if (t.put) --(t.length < kAckDeferMax ? t.conn->small : t.conn->large);
    t.conn->last = Clock::now();
  }
  if (t.put)
    release_put(t.conn, t.cost);
  else
    release_get(t.conn);
  // A PUT whose bytes were there at once (eager, empty, or a receive UCX
  // completed on the spot) had no callback to mark its landing.
  if (t.put && st == UCS_OK && t.request == nullptr) trace::mark('l', t.request_id);
  t.request = nullptr;
  if (!t.put) {
    hurray_handoff_release(&t.held, nullptr);
    std::free(t.staging);
    t.staging = nullptr;
    if (st == UCS_OK) {
      ++stats.gets_served;
    } else {
      ++stats.transfers_failed;
      log_debug("server: GET %llu cut off: %s", static_cast<unsigned long long>(t.buffer_id),
                ucs_status_string(st));
    }
    t.length = SIZE_MAX;  // marks it for removal
    return;
  }
  Reply r;
  r.request_id = t.request_id;
  r.buffer_id = t.buffer_id;
  hurray_error e;
  hurray_status hs = HURRAY_OK;
  if (st != UCS_OK) {
    hs = fail(&e, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: the transfer was cut off: %s",
              ucs_status_string(st));
    ++stats.transfers_failed;
  } else if (t.staging != nullptr) {
    hs = hurray_buffer_copy_from_host(t.buffer, 0, t.staging, t.length, &e);
    if (hs != HURRAY_OK) ++stats.puts_refused;
  }
  std::free(t.staging);
  t.staging = nullptr;
  if (hs == HURRAY_OK) {
    hurray_net_received got;
    std::memset(&got, 0, sizeof got);
    got.size = sizeof got;
    got.buffer_id = t.buffer_id;
    got.buffer = t.buffer;
    got.device_ordinal = t.ordinal;
    hurray_buffer_get_handle(t.buffer, &got.handle, nullptr);
    landed.push_back(got);
    t.buffer = nullptr;
    ++stats.puts_landed;
    log_debug("server: PUT %llu landed (%zu bytes)", static_cast<unsigned long long>(t.buffer_id),
              t.length);
  } else {
    hurray_buffer_unref(t.buffer);
    t.buffer = nullptr;
    --stats.live_buffers;
    reply_from(e, &r);
    log_debug("server: PUT %llu dropped: %s", static_cast<unsigned long long>(t.buffer_id),
              e.message);
  }
  if (t.conn != nullptr && hs == HURRAY_OK && ack_may_wait(t.in_flight, t.length)) {
    // One of a window: its answer may go out with others (N15; process()).
    if (!t.conn->dead) t.conn->acks.push_back(r.request_id);
  } else if (t.conn != nullptr) {
    send_reply(t.conn->ep, kPutRep, r);
    trace::mark('a', r.request_id);
  }
  t.length = SIZE_MAX;
}
