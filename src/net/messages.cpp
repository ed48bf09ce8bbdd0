// The active-message plumbing of the server and the client
// (src/net/internal.h): what a UCX handler saw queued for processing after
// progress (the only work done inside UCX's callbacks), the receive of a
// rendezvous message's bytes, and an answer's status, rule and message
// turned into a hurray_error and back.
#include "barrier.h"
#include "internal.h"

#include <cstdio>
#include <cstring>
#include <deque>
#include <utility>

namespace hurray::net {

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

ucs_status_t queue_am(std::deque<Incoming> *q, Op op, const void *header, size_t header_length,
                      void *data, size_t length, const ucp_am_recv_param_t *param) {
  // A UCX callback: the layer's barrier, with the status UCX understands.
  return barrier([&] {
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
  }, [] { return UCS_ERR_NO_MEMORY; });  // the sender's request fails with it
}

ucs_status_ptr_t recv_data(ucp_worker_h w, void *desc, void *dst, size_t length,
                           uint64_t trace_id) {
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

}  // namespace hurray::net
