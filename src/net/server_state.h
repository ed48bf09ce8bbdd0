// The server's state (hurray_net_server), shared by server.cpp,
// server_put.cpp and server_get.cpp (the protocol), server_send.cpp (the
// answers), bootstrap_server.cpp, server_fd.cpp and guard.cpp (admission,
// limits and timeouts, docs/spec/network.md section 4). A header of its
// own, so that those files depend on it and not on one another's.
#pragma once

#include <hurray_net.h>

#include "auth.h"
#include "net_limits.h"
#include "net_types.h"
#include "ucx.h"
#include "wire.h"

#include <poll.h>

#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace hurray::net {

struct Conn {
  ucp_ep_h ep = nullptr;
  bool dead = false;    // the error handler ran, or a limit disconnected it
  bool closed = false;  // ucp_ep_close_nbx was called
  int transfers = 0;    // transfers in flight on this connection
  ucs_status_t why = UCS_OK;
  // Answers that wait to go out together as one PUT_ACK (N15): the request
  // ids of PUTs that landed, the client's last window, and its PUT receives
  // under way, under kAckDeferMax bytes and not.
  std::vector<uint64_t> acks;
  uint32_t in_flight = 0;
  int small = 0, large = 0;
  // What the limits count (guard.cpp): the peer's address, the bytes and
  // PUTs being received, the GETs being sent, the answers not yet taken
  // (shared with the sends that carry them), the last message or completion.
  std::string peer;
  sockaddr_storage addr{};
  uint64_t bytes = 0;
  uint32_t puts = 0, gets = 0;
  std::shared_ptr<uint32_t> unsent = std::make_shared<uint32_t>(0);
  Clock::time_point last = Clock::now();
};

struct Transfer {
  bool put = true;          // PUT receive, else GET send
  Conn *conn = nullptr;
  void *request = nullptr;  // UCX request, NULL once completed
  hurray_buffer *buffer = nullptr;     // PUT: the destination (owner ref)
  hurray_handoff held{};               // GET: the source's reference
  void *staging = nullptr;             // host bytes, when the device's are not
  size_t length = 0;
  uint64_t cost = 0;                   // PUT: the bytes the limits count
  uint64_t request_id = 0, buffer_id = 0;
  int32_t ordinal = 0;
  uint32_t in_flight = 0;                   // PUT: the client's window (PutHeader)
  // PUT by rendezvous: where its bytes arrive, the most of its pages seen
  // resident, when to look again (guard.cpp, sample_progress); the marks
  // written where its pages were resident from the start (the slots holding
  // one, their seed) and the most of them seen overwritten.
  void *dst = nullptr;
  size_t resident = 0;
  std::vector<bool> marked;
  uint64_t mark_seed = 0;
  size_t overwritten = 0;
  Clock::time_point next_sample{};
  std::unique_ptr<unsigned char[]> header;  // GET: the reply header in flight
};

struct PendingSend {
  void *request;
  std::unique_ptr<unsigned char[]> bytes;
  std::shared_ptr<uint32_t> unsent;  // its connection's count, or NULL
};

// A bootstrap connection being handled (bootstrap_server.cpp): the bytes
// its stage needs, the answer going out, the nonces, the endpoint created
// once it is authenticated.
struct Boot {
  enum Stage { kHello, kAuth, kAddress, kDone, kRefused };
  int fd = -1;
  std::string peer;
  sockaddr_storage addr{};
  Clock::time_point deadline;
  Stage stage = kHello;
  size_t need = 0;
  std::vector<unsigned char> in, out;
  size_t sent = 0;
  unsigned char client_nonce[kNonceSize] = {}, server_nonce[kNonceSize] = {};
  unsigned char mac[kMacSize] = {};
  ucp_ep_h ep = nullptr;
};

// The pages of [p, p + n) written now (/proc/self/pagemap; guard.cpp): a
// receive writes its destination as the bytes arrive, so more of them is
// progress. 0 when the range cannot be asked about. `written`, when given,
// receives whether each page of the range is written.
size_t resident_pages(const void *p, size_t n, std::vector<bool> *written = nullptr);

// Memory already resident (an allocator's reused blocks) shows no pages
// filling: marks there instead, 8-byte values derived from `seed`, one at
// the start of every kMarkStride bytes whose page is written (`written`, of
// resident_pages), which arriving bytes overwrite (guard.cpp). set_marks
// writes them and returns which slots hold one; marks_overwritten counts
// those that differ now.
inline constexpr size_t kMarkStride = size_t{64} << 10;
std::vector<bool> set_marks(void *p, size_t n, uint64_t seed, const std::vector<bool> &written);
size_t marks_overwritten(const void *p, size_t n, uint64_t seed, const std::vector<bool> &marked);

struct Registered {
  hurray_buffer *buffer;
  hurray_handoff held;
  std::shared_ptr<Allowlist> who;  // who may GET it; NULL: any admitted client
};

}  // namespace hurray::net

struct hurray_net_server {
  using Conn = hurray::net::Conn;
  using Incoming = hurray::net::Incoming;
  using Op = hurray::net::Op;
  using Reply = hurray::net::Reply;
  using Transfer = hurray::net::Transfer;

  hurray::net::Worker w;
  uint16_t port = 0;
  // The bootstrap listener (bootstrap_server.cpp): its socket, whether it
  // is bound to a loopback address, the worker's address it hands out, the
  // connections being bootstrapped, the shared key, what poll waits on.
  int listen_fd = -1;
  bool loopback = true;
  std::vector<unsigned char> my_address;
  std::vector<std::unique_ptr<hurray::net::Boot>> boots;
  hurray::net::Key key;
  std::vector<pollfd> wait_fds;
  hurray_policy *policy = nullptr;
  hurray_context *ctx = nullptr;
  hurray_net_alloc_fn alloc = nullptr;  // the application's, or NULL
  void *alloc_user = nullptr;
  uint32_t transport = HURRAY_TRANSPORT_CROSS_MACHINE;
  std::vector<hurray::net::Offer> offers;
  std::map<ucp_ep_h, std::unique_ptr<Conn>> conns;
  std::deque<Incoming> incoming;
  std::deque<hurray_net_received> landed;
  std::vector<std::unique_ptr<Transfer>> transfers;
  std::vector<hurray::net::PendingSend> sends;
  std::map<uint64_t, hurray::net::Registered> registry;
  hurray_net_stats stats{};
  // Admission and limits (guard.cpp).
  hurray::net::Limits limits = hurray::net::kDefaultLimits;
  hurray::net::Allowlist allow;
  std::map<std::string, uint32_t> per_peer;  // requests and connections by address
  uint64_t total_bytes = 0;
  uint32_t total_puts = 0;

  // The readiness descriptor (server_fd.cpp; made at the first
  // hurray_net_server_fd): an epoll set of UCX's event fd, the bootstrap's
  // sockets, `wake` (an eventfd readable while a call would make progress
  // at once) and `timer` (the next timeout due); -1 until asked for.
  int epfd = -1, wake = -1, timer = -1;
  std::map<int, uint32_t> watched;  // bootstrap sockets in epfd, their events
  hurray_status make_fd(hurray_error *err);
  void watch_sockets();
  void unwatch(int fd);
  // After a call: the descriptor readable iff a call would make progress now.
  void rearm();
  void close_fd();

  void process();
  void send_reply(ucp_ep_h ep, Op op, const Reply &r);
  void send_acks(Conn &c);
  void on_put(Incoming &in);
  void on_get(Incoming &in);
  void on_hello(Incoming &in);
  void finish(Transfer &t, ucs_status_t st);
  hurray_status alloc_dest(const hurray_buffer_handle &h, int32_t ordinal, uint64_t buffer_id,
                           hurray_buffer **out, hurray_error *err);
  Conn *conn_of(ucp_ep_h ep) {
    auto it = conns.find(ep);
    return it == conns.end() ? nullptr : it->second.get();
  }

  // bootstrap_server.cpp.
  hurray_status open_bootstrap(const char *address, uint16_t port, hurray_error *err);
  void close_bootstrap();
  void bootstrap_progress();
  bool bootstrap_due();
  hurray::net::Clock::time_point next_bootstrap{};
  bool step(hurray::net::Boot &b);
  void drop_boot(hurray::net::Boot &b);
  static ucp_err_handler_cb_t error_handler();

  // guard.cpp. A connection request from the peer at `peer`: admitted (its
  // address in *name, counted) or not (the caller rejects it).
  bool admit(const sockaddr *peer, std::string *name);
  // A connection request or connection from `name` is gone.
  void forget(const std::string &name);
  // A PUT of `declared` bytes that costs `cost` (staging counted) on c:
  // counted, or refused with the limit it is over (nothing counted).
  hurray_status reserve_put(Conn &c, uint64_t declared, uint64_t cost, hurray_error *err);
  void release_put(Conn *c, uint64_t cost);
  hurray_status reserve_get(Conn &c, hurray_error *err);
  void release_get(Conn *c);
  // Whether c may be sent one more answer; when not, it is disconnected.
  bool may_answer(Conn &c);
  // Whether c's client may GET the registration r (register_for).
  static bool may_get(const Conn &c, const hurray::net::Registered &r);
  // Send bytes (an answer of `n` bytes) on c's endpoint and keep them until
  // UCX is done, counted as c's unsent answers.
  void queue_send(ucp_ep_h ep, Conn *c, Op op, std::unique_ptr<unsigned char[]> bytes, size_t n);
  // Connections stalled or idle past their limit are disconnected.
  void enforce_timeouts();
  // Bytes of PUTs arriving count as progress of their connection.
  void sample_progress(hurray::net::Clock::time_point now);
  hurray::net::Clock::time_point next_timeouts{};
  // c has gone over a limit: disconnected (closed by process()).
  void disconnect(Conn &c, ucs_status_t why, const char *what);
};
