// The server's GET path: the buffers registered for clients to GET
// (hurray_net_server_register and _unregister, each held by a read-only
// export), and a GET answered with one of them (checked under the
// transport's rules, the registration's allow list and the limits; staged
// through host memory where its bytes are not host-addressable; sent
// eagerly or by rendezvous). Its send completes in finish()
// (server_put.cpp).
#include "barrier.h"
#include "internal.h"
#include "server_state.h"

#include <cstdlib>
#include <cstring>
#include <memory>
#include <utility>

using namespace hurray::net;

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

extern "C" {

HURRAY_API hurray_status hurray_net_server_register(hurray_net_server *s, uint64_t buffer_id,
                                                    hurray_buffer *buffer, hurray_error *err) {
  if (s == nullptr || buffer == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_register: server and buffer are required");
  if (s->registry.count(buffer_id) != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_register: id %llu is already registered",
                static_cast<unsigned long long>(buffer_id));
  return guarded(err, [&] {
    Registered reg{buffer, {}, nullptr};
    bool host = false;
    if (hurray_status st = hold(buffer, &reg.held, &host, err)) return st;
    s->registry.emplace(buffer_id, reg);
    return HURRAY_OK;
  });
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


HURRAY_API hurray_status hurray_net_server_register_for(hurray_net_server *s,
                                                        uint64_t buffer_id,
                                                        hurray_buffer *buffer,
                                                        const char *peers,
                                                        hurray_error *err) {
  if (s == nullptr || buffer == nullptr)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_net_server_register_for: server and buffer are required");
  return guarded(err, [&] {
    std::shared_ptr<Allowlist> who;
    if (peers != nullptr) {
      who = std::make_shared<Allowlist>();
      if (hurray_status st = who->parse(peers, err)) return st;
    }
    if (hurray_status st = hurray_net_server_register(s, buffer_id, buffer, err)) return st;
    s->registry.at(buffer_id).who = std::move(who);
    return HURRAY_OK;
  });
}

}  // extern "C"
