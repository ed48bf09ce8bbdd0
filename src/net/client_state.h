// The client's state (hurray_net_client), shared by client.cpp (the
// connection and its progress) and client_transfer.cpp (PUT and GET): the
// worker and the endpoint to the server, what the server offers (its HELLO
// answer), the messages queued by the handlers, and the PUTs in flight,
// each a PutOp under its ticket.
#pragma once

#include "internal.h"

#include <deque>
#include <map>
#include <memory>
#include <vector>

namespace hurray::net {

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

// What a PUT held for its send: the export, the host copy.
void release_source(PutOp &op);

}  // namespace hurray::net

struct hurray_net_client {
  using Deadline = hurray::net::Deadline;
  using Incoming = hurray::net::Incoming;
  using Offer = hurray::net::Offer;
  using Op = hurray::net::Op;
  using PutOp = hurray::net::PutOp;

  hurray::net::Worker w;
  ucp_ep_h ep = nullptr;
  bool failed = false;
  ucs_status_t why = UCS_OK;
  hurray_policy *policy = nullptr;
  hurray_context *ctx = nullptr;
  int32_t timeout_ms = 60000;
  uint64_t next_id = 1;
  std::vector<Offer> offers;
  std::vector<hurray::net::HelloId> ids;  // the identities of the server's devices (its HELLO)
  std::deque<Incoming> incoming;
  std::map<uint64_t, std::unique_ptr<PutOp>> puts;  // PUTs in flight, by ticket

  hurray_status lost(hurray_error *err) const {
    return hurray::net::fail(err, HURRAY_E_IO, HURRAY_RULE_NONE,
                             "hurray-net: the connection is lost (%s)", ucs_status_string(why));
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
  // The readiness descriptor (client_fd.cpp; made at the first
  // hurray_net_client_fd): an epoll set of UCX's event fd and `wake`, an
  // eventfd readable while a PUT has finished and not been waited for.
  int epfd = -1, wake = -1;
  hurray_status make_fd(hurray_error *err);
  void rearm() noexcept;
  void close_fd() noexcept;
};
