// fuzz_handle: any bytes as a buffer table, under a policy the first bytes
// choose. Checks properties, not only the absence of crashes:
//  - the policy setters succeed exactly when the model says they should;
//  - everything table_checks.h checks: validate's status equals diagnose's,
//    validate's error is diagnose's first error byte for byte, every
//    diagnostic has a rule ID its message starts with, and diagnose finds
//    what the independent model of docs/spec finds;
//  - diagnose with a small capacity (0-3 and half the total) writes exactly
//    min(capacity, total) entries, the same as with room for all, and the
//    same counts and status; NULL count pointers are accepted;
//  - every complete 16-byte handle decodes to its little-endian fields and
//    encodes back to the same bytes; decode/encode refuse other sizes and
//    then write nothing;
//  - hurray_handle_validate on each handle agrees with the table: for
//    handle 0 (so for a single-handle input) it returns exactly the first
//    error diagnose reports at index 0; for handle i > 0, the same rule at
//    the same field (its error names buffer 0), BP-COLOC aside;
//  - with a default policy, NULL gives the same results;
//  - NULL arguments are refused with HURRAY_E_INVALID_ARGUMENT and nothing
//    else written.
//
// Input layout (tests/fuzz/make_corpus.py writes seeds in it):
//   byte 0   bits 0-1 transport (in-process, ipc, rdma, cross-machine);
//            bit 2 warnings-as-errors; bit 3 also pass the out-of-range
//            transport 4 + (bits 4-7), as a C caller may (c_caller.c): it
//            must be refused, named "invalid", and change nothing
//   byte 1   device tag to agree as private when non-zero (any value: the
//            setter must refuse the non-private ones)
//   byte 2   device tag for hurray_policy_set_ipc_sync
//   byte 3   bit 7 call it, with flags bits 0-2 (4 is unknown: refused);
//            bits 4-5 a small capacity for the capacity check
//   byte 4.. the buffer table (any length)
#include <hurray.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_util.h"
#include "model.h"
#include "table_checks.h"

using namespace hurray_fuzz;

// c_caller.c: a C caller passing an out-of-range transport.
extern "C" hurray_status hurray_fuzz_c_set_transport(hurray_policy *policy, int transport,
                                                     hurray_error *err);
extern "C" const char *hurray_fuzz_c_transport_name(int transport);

namespace {

// HURRAY_FUZZ_SKIP_BAD_ENUMS=1 leaves out the out-of-range transport probe
// (byte 0 bit 3), to fuzz the rest while libhurray still fails it.
bool skip_bad_enums() {
  static const bool skip = [] {
    const char *v = std::getenv("HURRAY_FUZZ_SKIP_BAD_ENUMS");
    return v && *v && std::strcmp(v, "0") != 0;
  }();
  return skip;
}

using PolicyPtr = std::unique_ptr<hurray_policy, void (*)(hurray_policy *)>;

PolicyPtr make_policy(Reader &in, ModelPolicy *m) {
  hurray_policy *raw = nullptr;
  FUZZ_CHECK(hurray_policy_create(&raw, nullptr) == HURRAY_OK && raw, "policy_create");
  PolicyPtr p(raw, hurray_policy_destroy);
  const uint8_t b0 = in.u8(), b1 = in.u8(), b2 = in.u8(), b3 = in.u8();
  hurray_error e;

  m->transport = static_cast<hurray_transport>(b0 & 3);
  FUZZ_CHECK(hurray_policy_set_transport(p.get(), m->transport, &e) == HURRAY_OK,
             "the four transports are accepted");
  if ((b0 & 8) && !skip_bad_enums()) {
    const int bad = 4 + (b0 >> 4);
    poison(&e);
    FUZZ_CHECK(hurray_fuzz_c_set_transport(p.get(), bad, &e) == HURRAY_E_INVALID_ARGUMENT &&
                   e.status == HURRAY_E_INVALID_ARGUMENT,
               "an unknown transport is refused (and, the model checks, changes nothing)");
    FUZZ_CHECK(std::strcmp(hurray_fuzz_c_transport_name(bad), "invalid") == 0,
               "an unknown transport is named \"invalid\"");
  }
  m->warnings_as_errors = (b0 & 4) != 0;
  FUZZ_CHECK(hurray_policy_set_warnings_as_errors(p.get(), m->warnings_as_errors, &e) ==
                 HURRAY_OK,
             "set_warnings_as_errors");
  if (b1 != 0) {
    const bool ok = m->allow_private(b1, true);
    poison(&e);
    const hurray_status st = hurray_policy_allow_private_tag(p.get(), b1, 1, &e);
    FUZZ_CHECK((st == HURRAY_OK) == ok, "allow_private_tag accepts exactly 0xF0-0xFE");
    if (!ok) FUZZ_CHECK(e.status == st && st == HURRAY_E_INVALID_ARGUMENT,
                        "a refused tag is an argument error, reported in err");
  }
  if (b3 & 0x80) {
    const unsigned flags = b3 & 7u;
    const bool ok = m->set_ipc_sync(b2, flags);
    poison(&e);
    const hurray_status st = hurray_policy_set_ipc_sync(p.get(), b2, flags, &e);
    FUZZ_CHECK((st == HURRAY_OK) == ok,
               "set_ipc_sync accepts known flags for named and private tags, none for CPU");
    if (!ok) FUZZ_CHECK(e.status == st && st == HURRAY_E_INVALID_ARGUMENT,
                        "a refused declaration is an argument error, reported in err");
  }
  return p;
}

// Fields read by hand, little-endian (BP-LE), to compare with decode.
bool fields_match(const uint8_t *b, const hurray_buffer_handle &h) {
  uint64_t size = 0;
  for (int k = 7; k >= 0; --k) size = size << 8 | b[k];
  uint32_t align = 0;
  for (int k = 11; k >= 8; --k) align = align << 8 | b[k];
  return h.byte_size == size && h.alignment == align && h.device_tag == b[12] &&
         h.sync_mode == b[13] && h.memory_class == b[14] && h.reserved == b[15];
}

void check_codec(const uint8_t *table, size_t size) {
  const size_t n = size / HURRAY_HANDLE_SIZE;
  for (size_t i = 0; i < n; ++i) {
    const uint8_t *b = table + i * HURRAY_HANDLE_SIZE;
    hurray_buffer_handle h;
    FUZZ_CHECK(hurray_handle_decode(b, HURRAY_HANDLE_SIZE, &h, nullptr) == HURRAY_OK,
               "any 16 bytes decode");
    FUZZ_CHECK(fields_match(b, h), "decode reads little-endian fields in wire order");
    uint8_t back[HURRAY_HANDLE_SIZE + 1];
    poison(back, sizeof back);
    FUZZ_CHECK(hurray_handle_encode(&h, back, sizeof back, nullptr) == HURRAY_OK,
               "any handle encodes into 17 bytes of room");
    FUZZ_CHECK(std::memcmp(back, b, HURRAY_HANDLE_SIZE) == 0,
               "encode(decode(x)) == x (D8)");
    FUZZ_CHECK(back[HURRAY_HANDLE_SIZE] == 0xA5, "encode writes 16 bytes, no more");
  }
  // Wrong sizes, from a copy of the first bytes so that 17 are readable.
  uint8_t buf[HURRAY_HANDLE_SIZE + 1] = {};
  if (size) std::memcpy(buf, table, size < sizeof buf ? size : sizeof buf);
  for (size_t wrong : {size_t{0}, size_t{15}, size_t{17}}) {
    hurray_buffer_handle h;
    poison(&h);
    hurray_error e;
    FUZZ_CHECK(hurray_handle_decode(buf, wrong, &h, &e) == HURRAY_E_SIZE &&
                   e.rule == HURRAY_RULE_SIZE && poisoned(&h),
               "decode refuses any size but 16 under BP-SIZE and leaves out untouched");
  }
  hurray_buffer_handle h{};
  uint8_t out[HURRAY_HANDLE_SIZE];
  poison(out, sizeof out);
  FUZZ_CHECK(hurray_handle_encode(&h, out, 15, nullptr) == HURRAY_E_SIZE &&
                 poisoned(out, sizeof out),
             "encode refuses 15 bytes of room and writes nothing");
}

// Diagnose with too little room: the first `cap` entries, the same counts.
void check_capacity(const uint8_t *table, size_t size, const hurray_policy *p,
                    const Outcome &o, size_t cap) {
  const size_t total = o.all.size();
  std::vector<hurray_error> out(cap + 2);
  poison(out.data(), out.size());
  size_t ne = 0, nw = 0;
  const hurray_status st =
      hurray_table_diagnose(table, size, p, out.data(), cap, &ne, &nw, nullptr);
  FUZZ_CHECK(st == o.status, "diagnose's status does not depend on capacity");
  FUZZ_CHECK(ne == o.errors && nw == o.warnings,
             "diagnose counts every finding, beyond capacity too");
  const size_t written = cap < total ? cap : total;
  for (size_t i = 0; i < written; ++i)
    FUZZ_CHECK(same_error(out[i], o.all[i]),
               "a small capacity gets the first entries of the full list");
  FUZZ_CHECK(poisoned(out.data() + written, out.size() - written),
             "diagnose writes min(capacity, total) entries, never more");
  FUZZ_CHECK(hurray_table_diagnose(table, size, p, out.data(), cap, nullptr, nullptr,
                                   nullptr) == o.status,
             "NULL count pointers are accepted");
}

// hurray_handle_validate on each complete handle against the table's view.
void check_handles(const uint8_t *table, size_t size, const hurray_policy *p,
                   const ModelPolicy &m, const Outcome &o) {
  const size_t n = size / HURRAY_HANDLE_SIZE;
  for (size_t i = 0; i < n; ++i) {
    hurray_buffer_handle h;
    hurray_handle_decode(table + i * HURRAY_HANDLE_SIZE, HURRAY_HANDLE_SIZE, &h, nullptr);
    hurray_error he;
    poison(&he);
    const hurray_status hs = hurray_handle_validate(&h, p, &he);
    const hurray_error *want = nullptr;  // first error of handle i, BP-COLOC aside
    for (const hurray_error &e : o.all)
      if (e.buffer_index == static_cast<int64_t>(i) && e.severity == HURRAY_SEVERITY_ERROR &&
          e.rule != HURRAY_RULE_COLOC && e.rule != HURRAY_RULE_SIZE) {
        want = &e;
        break;
      }
    if (!want) {
      FUZZ_CHECK(hs == HURRAY_OK,
                 "handle_validate accepts a handle the table finds no error in");
      continue;
    }
    FUZZ_CHECK(hs == want->status && he.status == hs,
               "handle_validate fails with the status of the table's first error there");
    check_entry(he, HURRAY_HANDLE_SIZE, m);
    if (i == 0) {
      FUZZ_CHECK(same_error(he, *want),
                 "for handle 0, handle_validate's error is diagnose's, byte for byte");
    } else {
      FUZZ_CHECK(he.rule == want->rule && he.severity == want->severity &&
                     he.byte_offset + static_cast<int64_t>(i * HURRAY_HANDLE_SIZE) ==
                         want->byte_offset,
                 "handle i alone fails the same rule at the same field");
    }
  }
  if (size == HURRAY_HANDLE_SIZE) {
    hurray_buffer_handle h;
    hurray_handle_decode(table, HURRAY_HANDLE_SIZE, &h, nullptr);
    hurray_error he;
    poison(&he);
    const hurray_status hs = hurray_handle_validate(&h, p, &he);
    FUZZ_CHECK(hs == o.status, "single handle: handle_validate == table_validate");
    if (hs != HURRAY_OK) FUZZ_CHECK(same_error(he, o.first), "single handle: same error");
  }
}

void check_arguments(const uint8_t *table, size_t size, const hurray_policy *p) {
  const size_t some = size ? size : 1;
  hurray_error e;
  poison(&e);
  FUZZ_CHECK(hurray_table_validate(nullptr, some, p, &e) == HURRAY_E_INVALID_ARGUMENT &&
                 e.status == HURRAY_E_INVALID_ARGUMENT && e.rule == HURRAY_RULE_NONE &&
                 e.buffer_index == -1 && e.message[0] != '\0',
             "validate refuses NULL bytes with a size, and says so in err");
  hurray_error out[2];
  size_t ne, nw;
  poison(out, 2);
  poison(&ne);
  poison(&nw);
  FUZZ_CHECK(hurray_table_diagnose(nullptr, some, p, out, 2, &ne, &nw, &e) ==
                     HURRAY_E_INVALID_ARGUMENT &&
                 poisoned(out, 2) && poisoned(&ne) && poisoned(&nw),
             "diagnose refuses NULL bytes and writes nothing but err");
  FUZZ_CHECK(hurray_table_diagnose(table, size, p, nullptr, 1, &ne, &nw, &e) ==
                     HURRAY_E_INVALID_ARGUMENT &&
                 poisoned(&ne) && poisoned(&nw),
             "diagnose refuses out NULL with a capacity and writes nothing but err");
  FUZZ_CHECK(hurray_handle_validate(nullptr, p, &e) == HURRAY_E_INVALID_ARGUMENT,
             "handle_validate refuses NULL");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in(data, size);
  ModelPolicy m;
  const PolicyPtr policy = make_policy(in, &m);
  const uint8_t cap_bits = size > 3 ? static_cast<uint8_t>((data[3] >> 4) & 3) : 0;
  // The table is the tail of the fuzzer's buffer: reading past it is a
  // heap overflow AddressSanitizer reports.
  const uint8_t *table = in.rest();
  const size_t n = in.left();

  const Outcome o = check_table(table, n, policy.get(), m);
  if (m.is_default()) {
    const Outcome d = check_table(table, n, nullptr, m);
    FUZZ_CHECK(d.status == o.status && d.errors == o.errors && d.warnings == o.warnings,
               "NULL is the default policy");
    if (o.status != HURRAY_OK) FUZZ_CHECK(same_error(d.first, o.first), "NULL policy: same error");
  }
  {  // the verdict on the table: refused with its errors, or accepted
    std::vector<std::string> errors, warnings;
    for (const hurray_error &e : o.all)
      (e.severity == HURRAY_SEVERITY_ERROR ? errors : warnings).push_back(e.rule_id);
    if (o.status == HURRAY_OK) verdict_accepted(warnings);
    else verdict_refused(errors);
  }
  failure_context() = [table, n, &o] {
    print_hex("table", table, n);
    print_outcome(o);
  };
  if (n == 0) {
    FUZZ_CHECK(hurray_table_validate(nullptr, 0, policy.get(), nullptr) == o.status,
               "an empty table is the same with bytes NULL");
  }
  check_capacity(table, n, policy.get(), o, cap_bits);
  check_capacity(table, n, policy.get(), o, o.all.size() / 2);
  check_codec(table, n);
  check_handles(table, n, policy.get(), m, o);
  check_arguments(table, n, policy.get());
  failure_context() = nullptr;
  return 0;
}
