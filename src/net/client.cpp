// libhurray-net's client (include/hurray_net.h): the connection
// (hurray_net_client_connect: the bootstrap, then HELLO for what the server
// offers; hurray_net_client_destroy, which abandons or flushes the PUTs in
// flight), the progress that takes the server's answers (the PUT_REPs and
// PUT_ACKs of PUTs in flight kept for them, the answer a call waits for),
// and hurray_net_client_peer_devices. Its state is in client_state.h; PUT
// and GET in client_transfer.cpp.
#include "barrier.h"
#include "bootstrap.h"
#include "client_state.h"
#include "../core/struct_size.h"

#include <arpa/inet.h>

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>
#include <utility>

using namespace hurray::net;

namespace hurray::net {
void release_source(PutOp &op) {
  if (op.holding) hurray_handoff_release(&op.held, nullptr);
  op.holding = false;
  std::free(op.staging);
  op.staging = nullptr;
}
}  // namespace hurray::net

namespace {
void client_ep_error(void *arg, ucp_ep_h, ucs_status_t status) {
  auto *c = static_cast<hurray_net_client *>(arg);
  if (!c->failed) log_debug("client: the connection failed (%s)", ucs_status_string(status));
  c->failed = true;
  c->why = status;
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

extern "C" {

HURRAY_API hurray_status hurray_net_client_connect(const hurray_net_client_config *config,
                                                   hurray_net_client **out, hurray_error *err) {
  if (hurray_status st =
          hurray::detail::refuse_below_first(config, "hurray_net_client_connect", err, fail))
    return st;
  if (config == nullptr || out == nullptr || config->reserved0 != 0 ||
      config->address == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_connect: config (with an address) and out are required");
  *out = nullptr;
  hurray_net_client *c = nullptr;
  return guarded(err, [&] {
    c = new hurray_net_client;
    c->ctx = config->context;
    c->timeout_ms = config->timeout_ms == 0 ? 60000 : config->timeout_ms;
    hurray_status st = make_policy(config->transport, &c->policy, err);
    // UCX on the interface the server is reached through only (as a
    // server's, on its bootstrap's), unless UCX_NET_DEVICES says otherwise:
    // no UCX listener of the client beyond that interface.
    char local[INET6_ADDRSTRLEN] = {};
    const bool routed = local_address_for(config->address, config->port, local, sizeof local);
    if (!st) st = c->w.init(err, routed ? local : nullptr);
    if (!st) st = set_handler(c, kHelloRep, am_handler<hurray_net_client, kHelloRep>, err);
    if (!st) st = set_handler(c, kPutRep, am_handler<hurray_net_client, kPutRep>, err);
    if (!st) st = set_handler(c, kPutAck, am_handler<hurray_net_client, kPutAck>, err);
    if (!st) st = set_handler(c, kGetRep, am_handler<hurray_net_client, kGetRep>, err);
    const Deadline d = Deadline::in(c->timeout_ms);
    // The bootstrap: admitted, the key proved both ways, an endpoint to the
    // server's worker.
    Key key;
    if (!st)
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
    uint32_t m = 0;  // the devices' identities (none from a server before them)
    if (!parse_hello_ids(p, in.header.size(), n, &m)) {
      hurray_net_client_destroy(c);
      return fail(err, HURRAY_E_PROTOCOL, HURRAY_RULE_NONE,
                  "hurray-net: %s:%u answers HELLO with malformed device identities",
                  config->address, static_cast<unsigned>(config->port));
    }
    for (uint32_t i = 0; i < n; ++i) {
      const HelloDevice dev = hello_device(p, i);
      c->offers.push_back({dev.tag, dev.count, dev.classes});
    }
    for (uint32_t i = 0; i < m; ++i) c->ids.push_back(hello_id(p, n, i));
    log_debug("client: connected to %s:%u, the server offers %u device tag(s) (transport %u)",
              config->address, static_cast<unsigned>(config->port), n, server_transport);
    *out = c;
    return HURRAY_OK;
  }, [&] { hurray_net_client_destroy(c); });  // what was built, on an exception
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
    c->close_fd();
    c->w.fini();  // nothing reads a PUT's source after this
    for (auto &[id, op] : c->puts) release_source(*op);
    c->puts.clear();
    hurray_policy_destroy(c->policy);
    delete c;
  } catch (...) {
    // Kept: a destructor, with no status to return the barrier's to.
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

HURRAY_API hurray_status hurray_net_client_peer_device_identity(
    const hurray_net_client *c, uint8_t device_tag, int32_t device_ordinal,
    hurray_backend_device_identity *out, hurray_error *err) {
  if (c == nullptr || out == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_peer_device_identity: client and out are required");
  std::memset(out, 0, sizeof *out);
  bool offered = false;
  for (const Offer &o : c->offers)
    offered = offered || (o.tag == device_tag && device_ordinal >= 0 && device_ordinal < o.count);
  if (!offered)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                "hurray_net_client_peer_device_identity: the server offers no %s device %d",
                hurray_device_tag_name(device_tag), device_ordinal);
  for (const HelloId &e : c->ids)
    if (e.tag == device_tag && e.ordinal == device_ordinal) {
      out->kind = e.kind;
      std::memcpy(out->bytes, e.bytes, sizeof out->bytes);
    }
  return HURRAY_OK;  // none announced: NONE
}

HURRAY_API hurray_status hurray_net_client_peer_device_find(
    const hurray_net_client *c, uint8_t device_tag, const hurray_backend_device_identity *identity,
    int32_t *ordinal, hurray_error *err) {
  if (ordinal != nullptr) *ordinal = -1;
  if (c == nullptr || identity == nullptr || ordinal == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_client_peer_device_find: client, identity and ordinal are required");
  if (identity->kind == HURRAY_BACKEND_ID_NONE)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "BP-DEV-ID: hurray_net_client_peer_device_find: an identity of kind NONE names "
                "no device");
  for (const HelloId &e : c->ids)
    if (e.tag == device_tag && e.kind == identity->kind &&
        std::memcmp(e.bytes, identity->bytes, sizeof e.bytes) == 0) {
      *ordinal = e.ordinal;
      return HURRAY_OK;
    }
  return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_NONE,
              "BP-DEV-ID: hurray_net_client_peer_device_find: the server announced no %s device "
              "of that identity%s",
              hurray_device_tag_name(device_tag),
              c->ids.empty() ? " (it announced no identities: a server from before them)" : "");
}

}  // extern "C"
