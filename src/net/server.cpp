// libhurray-net's server (include/hurray_net.h): its life (create, with
// its limits, key and bootstrap listener; destroy, which drains and cancels
// what is in flight), hurray_net_server_poll and the round of processing
// after UCX progress that dispatches each message (HELLO here, PUT in
// server_put.cpp, GET in server_get.cpp), completes transfers and closes
// the connections of clients gone; its port and statistics. Its state is
// in server_state.h; the answers it sends in server_send.cpp; admission,
// limits and timeouts in guard.cpp.
#include "barrier.h"
#include "budget.h"
#include "internal.h"
#include "server_state.h"
#include "../core/struct_size.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <utility>
#include <vector>

using namespace hurray::net;

void hurray_net_server::on_hello(Incoming &in) {
  const uint64_t id = in.header.size() >= kPrefixSize ? request_id_of(in.header.data()) : 0;
  const auto k = static_cast<uint32_t>(std::min<size_t>(offers.size(), kMaxHelloDevices));
  std::vector<HelloDevice> devices;
  for (uint32_t i = 0; i < k; ++i) devices.push_back({offers[i].tag, offers[i].count, offers[i].classes});
  // the identity of each device offered but the CPU's (a tag all or none, at
  // most kMaxHelloIds in all; NONE where the device has none)
  std::vector<HelloId> ids;
  for (uint32_t i = 0; i < k; ++i) {
    const HelloDevice &d = devices[i];
    if (d.tag == HURRAY_DEVICE_CPU || d.count <= 0 || d.count > 0xFFFF ||
        ids.size() + static_cast<size_t>(d.count) > kMaxHelloIds)
      continue;
    for (int32_t o = 0; o < d.count; ++o) {
      hurray_backend_device_identity di{};
      if (hurray_device_identity(ctx, d.tag, o, &di, nullptr) != HURRAY_OK) di = {};
      HelloId e{d.tag, static_cast<uint16_t>(o), di.kind, {}};
      std::memcpy(e.bytes, di.bytes, sizeof e.bytes);
      ids.push_back(e);
    }
  }
  const auto m = static_cast<uint32_t>(ids.size());
  const size_t n = hello_rep_size(k) + hello_ids_size(m);
  std::unique_ptr<unsigned char[]> bytes(new unsigned char[n]());
  encode_hello_rep(id, transport, devices.data(), k, bytes.get());
  encode_hello_ids(ids.data(), m, bytes.get() + hello_rep_size(k));
  release_data(w.worker, in);
  // Only a connection the bootstrap created is answered (a UCX endpoint made
  // some other way, to the worker's transport port, is not one).
  Conn *c = conn_of(in.ep);
  if (in.ep == nullptr || c == nullptr) return;
  queue_send(in.ep, c, kHelloRep, std::move(bytes), n);
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
  if (hurray_status st =
          hurray::detail::refuse_below_first(config, "hurray_net_server_create", err, fail))
    return st;
  if (config == nullptr || out == nullptr || config->reserved0 != 0 ||
      (config->n_devices > 0 && config->devices == nullptr))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_create: config and out are required (config from "
                "HURRAY_NET_SERVER_CONFIG_INIT)");
  *out = nullptr;
  hurray_net_server *s = nullptr;
  return guarded(err, [&] {
    s = new hurray_net_server;
    s->ctx = config->context;
    s->alloc = config->alloc;
    s->alloc_user = config->alloc_user;
    // Limits and the allow list (guard.cpp).
    hurray_status gst = resolve_limits(config->limits, &s->limits, err);
    if (!gst) gst = s->allow.parse(config->allow, err);
    if (!gst && (config->reserved1 != 0 || (config->flags & ~HURRAY_NET_SERVER_NO_AUTH)))
      gst = fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                 "hurray_net_server_create: unknown flags 0x%x or reserved1 not zero",
                 config->flags);
    if (!gst) gst = load_key(config->key, config->key_file, "hurray_net_server_create", &s->key, err);
    const uint32_t flags = config->flags;
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
    // No address: this machine only. Any other is the configuration's choice.
    const char *address = config->address != nullptr ? config->address : "127.0.0.1";
    if (hurray_status st = s->w.init(err, address)) {  // UCX on that interface only
      hurray_net_server_destroy(s);
      return st;
    }
    // The budgets again, now that UCX and the backends are mapped (N19).
    derive_budgets(room_now(), config->limits, &s->limits);
    hurray_status st = set_handler(s, kHelloReq, am_handler<hurray_net_server, kHelloReq>, err);
    if (!st) st = set_handler(s, kPut, am_handler<hurray_net_server, kPut>, err);
    if (!st) st = set_handler(s, kGetReq, am_handler<hurray_net_server, kGetReq>, err);
    if (st) {
      hurray_net_server_destroy(s);
      return st;
    }
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
  }, [&] { hurray_net_server_destroy(s); });  // what was built, on an exception
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
    s->close_fd();
    s->w.fini();
    hurray_policy_destroy(s->policy);
    delete s;
  } catch (...) {
    // Kept: a destructor, with no status to return the barrier's to.
    // Nothing above allocates; never let an exception cross the C ABI.
  }
}

HURRAY_API uint16_t hurray_net_server_port(const hurray_net_server *s) {
  return s == nullptr ? 0 : s->port;
}

HURRAY_API hurray_status hurray_net_server_poll(hurray_net_server *s, int32_t timeout_ms,
                                                hurray_net_received *out, hurray_error *err) {
  if (hurray_status st =
          hurray::detail::refuse_below_first(out, "hurray_net_server_poll", err, fail))
    return st;
  if (s == nullptr || out == nullptr || out->size < sizeof(hurray_net_received))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_poll: server and out are required, out->size set");
  std::memset(out, 0, sizeof *out);
  out->size = sizeof *out;
  return guarded(err, [&] {
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
        s->rearm();
        return HURRAY_OK;
      }
      if (timeout_ms == 0 || deadline.passed()) {
        s->rearm();
        return HURRAY_OK;
      }
      // Messages queued: handle them now. Else sleep until UCX has news (the
      // event fd wakes for moving data too: no busy loop on a shared CPU).
      if (!s->incoming.empty()) continue;
      s->w.wait(deadline.left_ms(100));
    }
  });
}

HURRAY_API hurray_status hurray_net_server_limits(const hurray_net_server *s,
                                                  hurray_net_limits *out, hurray_error *err) {
  if (s == nullptr || out == nullptr || out->size != sizeof(hurray_net_limits))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_limits: server and out (from HURRAY_NET_LIMITS_INIT) are "
                "required");
  *out = s->limits;  // with size and the reserved words as HURRAY_NET_LIMITS_INIT has them
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
