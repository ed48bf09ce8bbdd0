// What a per-message answer costs UCX itself, without libhurray-net: a
// client streams active messages to a server over a client-server (socket
// address) connection, as libhurray-net does (peer-failure handling, the
// wake-up feature), and the server receives each rendezvous message into one
// reused buffer, as ucx_perftest does. With --answer 1 the server also answers
// every message that landed with a small active message, and the client's
// window counts answers instead of completed sends: a libhurray-net PUT's
// protocol (docs/spec/network.md) with nothing else of libhurray-net.
// --answer 2 answers several messages at once (each answer carries how many):
// all that landed in one round of the server's loop, or with --every K
// exactly K (the client rounds its count up to whole answers), the way
// libhurray-net's PUT_ACK answers a window (N15).
//
//   hurray_ucx_answer_bench [--size N] [--min-bytes N] [--window W]
//                           [--answer 0|1|2] [--every K]
//                           [--client-cpu C] [--server-cpu S]
//
// Prints "ucx_am size=... window=... answer=... MBps=...". UCX_TLS defaults
// to tcp and UCX_NET_DEVICES to lo, as in hurray_net_bench.
#include <ucp/api/ucp.h>

#include "net_pair.h"

#include <arpa/inet.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr unsigned kData = 1, kAnswer = 2;
volatile sig_atomic_t stop = 0;
void on_term(int) { stop = 1; }

struct Side {
  ucp_context_h ctx = nullptr;
  ucp_worker_h worker = nullptr;
  ucp_ep_h ep = nullptr;
  ucp_conn_request_h conn = nullptr;  // server: a client waiting to be accepted
  std::vector<char> dest;             // server: the one reused destination (--size)
  long landed = 0, answered = 0;      // server: messages landed, answered
  long in_flight = 0;                 // client: messages not yet done
  int mode = 0;    // --answer: 0 none, 1 one per message, 2 several at once
  long every = 1;  // --every K: answer once K messages have landed (mode 2)
};
Side side;

bool init() {
  ucp_config_t *config = nullptr;
  if (ucp_config_read(nullptr, nullptr, &config) != UCS_OK) return false;
  ucp_params_t p;
  std::memset(&p, 0, sizeof p);
  p.field_mask = UCP_PARAM_FIELD_FEATURES;
  p.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  const ucs_status_t st = ucp_init(&p, config, &side.ctx);
  ucp_config_release(config);
  if (st != UCS_OK) return false;
  ucp_worker_params_t wp;
  std::memset(&wp, 0, sizeof wp);
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;
  return ucp_worker_create(side.ctx, &wp, &side.worker) == UCS_OK;
}

bool set_handler(unsigned id, ucp_am_recv_callback_t cb) {
  ucp_am_handler_param_t h;
  std::memset(&h, 0, sizeof h);
  h.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB;
  h.id = id;
  h.cb = cb;
  return ucp_worker_set_am_recv_handler(side.worker, &h) == UCS_OK;
}

void on_ep_error(void *, ucp_ep_h, ucs_status_t) { stop = 1; }

// ---------------------------------------------------------------- server

void landed(void *request, ucs_status_t, size_t, void *) {
  ++side.landed;
  ucp_request_free(request);
}

ucs_status_t on_data(void *, const void *, size_t, void *data, size_t length,
                     const ucp_am_recv_param_t *param) {
  if (!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV)) {  // eager: already here
    ++side.landed;
    return UCS_OK;
  }
  if (side.dest.size() < length) return UCS_ERR_MESSAGE_TRUNCATED;  // the client's error
  ucp_request_param_t p;
  std::memset(&p, 0, sizeof p);
  p.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK;
  p.cb.recv_am = landed;
  if (ucp_am_recv_data_nbx(side.worker, data, side.dest.data(), length, &p) == nullptr)
    ++side.landed;
  return UCS_INPROGRESS;
}

void on_conn(ucp_conn_request_h request, void *) { side.conn = request; }

int serve(int port_fd, uint64_t size) {
  signal(SIGTERM, on_term);
  side.dest.resize(size);
  if (!init() || !set_handler(kData, on_data)) return 1;
  sockaddr_in sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  ucp_listener_params_t lp;
  std::memset(&lp, 0, sizeof lp);
  lp.field_mask = UCP_LISTENER_PARAM_FIELD_SOCK_ADDR | UCP_LISTENER_PARAM_FIELD_CONN_HANDLER;
  lp.sockaddr.addr = reinterpret_cast<const sockaddr *>(&sa);
  lp.sockaddr.addrlen = sizeof sa;
  lp.conn_handler.cb = on_conn;
  ucp_listener_h listener = nullptr;
  if (ucp_listener_create(side.worker, &lp, &listener) != UCS_OK) return 1;
  ucp_listener_attr_t la;
  std::memset(&la, 0, sizeof la);
  la.field_mask = UCP_LISTENER_ATTR_FIELD_SOCKADDR;
  if (ucp_listener_query(listener, &la) != UCS_OK) return 1;
  const uint16_t port = ntohs(reinterpret_cast<const sockaddr_in *>(&la.sockaddr)->sin_port);
  if (write(port_fd, &port, sizeof port) != static_cast<ssize_t>(sizeof port)) return 1;
  close(port_fd);
  // answer sends in flight, with their headers
  std::vector<std::pair<void *, std::unique_ptr<uint64_t[]>>> answers;
  while (!stop) {
    ucp_worker_progress(side.worker);
    if (side.conn != nullptr) {
      ucp_ep_params_t p;
      std::memset(&p, 0, sizeof p);
      p.field_mask = UCP_EP_PARAM_FIELD_CONN_REQUEST | UCP_EP_PARAM_FIELD_ERR_HANDLER |
                     UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
      p.conn_request = side.conn;
      p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
      p.err_handler.cb = on_ep_error;
      side.conn = nullptr;
      if (ucp_ep_create(side.worker, &p, &side.ep) != UCS_OK) return 1;
    }
    // --answer 1: one answer per message that landed; 2: one for all that
    // landed, or for exactly --every of them. Each is the size of
    // libhurray-net's PUT_REP header and says how many messages it answers
    // (the forked server has the client's options).
    while (side.mode != 0 && side.ep != nullptr && side.landed - side.answered >= side.every) {
      // UCX may read the header until the send completes: one per answer.
      auto reply = std::make_unique<uint64_t[]>(36);
      const long n = side.mode == 1 ? 1 : side.every > 1 ? side.every : side.landed - side.answered;
      reply[0] = static_cast<uint64_t>(n);
      ucp_request_param_t p;
      std::memset(&p, 0, sizeof p);
      void *r =
          ucp_am_send_nbx(side.ep, kAnswer, reply.get(), 36 * sizeof(uint64_t), nullptr, 0, &p);
      if (UCS_PTR_IS_ERR(r)) return 1;
      if (r != nullptr) answers.emplace_back(r, std::move(reply));
      side.answered += n;
    }
    std::erase_if(answers, [](auto &a) {
      if (ucp_request_check_status(a.first) == UCS_INPROGRESS) return false;
      ucp_request_free(a.first);
      return true;
    });
  }
  return 0;
}

// ---------------------------------------------------------------- client

// A message header (a PUT header's size): UCX reads it until the send
// completes, so each message has its own, freed here.
struct Header {
  uint64_t words[6];
};

void sent(void *request, ucs_status_t, void *header) {
  if (side.mode == 0) --side.in_flight;
  delete static_cast<Header *>(header);
  ucp_request_free(request);
}

ucs_status_t on_answer(void *, const void *header, size_t, void *, size_t,
                       const ucp_am_recv_param_t *) {
  uint64_t n;
  std::memcpy(&n, header, sizeof n);
  if (side.mode != 0) side.in_flight -= static_cast<long>(n);
  return UCS_OK;
}


}  // namespace

int main(int argc, char **argv) {
  uint64_t size = 1u << 20, min_bytes = 1ull << 30;
  long window = 2;
  int client_cpu = -1, server_cpu = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--size") size = bench::parse_size(argv[i + 1]);
    else if (a == "--min-bytes") min_bytes = bench::parse_size(argv[i + 1]);
    else if (a == "--window") window = std::max(1L, std::atol(argv[i + 1]));
    else if (a == "--answer") side.mode = std::atoi(argv[i + 1]);
    else if (a == "--every") side.every = std::max(1L, std::atol(argv[i + 1]));
    else if (a == "--client-cpu") client_cpu = std::atoi(argv[i + 1]);
    else if (a == "--server-cpu") server_cpu = std::atoi(argv[i + 1]);
  }
  // Answers of exactly K messages: a window that is not a multiple of K would
  // wait for ever on its last ones.
  if (side.every > 1 && (side.mode != 2 || window % side.every != 0)) {
    std::fprintf(stderr, "ucx_answer_bench: --every K needs --answer 2 and a window that K "
                         "divides\n");
    return 2;
  }
  setenv("UCX_TLS", "tcp", 0);
  setenv("UCX_NET_DEVICES", "lo", 0);
  uint16_t port = 0;
  const pid_t child =
      bench::fork_server(server_cpu, client_cpu, [size](int fd) { return serve(fd, size); }, &port);
  if (child < 0) return 1;
  if (port == 0) {
    std::fprintf(stderr, "ucx_answer_bench: the server did not start\n");
    return 1;
  }
  int status = 1;
  if (init() && set_handler(kAnswer, on_answer)) {
    sockaddr_in sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    ucp_ep_params_t p;
    std::memset(&p, 0, sizeof p);
    p.field_mask = UCP_EP_PARAM_FIELD_FLAGS | UCP_EP_PARAM_FIELD_SOCK_ADDR |
                   UCP_EP_PARAM_FIELD_ERR_HANDLER | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    p.flags = UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
    p.sockaddr.addr = reinterpret_cast<const sockaddr *>(&sa);
    p.sockaddr.addrlen = sizeof sa;
    p.err_mode = UCP_ERR_HANDLING_MODE_PEER;
    p.err_handler.cb = on_ep_error;
    std::vector<char> src(size, 0x5a);
    if (ucp_ep_create(side.worker, &p, &side.ep) == UCS_OK) {
      // `count` messages, up to `window` not yet done; false on an error.
      auto run = [&](long count) {
        for (long i = 0; (i < count || side.in_flight > 0) && !stop;) {
          if (i < count && side.in_flight < window) {
            auto *header = new Header{{static_cast<uint64_t>(i)}};
            ucp_request_param_t sp;
            std::memset(&sp, 0, sizeof sp);
            sp.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_FLAGS |
                              UCP_OP_ATTR_FIELD_USER_DATA;
            sp.cb.send = sent;
            sp.user_data = header;
            sp.flags = UCP_AM_SEND_FLAG_RNDV;
            void *r = ucp_am_send_nbx(side.ep, kData, header->words, sizeof header->words,
                                      src.data(), size, &sp);
            if (r == nullptr || UCS_PTR_IS_ERR(r)) delete header;  // no callback comes
            if (UCS_PTR_IS_ERR(r)) {
              std::fprintf(stderr, "ucx_answer_bench: send: %s\n",
                           ucs_status_string(UCS_PTR_STATUS(r)));
              return false;
            }
            ++side.in_flight;
            if (r == nullptr && side.mode == 0) --side.in_flight;  // done at once
            ++i;
            continue;
          }
          ucp_worker_progress(side.worker);
        }
        return !stop;
      };
      long iters = std::max<long>(3, static_cast<long>(min_bytes / size));
      iters += (side.every - iters % side.every) % side.every;  // whole answers
      if (run(window)) {  // warm-up: the connection and one window
        const auto t0 = std::chrono::steady_clock::now();
        if (run(iters)) {
          const double s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          std::printf("ucx_am size=%llu iters=%ld window=%ld answer=%d seconds=%.6f MBps=%.1f\n",
                      static_cast<unsigned long long>(size), iters, window, side.mode,
                      s, static_cast<double>(size) * static_cast<double>(iters) / s / 1e6);
          status = 0;
        }
      }
      // Close the endpoint before the server goes (a forced close: nothing
      // is left to flush) and give UCX everything back.
      ucp_request_param_t cp;
      std::memset(&cp, 0, sizeof cp);
      cp.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
      cp.flags = UCP_EP_CLOSE_FLAG_FORCE;
      void *r = ucp_ep_close_nbx(side.ep, &cp);
      if (r != nullptr && !UCS_PTR_IS_ERR(r)) {
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(side.worker);
        ucp_request_free(r);
      }
    }
  }
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);
  if (side.worker != nullptr) ucp_worker_destroy(side.worker);
  if (side.ctx != nullptr) ucp_cleanup(side.ctx);
  return status;
}
