// libhurray-net: the hurray_net_* server and client (include/hurray_net.h)
// on top of UCX active messages. The protocol and its decisions are in
// docs/spec/network.md; the message layouts in wire.h.
//
// One UCX worker per server or client, progressed only by the calling thread
// (hurray_net_server_poll, or the client's blocking calls). No UCX callback
// does real work: the active-message handlers queue what arrived, and the
// requests in flight are checked after each round of progress, so every
// allocation, validation and reply happens outside UCX's callbacks.
#include <hurray_backend.h>

#include "bootstrap.h"
#include "server.h"
#include "ucx.h"
#include "wire.h"

#include <netdb.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <new>
#include <vector>

using namespace hurray::net;

namespace {

// Rendezvous (the receiver pulls the bytes into the destination it chose)
// from this size on; below it, UCX sends the bytes eagerly.
constexpr size_t kRndvMin = 16 * 1024;

// Can the bytes at `data` be read and written by the CPU? CPU memory (unless
// opaque), mapped Vulkan and OpenCL memory (the plugins hand out an opaque
// handle otherwise), and the host-pinned and unified classes of the GPU
// runtimes. GPU device memory is not: it is staged through host memory
// (Debian's UCX has no GPU support).
bool host_addressable(uint8_t tag, uint8_t memory_class, uint32_t flags) {
  if (flags & HURRAY_HANDOFF_OPAQUE_DATA) return false;
  switch (tag) {
    case HURRAY_DEVICE_CPU:
    case HURRAY_DEVICE_VULKAN:
    case HURRAY_DEVICE_OPENCL:
      return true;
    default:
      return memory_class == HURRAY_MEMORY_HOST_PINNED || memory_class == HURRAY_MEMORY_UNIFIED;
  }
}

hurray_status make_policy(uint32_t transport, hurray_policy **out, hurray_error *err) {
  if (transport != HURRAY_TRANSPORT_CROSS_MACHINE && transport != HURRAY_TRANSPORT_RDMA)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray-net: transport must be cross-machine (3) or rdma (2), not %u",
                transport);
  if (hurray_status st = hurray_policy_create(out, err)) return st;
  return hurray_policy_set_transport(*out, static_cast<hurray_transport>(transport), err);
}

// The devices this machine offers: every named tag with at least one device,
// restricted to `only` when it is not empty.
std::vector<Offer> local_offers(hurray_context *ctx, const std::vector<uint8_t> &only) {
  std::vector<Offer> offers;
  for (unsigned t = HURRAY_DEVICE_CPU; t <= HURRAY_DEVICE_OPENCL; ++t) {
    const auto tag = static_cast<uint8_t>(t);
    if (!only.empty() && std::find(only.begin(), only.end(), tag) == only.end()) continue;
    int32_t n = 0;
    if (hurray_device_count(ctx, tag, &n, nullptr) != HURRAY_OK || n <= 0) continue;
    hurray_backend_device_info info;
    std::memset(&info, 0, sizeof info);
    if (hurray_device_info(ctx, tag, 0, &info, nullptr) != HURRAY_OK) continue;
    offers.push_back({tag, n, info.memory_classes});
  }
  return offers;
}

// BP-PUT-DEVICE: the receiver has exactly this device and memory class.
hurray_status check_offer(const std::vector<Offer> &offers, uint8_t tag, uint8_t memory_class,
                          int32_t ordinal, const char *who, hurray_error *err) {
  for (const Offer &o : offers) {
    if (o.tag != tag) continue;
    if (ordinal < 0 || ordinal >= o.count)
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                  "%s has %d %s device(s); device %d was asked for (never placed elsewhere)",
                  who, o.count, hurray_device_tag_name(tag), ordinal);
    if (memory_class >= 32 || !(o.classes & (1u << memory_class)))
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                  "%s's %s device cannot allocate memory class %s (never placed elsewhere)",
                  who, hurray_device_tag_name(tag), hurray_memory_class_name(memory_class));
    return HURRAY_OK;
  }
  return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
              "%s has no %s device (0x%02x); the buffer is refused, never placed elsewhere", who,
              hurray_device_tag_name(tag), static_cast<unsigned>(tag));
}

// Allocate the receiver's copy on exactly the declared device.
hurray_status alloc_exact(hurray_context *ctx, const hurray_buffer_handle &h, int32_t ordinal,
                          hurray_buffer **out, hurray_error *err) {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = h.byte_size;
  a.alignment = h.alignment;
  a.device_tag = h.device_tag;
  a.memory_class = h.memory_class;
  a.device_ordinal = ordinal;
  hurray_error e;
  const hurray_status st = hurray_buffer_alloc(ctx, &a, out, &e);
  if (st == HURRAY_OK) return st;
  if (st == HURRAY_E_DEVICE_UNAVAILABLE)
    return fail(err, st, HURRAY_RULE_PUT_DEVICE, "cannot allocate on %s device %d (%s)",
                hurray_device_tag_name(h.device_tag), ordinal, e.message);
  if (err != nullptr) *err = e;
  return st;
}

// Export a PRODUCER_SYNCED, read-only handoff of `b` (a reference that keeps
// it alive) and tell whether its bytes are host-addressable.
hurray_status hold(hurray_buffer *b, hurray_handoff *out, bool *host, hurray_error *err) {
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.flags = HURRAY_HANDOFF_READ_ONLY;
  if (hurray_status st = hurray_buffer_export(b, &e, out, err)) return st;
  hurray_buffer_handle h;
  hurray_handle_decode(out->handle, HURRAY_HANDLE_SIZE, &h, nullptr);
  *host = host_addressable(h.device_tag, h.memory_class, out->flags);
  return HURRAY_OK;
}

void copy_error(const Reply &r, hurray_error *err) {
  if (err == nullptr) return;
  std::memset(err, 0, sizeof *err);
  err->status = r.status;
  err->rule = r.rule;
  err->severity = HURRAY_SEVERITY_ERROR;
  err->buffer_index = -1;
  err->byte_offset = -1;
  std::snprintf(err->rule_id, sizeof err->rule_id, "%s",
                hurray_rule_id(static_cast<hurray_rule>(r.rule)));
  std::snprintf(err->message, sizeof err->message, "%s", r.message);
}

void reply_from(const hurray_error &e, Reply *r) {
  r->status = e.status;
  r->rule = e.rule;
  std::snprintf(r->message, sizeof r->message, "%s", e.message);
}


void release_data(ucp_worker_h w, Incoming &in) {
  if (in.ucx_owned && in.data != nullptr) ucp_am_data_release(w, in.data);
  in.ucx_owned = false;
  in.data = nullptr;
}

ucs_status_t queue_am(std::deque<Incoming> *q, Op op, const void *header, size_t header_length,
                      void *data, size_t length, const ucp_am_recv_param_t *param) {
  try {
    Incoming in;
    in.op = op;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP) in.ep = param->reply_ep;
    if (header_length > 0) {
      const auto *h = static_cast<const unsigned char *>(header);
      in.header.assign(h, h + header_length);
    }
    in.length = length;
    ucs_status_t ret = UCS_OK;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
      in.rndv = true;
      in.ucx_owned = true;
      in.data = data;
      ret = UCS_INPROGRESS;
    } else if (length > 0 && (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA)) {
      in.ucx_owned = true;
      in.data = data;
      ret = UCS_INPROGRESS;
    } else if (length > 0) {
      const auto *d = static_cast<const unsigned char *>(data);
      in.copy.assign(d, d + length);
      in.data = in.copy.data();
    }
    if (op == kPut && header_length >= kPrefixSize) trace::mark('h', request_id_of(header));
    q->push_back(std::move(in));
    return ret;
  } catch (...) {
    return UCS_ERR_NO_MEMORY;  // the sender's request fails with it
  }
}

template <class Owner, Op op>
ucs_status_t am_handler(void *arg, const void *header, size_t header_length, void *data,
                        size_t length, const ucp_am_recv_param_t *param) {
  return queue_am(&static_cast<Owner *>(arg)->incoming, op, header, header_length, data, length,
                  param);
}

template <class Owner>
hurray_status set_handler(Owner *o, Op op, ucp_am_recv_callback_t cb, hurray_error *err) {
  ucp_am_handler_param_t p;
  std::memset(&p, 0, sizeof p);
  p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                 UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  p.id = op;
  p.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
  p.cb = cb;
  p.arg = o;
  const ucs_status_t st = ucp_worker_set_am_recv_handler(o->w.worker, &p);
  if (st != UCS_OK)
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "UCX: ucp_worker_set_am_recv_handler: %s",
                ucs_status_string(st));
  return HURRAY_OK;
}

// Receive a rendezvous message's bytes into dst. With a trace on
// (HURRAY_NET_TRACE), UCX's completion marks 'l' for trace_id.
ucs_status_ptr_t recv_data(ucp_worker_h w, void *desc, void *dst, size_t length,
                           uint64_t trace_id = 0) {
  ucp_request_param_t p;
  std::memset(&p, 0, sizeof p);
  p.op_attr_mask = UCP_OP_ATTR_FIELD_DATATYPE;
  p.datatype = ucp_dt_make_contig(1);
  if (trace_id != 0 && trace::on()) {
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.recv_am = trace::landed_cb;
    p.user_data = trace::id_arg(trace_id);
  }
  return ucp_am_recv_data_nbx(w, desc, dst, length, &p);
}

// Memory about to be written whole by the network: ask for huge pages (a
// hint; Linux's transparent huge pages in "madvise" mode), so that receiving
// 1 GiB takes 512 page faults instead of 262144.
void advise_huge(void *p, size_t n) {
  constexpr uintptr_t kHuge = 2u << 20;
  if (p == nullptr || n < 2 * kHuge) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHuge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
}

void *alloc_staging(size_t n) {
  void *p = std::aligned_alloc(4096, ((n == 0 ? 1 : n) + 4095) & ~static_cast<size_t>(4095));
  advise_huge(p, n);
  return p;
}

}  // namespace

// ===================================================================== server


void hurray_net_server::send_reply(ucp_ep_h ep, Op op, const Reply &r) {
  Conn *c = conn_of(ep);
  if (ep == nullptr || (c != nullptr && c->dead)) return;
  const size_t n = op == kGetRep ? kGetRepSize : kReplySize;
  std::unique_ptr<unsigned char[]> bytes(new unsigned char[n]);
  encode(r, op, bytes.get());
  queue_send(ep, c, op, std::move(bytes), n);
}

// The answers waiting on `c`, as PUT_ACKs of at most kMaxAckIds ids.
void hurray_net_server::send_acks(Conn &c) {
  for (size_t at = 0; at < c.acks.size() && !c.dead; at += kMaxAckIds) {
    const auto k = static_cast<uint32_t>(std::min<size_t>(c.acks.size() - at, kMaxAckIds));
    const size_t n = put_ack_size(k);
    std::unique_ptr<unsigned char[]> bytes(new unsigned char[n]);
    encode_put_ack(c.acks.data() + at, k, bytes.get());
    for (uint32_t i = 0; i < k; ++i) trace::mark('a', c.acks[at + i]);
    queue_send(c.ep, &c, kPutAck, std::move(bytes), n);
  }
  c.acks.clear();
}

void hurray_net_server::on_hello(Incoming &in) {
  const uint64_t id = in.header.size() >= kPrefixSize ? request_id_of(in.header.data()) : 0;
  const auto k = static_cast<uint32_t>(std::min<size_t>(offers.size(), kMaxHelloDevices));
  const size_t n = hello_rep_size(k);
  std::unique_ptr<unsigned char[]> bytes(new unsigned char[n]());
  std::vector<HelloDevice> devices;
  for (uint32_t i = 0; i < k; ++i) devices.push_back({offers[i].tag, offers[i].count, offers[i].classes});
  encode_hello_rep(id, transport, devices.data(), k, bytes.get());
  release_data(w.worker, in);
  // Only a connection the bootstrap created is answered (a UCX endpoint made
  // some other way, to the worker's transport port, is not one).
  Conn *c = conn_of(in.ep);
  if (in.ep == nullptr || c == nullptr) return;
  queue_send(in.ep, c, kHelloRep, std::move(bytes), n);
}

// The destination of a PUT: from the application's allocator when it gave
// one (checked: exactly the declared device and memory class, BP-PUT-DEVICE,
// the declared size, at least the declared alignment), else allocated
// through the backend for exactly the declared device.
hurray_status hurray_net_server::alloc_dest(const hurray_buffer_handle &h, int32_t ordinal,
                                            uint64_t buffer_id, hurray_buffer **out,
                                            hurray_error *err) {
  *out = nullptr;
  if (alloc == nullptr) return alloc_exact(ctx, h, ordinal, out, err);
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = h.byte_size;
  a.alignment = h.alignment;
  a.device_tag = h.device_tag;
  a.memory_class = h.memory_class;
  a.device_ordinal = ordinal;
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
               "the server's allocator returned %s/%s memory where %s/%s was declared; the "
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
         "the server's allocator returned device %d where %d was declared; the buffer is "
         "refused, never placed elsewhere",
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
  in.ucx_owned = false;  // recv_data takes the descriptor over
  ucs_status_ptr_t req = recv_data(w.worker, in.data, dst, in.length, tr.request_id);
  trace::mark('g', tr.request_id);
  if (req == nullptr) return finish(tr, UCS_OK);
  if (UCS_PTR_IS_ERR(req)) return finish(tr, UCS_PTR_STATUS(req));
  tr.request = req;
}

void hurray_net_server::on_get(Incoming &in) {
  Reply r;
  hurray_error e;
  release_data(w.worker, in);  // a GET request carries no data
  // A GET of a client already gone (or disconnected by a limit): dropped.
  Conn *conn = conn_of(in.ep);
  if (conn == nullptr || conn->dead || conn->closed) return;
  bool counted = false;  // its place in conn_gets_in_flight (guard.cpp)
  auto refuse = [&] {
    if (counted) release_get(conn);
    reply_from(e, &r);
    ++stats.gets_refused;
    log_debug("server: GET %llu refused: %s", static_cast<unsigned long long>(r.buffer_id),
              e.message);
    send_reply(in.ep, kGetRep, r);
  };
  if (in.header.size() >= kPrefixSize) r.request_id = request_id_of(in.header.data());
  if (!parse_get(in.header.data(), in.header.size(), &r.request_id, &r.buffer_id)) {
    fail(&e, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, "hurray-net: malformed GET header (%zu bytes)",
         in.header.size());
    return refuse();
  }
  auto it = registry.find(r.buffer_id);
  // One registered for other clients is answered as one that is not there.
  if (it == registry.end() || !may_get(*conn, it->second)) {
    fail(&e, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
         "hurray-net: the server has no buffer registered as %llu",
         static_cast<unsigned long long>(r.buffer_id));
    return refuse();
  }
  if (hurray_table_validate(it->second.held.handle, HURRAY_HANDLE_SIZE, policy, &e) != HURRAY_OK)
    return refuse();
  if (reserve_get(*conn, &e) != HURRAY_OK) return refuse();
  counted = true;
  auto t = std::make_unique<Transfer>();
  t->put = false;
  t->conn = conn_of(in.ep);
  t->request_id = r.request_id;
  t->buffer_id = r.buffer_id;
  bool host = false;
  if (hold(it->second.buffer, &t->held, &host, &e) != HURRAY_OK) return refuse();
  hurray_buffer_handle h;
  hurray_handle_decode(t->held.handle, HURRAY_HANDLE_SIZE, &h, nullptr);
  t->length = static_cast<size_t>(h.byte_size);
  const void *src = t->held.data;
  if (!host && t->length > 0) {
    t->staging = alloc_staging(t->length);
    if (t->staging == nullptr ||
        hurray_buffer_copy_to_host(it->second.buffer, 0, t->staging, t->length, &e) != HURRAY_OK) {
      if (t->staging == nullptr)
        fail(&e, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: no host memory to stage");
      std::free(t->staging);
      hurray_handoff_release(&t->held, nullptr);
      return refuse();
    }
    src = t->staging;
  }
  std::memcpy(r.handle, t->held.handle, HURRAY_HANDLE_SIZE);
  t->header.reset(new unsigned char[kGetRepSize]);
  encode(r, kGetRep, t->header.get());
  Transfer &tr = *t;
  transfers.push_back(std::move(t));
  counted = false;  // finish() releases it now
  if (tr.conn != nullptr) ++tr.conn->transfers;
  ++stats.in_flight;
  if (in.ep == nullptr || (tr.conn != nullptr && tr.conn->dead))
    return finish(tr, UCS_ERR_CONNECTION_RESET);
  ucs_status_ptr_t req =
      am_send(in.ep, kGetRep, tr.header.get(), kGetRepSize, src, tr.length,
              tr.length >= kRndvMin ? static_cast<uint32_t>(UCP_AM_SEND_FLAG_RNDV) : 0u);
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

void hurray_net_server::process() {
  // New clients: the bootstrap (bootstrap_server.cpp) creates their
  // connections once they are admitted and authenticated. It is looked at
  // when poll() saw one of its sockets ready, and every 2 ms (process() runs
  // after every round of UCX progress: a system call each time would cost
  // the data path).
  if (bootstrap_due()) bootstrap_progress();
  // Messages.
  while (!incoming.empty()) {
    Incoming in = std::move(incoming.front());
    incoming.pop_front();
    if (Conn *c = conn_of(in.ep)) c->last = Clock::now();
    switch (in.op) {
      case kHelloReq: on_hello(in); break;
      case kPut: on_put(in); break;
      case kGetReq: on_get(in); break;
      default: release_data(w.worker, in); break;
    }
  }
  // Transfers that completed.
  for (auto &t : transfers) {
    if (t->request == nullptr) continue;
    const ucs_status_t st = ucp_request_check_status(t->request);
    if (st == UCS_INPROGRESS) continue;
    ucp_request_free(t->request);
    finish(*t, st);
  }
  std::erase_if(transfers, [](const std::unique_ptr<Transfer> &t) {
    return t->request == nullptr && t->length == SIZE_MAX;
  });
  // Replies that went out.
  std::erase_if(sends, [](PendingSend &s) {
    if (ucp_request_check_status(s.request) == UCS_INPROGRESS) return false;
    ucp_request_free(s.request);
    if (s.unsent) --*s.unsent;
    return true;
  });
  enforce_timeouts();
  // Clients here: the answers that waited go out when the window asks or
  // nothing else would send them (N15). Clients gone: close their endpoint
  // (which completes their requests with an error), forget them once nothing
  // refers to them.
  for (auto it = conns.begin(); it != conns.end();) {
    Conn &c = *it->second;
    if (c.dead) {
      c.acks.clear();
    } else if (ack_now(c.acks.size(), c.in_flight, c.small, c.large)) {
      send_acks(c);
    }
    if (c.dead && !c.closed) {
      c.closed = true;
      ++stats.disconnections;
      close_ep(w, c.ep, false, 1000);
    }
    if (c.closed && c.transfers == 0) {
      forget(c.peer);
      it = conns.erase(it);
    } else {
      ++it;
    }
  }
  stats.pending = landed.size();
}

extern "C" {

HURRAY_API hurray_status hurray_net_server_create(const hurray_net_server_config *config,
                                                  hurray_net_server **out, hurray_error *err) {
  // A configuration may end at `context` (before `alloc` was added).
  if (config == nullptr || out == nullptr ||
      config->size < offsetof(hurray_net_server_config, alloc) || config->reserved0 != 0 ||
      (config->n_devices > 0 && config->devices == nullptr))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_create: config and out are required (config from "
                "HURRAY_NET_SERVER_CONFIG_INIT)");
  *out = nullptr;
  hurray_net_server *s = nullptr;
  try {
    s = new hurray_net_server;
    s->ctx = config->context;
    if (config->size >= offsetof(hurray_net_server_config, limits)) {
      s->alloc = config->alloc;
      s->alloc_user = config->alloc_user;
    }
    // Limits and the allow list (guard.cpp): absent in older configurations.
    const bool guarded = config->size >= sizeof(hurray_net_server_config);
    hurray_status gst = resolve_limits(guarded ? config->limits : nullptr, &s->limits, err);
    if (!gst) gst = s->allow.parse(guarded ? config->allow : nullptr, err);
    if (!gst && guarded && (config->reserved1 != 0 || (config->flags & ~HURRAY_NET_SERVER_NO_AUTH)))
      gst = fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                 "hurray_net_server_create: unknown flags 0x%x or reserved1 not zero",
                 guarded ? config->flags : 0u);
    if (!gst && guarded)
      gst = load_key(config->key, config->key_file, "hurray_net_server_create", &s->key, err);
    const uint32_t flags = guarded ? config->flags : 0u;
    if (gst) {
      hurray_net_server_destroy(s);
      return gst;
    }
    s->transport = config->transport;
    if (hurray_status st = make_policy(config->transport, &s->policy, err)) {
      hurray_net_server_destroy(s);
      return st;
    }
    std::vector<uint8_t> only(config->devices, config->devices + config->n_devices);
    s->offers = local_offers(s->ctx, only);
    if (hurray_status st = s->w.init(err)) {
      hurray_net_server_destroy(s);
      return st;
    }
    hurray_status st = set_handler(s, kHelloReq, am_handler<hurray_net_server, kHelloReq>, err);
    if (!st) st = set_handler(s, kPut, am_handler<hurray_net_server, kPut>, err);
    if (!st) st = set_handler(s, kGetReq, am_handler<hurray_net_server, kGetReq>, err);
    if (st) {
      hurray_net_server_destroy(s);
      return st;
    }
    // No address: this machine only. Any other is the configuration's choice.
    const char *address = config->address != nullptr ? config->address : "127.0.0.1";
    if (hurray_status bst = s->open_bootstrap(address, config->port, err)) {
      hurray_net_server_destroy(s);
      return bst;
    }
    // Beyond loopback, a key (or the explicit choice of none).
    if (!s->loopback && s->key.empty() && !(flags & HURRAY_NET_SERVER_NO_AUTH)) {
      hurray_net_server_destroy(s);
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "%s: a server listening on %s (beyond this machine) needs a shared key "
                  "(config key or key_file), or HURRAY_NET_SERVER_NO_AUTH in its flags",
                  kAuthId, address);
    }
    log_debug("server: listening on %s port %u, offering %zu device tag(s)", address,
              static_cast<unsigned>(s->port), s->offers.size());
    *out = s;
    return HURRAY_OK;
  } catch (...) {
    hurray_net_server_destroy(s);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
}

HURRAY_API void hurray_net_server_destroy(hurray_net_server *s) {
  trace::flush();
  if (s == nullptr) return;
  try {
    if (s->w.worker != nullptr) {
      s->close_bootstrap();
      for (Incoming &in : s->incoming) release_data(s->w.worker, in);
      s->incoming.clear();
      // Landings whose answers wait (N15) are answered now; answers already
      // sent (the last PUT's, typically) get a second to go out.
      for (auto &[ep, c] : s->conns)
        if (!c->dead && !c->acks.empty()) s->send_acks(*c);
      const Deadline drain = Deadline::in(1000);
      while (!s->sends.empty() && !drain.passed()) {
        ucp_worker_progress(s->w.worker);
        std::erase_if(s->sends, [](PendingSend &p) {
          if (ucp_request_check_status(p.request) == UCS_INPROGRESS) return false;
          ucp_request_free(p.request);
          return true;
        });
      }
      // Forced closes complete every request of the endpoint with an error.
      for (auto &[ep, c] : s->conns) {
        c->dead = true;
        if (!c->closed) close_ep(s->w, ep, false, 1000);
        c->closed = true;
      }
      for (auto &t : s->transfers) {
        if (t->request != nullptr) {
          if (ucp_request_check_status(t->request) == UCS_INPROGRESS)
            ucp_request_cancel(s->w.worker, t->request);
          while (ucp_request_check_status(t->request) == UCS_INPROGRESS)
            ucp_worker_progress(s->w.worker);
          ucp_request_free(t->request);
          t->request = nullptr;
          s->finish(*t, UCS_ERR_CANCELED);
        }
      }
      for (PendingSend &p : s->sends) {
        if (ucp_request_check_status(p.request) == UCS_INPROGRESS)
          ucp_request_cancel(s->w.worker, p.request);
        while (ucp_request_check_status(p.request) == UCS_INPROGRESS)
          ucp_worker_progress(s->w.worker);
        ucp_request_free(p.request);
      }
      s->sends.clear();
      s->conns.clear();
    }
    for (hurray_net_received &r : s->landed) hurray_buffer_unref(r.buffer);
    s->landed.clear();
    for (auto &[id, reg] : s->registry) hurray_handoff_release(&reg.held, nullptr);
    s->registry.clear();
    s->w.fini();
    hurray_policy_destroy(s->policy);
    delete s;
  } catch (...) {
    // Nothing above allocates; never let an exception cross the C ABI.
  }
}

HURRAY_API uint16_t hurray_net_server_port(const hurray_net_server *s) {
  return s == nullptr ? 0 : s->port;
}

HURRAY_API hurray_status hurray_net_server_poll(hurray_net_server *s, int32_t timeout_ms,
                                                hurray_net_received *out, hurray_error *err) {
  if (s == nullptr || out == nullptr || out->size < sizeof(hurray_net_received))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_poll: server and out are required, out->size set");
  std::memset(out, 0, sizeof *out);
  out->size = sizeof *out;
  try {
    const Deadline deadline = Deadline::in(timeout_ms);
    for (;;) {
      // Progress while UCX has work, but handle a message as soon as one is
      // queued: a PUT that comes while another's bytes move then has its
      // destination allocated and its receive posted at once, so the
      // transfers of a client's PUTs in flight follow each other without a
      // round trip between them.
      while (s->w.wait(0)) {
        if (!s->incoming.empty()) break;
      }
      s->process();
      if (!s->landed.empty()) {
        *out = s->landed.front();
        s->landed.pop_front();
        --s->stats.live_buffers;
        s->stats.pending = s->landed.size();
        return HURRAY_OK;
      }
      if (timeout_ms == 0 || deadline.passed()) return HURRAY_OK;
      // Messages queued: handle them now. Else sleep until UCX has news (the
      // event fd wakes for moving data too: no busy loop on a shared CPU).
      if (!s->incoming.empty()) continue;
      s->w.wait(deadline.left_ms(100));
    }
  } catch (...) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
}

HURRAY_API hurray_status hurray_net_server_register(hurray_net_server *s, uint64_t buffer_id,
                                                    hurray_buffer *buffer, hurray_error *err) {
  if (s == nullptr || buffer == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_register: server and buffer are required");
  if (s->registry.count(buffer_id) != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_register: id %llu is already registered",
                static_cast<unsigned long long>(buffer_id));
  try {
    Registered reg{buffer, {}, nullptr};
    bool host = false;
    if (hurray_status st = hold(buffer, &reg.held, &host, err)) return st;
    s->registry.emplace(buffer_id, reg);
    return HURRAY_OK;
  } catch (...) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
}

HURRAY_API hurray_status hurray_net_server_unregister(hurray_net_server *s, uint64_t buffer_id,
                                                      hurray_error *err) {
  if (s == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_unregister: server is required");
  auto it = s->registry.find(buffer_id);
  if (it == s->registry.end())
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_unregister: id %llu is not registered",
                static_cast<unsigned long long>(buffer_id));
  hurray_handoff_release(&it->second.held, nullptr);  // GETs in flight hold their own
  s->registry.erase(it);
  return HURRAY_OK;
}

HURRAY_API void hurray_net_server_stats(const hurray_net_server *s, hurray_net_stats *out) {
  if (out == nullptr) return;
  if (s == nullptr) {
    std::memset(out, 0, sizeof *out);
    return;
  }
  *out = s->stats;
}

}  // extern "C"

// ===================================================================== client

namespace {
// A PUT in flight on a client (hurray_net_client_put_start): its header (UCX
// reads it until the send completes), the source it holds, its answer.
struct PutOp {
  uint64_t id = 0;
  Deadline deadline;
  unsigned char header[kPutSize] = {};
  void *send = nullptr;        // the UCX send request, NULL once completed
  ucs_status_t send_st = UCS_OK;  // how the send completed
  bool answered = false;       // the server's answer came
  hurray_status result = HURRAY_OK;  // the answer's status (when answered)
  hurray_error error{};        // the answer's error (when answered and not OK)
  hurray_handoff held{};       // put_buffer_start: the export it holds
  bool holding = false;
  void *staging = nullptr;     // put_buffer_start: the host copy it sends
};
}  // namespace

struct hurray_net_client {
  Worker w;
  ucp_ep_h ep = nullptr;
  bool failed = false;
  ucs_status_t why = UCS_OK;
  hurray_policy *policy = nullptr;
  hurray_context *ctx = nullptr;
  int32_t timeout_ms = 60000;
  uint64_t next_id = 1;
  std::vector<Offer> offers;
  std::deque<Incoming> incoming;
  std::map<uint64_t, std::unique_ptr<PutOp>> puts;  // PUTs in flight, by ticket

  hurray_status lost(hurray_error *err) const {
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: the connection is lost (%s)",
                ucs_status_string(why));
  }
  hurray_status wait_reply(Op op, uint64_t id, const Deadline &d, Incoming *out,
                           hurray_error *err);
  hurray_status send_and_wait(ucs_status_ptr_t req, const Deadline &d, const char *what,
                              hurray_error *err);
  hurray_status start_put(const unsigned char handle[HURRAY_HANDLE_SIZE],
                          const hurray_net_transfer_desc *desc, const void *data,
                          std::unique_ptr<PutOp> op, uint64_t *ticket, hurray_error *err);
  hurray_status check_put(const unsigned char src[HURRAY_HANDLE_SIZE],
                          const hurray_net_transfer_desc *desc,
                          unsigned char wire[HURRAY_HANDLE_SIZE], hurray_error *err);
  bool take_put_answer(Incoming &in);
  void settle_puts();
  void pump();
  bool finished(const PutOp &op) const {
    return op.send == nullptr && (op.answered || op.send_st != UCS_OK || failed);
  }
  hurray_status wait_put(uint64_t ticket, bool block, int32_t *done, const char *who,
                         hurray_error *err);
};

namespace {
void client_ep_error(void *arg, ucp_ep_h, ucs_status_t status) {
  auto *c = static_cast<hurray_net_client *>(arg);
  if (!c->failed) log_debug("client: the connection failed (%s)", ucs_status_string(status));
  c->failed = true;
  c->why = status;
}

bool desc_ok(const hurray_net_transfer_desc *d) {
  return d != nullptr && d->size >= sizeof(hurray_net_transfer_desc) && d->reserved0 == 0 &&
         d->reserved1[0] == 0 && d->reserved1[1] == 0;
}

// What a PUT held for its send: the export, the host copy.
void release_source(PutOp &op) {
  if (op.holding) hurray_handoff_release(&op.held, nullptr);
  op.holding = false;
  std::free(op.staging);
  op.staging = nullptr;
}
}  // namespace

// A PUT_REP or PUT_ACK for PUTs in flight: keep their answers. False when it
// answers none.
bool hurray_net_client::take_put_answer(Incoming &in) {
  if (in.op == kPutAck) {
    // Ids of PUTs that landed (N15); one that is not in flight is ignored,
    // as a PUT_REP for it would be.
    const uint32_t k = put_ack_count(in.header.data(), in.header.size());
    if (k == 0) return false;
    bool any = false;
    for (uint32_t i = 0; i < k; ++i) {
      auto it = puts.find(put_ack_id(in.header.data(), i));
      if (it == puts.end() || it->second->answered) continue;
      it->second->answered = true;
      it->second->result = HURRAY_OK;
      trace::mark('A', it->second->id);
      any = true;
    }
    release_data(w.worker, in);
    return any;
  }
  if (in.op != kPutRep || in.header.size() < kPrefixSize) return false;
  auto it = puts.find(request_id_of(in.header.data()));
  if (it == puts.end() || it->second->answered) return false;
  PutOp &op = *it->second;
  release_data(w.worker, in);
  op.answered = true;
  trace::mark('A', op.id);
  Reply r;
  if (!parse_reply(in.header.data(), in.header.size(), kPutRep, &r)) {
    op.result = fail(&op.error, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                     "hurray-net: malformed PUT answer");
    return true;
  }
  op.result = static_cast<hurray_status>(r.status);
  if (r.status != HURRAY_OK) copy_error(r, &op.error);
  return true;
}

// Sends that completed: free their request and what they held.
void hurray_net_client::settle_puts() {
  for (auto &[id, op] : puts) {
    if (op->send == nullptr) continue;
    const ucs_status_t st = ucp_request_check_status(op->send);
    if (st == UCS_INPROGRESS) continue;
    ucp_request_free(op->send);
    op->send = nullptr;
    op->send_st = st;
    release_source(*op);
  }
}

// One round of progress for the PUTs in flight: UCX, their answers, their
// sends. Other answers are to calls that gave up: dropped.
void hurray_net_client::pump() {
  while (w.wait(0)) {
    if (!incoming.empty()) break;  // an answer: the caller may start the next PUT now
  }
  while (!incoming.empty()) {
    Incoming in = std::move(incoming.front());
    incoming.pop_front();
    if (!take_put_answer(in)) release_data(w.worker, in);
  }
  settle_puts();
}

hurray_status hurray_net_client::wait_reply(Op op, uint64_t id, const Deadline &d, Incoming *out,
                                            hurray_error *err) {
  for (;;) {
    while (w.wait(0)) {
    }
    while (!incoming.empty()) {
      Incoming in = std::move(incoming.front());
      incoming.pop_front();
      if (in.op == op && in.header.size() >= kPrefixSize && request_id_of(in.header.data()) == id) {
        *out = std::move(in);
        return HURRAY_OK;
      }
      // The answer of a PUT in flight is kept for it; others are to calls
      // that gave up.
      if (!take_put_answer(in)) release_data(w.worker, in);
    }
    settle_puts();
    if (failed) return lost(err);
    if (d.passed())
      return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                  "hurray-net: no answer from the server within %d ms", timeout_ms);
    w.wait(d.left_ms(100));
  }
}

hurray_status hurray_net_client::send_and_wait(ucs_status_ptr_t req, const Deadline &d,
                                               const char *what, hurray_error *err) {
  const ucs_status_t st = w.wait_request(req, d);
  if (st == UCS_OK) return HURRAY_OK;
  if (failed) return lost(err);
  if (st == UCS_ERR_TIMED_OUT) {
    // The bytes may still be wanted by UCX: the connection cannot be reused.
    failed = true;
    why = st;
  }
  return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: %s failed: %s", what,
              ucs_status_string(st));
}

// Validation before anything is sent: the source handle and the destination
// handle under the client's transport, the destination against the HELLO.
hurray_status hurray_net_client::check_put(const unsigned char src[HURRAY_HANDLE_SIZE],
                                           const hurray_net_transfer_desc *desc,
                                           unsigned char wire[HURRAY_HANDLE_SIZE],
                                           hurray_error *err) {
  if (hurray_status st = hurray_table_validate(src, HURRAY_HANDLE_SIZE, policy, err)) return st;
  hurray_buffer_handle h;
  hurray_handle_decode(src, HURRAY_HANDLE_SIZE, &h, nullptr);
  h.device_tag = desc->device_tag;
  h.memory_class = desc->memory_class;
  hurray_handle_encode(&h, wire, HURRAY_HANDLE_SIZE, nullptr);
  if (hurray_status st = hurray_table_validate(wire, HURRAY_HANDLE_SIZE, policy, err)) return st;
  return check_offer(offers, desc->device_tag, desc->memory_class, desc->device_ordinal,
                     "the server", err);
}

// Send a validated PUT (header + bytes) and keep it in flight under a new
// ticket. On an error, what `op` holds is released and no ticket is issued.
hurray_status hurray_net_client::start_put(const unsigned char handle[HURRAY_HANDLE_SIZE],
                                           const hurray_net_transfer_desc *desc,
                                           const void *data, std::unique_ptr<PutOp> op,
                                           uint64_t *ticket, hurray_error *err) {
  hurray_buffer_handle h;
  hurray_handle_decode(handle, HURRAY_HANDLE_SIZE, &h, nullptr);
  PutHeader ph;
  ph.request_id = next_id++;
  ph.buffer_id = desc->buffer_id;
  std::memcpy(ph.handle, handle, HURRAY_HANDLE_SIZE);
  ph.device_ordinal = desc->device_ordinal;
  // The PUTs in flight with this one (tickets not yet waited for): the server
  // may answer a window's PUTs together (N15).
  ph.in_flight = static_cast<uint32_t>(std::min<size_t>(puts.size() + 1, UINT32_MAX));
  op->id = ph.request_id;
  op->deadline = Deadline::in(timeout_ms);
  encode(ph, op->header);
  const auto n = static_cast<size_t>(h.byte_size);
  uint32_t flags = UCP_AM_SEND_FLAG_REPLY;
  if (n >= kRndvMin) flags |= UCP_AM_SEND_FLAG_RNDV;
  PutOp &o = *op;
  try {
    puts.emplace(o.id, std::move(op));
  } catch (...) {  // nothing sent yet
    if (op) release_source(*op);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
  const bool traced = trace::on();
  const ucs_status_ptr_t req =
      am_send(ep, kPut, o.header, sizeof o.header, n ? data : nullptr, n, flags,
              traced ? trace::sent_cb : nullptr, traced ? trace::id_arg(o.id) : nullptr);
  trace::mark('P', o.id);
  if (req == nullptr) trace::mark('S', o.id);
  if (UCS_PTR_IS_ERR(req)) {
    release_source(o);
    puts.erase(o.id);
    if (failed) return lost(err);
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: PUT failed: %s",
                ucs_status_string(UCS_PTR_STATUS(req)));
  }
  o.send = req;
  if (req == nullptr) release_source(o);  // sent already (small PUTs)
  *ticket = o.id;
  return HURRAY_OK;
}

// put_test (block false) and put_wait (block true) on `ticket`.
hurray_status hurray_net_client::wait_put(uint64_t ticket, bool block, int32_t *done,
                                          const char *who, hurray_error *err) {
  auto it = puts.find(ticket);
  if (it == puts.end())
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: ticket %llu is not a PUT in flight on this client (never started, or "
                "already waited for)",
                who, static_cast<unsigned long long>(ticket));
  PutOp &op = *it->second;
  for (;;) {
    pump();
    if (finished(op) || op.deadline.passed()) break;
    if (!block) {
      *done = 0;
      return HURRAY_OK;
    }
    w.wait(op.deadline.left_ms(100));
  }
  if (!block) {
    *done = 1;
    return HURRAY_OK;
  }
  // The result, then the ticket is retired.
  hurray_status st;
  if (op.answered && op.send == nullptr && op.send_st == UCS_OK) {
    st = op.result;
    if (st != HURRAY_OK && err != nullptr) *err = op.error;
  } else if (op.send != nullptr) {
    // The deadline passed while UCX still reads the source: stop it; the
    // connection cannot be reused (the caller's memory is never read after
    // this call returns).
    ucp_request_cancel(w.worker, op.send);
    while (ucp_request_check_status(op.send) == UCS_INPROGRESS) ucp_worker_progress(w.worker);
    ucp_request_free(op.send);
    op.send = nullptr;
    release_source(op);
    if (!failed) {
      failed = true;
      why = UCS_ERR_TIMED_OUT;
    }
    st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: PUT failed: %s",
              ucs_status_string(UCS_ERR_TIMED_OUT));
  } else if (op.answered) {
    // Answered, though the send reported an error: the answer says what landed.
    st = op.result;
    if (st != HURRAY_OK && err != nullptr) *err = op.error;
  } else if (failed) {
    st = lost(err);
  } else if (op.send_st != UCS_OK) {
    st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: PUT failed: %s",
              ucs_status_string(op.send_st));
  } else {
    st = fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
              "hurray-net: no answer from the server within %d ms", timeout_ms);
  }
  puts.erase(it);
  return st;
}

extern "C" {

HURRAY_API hurray_status hurray_net_client_connect(const hurray_net_client_config *config,
                                                   hurray_net_client **out, hurray_error *err) {
  // A configuration may end at `context` (before the key was added).
  if (config == nullptr || out == nullptr ||
      config->size < offsetof(hurray_net_client_config, key) || config->reserved0 != 0 ||
      config->address == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_connect: config (with an address) and out are required");
  *out = nullptr;
  hurray_net_client *c = nullptr;
  try {
    c = new hurray_net_client;
    c->ctx = config->context;
    c->timeout_ms = config->timeout_ms == 0 ? 60000 : config->timeout_ms;
    hurray_status st = make_policy(config->transport, &c->policy, err);
    if (!st) st = c->w.init(err);
    if (!st) st = set_handler(c, kHelloRep, am_handler<hurray_net_client, kHelloRep>, err);
    if (!st) st = set_handler(c, kPutRep, am_handler<hurray_net_client, kPutRep>, err);
    if (!st) st = set_handler(c, kPutAck, am_handler<hurray_net_client, kPutAck>, err);
    if (!st) st = set_handler(c, kGetRep, am_handler<hurray_net_client, kGetRep>, err);
    const Deadline d = Deadline::in(c->timeout_ms);
    // The bootstrap: admitted, the key proved both ways, an endpoint to the
    // server's worker.
    Key key;
    if (!st && config->size >= sizeof(hurray_net_client_config))
      st = load_key(config->key, config->key_file, "hurray_net_client_connect", &key, err);
    if (!st)
      st = bootstrap_connect(c->w, config->address, config->port, key, d, client_ep_error, c,
                             &c->ep, err);
    if (st) {
      hurray_net_client_destroy(c);
      return st;
    }
    // HELLO: what the server offers.
    const uint64_t id = c->next_id++;
    unsigned char hello[kPrefixSize];
    put_prefix(hello, kHelloReq, id);
    st = c->send_and_wait(
        am_send(c->ep, kHelloReq, hello, sizeof hello, nullptr, 0, UCP_AM_SEND_FLAG_REPLY), d,
        "HELLO", err);
    Incoming in;
    if (!st) st = c->wait_reply(kHelloRep, id, d, &in, err);
    if (st) {
      if (st == HURRAY_E_IO && err != nullptr) {
        char why[HURRAY_ERROR_MESSAGE_SIZE];
        std::snprintf(why, sizeof why, "%s", err->message);
        fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray-net: cannot connect to %s:%u: %s",
             config->address, static_cast<unsigned>(config->port), why);
      }
      hurray_net_client_destroy(c);
      return st;
    }
    release_data(c->w.worker, in);
    const unsigned char *p = in.header.data();
    uint32_t n = 0, server_transport = 0;
    if (!parse_hello_rep(p, in.header.size(), &server_transport, &n)) {
      hurray_net_client_destroy(c);
      return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "hurray-net: %s:%u does not answer HELLO as protocol %u", config->address,
                  static_cast<unsigned>(config->port), static_cast<unsigned>(kVersion));
    }
    for (uint32_t i = 0; i < n; ++i) {
      const HelloDevice dev = hello_device(p, i);
      c->offers.push_back({dev.tag, dev.count, dev.classes});
    }
    log_debug("client: connected to %s:%u, the server offers %u device tag(s) (transport %u)",
              config->address, static_cast<unsigned>(config->port), n, server_transport);
    *out = c;
    return HURRAY_OK;
  } catch (...) {
    hurray_net_client_destroy(c);
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
}

HURRAY_API void hurray_net_client_destroy(hurray_net_client *c) {
  trace::flush();
  if (c == nullptr) return;
  try {
    if (c->w.worker != nullptr) {
      for (Incoming &in : c->incoming) release_data(c->w.worker, in);
      c->incoming.clear();
      // PUTs whose bytes are still going out are abandoned: a forced close
      // completes their sends with an error (the server drops what has not
      // landed); else the close flushes.
      bool sending = false;
      for (auto &[id, op] : c->puts) sending = sending || op->send != nullptr;
      if (c->ep != nullptr) close_ep(c->w, c->ep, !c->failed && !sending, 2000);
      const Deadline d = Deadline::in(2000);
      for (auto &[id, op] : c->puts) {
        if (op->send == nullptr) continue;
        while (ucp_request_check_status(op->send) == UCS_INPROGRESS && !d.passed())
          c->w.wait(1);
        ucp_request_free(op->send);  // (released by UCX when it completes)
        op->send = nullptr;
      }
    }
    c->w.fini();  // nothing reads a PUT's source after this
    for (auto &[id, op] : c->puts) release_source(*op);
    c->puts.clear();
    hurray_policy_destroy(c->policy);
    delete c;
  } catch (...) {
  }
}

HURRAY_API hurray_status hurray_net_client_peer_devices(const hurray_net_client *c,
                                                        hurray_net_device *out, size_t capacity,
                                                        size_t *n_devices, hurray_error *err) {
  if (c == nullptr || (capacity > 0 && out == nullptr))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_peer_devices: client required, out for capacity > 0");
  for (size_t i = 0; i < c->offers.size() && i < capacity; ++i) {
    std::memset(&out[i], 0, sizeof out[i]);
    out[i].device_tag = c->offers[i].tag;
    out[i].count = c->offers[i].count;
    out[i].memory_classes = c->offers[i].classes;
  }
  if (n_devices != nullptr) *n_devices = c->offers.size();
  return HURRAY_OK;
}

}  // extern "C"

namespace {
// hurray_net_client_put_start and hurray_net_client_put: validate, send.
hurray_status put_handoff(hurray_net_client *c, const hurray_handoff *source,
                          const hurray_net_transfer_desc *desc, uint64_t *ticket,
                          const char *who, hurray_error *err) {
  if (c == nullptr || source == nullptr || !desc_ok(desc) || ticket == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: client, source and desc (from HURRAY_NET_TRANSFER_DESC_INIT) are required",
                who);
  if (c->failed) return c->lost(err);
  try {
    unsigned char wire[HURRAY_HANDLE_SIZE];
    if (hurray_status st = c->check_put(source->handle, desc, wire, err)) return st;
    if (hurray_status st = hurray_handoff_check(source, c->policy, err)) return st;
    hurray_buffer_handle h;
    hurray_handle_decode(source->handle, HURRAY_HANDLE_SIZE, &h, nullptr);
    if (h.byte_size > 0 && !host_addressable(h.device_tag, h.memory_class, source->flags))
      return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                  "%s: the source's %s memory is not host-addressable and this UCX moves host "
                  "memory only; use hurray_net_client_put_buffer, which stages it",
                  who, hurray_device_tag_name(h.device_tag));
    return c->start_put(wire, desc, source->data, std::make_unique<PutOp>(), ticket, err);
  } catch (...) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
}

// hurray_net_client_put_buffer_start and hurray_net_client_put_buffer: hold
// an export (staged to host memory when needed), validate, send.
hurray_status put_buffer(hurray_net_client *c, hurray_buffer *source,
                         const hurray_net_transfer_desc *desc, uint64_t *ticket, const char *who,
                         hurray_error *err) {
  if (c == nullptr || source == nullptr || !desc_ok(desc) || ticket == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: client, source and desc are required", who);
  if (c->failed) return c->lost(err);
  std::unique_ptr<PutOp> op;
  try {
    op = std::make_unique<PutOp>();
  } catch (...) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
  bool host = false;
  if (hurray_status st = hold(source, &op->held, &host, err)) return st;
  op->holding = true;
  hurray_status st;
  try {
    unsigned char wire[HURRAY_HANDLE_SIZE];
    st = c->check_put(op->held.handle, desc, wire, err);
    if (!st) st = hurray_handoff_check(&op->held, c->policy, err);
    hurray_buffer_handle h;
    hurray_handle_decode(op->held.handle, HURRAY_HANDLE_SIZE, &h, nullptr);
    const void *data = op->held.data;
    if (!st && !host && h.byte_size > 0) {
      op->staging = alloc_staging(static_cast<size_t>(h.byte_size));
      if (op->staging == nullptr)
        st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                  "hurray-net: no host memory to stage %llu bytes",
                  static_cast<unsigned long long>(h.byte_size));
      else
        st = hurray_buffer_copy_to_host(source, 0, op->staging, h.byte_size, err);
      data = op->staging;
    }
    if (!st) return c->start_put(wire, desc, data, std::move(op), ticket, err);
  } catch (...) {
    st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
  if (op) release_source(*op);
  return st;
}

hurray_status put_wait(hurray_net_client *c, uint64_t ticket, const char *who, hurray_error *err) {
  try {
    return c->wait_put(ticket, true, nullptr, who, err);
  } catch (...) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
}
}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_net_client_put(hurray_net_client *c, const hurray_handoff *source,
                                               const hurray_net_transfer_desc *desc,
                                               hurray_error *err) {
  uint64_t ticket = 0;
  if (hurray_status st = put_handoff(c, source, desc, &ticket, "hurray_net_client_put", err))
    return st;
  return put_wait(c, ticket, "hurray_net_client_put", err);
}

HURRAY_API hurray_status hurray_net_client_put_buffer(hurray_net_client *c, hurray_buffer *source,
                                                      const hurray_net_transfer_desc *desc,
                                                      hurray_error *err) {
  uint64_t ticket = 0;
  if (hurray_status st = put_buffer(c, source, desc, &ticket, "hurray_net_client_put_buffer", err))
    return st;
  return put_wait(c, ticket, "hurray_net_client_put_buffer", err);
}

HURRAY_API hurray_status hurray_net_client_put_start(hurray_net_client *c,
                                                     const hurray_handoff *source,
                                                     const hurray_net_transfer_desc *desc,
                                                     uint64_t *ticket, hurray_error *err) {
  if (ticket != nullptr) *ticket = 0;
  return put_handoff(c, source, desc, ticket, "hurray_net_client_put_start", err);
}

HURRAY_API hurray_status hurray_net_client_put_buffer_start(hurray_net_client *c,
                                                            hurray_buffer *source,
                                                            const hurray_net_transfer_desc *desc,
                                                            uint64_t *ticket, hurray_error *err) {
  if (ticket != nullptr) *ticket = 0;
  return put_buffer(c, source, desc, ticket, "hurray_net_client_put_buffer_start", err);
}

HURRAY_API hurray_status hurray_net_client_put_test(hurray_net_client *c, uint64_t ticket,
                                                    int32_t *done, hurray_error *err) {
  if (done != nullptr) *done = 0;
  if (c == nullptr || done == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_put_test: client and done are required");
  try {
    return c->wait_put(ticket, false, done, "hurray_net_client_put_test", err);
  } catch (...) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
}

HURRAY_API hurray_status hurray_net_client_put_wait(hurray_net_client *c, uint64_t ticket,
                                                    hurray_error *err) {
  if (c == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_put_wait: client is required");
  return put_wait(c, ticket, "hurray_net_client_put_wait", err);
}

HURRAY_API hurray_status hurray_net_client_get(hurray_net_client *c,
                                               const hurray_net_transfer_desc *desc,
                                               hurray_buffer **out, hurray_error *err) {
  if (c == nullptr || out == nullptr || !desc_ok(desc))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_get: client, desc and out are required");
  *out = nullptr;
  if (c->failed) return c->lost(err);
  Incoming in;
  hurray_buffer *b = nullptr;
  void *staging = nullptr;
  hurray_status st = HURRAY_OK;
  try {
    // This machine is the receiver: it must have the declared device.
    const std::vector<Offer> mine = local_offers(c->ctx, {desc->device_tag});
    if ((st = check_offer(mine, desc->device_tag, desc->memory_class, desc->device_ordinal,
                          "this machine", err)))
      return st;
    const uint64_t id = c->next_id++;
    unsigned char req[kGetSize];
    put_prefix(req, kGetReq, id);
    put_u64(req + kPrefixSize, desc->buffer_id);
    const Deadline d = Deadline::in(c->timeout_ms);
    if ((st = c->send_and_wait(
             am_send(c->ep, kGetReq, req, sizeof req, nullptr, 0, UCP_AM_SEND_FLAG_REPLY), d,
             "GET", err)))
      return st;
    if ((st = c->wait_reply(kGetRep, id, d, &in, err))) return st;
    Reply r;
    if (!parse_reply(in.header.data(), in.header.size(), kGetRep, &r)) {
      st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE, "hurray-net: malformed GET answer");
    } else {
      if (r.status != HURRAY_OK) {
        copy_error(r, err);
        st = static_cast<hurray_status>(r.status);
      }
    }
    // The received handle, under this side's rules (BP-SYNC-NET...).
    if (!st) st = hurray_table_validate(r.handle, HURRAY_HANDLE_SIZE, c->policy, err);
    hurray_buffer_handle h{};
    if (!st) {
      hurray_handle_decode(r.handle, HURRAY_HANDLE_SIZE, &h, nullptr);
      if (h.byte_size != in.length)
        st = fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "hurray-net: truncated transfer: the handle declares %llu bytes, %zu came",
                  static_cast<unsigned long long>(h.byte_size), in.length);
    }
    if (!st) {
      h.device_tag = desc->device_tag;
      h.memory_class = desc->memory_class;
      st = alloc_exact(c->ctx, h, desc->device_ordinal, &b, err);
    }
    void *dst = nullptr;
    if (!st) {
      hurray_handoff probe;
      bool host = false;
      st = hold(b, &probe, &host, err);
      if (!st) {
        dst = probe.data;
        hurray_handoff_release(&probe, nullptr);
        if (host && h.device_tag == HURRAY_DEVICE_CPU) advise_huge(dst, in.length);
        if (!host && in.length > 0) {
          staging = alloc_staging(in.length);
          if (staging == nullptr)
            st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                      "hurray-net: no host memory to stage %zu bytes", in.length);
          dst = staging;
        }
      }
    }
    if (!st && in.length > 0) {
      if (in.rndv) {
        in.ucx_owned = false;
        const ucs_status_t us = c->w.wait_request(recv_data(c->w.worker, in.data, dst, in.length), d);
        if (us != UCS_OK)
          st = c->failed ? c->lost(err)
                         : fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                                "hurray-net: the GET transfer was cut off: %s",
                                ucs_status_string(us));
      } else {
        std::memcpy(dst, in.data, in.length);
      }
    }
    if (!st && staging != nullptr) st = hurray_buffer_copy_from_host(b, 0, staging, in.length, err);
  } catch (...) {
    st = fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
  release_data(c->w.worker, in);
  std::free(staging);
  if (st) {
    hurray_buffer_unref(b);
    return st;
  }
  *out = b;
  return HURRAY_OK;
}

}  // extern "C"
