// The client's transfers: a PUT validated before anything is sent (the
// source and destination handles under the transport's rules, the
// destination against the server's HELLO), sent under a ticket and waited
// for or tested (hurray_net_client_put, _put_buffer, their _start forms,
// _put_test, _put_wait; a buffer's bytes staged through host memory where
// needed), and a GET received into exactly the declared device of this
// machine (hurray_net_client_get).
#include "barrier.h"
#include "client_state.h"
#include "../core/struct_size.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

using namespace hurray::net;

namespace {
bool desc_ok(const hurray_net_transfer_desc *d) {
  return d != nullptr && d->size >= sizeof(hurray_net_transfer_desc) && d->reserved0 == 0 &&
         d->reserved1[0] == 0 && d->reserved1[1] == 0;
}

// A desc below its first published size (../core/struct_size.h), refused by
// name and both sizes before the generic check.
hurray_status check_desc_size(const hurray_net_transfer_desc *d, const char *who,
                              hurray_error *err) {
  return hurray::detail::refuse_below_first(d, who, err, fail);
}
}  // namespace

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
  if (hurray_status st = guarded(
          err, [&] { puts.emplace(o.id, std::move(op)); return HURRAY_OK; },
          [&] { if (op) release_source(*op); }))  // nothing sent yet
    return st;
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

namespace {
// hurray_net_client_put_start and hurray_net_client_put: validate, send.
hurray_status put_handoff(hurray_net_client *c, const hurray_handoff *source,
                          const hurray_net_transfer_desc *desc, uint64_t *ticket,
                          const char *who, hurray_error *err) {
  if (hurray_status st = check_desc_size(desc, who, err)) return st;
  if (c == nullptr || source == nullptr || !desc_ok(desc) || ticket == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: client, source and desc (from HURRAY_NET_TRANSFER_DESC_INIT) are required",
                who);
  if (c->failed) return c->lost(err);
  return guarded(err, [&] {
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
  });
}

// hurray_net_client_put_buffer_start and hurray_net_client_put_buffer: hold
// an export (staged to host memory when needed), validate, send.
hurray_status put_buffer(hurray_net_client *c, hurray_buffer *source,
                         const hurray_net_transfer_desc *desc, uint64_t *ticket, const char *who,
                         hurray_error *err) {
  if (hurray_status st = check_desc_size(desc, who, err)) return st;
  if (c == nullptr || source == nullptr || !desc_ok(desc) || ticket == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "%s: client, source and desc are required", who);
  if (c->failed) return c->lost(err);
  std::unique_ptr<PutOp> op;
  if (hurray_status st = guarded(err, [&] { op = std::make_unique<PutOp>(); return HURRAY_OK; }))
    return st;
  bool host = false;
  if (hurray_status st = hold(source, &op->held, &host, err)) return st;
  op->holding = true;
  hurray_status st = HURRAY_OK;
  // what is held is released below, also when the body throws
  st = guarded(err, [&] {
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
    return st;
  });
  if (op) release_source(*op);
  return st;
}

hurray_status put_wait(hurray_net_client *c, uint64_t ticket, const char *who, hurray_error *err) {
  return guarded(err, [&] { return c->wait_put(ticket, true, nullptr, who, err); });
}
}  // namespace

namespace {
// Makes the client's readiness descriptor tell the truth when a call returns.
struct Rearm {
  hurray_net_client *c;
  ~Rearm() {
    if (c != nullptr) c->rearm();
  }
};

// A PUT of either source, by the function that starts it.
hurray_status put_start(hurray_net_client *c, const hurray_handoff *source,
                        const hurray_net_transfer_desc *desc, uint64_t *ticket, const char *who,
                        hurray_error *err) {
  return put_handoff(c, source, desc, ticket, who, err);
}
hurray_status put_start(hurray_net_client *c, hurray_buffer *source,
                        const hurray_net_transfer_desc *desc, uint64_t *ticket, const char *who,
                        hurray_error *err) {
  return put_buffer(c, source, desc, ticket, who, err);
}

// hurray_net_client_put and hurray_net_client_put_buffer: start, then wait.
template <class Source>
hurray_status put_and_wait(hurray_net_client *c, Source *source,
                           const hurray_net_transfer_desc *desc, const char *who,
                           hurray_error *err) {
  const Rearm after{c};  // the readiness descriptor, once this call is done
  uint64_t ticket = 0;
  if (hurray_status st = put_start(c, source, desc, &ticket, who, err)) return st;
  return put_wait(c, ticket, who, err);
}
}  // namespace

extern "C" {

HURRAY_API hurray_status hurray_net_client_put(hurray_net_client *c, const hurray_handoff *source,
                                               const hurray_net_transfer_desc *desc,
                                               hurray_error *err) {
  return put_and_wait(c, source, desc, "hurray_net_client_put", err);
}

HURRAY_API hurray_status hurray_net_client_put_buffer(hurray_net_client *c, hurray_buffer *source,
                                                      const hurray_net_transfer_desc *desc,
                                                      hurray_error *err) {
  return put_and_wait(c, source, desc, "hurray_net_client_put_buffer", err);
}

HURRAY_API hurray_status hurray_net_client_put_start(hurray_net_client *c,
                                                     const hurray_handoff *source,
                                                     const hurray_net_transfer_desc *desc,
                                                     uint64_t *ticket, hurray_error *err) {
  const Rearm after{c};  // the readiness descriptor, once this call is done
  if (ticket != nullptr) *ticket = 0;
  return put_handoff(c, source, desc, ticket, "hurray_net_client_put_start", err);
}

HURRAY_API hurray_status hurray_net_client_put_buffer_start(hurray_net_client *c,
                                                            hurray_buffer *source,
                                                            const hurray_net_transfer_desc *desc,
                                                            uint64_t *ticket, hurray_error *err) {
  const Rearm after{c};  // the readiness descriptor, once this call is done
  if (ticket != nullptr) *ticket = 0;
  return put_buffer(c, source, desc, ticket, "hurray_net_client_put_buffer_start", err);
}

HURRAY_API hurray_status hurray_net_client_put_test(hurray_net_client *c, uint64_t ticket,
                                                    int32_t *done, hurray_error *err) {
  const Rearm after{c};  // the readiness descriptor, once this call is done
  if (done != nullptr) *done = 0;
  if (c == nullptr || done == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_put_test: client and done are required");
  return guarded(err,
                 [&] { return c->wait_put(ticket, false, done, "hurray_net_client_put_test", err); });
}

HURRAY_API hurray_status hurray_net_client_put_wait(hurray_net_client *c, uint64_t ticket,
                                                    hurray_error *err) {
  const Rearm after{c};  // the readiness descriptor, once this call is done
  if (c == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_put_wait: client is required");
  return put_wait(c, ticket, "hurray_net_client_put_wait", err);
}

HURRAY_API hurray_status hurray_net_client_get(hurray_net_client *c,
                                               const hurray_net_transfer_desc *desc,
                                               hurray_buffer **out, hurray_error *err) {
  const Rearm after{c};  // the readiness descriptor, once this call is done
  if (hurray_status st = check_desc_size(desc, "hurray_net_client_get", err)) return st;
  if (c == nullptr || out == nullptr || !desc_ok(desc))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_get: client, desc and out are required");
  *out = nullptr;
  if (c->failed) return c->lost(err);
  Incoming in;
  hurray_buffer *b = nullptr;
  void *staging = nullptr;
  hurray_status st = HURRAY_OK;
  // what was received and staged is given back below, also when the body throws
  st = guarded(err, [&] {
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
    return st;
  });
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
