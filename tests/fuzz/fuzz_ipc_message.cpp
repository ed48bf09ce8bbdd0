// fuzz_ipc_message: any bytes as one message of the IPC channel's wire
// format (docs/spec/ipc.md), parsed by the channel's own parser
// (src/ipc/wire.cpp). Checks properties, not only the absence of crashes:
//  - parse never reads past the input and is deterministic;
//  - an accepted message encodes back to exactly the input bytes, and is
//    refused with one descriptor more or fewer than it announces;
//  - a rejected message is HURRAY_E_PROTOCOL with a message that says so
//    ("ipc message: ...") and the offset of a field inside the header or
//    the input;
//  - an accepted DEVICES passes check_devices against a HELLO announcing
//    its tags, and against one announcing none is refused exactly when it
//    lists a device, at an offset inside it;
//  - the handle of an accepted HANDOFF either passes the IPC rules or the
//    error names a rule ID its message starts with (what the channel does
//    with such a message next).
//
//  - an accepted HANDOFF_MANY splits into entries that each parse as a
//    HANDOFF of their own and encode back (encode_many) to the input; an
//    accepted RELEASE_MANY names distinct IDs, none 0.
//
// Input layout (tests/fuzz/make_corpus.py writes seeds in it):
//   byte 0   bit 7 clear: bits 0-1, bit 7 set: bits 0-6: number of
//            descriptors that "arrived" with the message (a HANDOFF_MANY
//            carries up to 128)
//   byte 1.. the datagram
#include <hurray.h>

#include <cstring>
#include <vector>

#include "../../src/ipc/wire.h"
#include "fuzz_util.h"

namespace wire = hurray::ipc;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // (an empty input: an empty datagram, no descriptor)
  const size_t nfds = !size ? 0 : (data[0] & 0x80u) ? data[0] & 0x7Fu : data[0] & 3u;
  // a copy of exactly the datagram, so ASan sees any read past it
  const std::vector<uint8_t> msg(size ? data + 1 : data, data + size);
  const size_t n = msg.size();

  wire::Message m, again;
  hurray_error err, err2;
  std::memset(&err, 0, sizeof err);
  const hurray_status st = wire::parse(msg.data(), n, nfds, &m, &err);
  const hurray_status st2 = wire::parse(msg.data(), n, nfds, &again, &err2);
  FUZZ_CHECK(st == st2, "parse is deterministic");

  if (st != HURRAY_OK) {
    FUZZ_CHECK(st == HURRAY_E_PROTOCOL, "a rejected message is HURRAY_E_PROTOCOL");
    FUZZ_CHECK(err.status == HURRAY_E_PROTOCOL, "err.status is the returned status");
    FUZZ_CHECK(std::strncmp(err.message, "ipc message: ", 13) == 0 && err.message[13],
               "the error message says what is wrong");
    FUZZ_CHECK(std::strcmp(err.message, err2.message) == 0, "the same error twice");
    FUZZ_CHECK(err.byte_offset >= 0 &&
                   (static_cast<size_t>(err.byte_offset) < n ||
                    static_cast<size_t>(err.byte_offset) < wire::kHeaderSize),
               "the error's offset points into the input or the header");
    hurray_fuzz::verdict_refused({err.rule_id});
    return 0;
  }

  if (m.type == wire::Type::HandoffMany) {  // its entries, and encode_many
    std::vector<wire::Message> e(wire::kMaxBatch);
    const size_t k = wire::split_many(msg.data(), n, e.data());
    FUZZ_CHECK(k == m.count && k >= 1 && k <= wire::kMaxBatch, "every entry is split out");
    size_t fds = 0;
    std::vector<uint8_t> one(wire::kMaxMessage);
    for (size_t i = 0; i < k; ++i) {
      FUZZ_CHECK(e[i].type == wire::Type::Handoff && e[i].id != 0, "an entry is a HANDOFF");
      for (size_t j = 0; j < i; ++j) FUZZ_CHECK(e[j].id != e[i].id, "entry IDs are distinct");
      fds += e[i].fd_count;
      const size_t len = wire::encode(e[i], one.data(), one.size());
      FUZZ_CHECK(len && wire::parse(one.data(), len, e[i].fd_count, &again, nullptr) == HURRAY_OK,
                 "an entry is a HANDOFF that parses on its own");
    }
    FUZZ_CHECK(fds == nfds, "the entries carry the descriptors that arrived");
    std::vector<uint8_t> out(wire::kMaxBatchMessage);
    FUZZ_CHECK(wire::encode_many(e.data(), k, out.data(), out.size()) == n &&
                   std::memcmp(out.data(), msg.data(), n) == 0,
               "an accepted HANDOFF_MANY re-encodes to its bytes");
    FUZZ_CHECK(wire::encode_many(e.data(), k, out.data(), n - 1) == 0,
               "encode_many refuses a buffer too small");
    FUZZ_CHECK(wire::parse(msg.data(), n, nfds + 1, &again, nullptr) == HURRAY_E_PROTOCOL,
               "one descriptor too many is refused");
    hurray_fuzz::verdict_accepted();
    return 0;
  }
  if (m.type == wire::Type::ReleaseMany)
    for (size_t i = 0; i < m.count; ++i) {
      FUZZ_CHECK(m.ids64[i] != 0, "RELEASE_MANY names no ID 0");
      for (size_t j = 0; j < i; ++j) FUZZ_CHECK(m.ids64[j] != m.ids64[i], "nor one twice");
    }

  // accepted: encode gives the input back, byte for byte
  uint8_t out[wire::kMaxMessage];
  const size_t k = wire::encode(m, out, sizeof out);
  FUZZ_CHECK(k == n, "an accepted message re-encodes to its own length");
  FUZZ_CHECK(std::memcmp(out, msg.data(), n) == 0, "an accepted message re-encodes to its bytes");
  FUZZ_CHECK(m.fd_count == nfds, "the descriptor count is the one that arrived");
  FUZZ_CHECK(wire::parse(msg.data(), n, nfds + 1, &again, nullptr) == HURRAY_E_PROTOCOL,
             "one descriptor too many is refused");
  if (nfds)
    FUZZ_CHECK(wire::parse(msg.data(), n, nfds - 1, &again, nullptr) == HURRAY_E_PROTOCOL,
               "one descriptor too few is refused");
  FUZZ_CHECK(wire::encode(m, out, n - 1) == 0, "encode refuses a buffer too small");

  if (m.type == wire::Type::Devices) {
    wire::Message hello{}, none{};
    hello.type = none.type = wire::Type::Hello;
    for (uint16_t i = 0; i < m.id_count; ++i) {
      bool have = false;
      for (uint16_t j = 0; j < hello.device_count; ++j)
        have |= hello.devices[j].tag == m.ids[i].tag;
      if (!have && hello.device_count < wire::kMaxDevices)
        hello.devices[hello.device_count++] = {m.ids[i].tag, 1u};
    }
    // (more than 16 tags cannot be announced: the check then names the first left out)
    const hurray_status c = wire::check_devices(hello, m, &err);
    FUZZ_CHECK(c == HURRAY_OK || hello.device_count == wire::kMaxDevices,
               "a DEVICES of announced tags passes");
    const hurray_status c0 = wire::check_devices(none, m, &err);
    FUZZ_CHECK((c0 == HURRAY_OK) == (m.id_count == 0),
               "a DEVICES of a tag the HELLO did not announce is refused");
    if (c0 != HURRAY_OK)
      FUZZ_CHECK(err.status == HURRAY_E_PROTOCOL && err.byte_offset >= 0 &&
                     static_cast<size_t>(err.byte_offset) < n,
                 "the refusal names an offset inside the DEVICES");
  }
  if (m.type == wire::Type::Handoff) {
    hurray_policy *ipc = nullptr;
    FUZZ_CHECK(hurray_policy_create(&ipc, nullptr) == HURRAY_OK, "policy");
    hurray_policy_set_transport(ipc, HURRAY_TRANSPORT_IPC, nullptr);
    const hurray_status v = hurray_table_validate(m.handle, sizeof m.handle, ipc, &err);
    if (v != HURRAY_OK) {
      FUZZ_CHECK(err.rule_id[0] != 0, "a handle the channel refuses names a rule");
      FUZZ_CHECK(std::strncmp(err.message, err.rule_id, std::strlen(err.rule_id)) == 0,
                 "the message starts with the rule ID");
    }
    hurray_policy_destroy(ipc);
    // the verdict is the channel's: a HANDOFF whose handle breaks the IPC
    // rules is refused after parsing
    if (v != HURRAY_OK) {
      hurray_fuzz::verdict_refused({err.rule_id});
      return 0;
    }
  }
  hurray_fuzz::verdict_accepted();
  return 0;
}
