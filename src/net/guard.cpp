// Admission, limits and timeouts of the server (docs/spec/network.md,
// section 4): what a peer may cost the server, checked before anything is
// allocated for it. Every refusal names the limit (NET-LIMIT) or the
// admission rule (NET-ADMIT) it applies.
#include "server.h"

#include <chrono>

using namespace hurray::net;

bool hurray_net_server::admit(const sockaddr *peer, std::string *name) {
  if (!allow.admits(peer)) {
    log_debug("server: %s: a connection from %s is refused (not in the allow list)", kAdmitId,
              peer_name(peer).c_str());
    return false;
  }
  *name = peer_name(peer);
  const size_t open = conns.size() + boots.size();
  if (open >= limits.max_connections) {
    log_debug("server: %s: a connection from %s is refused (max_connections = %u)", kLimitId,
              name->c_str(), limits.max_connections);
    return false;
  }
  uint32_t &mine = per_peer[*name];
  if (mine >= limits.max_per_peer) {
    log_debug("server: %s: a connection from %s is refused (max_connections_per_peer = %u)",
              kLimitId, name->c_str(), limits.max_per_peer);
    return false;
  }
  ++mine;
  return true;
}

void hurray_net_server::forget(const std::string &name) {
  auto it = per_peer.find(name);
  if (it == per_peer.end()) return;
  if (--it->second == 0) per_peer.erase(it);
}

hurray_status hurray_net_server::reserve_put(Conn &c, uint64_t declared, uint64_t cost,
                                             hurray_error *err) {
  auto over = [&](const char *what, const char *field, unsigned long long limit) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                "%s: the PUT of %llu bytes is refused: %s (%s = %llu)", kLimitId,
                static_cast<unsigned long long>(declared), what, field, limit);
  };
  if (declared > limits.max_put_bytes)
    return over("larger than this server takes", "max_put_bytes",
                static_cast<unsigned long long>(limits.max_put_bytes));
  if (c.puts >= limits.conn_puts)
    return over("too many PUTs of this connection in flight", "conn_puts_in_flight",
                limits.conn_puts);
  if (total_puts >= limits.total_puts)
    return over("too many PUTs in flight on this server", "total_puts_in_flight",
                limits.total_puts);
  if (cost > limits.conn_bytes || c.bytes > limits.conn_bytes - cost)
    return over("too many bytes of this connection in flight", "conn_bytes_in_flight",
                static_cast<unsigned long long>(limits.conn_bytes));
  if (cost > limits.total_bytes || total_bytes > limits.total_bytes - cost)
    return over("too many bytes in flight on this server", "total_bytes_in_flight",
                static_cast<unsigned long long>(limits.total_bytes));
  ++c.puts;
  ++total_puts;
  c.bytes += cost;
  total_bytes += cost;
  return HURRAY_OK;
}

void hurray_net_server::release_put(Conn *c, uint64_t cost) {
  if (c != nullptr) {
    --c->puts;
    c->bytes -= cost;
  }
  --total_puts;
  total_bytes -= cost;
}

hurray_status hurray_net_server::reserve_get(Conn &c, hurray_error *err) {
  if (c.gets >= limits.conn_gets)
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE,
                "%s: the GET is refused: too many GETs of this connection in flight "
                "(conn_gets_in_flight = %u)",
                kLimitId, limits.conn_gets);
  ++c.gets;
  return HURRAY_OK;
}

void hurray_net_server::release_get(Conn *c) {
  if (c != nullptr) --c->gets;
}

void hurray_net_server::disconnect(Conn &c, ucs_status_t why, const char *what) {
  if (c.dead) return;
  c.dead = true;
  c.why = why;
  log_debug("server: %s: the client at %s is disconnected: %s", kLimitId, c.peer.c_str(), what);
}

bool hurray_net_server::may_answer(Conn &c) {
  if (c.dead) return false;
  if (*c.unsent < limits.conn_unsent) return true;
  disconnect(c, UCS_ERR_EXCEEDS_LIMIT,
             "it does not take its answers (conn_unsent_answers reached)");
  return false;
}

void hurray_net_server::queue_send(ucp_ep_h ep, Conn *c, Op op,
                                   std::unique_ptr<unsigned char[]> bytes, size_t n) {
  if (ep == nullptr || (c != nullptr && !may_answer(*c))) return;
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

void hurray_net_server::enforce_timeouts() {
  if (limits.stall_ms < 0 && limits.idle_ms < 0) return;
  const auto now = Clock::now();
  if (now < next_timeouts) return;  // looked at every 10 ms at most
  next_timeouts = now + std::chrono::milliseconds(10);
  for (auto &[ep, cp] : conns) {
    Conn &c = *cp;
    if (c.dead) continue;
    const auto quiet =
        std::chrono::duration_cast<std::chrono::milliseconds>(now - c.last).count();
    const bool busy = c.transfers > 0 || *c.unsent > 0;
    if (busy && limits.stall_ms >= 0 && quiet > limits.stall_ms)
      disconnect(c, UCS_ERR_TIMED_OUT, "its transfers stalled (stall_timeout_ms passed)");
    else if (!busy && limits.idle_ms >= 0 && quiet > limits.idle_ms)
      disconnect(c, UCS_ERR_TIMED_OUT, "it was idle (idle_timeout_ms passed)");
  }
}

bool hurray_net_server::may_get(const Conn &c, const Registered &r) {
  return r.who == nullptr || r.who->admits(reinterpret_cast<const sockaddr *>(&c.addr));
}

extern "C" HURRAY_API hurray_status hurray_net_server_register_for(hurray_net_server *s,
                                                                   uint64_t buffer_id,
                                                                   hurray_buffer *buffer,
                                                                   const char *peers,
                                                                   hurray_error *err) {
  if (s == nullptr || buffer == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_register_for: server and buffer are required");
  try {
    std::shared_ptr<Allowlist> who;
    if (peers != nullptr) {
      who = std::make_shared<Allowlist>();
      if (hurray_status st = who->parse(peers, err)) return st;
    }
    if (hurray_status st = hurray_net_server_register(s, buffer_id, buffer, err)) return st;
    s->registry.at(buffer_id).who = std::move(who);
    return HURRAY_OK;
  } catch (...) {
    return fail(err, HURRAY_E_OUT_OF_MEMORY, HURRAY_RULE_NONE, "hurray-net: out of memory");
  }
}
