// The answers the server sends (docs/spec/network.md): one at a time
// (send_reply), as PUT_ACKs of a window (send_acks, N15), each kept until
// UCX is done with it and counted as its connection's unsent answers
// (queue_send; the limit is guard.cpp's may_answer).
#include "internal.h"
#include "server_state.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <utility>

using namespace hurray::net;

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

void hurray_net_server::queue_send(ucp_ep_h ep, Conn *c, Op op,
                                   std::unique_ptr<unsigned char[]> bytes, size_t n) {
  if (ep == nullptr || (c != nullptr && !may_answer(*c))) return;
  // Kept: not a boundary but the server going on without this answer.
  try {
    sends.reserve(sends.size() + 1);  // so that keeping it below cannot fail
  } catch (...) {
    return;  // no memory: the answer is not sent
  }
  ucs_status_ptr_t req = am_send(ep, op, bytes.get(), n, nullptr, 0, 0);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) return;
  std::shared_ptr<uint32_t> count;
  if (c != nullptr) {
    count = c->unsent;
    ++*count;
  }
  sends.push_back({req, std::move(bytes), std::move(count)});
}
