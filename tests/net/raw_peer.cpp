// A peer that speaks the hurray-net wire protocol without libhurray-net's
// checks, to show what the server does with messages a correct client never
// sends. Usage: hurray_net_raw_peer MODE HOST PORT
//   event      PUT of a VULKAN handle with sync_mode EVENT (BP-SYNC-NET)
//   truncated  PUT whose handle declares 1 MiB while 1000 bytes come
//   nodevice   PUT to a device the server does not offer (BP-PUT-DEVICE)
//   badheader  PUT whose header is 10 bytes long
//   badalign   PUT of 64-byte alignment (refused by an RDMA-policy server)
//   huge       PUT declaring 2^40 bytes, rendezvous, the bytes mapped but
//              never touched (refused by the server's max_put_bytes)
//   stall      PUT of 64 MiB (or BYTES), rendezvous, then sleeps 60 s
//              without driving UCX: the bytes never come (the server's stall
//              timeout)
//   slow       PUT of 64 KiB (UCX's connections up), then a PUT of 64 MiB
//              (or BYTES), rendezvous, whose bytes trickle: UCX is driven
//              2 ms in every 100 ms (for 60 s at most); prints the second's
//              answer as below
//   getflood   20000 GETs of id 1, then sleeps 60 s without driving UCX:
//              the answers are never taken (prints "sent K")
// Prints "reply status=NAME rule=ID message=..." and exits 0 when the server
// answered, 1 otherwise.
//   window N HINT  N PUTs of 64 KiB (rendezvous) whose headers say HINT PUTs
//              are in flight (0: a client from before the field), all started
//              before any bytes move. Prints "answers put_rep=R put_ack=A
//              answered=K twice=T unknown=U failed=F" and exits 0 when each
//              PUT was answered exactly once, OK, and nothing else came.
#include "bootstrap.h"
#include "ucx.h"
#include "wire.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>
#include <deque>
#include <string>
#include <vector>

using namespace hurray::net;

namespace {
struct Peer {
  Worker w;
  bool failed = false;
  std::deque<std::vector<unsigned char>> replies;
};

ucs_status_t on_reply(void *arg, const void *header, size_t header_length, void *, size_t,
                      const ucp_am_recv_param_t *) {
  const auto *h = static_cast<const unsigned char *>(header);
  static_cast<Peer *>(arg)->replies.emplace_back(h, h + header_length);
  return UCS_OK;
}

// window mode: N PUTs in flight with the given hint, then count the answers.
int window(Peer &peer, ucp_ep_h ep, uint32_t n, uint32_t hint) {
  const hurray_buffer_handle h = {65536, 4096, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                                  HURRAY_MEMORY_STANDARD, 0};
  std::vector<unsigned char> data(h.byte_size, 0x5a);
  std::vector<std::vector<unsigned char>> headers(n, std::vector<unsigned char>(kPutSize));
  std::vector<void *> sends;
  for (uint32_t i = 0; i < n; ++i) {
    PutHeader ph{};
    ph.request_id = 100 + i;
    ph.buffer_id = 500 + i;
    ph.in_flight = hint;
    hurray_handle_encode(&h, ph.handle, sizeof ph.handle, nullptr);
    encode(ph, headers[i].data());
    void *r = am_send(ep, kPut, headers[i].data(), kPutSize, data.data(), data.size(),
                      UCP_AM_SEND_FLAG_REPLY | UCP_AM_SEND_FLAG_RNDV);
    if (UCS_PTR_IS_ERR(r)) {
      std::printf("send failed: %s\n", ucs_status_string(UCS_PTR_STATUS(r)));
      return 1;
    }
    if (r != nullptr) sends.push_back(r);
  }
  // Give the server time to take every header before the bytes move (they
  // move as this process drives UCX), so that all N are under way at once.
  usleep(500 * 1000);
  std::vector<int> seen(n, 0);
  int put_rep = 0, put_ack = 0, unknown = 0, failed = 0;
  uint32_t answered = 0;
  auto take = [&](uint64_t id, bool ok) {
    if (id < 100 || id >= 100 + n) return void(++unknown);
    if (seen[id - 100]++ == 0) ++answered;
    if (!ok) ++failed;
  };
  // Until every PUT is answered and sent, then 200 ms more for an answer
  // that should not come (a second one for some PUT).
  const Deadline d = Deadline::in(30000);
  Deadline settled;
  while (!peer.failed && !d.passed()) {
    if (settled.infinite && answered == n && sends.empty()) settled = Deadline::in(200);
    if (settled.passed()) break;
    peer.w.wait(50);
    std::erase_if(sends, [](void *r) {
      if (ucp_request_check_status(r) == UCS_INPROGRESS) return false;
      ucp_request_free(r);
      return true;
    });
    for (; !peer.replies.empty(); peer.replies.pop_front()) {
      const std::vector<unsigned char> &m = peer.replies.front();
      if (check_prefix(m.data(), m.size(), kPutRep, kReplySize)) {
        ++put_rep;
        Reply r;
        decode(m.data(), kPutRep, &r);
        take(r.request_id, r.status == HURRAY_OK);
      } else if (const uint32_t k = put_ack_count(m.data(), m.size()); k > 0) {
        ++put_ack;
        for (uint32_t i = 0; i < k; ++i) take(put_ack_id(m.data(), i), true);
      } else {
        ++unknown;
      }
    }
  }
  int twice = 0;
  for (int v : seen) twice += v > 1;
  std::printf("answers put_rep=%d put_ack=%d answered=%u twice=%d unknown=%d failed=%d\n",
              put_rep, put_ack, answered, twice, unknown, failed);
  for (void *r : sends) {  // only when something failed
    ucp_request_cancel(peer.w.worker, r);
    while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(peer.w.worker);
    ucp_request_free(r);
  }
  return answered == n && twice == 0 && unknown == 0 && failed == 0 ? 0 : 1;
}

void on_error(void *arg, ucp_ep_h, ucs_status_t) { static_cast<Peer *>(arg)->failed = true; }
}  // namespace

int main(int argc, char **argv) {
  const bool windowed = argc == 6 && std::string(argv[1]) == "window";
  const bool sized = argc == 5 && (std::string(argv[1]) == "stall" || std::string(argv[1]) == "slow");
  if (argc != 4 && !windowed && !sized) {
    std::fprintf(stderr,
                 "usage: %s event|truncated|nodevice|badheader|badalign|huge|stall|slow|getflood "
                 "HOST PORT\n"
                 "       %s stall|slow HOST PORT BYTES\n"
                 "       %s window HOST PORT N HINT\n",
                 argv[0], argv[0], argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  Peer peer;
  hurray_error err;
  if (peer.w.init(&err) != HURRAY_OK) {
    std::fprintf(stderr, "raw peer: %s\n", err.message);
    return 1;
  }
  ucp_am_handler_param_t hp;
  std::memset(&hp, 0, sizeof hp);
  hp.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                  UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  hp.id = kPutRep;
  hp.flags = UCP_AM_FLAG_WHOLE_MSG;
  hp.cb = on_reply;
  hp.arg = &peer;
  ucp_worker_set_am_recv_handler(peer.w.worker, &hp);
  hp.id = kPutAck;
  ucp_worker_set_am_recv_handler(peer.w.worker, &hp);
  hp.id = kHelloRep;
  ucp_worker_set_am_recv_handler(peer.w.worker, &hp);
  ucp_ep_h ep = nullptr;
  // Through the bootstrap, with the key of HURRAY_NET_RAW_PEER_KEY if set.
  Key key;
  if (const char *k = std::getenv("HURRAY_NET_RAW_PEER_KEY")) key.bytes = k;
  if (bootstrap_connect(peer.w, argv[2], static_cast<uint16_t>(std::atoi(argv[3])), key,
                        Deadline::in(30000), on_error, &peer, &ep, &err) != HURRAY_OK) {
    std::fprintf(stderr, "raw peer: %s\n", err.message);
    peer.w.fini();
    return 1;
  }
  if (windowed) {
    const int rc = window(peer, ep, static_cast<uint32_t>(std::atoi(argv[4])),
                          static_cast<uint32_t>(std::atoi(argv[5])));
    close_ep(peer.w, ep, true, 2000);
    peer.w.fini();
    return rc;
  }
  if (mode == "getflood" || mode == "stall" || mode == "slow") {
    // Connected first, both ways: a HELLO answered (the wire-up needs this
    // process to drive UCX).
    unsigned char hello[kPrefixSize];
    put_prefix(hello, kHelloReq, 1);
    const Deadline hd = Deadline::in(30000);
    if (peer.w.wait_request(am_send(ep, kHelloReq, hello, sizeof hello, nullptr, 0,
                                    UCP_AM_SEND_FLAG_REPLY),
                            hd) != UCS_OK) {
      std::printf("raw peer: cannot connect\n");
      return 1;
    }
    while (peer.replies.empty() && !peer.failed && !hd.passed()) peer.w.wait(50);
    if (peer.replies.empty()) {
      std::printf("raw peer: no HELLO answer\n");
      return 1;
    }
    peer.replies.clear();
  }
  if (mode == "getflood") {
    // Every 256 GETs the worker is driven once, so that they leave; the
    // answers are never taken.
    std::vector<unsigned char> reqs(20000 * kGetSize);
    std::vector<void *> pending;
    int sent = 0;
    for (int i = 0; i < 20000 && !peer.failed; ++i) {
      unsigned char *g = reqs.data() + size_t(i) * kGetSize;
      put_prefix(g, kGetReq, 1000 + uint64_t(i));
      put_u64(g + kPrefixSize, 1);
      void *r = am_send(ep, kGetReq, g, kGetSize, nullptr, 0, UCP_AM_SEND_FLAG_REPLY);
      if (UCS_PTR_IS_ERR(r)) break;
      if (r != nullptr) pending.push_back(r);
      ++sent;
      if (i % 256 == 255) ucp_worker_progress(peer.w.worker);
    }
    std::printf("sent %d\n", sent);
    std::fflush(stdout);
    sleep(60);  // the test kills it first
    return 0;
  }
  hurray_buffer_handle h = {4096, 4096, HURRAY_DEVICE_CPU, HURRAY_SYNC_PRODUCER_SYNCED,
                            HURRAY_MEMORY_STANDARD, 0};
  void *mapped = nullptr;  // huge: the 2^40 bytes, never touched
  uint32_t flags = UCP_AM_SEND_FLAG_REPLY;
  size_t data_len = 4096;
  size_t header_len = kPutSize;
  if (mode == "event") {
    h.device_tag = HURRAY_DEVICE_VULKAN;
    h.sync_mode = HURRAY_SYNC_EVENT;
  } else if (mode == "truncated") {
    h.byte_size = 1u << 20;
    data_len = 1000;
  } else if (mode == "nodevice") {
    h.device_tag = HURRAY_DEVICE_ROCM;
  } else if (mode == "badheader") {
    header_len = 10;
  } else if (mode == "badalign") {
    h.alignment = 64;
  } else if (mode == "huge" || mode == "stall" || mode == "slow") {
    h.byte_size = mode == "huge" ? uint64_t{1} << 40
                  : sized        ? std::strtoull(argv[4], nullptr, 10)
                                 : uint64_t{64} << 20;
    data_len = 0;
    mapped = mmap(nullptr, h.byte_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                  -1, 0);
    if (mapped == MAP_FAILED) {
      std::printf("raw peer: cannot map %llu bytes\n", static_cast<unsigned long long>(h.byte_size));
      return 1;
    }
    flags |= UCP_AM_SEND_FLAG_RNDV;
  } else {
    std::fprintf(stderr, "raw peer: unknown mode %s\n", mode.c_str());
    close_ep(peer.w, ep, false, 1000);
    peer.w.fini();
    return 2;
  }
  PutHeader ph{};
  ph.request_id = 7;
  ph.buffer_id = 99;
  hurray_handle_encode(&h, ph.handle, sizeof ph.handle, nullptr);
  unsigned char header[kPutSize];
  encode(ph, header);
  std::vector<unsigned char> data(data_len, 0x5a);
  const void *bytes = mapped != nullptr ? mapped : data.data();
  const size_t length = mapped != nullptr ? size_t(h.byte_size) : data.size();
  if (mode == "stall") {
    // The header goes; the bytes would move only while this process drives
    // UCX, which it does a few times and then no more.
    void *r = am_send(ep, kPut, header, header_len, bytes, length, flags);
    for (int i = 0; i < 10; ++i) ucp_worker_progress(peer.w.worker);
    std::printf("stalled (%s)\n", UCS_PTR_IS_ERR(r) ? "send failed" : "header sent");
    std::fflush(stdout);
    sleep(60);  // the test kills it first
    return 0;
  }
  const Deadline d = Deadline::in(mode == "slow" ? 60000 : 30000);
  ucs_status_t st = UCS_OK;
  if (mode == "slow") {
    // A 64 KiB PUT first, driven at full speed, so that UCX's connections
    // are up; then the bytes move only while this process drives UCX: 2 ms
    // in every 100.
    {
      PutHeader warm = ph;
      warm.request_id = 6;
      warm.buffer_id = 98;
      hurray_buffer_handle wh = h;
      wh.byte_size = 65536;
      hurray_handle_encode(&wh, warm.handle, sizeof warm.handle, nullptr);
      unsigned char wheader[kPutSize];
      encode(warm, wheader);
      std::vector<unsigned char> wdata(65536, 0x5a);
      st = peer.w.wait_request(am_send(ep, kPut, wheader, kPutSize, wdata.data(), wdata.size(),
                                       flags),
                               d);
      while (st == UCS_OK && peer.replies.empty() && !peer.failed && !d.passed())
        peer.w.wait(50);
      peer.replies.clear();
    }
    void *r = am_send(ep, kPut, header, header_len, bytes, length, flags);
    if (UCS_PTR_IS_ERR(r)) {
      st = UCS_PTR_STATUS(r);
    } else {
      while (peer.replies.empty() && !peer.failed && !d.passed()) {
        const Deadline burst = Deadline::in(2);
        while (!burst.passed()) ucp_worker_progress(peer.w.worker);
        usleep(100000);
      }
      if (r != nullptr) {
        if (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_request_cancel(peer.w.worker, r);
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(peer.w.worker);
        ucp_request_free(r);
      }
    }
  } else if (mapped != nullptr) {
    // huge: the answer is what counts; the send (whose bytes the server
    // never asks for) is cancelled once it came.
    void *r = am_send(ep, kPut, header, header_len, bytes, length, flags);
    if (UCS_PTR_IS_ERR(r)) {
      st = UCS_PTR_STATUS(r);
    } else {
      while (peer.replies.empty() && !peer.failed && !d.passed()) peer.w.wait(50);
      if (r != nullptr) {
        if (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_request_cancel(peer.w.worker, r);
        while (ucp_request_check_status(r) == UCS_INPROGRESS) ucp_worker_progress(peer.w.worker);
        ucp_request_free(r);
      }
    }
  } else {
    st = peer.w.wait_request(am_send(ep, kPut, header, header_len, bytes, length, flags), d);
  }
  int rc = 1;
  if (st != UCS_OK) {
    std::printf("send failed: %s\n", ucs_status_string(st));
  } else {
    while (peer.replies.empty() && !peer.failed && !d.passed()) peer.w.wait(50);
    if (!peer.replies.empty() &&
        check_prefix(peer.replies.front().data(), peer.replies.front().size(), kPutRep,
                     kReplySize)) {
      Reply r;
      decode(peer.replies.front().data(), kPutRep, &r);
      std::printf("reply status=%s rule=%s message=%s\n",
                  hurray_status_name(static_cast<hurray_status>(r.status)),
                  hurray_rule_id(static_cast<hurray_rule>(r.rule)), r.message);
      rc = 0;
    } else {
      std::printf("no reply (%s)\n", peer.failed ? "connection failed" : "timeout");
    }
  }
  close_ep(peer.w, ep, true, 2000);
  peer.w.fini();
  if (mapped != nullptr) munmap(mapped, h.byte_size);
  return rc;
}
