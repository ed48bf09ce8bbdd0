// A server that speaks the hurray-net wire protocol without libhurray-net,
// to show what a client does with answers a correct server never sends: it
// admits one client through the bootstrap (no key), then answers its HELLO
// with a HELLO_REP whose device identity extension (src/net/wire.h, HNID) is
// malformed. Usage: hurray_net_raw_server MODE
//   bad-kind   an identity of kind 9
//   short      the extension cut one byte short of its count
//   unoffered  an identity of a device ordinal the HELLO_REP does not offer
// Prints "listening on port P", serves one client, exits 0 once it sent the
// HELLO_REP (1 when no client came within 30 s).
#include "bootwire.h"
#include "ucx.h"
#include "wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace hurray::net;

namespace {

struct Hello {
  ucp_ep_h reply_ep = nullptr;
  uint64_t request_id = 0;
};

ucs_status_t on_hello(void *arg, const void *header, size_t header_length, void *, size_t,
                      const ucp_am_recv_param_t *param) {
  auto *h = static_cast<Hello *>(arg);
  if (check_prefix(header, header_length, kHelloReq, kPrefixSize) &&
      (param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)) {
    h->reply_ep = param->reply_ep;
    h->request_id = request_id_of(header);
  }
  return UCS_OK;
}

bool recv_all(int fd, unsigned char *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    const ssize_t k = recv(fd, p + got, n - got, 0);
    if (k <= 0) return false;
    got += static_cast<size_t>(k);
  }
  return true;
}

// The HELLO_REP: CUDA with one device, and the MODE's malformed extension.
std::vector<unsigned char> hello_rep(const std::string &mode, uint64_t id) {
  const HelloDevice dev{HURRAY_DEVICE_CUDA, 1, 1};
  HelloId e{HURRAY_DEVICE_CUDA, 0, HURRAY_BACKEND_ID_UUID, {}};
  std::memset(e.bytes, 0x41, sizeof e.bytes);
  if (mode == "bad-kind") e.kind = 9;
  if (mode == "unoffered") e.ordinal = 1;
  const size_t n = hello_rep_size(1);
  std::vector<unsigned char> b(n + hello_ids_size(1));
  encode_hello_rep(id, HURRAY_TRANSPORT_CROSS_MACHINE, &dev, 1, b.data());
  encode_hello_ids(&e, 1, b.data() + n);
  if (mode == "short") b.pop_back();
  return b;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: hurray_net_raw_server bad-kind|short|unoffered\n");
    return 2;
  }
  const std::string mode = argv[1];
  Worker w;
  hurray_error err;
  if (w.init(&err) != HURRAY_OK) {
    std::fprintf(stderr, "raw server: %s\n", err.message);
    return 1;
  }
  Hello hello;
  ucp_am_handler_param_t hp;
  std::memset(&hp, 0, sizeof hp);
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                  UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  hp.id = kHelloReq;
  hp.flags = UCP_AM_FLAG_WHOLE_MSG;
  hp.cb = on_hello;
  hp.arg = &hello;
  ucp_worker_set_am_recv_handler(w.worker, &hp);
  ucp_address_t *address = nullptr;
  size_t address_length = 0;
  if (ucp_worker_get_address(w.worker, &address, &address_length) != UCS_OK) return 1;

  const int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (lfd < 0 || bind(lfd, reinterpret_cast<sockaddr *>(&a), sizeof a) != 0 ||
      listen(lfd, 1) != 0 || getsockname(lfd, reinterpret_cast<sockaddr *>(&a), &len) != 0)
    return 1;
  std::printf("listening on port %u\n", static_cast<unsigned>(ntohs(a.sin_port)));
  std::fflush(stdout);
  pollfd pfd{lfd, POLLIN, 0};
  if (poll(&pfd, 1, 30000) != 1) return 1;
  const int fd = accept(lfd, nullptr, nullptr);
  if (fd < 0) return 1;
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

  // The bootstrap: HELLO, CHALLENGE (no key), AUTH, DONE with our address.
  unsigned char in[kBootHelloSize], fixed[kAuthFixed];
  BootHello bh;
  AuthFixed af;
  if (!recv_all(fd, in, sizeof in) || !parse_boot_hello(in, sizeof in, &bh)) return 1;
  unsigned char ch_bytes[kChallengeSize];
  Challenge ch;
  std::memset(ch.nonce, 0x17, sizeof ch.nonce);
  encode(ch, ch_bytes);
  if (send(fd, ch_bytes, sizeof ch_bytes, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof ch_bytes))
    return 1;
  if (!recv_all(fd, fixed, sizeof fixed) || !parse_auth_fixed(fixed, sizeof fixed, &af))
    return 1;
  std::vector<unsigned char> theirs(af.address_length);
  if (!recv_all(fd, theirs.data(), theirs.size())) return 1;
  DoneFixed done;
  done.address_length = static_cast<uint32_t>(address_length);
  std::vector<unsigned char> out(kDoneFixed + address_length);
  encode(done, out.data());
  std::memcpy(out.data() + kDoneFixed, address, address_length);
  if (send(fd, out.data(), out.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(out.size())) return 1;
  ucp_worker_release_address(w.worker, address);

  // The client's HELLO over UCX, answered with the malformed HELLO_REP.
  const Deadline d = Deadline::in(30000);
  while (hello.reply_ep == nullptr && !d.passed()) w.wait(50);
  if (hello.reply_ep == nullptr) return 1;
  const std::vector<unsigned char> rep = hello_rep(mode, hello.request_id);
  if (w.wait_request(am_send(hello.reply_ep, kHelloRep, rep.data(), rep.size(), nullptr, 0, 0),
                     Deadline::in(10000)) != UCS_OK)
    return 1;
  for (int i = 0; i < 20; ++i) w.wait(50);  // let the client take it, then go
  close(fd);
  close(lfd);
  w.fini();
  std::printf("sent HELLO_REP (%s)\n", mode.c_str());
  return 0;
}
