// fuzz_net_message: any bytes as one message of the hurray-net protocol
// (docs/spec/network.md section 2), parsed by the parsers the server and the
// client use: of the UCX messages (src/net/wire.h) PUT and GET_REQ (server),
// HELLO_REP, PUT_REP, GET_REP and PUT_ACK (client); of the bootstrap
// (src/net/bootwire.h) HELLO and AUTH (server), CHALLENGE and DONE
// (client). Properties:
//  - every parser is deterministic and reads nothing past the header (the
//    header is a copy of exactly its size, so ASan sees any read past it);
//  - an accepted header is at least its message's size, and encoding what
//    was parsed gives the same fields back (a reply's message is always
//    NUL-terminated; a HELLO_REP never announces more than 256 devices or
//    more than its bytes hold, and its identities, when it has any, are
//    exactly the bytes after its devices, each sound; a PUT_ACK never more
//    than 64 ids);
//  - a bootstrap message is accepted only at exactly its size, with its
//    magic, an AUTH only announcing 1 to 8192 bytes of address, a refusing
//    DONE none; its message is NUL-terminated;
//  - a PUT the server would go on with (its handle passes the
//    cross-machine rules) declares a PRODUCER_SYNCED handle (BP-SYNC-NET),
//    and a handle that fails names a rule its message starts with.
//
// Input: the header, as it arrived. Every parser sees it, whatever
// operation it came as (a peer chooses the active-message id as freely as
// the bytes). The seeds (corpus/fuzz_net_message) are one valid message of
// each kind, some truncated by a byte, some with a field out of range.
#include <hurray.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "../../src/net/bootwire.h"
#include "../../src/net/wire.h"
#include "fuzz_util.h"

namespace net = hurray::net;

namespace {

void check_put(const std::vector<uint8_t> &h) {
  net::PutHeader a{}, b{};
  const bool ok = net::parse_put(h.data(), h.size(), &a);
  FUZZ_CHECK(ok == net::parse_put(h.data(), h.size(), &b), "parse_put is deterministic");
  if (!ok) return;
  FUZZ_CHECK(h.size() >= net::kPutSize, "an accepted PUT is a whole PUT header");
  unsigned char out[net::kPutSize];
  net::encode(a, out);
  FUZZ_CHECK(std::memcmp(out, h.data(), net::kPutSize) == 0, "a PUT re-encodes to its bytes");
  // What the server does next: the rules of its transport.
  hurray_policy *policy = nullptr;
  FUZZ_CHECK(hurray_policy_create(&policy, nullptr) == HURRAY_OK, "policy");
  hurray_policy_set_transport(policy, HURRAY_TRANSPORT_CROSS_MACHINE, nullptr);
  hurray_error err;
  std::memset(&err, 0, sizeof err);
  if (hurray_table_validate(a.handle, HURRAY_HANDLE_SIZE, policy, &err) == HURRAY_OK) {
    hurray_buffer_handle hh;
    FUZZ_CHECK(hurray_handle_decode(a.handle, HURRAY_HANDLE_SIZE, &hh, nullptr) == HURRAY_OK,
               "a valid handle decodes");
    FUZZ_CHECK(hh.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED,
               "a PUT the server goes on with is PRODUCER_SYNCED (BP-SYNC-NET)");
  } else {
    FUZZ_CHECK(err.rule_id[0] != 0, "a refused handle names a rule");
    FUZZ_CHECK(std::strncmp(err.message, err.rule_id, std::strlen(err.rule_id)) == 0,
               "the message starts with the rule ID");
  }
  hurray_policy_destroy(policy);
}

void check_get(const std::vector<uint8_t> &h) {
  uint64_t r1 = 0, b1 = 0, r2 = 0, b2 = 0;
  const bool ok = net::parse_get(h.data(), h.size(), &r1, &b1);
  FUZZ_CHECK(ok == net::parse_get(h.data(), h.size(), &r2, &b2), "parse_get is deterministic");
  if (!ok) return;
  FUZZ_CHECK(h.size() >= net::kGetSize && r1 == r2 && b1 == b2, "a GET_REQ is whole and stable");
  unsigned char out[net::kGetSize];
  net::put_prefix(out, net::kGetReq, r1);
  net::put_u64(out + net::kPrefixSize, b1);
  FUZZ_CHECK(std::memcmp(out, h.data(), net::kGetSize) == 0, "a GET_REQ re-encodes to its bytes");
}

void check_reply(const std::vector<uint8_t> &h, net::Op op) {
  net::Reply a, b;
  const bool ok = net::parse_reply(h.data(), h.size(), op, &a);
  FUZZ_CHECK(ok == net::parse_reply(h.data(), h.size(), op, &b), "parse_reply is deterministic");
  if (!ok) return;
  const size_t size = op == net::kGetRep ? net::kGetRepSize : net::kReplySize;
  FUZZ_CHECK(h.size() >= size, "an accepted reply is a whole reply");
  FUZZ_CHECK(std::memchr(a.message, 0, sizeof a.message) != nullptr,
             "a reply's message is NUL-terminated");
  std::vector<unsigned char> out(size);
  net::encode(a, op, out.data());
  std::vector<unsigned char> want(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(size));
  want[32 + net::kMessageSize - 1] = 0;  // the message's last byte is always NUL
  FUZZ_CHECK(out == want, "a reply re-encodes to its bytes, message terminated");
}

void check_hello(const std::vector<uint8_t> &h) {
  uint32_t t1 = 0, n1 = 0, t2 = 0, n2 = 0;
  const bool ok = net::parse_hello_rep(h.data(), h.size(), &t1, &n1);
  FUZZ_CHECK(ok == net::parse_hello_rep(h.data(), h.size(), &t2, &n2),
             "parse_hello_rep is deterministic");
  if (!ok) return;
  FUZZ_CHECK(n1 <= net::kMaxHelloDevices, "at most 256 devices");
  FUZZ_CHECK(h.size() >= net::hello_rep_size(n1), "the devices are within the bytes");
  std::vector<net::HelloDevice> d(n1);
  for (uint32_t i = 0; i < n1; ++i) d[i] = net::hello_device(h.data(), i);
  std::vector<unsigned char> out(net::hello_rep_size(n1));
  net::encode_hello_rep(net::request_id_of(h.data()), t1, d.data(), n1, out.data());
  uint32_t t3 = 0, n3 = 0;
  FUZZ_CHECK(net::parse_hello_rep(out.data(), out.size(), &t3, &n3) && t3 == t1 && n3 == n1,
             "a HELLO_REP re-encodes to the same transport and count");
  for (uint32_t i = 0; i < n1; ++i) {
    const net::HelloDevice e = net::hello_device(out.data(), i);
    FUZZ_CHECK(e.tag == d[i].tag && e.count == d[i].count && e.classes == d[i].classes,
               "each device re-encodes to itself");
  }
  // the identities after the devices (issue 26)
  uint32_t m1 = 0, m2 = 0;
  const bool ids = net::parse_hello_ids(h.data(), h.size(), n1, &m1);
  FUZZ_CHECK(ids == net::parse_hello_ids(h.data(), h.size(), n1, &m2) && m1 == m2,
             "parse_hello_ids is deterministic");
  if (!ids) return;
  FUZZ_CHECK(m1 <= net::kMaxHelloIds, "at most 256 identities");
  FUZZ_CHECK(h.size() == net::hello_rep_size(n1) + (h.size() > net::hello_rep_size(n1)
                                                         ? net::hello_ids_size(m1)
                                                         : 0),
             "the identities are exactly the bytes after the devices");
  if (h.size() == net::hello_rep_size(n1)) return;  // none: a server from before them
  std::vector<net::HelloId> e(m1);
  for (uint32_t i = 0; i < m1; ++i) {
    e[i] = net::hello_id(h.data(), n1, i);
    FUZZ_CHECK(e[i].tag != HURRAY_DEVICE_CPU && net::sound_identity(e[i].kind, e[i].bytes),
               "an accepted identity is sound and not the CPU's");
  }
  out.resize(h.size());
  net::encode_hello_ids(e.data(), m1, out.data() + net::hello_rep_size(n1));
  std::memcpy(out.data(), h.data(), net::hello_rep_size(n1));
  FUZZ_CHECK(std::memcmp(out.data(), h.data(), h.size()) == 0,
             "a HELLO_REP's identities re-encode to their bytes");
}

void check_ack(const std::vector<uint8_t> &h) {
  const uint32_t k = net::put_ack_count(h.data(), h.size());
  FUZZ_CHECK(k == net::put_ack_count(h.data(), h.size()), "put_ack_count is deterministic");
  if (k == 0) return;
  FUZZ_CHECK(k <= net::kMaxAckIds, "at most 64 ids");
  FUZZ_CHECK(h.size() >= net::put_ack_size(k), "the ids are within the bytes");
  std::vector<uint64_t> ids(k);
  for (uint32_t i = 0; i < k; ++i) ids[i] = net::put_ack_id(h.data(), i);
  std::vector<unsigned char> out(net::put_ack_size(k));
  net::encode_put_ack(ids.data(), k, out.data());
  FUZZ_CHECK(net::put_ack_count(out.data(), out.size()) == k, "a PUT_ACK re-encodes its count");
  for (uint32_t i = 0; i < k; ++i)
    FUZZ_CHECK(net::put_ack_id(out.data(), i) == ids[i], "each id re-encodes to itself");
}

// The bootstrap's four messages: a prefix of the bytes exactly as long as
// each (the fixed parts of AUTH and DONE are what the server and client
// parse before they read the address).
void check_boot(const std::vector<uint8_t> &h) {
  net::BootHello bh;
  if (net::parse_boot_hello(h.data(), h.size(), &bh)) {
    FUZZ_CHECK(h.size() == net::kBootHelloSize, "a bootstrap HELLO is exactly its size");
    unsigned char out[net::kBootHelloSize];
    net::encode(bh, out);
    FUZZ_CHECK(std::memcmp(out, h.data(), sizeof out) == 0, "a HELLO re-encodes to its bytes");
  }
  if (h.size() >= net::kBootHelloSize)
    (void)net::parse_boot_hello(h.data(), net::kBootHelloSize, &bh);
  net::Challenge ch;
  const size_t nc = std::min(h.size(), net::kChallengeSize);
  if (net::parse_challenge(h.data(), nc, &ch)) {
    FUZZ_CHECK(nc == net::kChallengeSize, "a CHALLENGE is exactly its size");
    FUZZ_CHECK(std::memchr(ch.message, 0, sizeof ch.message) != nullptr,
               "a CHALLENGE's message is NUL-terminated");
  }
  net::AuthFixed a;
  const size_t na = std::min(h.size(), net::kAuthFixed);
  if (net::parse_auth_fixed(h.data(), na, &a)) {
    FUZZ_CHECK(na == net::kAuthFixed, "an AUTH's fixed part is exactly its size");
    FUZZ_CHECK(a.address_length >= 1 && a.address_length <= net::kMaxWorkerAddress,
               "an AUTH announces 1 to 8192 bytes of address");
  }
  net::DoneFixed d;
  const size_t nd = std::min(h.size(), net::kDoneFixed);
  if (net::parse_done_fixed(h.data(), nd, &d)) {
    FUZZ_CHECK(nd == net::kDoneFixed, "a DONE's fixed part is exactly its size");
    FUZZ_CHECK(std::memchr(d.message, 0, sizeof d.message) != nullptr,
               "a DONE's message is NUL-terminated");
    FUZZ_CHECK(d.status != 0 ? d.address_length == 0
                             : d.address_length >= 1 && d.address_length <= net::kMaxWorkerAddress,
               "a DONE announces an address only when it admits");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::vector<uint8_t> header(data, data + size);
  check_put(header);
  check_get(header);
  check_reply(header, net::kPutRep);
  check_reply(header, net::kGetRep);
  check_hello(header);
  check_ack(header);
  check_boot(header);
  return 0;
}
