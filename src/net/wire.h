// The messages of the hurray-net protocol (docs/spec/network.md, section 2):
// UCX active messages whose headers are fixed-size, little-endian records
// assembled byte by byte. Shared by the library and the tests' raw peer.
#pragma once

#include <hurray_backend.h>
#include <hurray_net.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace hurray::net {

inline constexpr uint32_t kMagic = 0x54454E48u;  // "HNET" little-endian
inline constexpr uint16_t kVersion = HURRAY_NET_PROTOCOL_VERSION;

// Active-message ids (ucp_worker_set_am_recv_handler).
enum Op : uint16_t {
  kHelloReq = 1,  // client -> server: prefix, request id
  kHelloRep = 2,  // server -> client: prefix, request id, transport, devices
  kPut = 3,       // client -> server: PutHeader + the bytes as data
  kPutRep = 4,    // server -> client: Reply
  kGetReq = 5,    // client -> server: GetHeader
  kGetRep = 6,    // server -> client: Reply + handle, the bytes as data
  kPutAck = 7,    // server -> client: prefix, count, the request ids of PUTs that landed
};

inline void put_u16(unsigned char *p, uint16_t v) {
  p[0] = static_cast<unsigned char>(v);
  p[1] = static_cast<unsigned char>(v >> 8);
}
inline void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline uint16_t get_u16(const unsigned char *p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
inline uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}
inline uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Every header starts with magic (4), version (2), op (2), request id (8).
inline constexpr size_t kPrefixSize = 16;
inline void put_prefix(unsigned char *p, Op op, uint64_t request_id) {
  put_u32(p, kMagic);
  put_u16(p + 4, kVersion);
  put_u16(p + 6, op);
  put_u64(p + 8, request_id);
}
// True when the header is at least `size` bytes and carries our magic,
// version and `op`.
inline bool check_prefix(const void *header, size_t length, Op op, size_t size) {
  if (header == nullptr || length < size || size < kPrefixSize) return false;
  const auto *p = static_cast<const unsigned char *>(header);
  return get_u32(p) == kMagic && get_u16(p + 4) == kVersion && get_u16(p + 6) == op;
}
inline uint64_t request_id_of(const void *header) {
  return get_u64(static_cast<const unsigned char *>(header) + 8);
}

// HELLO reply: prefix, transport (4), n (4), n x device (12 bytes: tag, 3
// zero bytes, count i32, memory-class mask u32).
inline constexpr size_t kHelloRepFixed = kPrefixSize + 8;
inline constexpr size_t kHelloDeviceSize = 12;
inline constexpr uint32_t kMaxHelloDevices = 256;

// PUT: prefix, buffer id (8), the 16 wire bytes of the destination handle,
// device ordinal (4), in flight (4): how many PUTs the client had in flight
// when it sent this one, this one included (0 from clients before the field:
// answer each PUT on its own). The data is the buffer's bytes.
inline constexpr size_t kPutSize = kPrefixSize + 8 + HURRAY_HANDLE_SIZE + 8;
struct PutHeader {
  uint64_t request_id;
  uint64_t buffer_id;
  unsigned char handle[HURRAY_HANDLE_SIZE];
  int32_t device_ordinal;
  uint32_t in_flight = 0;
};
inline void encode(const PutHeader &h, unsigned char *p) {
  put_prefix(p, kPut, h.request_id);
  put_u64(p + 16, h.buffer_id);
  std::memcpy(p + 24, h.handle, HURRAY_HANDLE_SIZE);
  put_u32(p + 40, static_cast<uint32_t>(h.device_ordinal));
  put_u32(p + 44, h.in_flight);
}
inline void decode(const unsigned char *p, PutHeader *h) {
  h->request_id = get_u64(p + 8);
  h->buffer_id = get_u64(p + 16);
  std::memcpy(h->handle, p + 24, HURRAY_HANDLE_SIZE);
  h->device_ordinal = static_cast<int32_t>(get_u32(p + 40));
  h->in_flight = get_u32(p + 44);
}

// PUT_ACK: prefix (request id 0), count (4), reserved (4), then `count`
// request ids (8 each): PUTs that landed, each answered as a PUT_REP with
// status OK would answer it. Refusals and failures always come as PUT_REP.
inline constexpr size_t kPutAckFixed = kPrefixSize + 8;
inline constexpr uint32_t kMaxAckIds = 64;
inline constexpr size_t put_ack_size(uint32_t count) { return kPutAckFixed + 8 * size_t{count}; }
// `count` ids (at most kMaxAckIds) into put_ack_size(count) bytes at p.
inline void encode_put_ack(const uint64_t *ids, uint32_t count, unsigned char *p) {
  put_prefix(p, kPutAck, 0);
  put_u32(p + kPrefixSize, count);
  put_u32(p + kPrefixSize + 4, 0);
  for (uint32_t i = 0; i < count; ++i) put_u64(p + kPutAckFixed + 8 * i, ids[i]);
}
// The number of ids of the PUT_ACK in `length` bytes at p; 0 when it is not
// one (wrong prefix, too many ids, or fewer bytes than they need).
inline uint32_t put_ack_count(const unsigned char *p, size_t length) {
  if (!check_prefix(p, length, kPutAck, kPutAckFixed)) return 0;
  const uint32_t count = get_u32(p + kPrefixSize);
  return count <= kMaxAckIds && length >= put_ack_size(count) ? count : 0;
}
inline uint64_t put_ack_id(const unsigned char *p, uint32_t i) {
  return get_u64(p + kPutAckFixed + 8 * i);
}
// PUTs this large or larger are answered on their own, and while one of them
// is still being received the answers waiting on its connection go out: an
// answer costs about what 40 us of data does on TCP (docs/performance.md),
// nothing next to such a transfer, and it should not wait for one.
inline constexpr uint64_t kAckDeferMax = 4u << 20;

// Whether the answers waiting on a connection go out now (docs/spec/network.md
// N15): `waiting` PUTs landed and are not yet answered, the client last said it
// had `in_flight` PUTs in flight, and `small` PUTs under kAckDeferMax and
// `large` ones of that connection are still being received. They wait only
// while fewer than half the client's window are waiting and a small PUT is
// still coming, whose landing brings the next chance to send them; so an
// answer never waits for a transfer that is not under way.
// Whether a PUT of `length` bytes that landed may wait to be answered with
// others (N15): its client said more than one PUT was in flight, and it is
// small. (Refusals and failures never wait.)
inline bool ack_may_wait(uint32_t in_flight, uint64_t length) {
  return in_flight > 1 && length < kAckDeferMax;
}

inline bool ack_now(size_t waiting, uint32_t in_flight, int small, int large) {
  if (waiting == 0) return false;
  const size_t want = std::min<size_t>(std::max<uint32_t>(in_flight / 2, 1), kMaxAckIds);
  return waiting >= want || small == 0 || large > 0;
}

// GET request: prefix, buffer id (8).
inline constexpr size_t kGetSize = kPrefixSize + 8;

// Reply (PUT_REP, GET_REP): prefix, status (4), rule (4), buffer id (8),
// message (256, NUL-terminated), then for GET_REP the handle (16).
inline constexpr size_t kMessageSize = HURRAY_ERROR_MESSAGE_SIZE;
inline constexpr size_t kReplySize = kPrefixSize + 16 + kMessageSize;
inline constexpr size_t kGetRepSize = kReplySize + HURRAY_HANDLE_SIZE;
struct Reply {
  uint64_t request_id = 0;
  int32_t status = 0;
  uint32_t rule = 0;
  uint64_t buffer_id = 0;
  char message[kMessageSize] = {};
  unsigned char handle[HURRAY_HANDLE_SIZE] = {};
};
inline void encode(const Reply &r, Op op, unsigned char *p) {
  put_prefix(p, op, r.request_id);
  put_u32(p + 16, static_cast<uint32_t>(r.status));
  put_u32(p + 20, r.rule);
  put_u64(p + 24, r.buffer_id);
  std::memcpy(p + 32, r.message, kMessageSize);
  p[32 + kMessageSize - 1] = 0;
  if (op == kGetRep) std::memcpy(p + kReplySize, r.handle, HURRAY_HANDLE_SIZE);
}
inline void decode(const unsigned char *p, Op op, Reply *r) {
  r->request_id = get_u64(p + 8);
  r->status = static_cast<int32_t>(get_u32(p + 16));
  r->rule = get_u32(p + 20);
  r->buffer_id = get_u64(p + 24);
  std::memcpy(r->message, p + 32, kMessageSize);
  r->message[kMessageSize - 1] = 0;
  if (op == kGetRep) std::memcpy(r->handle, p + kReplySize, HURRAY_HANDLE_SIZE);
}

// ---- parsers -------------------------------------------------------------
// What the server and the client accept of a peer's header, in one place
// (fuzzed by tests/fuzz/fuzz_net_message.cpp). Each reads nothing past
// `length` bytes and returns false for a header that is not one.

// PUT (server): at least kPutSize bytes with our prefix.
inline bool parse_put(const unsigned char *p, size_t length, PutHeader *out) {
  if (!check_prefix(p, length, kPut, kPutSize)) return false;
  decode(p, out);
  return true;
}

// GET_REQ (server): the request id and the buffer id asked for.
inline bool parse_get(const unsigned char *p, size_t length, uint64_t *request_id,
                      uint64_t *buffer_id) {
  if (!check_prefix(p, length, kGetReq, kGetSize)) return false;
  *request_id = request_id_of(p);
  *buffer_id = get_u64(p + kPrefixSize);
  return true;
}

// PUT_REP or GET_REP (client): the message is NUL-terminated in *out.
inline bool parse_reply(const unsigned char *p, size_t length, Op op, Reply *out) {
  if (op != kPutRep && op != kGetRep) return false;
  if (!check_prefix(p, length, op, op == kGetRep ? kGetRepSize : kReplySize)) return false;
  decode(p, op, out);
  return true;
}

// HELLO_REP (client): the server's transport and how many devices follow
// (at most kMaxHelloDevices, all within `length`).
struct HelloDevice {
  uint8_t tag;
  int32_t count;
  uint32_t classes;
};
inline constexpr size_t hello_rep_size(uint32_t n) {
  return kHelloRepFixed + kHelloDeviceSize * size_t{n};
}
inline bool parse_hello_rep(const unsigned char *p, size_t length, uint32_t *transport,
                            uint32_t *n) {
  if (!check_prefix(p, length, kHelloRep, kHelloRepFixed)) return false;
  const uint32_t k = get_u32(p + kPrefixSize + 4);
  if (k > kMaxHelloDevices || length < hello_rep_size(k)) return false;
  *transport = get_u32(p + kPrefixSize);
  *n = k;
  return true;
}
// Device i (< n) of a HELLO_REP parse_hello_rep accepted.
inline HelloDevice hello_device(const unsigned char *p, uint32_t i) {
  const unsigned char *q = p + kHelloRepFixed + kHelloDeviceSize * size_t{i};
  return {q[0], static_cast<int32_t>(get_u32(q + 4)), get_u32(q + 8)};
}
// A HELLO_REP of n devices into hello_rep_size(n) bytes at p.
inline void encode_hello_rep(uint64_t request_id, uint32_t transport, const HelloDevice *d,
                             uint32_t n, unsigned char *p) {
  std::memset(p, 0, hello_rep_size(n));
  put_prefix(p, kHelloRep, request_id);
  put_u32(p + kPrefixSize, transport);
  put_u32(p + kPrefixSize + 4, n);
  for (uint32_t i = 0; i < n; ++i) {
    unsigned char *q = p + kHelloRepFixed + kHelloDeviceSize * size_t{i};
    q[0] = d[i].tag;
    put_u32(q + 4, static_cast<uint32_t>(d[i].count));
    put_u32(q + 8, d[i].classes);
  }
}

// The device identities of a HELLO_REP (docs/spec/network.md section 2,
// docs/spec/identity.md): an extension after the n devices, which a client
// from before it ignores (it reads hello_rep_size(n) bytes, no more): marker
// "HNID" (4), count m (4), then m entries of 24 bytes: tag (1), reserved (1),
// ordinal (2), identity kind (4), identity bytes (16). Absent (a server from
// before it): no identity is known, PUTs name the server's devices by ordinal.
inline constexpr uint32_t kHelloIdsMagic = 0x44494E48u;  // "HNID" little-endian
inline constexpr size_t kHelloIdsFixed = 8;
inline constexpr size_t kHelloIdSize = 24;
inline constexpr uint32_t kMaxHelloIds = 256;
struct HelloId {
  uint8_t tag;
  uint16_t ordinal;
  uint32_t kind;  // HURRAY_BACKEND_ID_*; NONE: the device has none
  unsigned char bytes[16];
};
inline constexpr size_t hello_ids_size(uint32_t m) {
  return kHelloIdsFixed + kHelloIdSize * size_t{m};
}
// Identity bytes as identity.md defines them: a known kind; NONE all zero;
// else the bytes beyond the kind's (LUID 8, PCI 7) zero and not all zero.
inline bool sound_identity(uint32_t kind, const unsigned char *b) {
  const size_t used = kind == HURRAY_BACKEND_ID_UUID   ? 16
                      : kind == HURRAY_BACKEND_ID_LUID ? 8
                      : kind == HURRAY_BACKEND_ID_PCI  ? 7
                                                       : 0;
  if (kind != HURRAY_BACKEND_ID_NONE && used == 0) return false;
  bool any = false;
  for (size_t i = 0; i < 16; ++i) {
    if (i >= used && b[i]) return false;
    any = any || b[i];
  }
  return kind == HURRAY_BACKEND_ID_NONE || any;
}
// Entry i (< m) of the extension of a HELLO_REP of n devices.
inline HelloId hello_id(const unsigned char *p, uint32_t n, uint32_t i) {
  const unsigned char *q = p + hello_rep_size(n) + kHelloIdsFixed + kHelloIdSize * size_t{i};
  HelloId e{q[0], get_u16(q + 2), get_u32(q + 4), {}};
  std::memcpy(e.bytes, q + 8, sizeof e.bytes);
  return e;
}
// The extension of a HELLO_REP (client) of n devices that parse_hello_rep
// accepted: *m = 0 when nothing follows the devices; else exactly an
// extension of m <= kMaxHelloIds entries whose every entry is sound: a tag
// of the devices (not the CPU), an ordinal below that tag's count, no tag and
// ordinal twice, a sound identity. False otherwise.
inline bool parse_hello_ids(const unsigned char *p, size_t length, uint32_t n, uint32_t *m) {
  const size_t at = hello_rep_size(n);
  *m = 0;
  if (length == at) return true;
  if (length < at + kHelloIdsFixed || get_u32(p + at) != kHelloIdsMagic) return false;
  const uint32_t k = get_u32(p + at + 4);
  if (k > kMaxHelloIds || length != at + hello_ids_size(k)) return false;
  for (uint32_t i = 0; i < k; ++i) {
    const HelloId e = hello_id(p, n, i);
    const unsigned char *q = p + at + kHelloIdsFixed + kHelloIdSize * size_t{i};
    if (e.tag == HURRAY_DEVICE_CPU || q[1] != 0 || !sound_identity(e.kind, e.bytes)) return false;
    bool offered = false;
    for (uint32_t j = 0; j < n && !offered; ++j) {
      const HelloDevice d = hello_device(p, j);
      offered = d.tag == e.tag && e.ordinal < d.count;
    }
    if (!offered) return false;
    for (uint32_t j = 0; j < i; ++j) {
      const HelloId f = hello_id(p, n, j);
      if (f.tag == e.tag && f.ordinal == e.ordinal) return false;
    }
  }
  *m = k;
  return true;
}
// The extension of m entries into hello_ids_size(m) bytes at q (right after
// a HELLO_REP's devices).
inline void encode_hello_ids(const HelloId *ids, uint32_t m, unsigned char *q) {
  std::memset(q, 0, hello_ids_size(m));
  put_u32(q, kHelloIdsMagic);
  put_u32(q + 4, m);
  for (uint32_t i = 0; i < m; ++i) {
    unsigned char *e = q + kHelloIdsFixed + kHelloIdSize * size_t{i};
    e[0] = ids[i].tag;
    put_u16(e + 2, ids[i].ordinal);
    put_u32(e + 4, ids[i].kind);
    std::memcpy(e + 8, ids[i].bytes, sizeof ids[i].bytes);
  }
}

}  // namespace hurray::net
