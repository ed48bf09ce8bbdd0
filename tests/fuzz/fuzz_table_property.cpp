// fuzz_table_property: build a buffer table that is valid by construction,
// change it in one way, and check that what the library reports is local to
// the change.
//
// The generator picks a device tag and memory class from the valid pairs of
// docs/spec/buffer-protocol.md section 2 (a private tag is agreed in the
// policy), an alignment and a sync mode each handle's transport allows, and
// warning-free alignments when SHOULDs are errors. Properties:
//  P1 the generated table is valid (the generator's reading of the spec and
//     the library agree), and so is the same table in reverse order;
//  P2 one byte changed at position p of handle i = p / 16:
//     - the first error, if any, is at buffer index i, or is BP-COLOC at
//       another handle when i == 0 and the byte is device_tag/memory_class;
//     - every diagnostic not about a field that depends on the changed
//       byte is byte for byte what the unchanged table reported (fields
//       that depend on it: byte_size and alignment -> the alignment rules
//       at offset 8; device_tag -> 8 (its SHOULDs), 12, 13 (BP-SYNC-CPU,
//       BP-SYNC-IPC) and 14 (BP-MC-PAIR); the others -> themselves; plus
//       BP-COLOC at the same field of every other handle when i == 0);
//     - a value the spec rejects on its own is reported at p (a non-zero
//       reserved byte, a reserved/invalid/unagreed tag, an undefined sync
//       mode or memory class, a non-power-of-two alignment), and a tag or
//       class differing from the rest of the table is BP-COLOC;
//  P3 truncated to L bytes: valid when L is a non-zero multiple of 16 (a
//     prefix of a valid table is valid), else exactly one error, BP-SIZE,
//     at the partial handle (D11);
//  P4 k junk bytes appended: BP-SIZE first when k is not a multiple of 16,
//     and every other error at the appended handle;
// and, for every table built, all of table_checks.h (validate == diagnose,
// the model of the spec agrees, well-formed diagnostics).
//
// Input layout (tests/fuzz/make_corpus.py writes seeds in it):
//   byte 0   bits 0-1 transport; bit 2 warnings-as-errors; bits 3-5 the
//            change: 0-5 one byte (P2), 6 truncate (P3), 7 append (P4)
//   byte 1   device tag: % 24, 0-8 the named tags, 9-23 private 0xF0-0xFE
//   byte 2   memory class: index into the tag's valid classes
//   byte 3   handle count: 1 + byte % 8
//   byte 4   bit 7: declare the tag's IPC capabilities as bits 0-1
//   then per handle: 8 bytes byte_size (LE), 1 byte alignment exponent
//            (above the minimum that applies), 1 byte: bit 7 makes the
//            buffer empty, the rest picks an allowed sync mode
//   then P2: 2 bytes position (LE, % table size), 1 byte new value (the
//            old value + 1 if equal); P3: 2 bytes how many to cut (1 + v %
//            size); P4: 1 byte count k (1 + v % 31), then k bytes
//   (bytes past the end of the input read as 0)
#include <hurray.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_util.h"
#include "model.h"
#include "table_checks.h"

using namespace hurray_fuzz;

namespace {

using PolicyPtr = std::unique_ptr<hurray_policy, void (*)(hurray_policy *)>;

struct Built {
  std::vector<uint8_t> table;
  uint8_t tag = 0, mc = 0;
  size_t n = 0;
};

uint8_t pick_tag(uint8_t b) {
  const unsigned sel = b % 24u;
  return static_cast<uint8_t>(sel <= 8 ? sel : 0xF0 + (sel - 9));
}

uint8_t pick_class(uint8_t tag, uint8_t b) {
  std::vector<uint8_t> ok;
  if (ModelPolicy::named(tag)) {
    for (uint8_t mc = 0; mc <= 3; ++mc)
      if ((kModelClasses[tag] >> mc) & 1) ok.push_back(mc);
  } else {  // private tag: STANDARD or a private class (D9)
    ok.push_back(0);
    for (unsigned mc = 0xF0; mc <= 0xFE; ++mc) ok.push_back(static_cast<uint8_t>(mc));
  }
  return ok[b % ok.size()];
}

// The smallest alignment exponent the rules (and, as errors, the SHOULDs)
// allow for a handle.
unsigned min_exponent(bool nonempty, uint8_t tag, const ModelPolicy &m) {
  if (!nonempty) return 0;  // BP-ALIGN-EMPTY: any power of two, 1 included
  unsigned e = 6;           // BP-ALIGN-MIN: 64
  if (m.transport == HURRAY_TRANSPORT_IPC || m.transport == HURRAY_TRANSPORT_RDMA) e = 12;
  if (m.warnings_as_errors && model_gpu_memory(tag)) e = 12;  // BP-ALIGN-GPU-PAGE
  if (m.warnings_as_errors && tag == 0x06) e = std::max(e, 7u);  // BP-ALIGN-HEXAGON
  return e;
}

uint8_t pick_sync(uint8_t tag, uint8_t b, const ModelPolicy &m) {
  std::vector<uint8_t> ok{HURRAY_SYNC_PRODUCER_SYNCED};
  if (tag != HURRAY_DEVICE_CPU) {  // BP-SYNC-CPU
    if (m.transport == HURRAY_TRANSPORT_IN_PROCESS) {
      ok.push_back(HURRAY_SYNC_EVENT);
      ok.push_back(HURRAY_SYNC_CONSUMER_STREAM);
    } else if (m.transport == HURRAY_TRANSPORT_IPC) {  // BP-SYNC-IPC
      if (m.ipc[tag] & HURRAY_IPC_SYNC_EVENTS) ok.push_back(HURRAY_SYNC_EVENT);
      if (m.ipc[tag] & HURRAY_IPC_SYNC_STREAMS) ok.push_back(HURRAY_SYNC_CONSUMER_STREAM);
    }  // RDMA, cross-machine: PRODUCER_SYNCED only (BP-SYNC-NET)
  }
  return ok[b % ok.size()];
}

Built build(Reader &in, hurray_policy *p, ModelPolicy *m, uint8_t b0) {
  Built t;
  m->transport = static_cast<hurray_transport>(b0 & 3);
  m->warnings_as_errors = (b0 & 4) != 0;
  FUZZ_CHECK(hurray_policy_set_transport(p, m->transport, nullptr) == HURRAY_OK, "transport");
  FUZZ_CHECK(hurray_policy_set_warnings_as_errors(p, m->warnings_as_errors, nullptr) ==
                 HURRAY_OK,
             "warnings as errors");
  t.tag = pick_tag(in.u8());
  t.mc = pick_class(t.tag, in.u8());
  t.n = 1 + in.u8() % 8u;
  if (ModelPolicy::private_tag(t.tag)) {
    FUZZ_CHECK(hurray_policy_allow_private_tag(p, t.tag, 1, nullptr) == HURRAY_OK &&
                   m->allow_private(t.tag, true),
               "agreeing a private tag");
  }
  const uint8_t caps = in.u8();
  if ((caps & 0x80) && t.tag != HURRAY_DEVICE_CPU) {
    FUZZ_CHECK(hurray_policy_set_ipc_sync(p, t.tag, caps & 3u, nullptr) == HURRAY_OK &&
                   m->set_ipc_sync(t.tag, caps & 3u),
               "declaring IPC capabilities");
  }
  for (size_t i = 0; i < t.n; ++i) {
    uint64_t size = in.u64();
    const uint8_t e = in.u8(), s = in.u8();
    if (s & 0x80) size = 0;
    const unsigned lo = min_exponent(size != 0, t.tag, *m);
    const unsigned exp = lo + e % (32 - lo);
    const uint32_t align = uint32_t{1} << exp;
    const uint8_t sync = pick_sync(t.tag, s & 0x7F, *m);
    uint8_t b[HURRAY_HANDLE_SIZE];
    for (int k = 0; k < 8; ++k) b[k] = static_cast<uint8_t>(size >> (8 * k));
    for (int k = 0; k < 4; ++k) b[8 + k] = static_cast<uint8_t>(align >> (8 * k));
    b[12] = t.tag;
    b[13] = sync;
    b[14] = t.mc;
    b[15] = 0;
    t.table.insert(t.table.end(), b, b + sizeof b);
  }
  return t;
}

// Fields (offsets within a handle) whose findings can depend on byte f.
bool depends_on(int64_t field, unsigned f) {
  if (f < 12) return field == 8;  // byte_size, alignment -> alignment rules
  if (f == 12) return field == 8 || field == 12 || field == 13 || field == 14;
  return field == static_cast<int64_t>(f);
}

void one_byte(const Built &t, const Outcome &base, const hurray_policy *p,
              const ModelPolicy &m, Reader &in) {
  std::vector<uint8_t> mut = t.table;
  const size_t pos = in.u16() % mut.size();
  uint8_t v = in.u8();
  if (v == mut[pos]) v = static_cast<uint8_t>(v + 1);
  mut[pos] = v;
  const int64_t i = static_cast<int64_t>(pos / HURRAY_HANDLE_SIZE);
  const unsigned f = pos % HURRAY_HANDLE_SIZE;
  const bool coloc_field = f == 12 || f == 14;

  const Outcome o = check_table(mut.data(), mut.size(), p, m);
  failure_context() = [&] {
    std::fprintf(stderr, "  changed byte %zu (handle %lld, byte %u) to 0x%02x\n", pos,
                 static_cast<long long>(i), f, v);
    print_hex("valid table", t.table.data(), t.table.size());
    print_hex("changed table", mut.data(), mut.size());
    print_outcome(o);
  };

  // Where the first error may be.
  if (o.status != HURRAY_OK)
    FUZZ_CHECK(o.first.buffer_index == i ||
                   (i == 0 && coloc_field && o.first.rule == HURRAY_RULE_COLOC),
               "the first error is at the changed handle, or is BP-COLOC against it");

  // Everything else is unchanged.
  auto affected = [&](const hurray_error &e) {
    const int64_t field = e.byte_offset - e.buffer_index * HURRAY_HANDLE_SIZE;
    if (e.buffer_index == i) return depends_on(field, f);
    return i == 0 && coloc_field && e.rule == HURRAY_RULE_COLOC && field == f;
  };
  std::vector<const hurray_error *> before, after;
  for (const hurray_error &e : base.all)
    if (!affected(e)) before.push_back(&e);
  for (const hurray_error &e : o.all) {
    if (!affected(e)) after.push_back(&e);
    FUZZ_CHECK(e.severity != HURRAY_SEVERITY_ERROR || affected(e),
               "every error is about a field that depends on the changed byte");
  }
  bool same = before.size() == after.size();
  for (size_t k = 0; same && k < before.size(); ++k) same = same_error(*before[k], *after[k]);
  FUZZ_CHECK(same, "diagnostics about fields the change cannot affect are unchanged");

  // Values the spec rejects on their own are reported where they are.
  auto reported = [&](hurray_rule rule, int64_t offset) {
    for (const hurray_error &e : o.all)
      if (e.rule == static_cast<uint32_t>(rule) && e.byte_offset == offset &&
          e.severity == HURRAY_SEVERITY_ERROR)
        return true;
    return false;
  };
  const int64_t at = static_cast<int64_t>(pos);
  const int64_t base_off = i * HURRAY_HANDLE_SIZE;
  if (f == 15) FUZZ_CHECK(reported(HURRAY_RULE_RESERVED, at), "a non-zero reserved byte is BP-RESERVED");
  if (f == 13 && v > 2) FUZZ_CHECK(reported(HURRAY_RULE_SYNC_VALUE, at), "an undefined sync mode is BP-SYNC-VALUE");
  if (f == 12) {
    if (v == 0xFF) FUZZ_CHECK(reported(HURRAY_RULE_DEV_INVALID, at), "tag 0xFF is BP-DEV-INVALID");
    if (v >= 0x09 && v <= 0xEF) FUZZ_CHECK(reported(HURRAY_RULE_DEV_RESERVED, at), "a reserved tag is BP-DEV-RESERVED");
    if (ModelPolicy::private_tag(v) && !m.agreed[v])
      FUZZ_CHECK(reported(HURRAY_RULE_DEV_PRIVATE, at), "an unagreed private tag is BP-DEV-PRIVATE");
  }
  if (f == 14 && !(v <= 3 || (v >= 0xF0 && v <= 0xFE)))
    FUZZ_CHECK(reported(HURRAY_RULE_MC_INVALID, at), "an undefined memory class is BP-MC-INVALID");
  if (f >= 8 && f < 12) {
    uint32_t a = 0;
    for (int k = 3; k >= 0; --k) a = a << 8 | mut[static_cast<size_t>(base_off) + 8 + k];
    if (a == 0 || (a & (a - 1)) != 0)
      FUZZ_CHECK(reported(HURRAY_RULE_ALIGN_POW2, base_off + 8), "a non-power of two is BP-ALIGN-POW2");
  }
  if (coloc_field && t.n > 1) {
    if (i > 0) {
      FUZZ_CHECK(reported(HURRAY_RULE_COLOC, at), "a handle differing from handle 0 is BP-COLOC");
    } else {
      for (size_t j = 1; j < t.n; ++j)
        FUZZ_CHECK(reported(HURRAY_RULE_COLOC, static_cast<int64_t>(j * HURRAY_HANDLE_SIZE + f)),
                   "when handle 0 changes, every other handle is BP-COLOC (D5)");
    }
  }
}

void truncate(const Built &t, const hurray_policy *p, const ModelPolicy &m, Reader &in) {
  const size_t cut = 1 + in.u16() % t.table.size();
  const size_t len = t.table.size() - cut;
  const Outcome o = check_table(t.table.data(), len, p, m);
  failure_context() = [&] {
    std::fprintf(stderr, "  truncated to %zu bytes\n", len);
    print_hex("valid table", t.table.data(), t.table.size());
    print_outcome(o);
  };
  if (len != 0 && len % HURRAY_HANDLE_SIZE == 0) {
    FUZZ_CHECK(o.status == HURRAY_OK, "a whole-handle prefix of a valid table is valid");
  } else {
    const int64_t whole = static_cast<int64_t>(len / HURRAY_HANDLE_SIZE);
    FUZZ_CHECK(o.status == HURRAY_E_SIZE && o.errors == 1 &&
                   o.first.rule == HURRAY_RULE_SIZE && o.first.buffer_index == whole &&
                   o.first.byte_offset == whole * HURRAY_HANDLE_SIZE,
               "a cut table has one error, BP-SIZE at the partial handle (D11)");
  }
}

void append(const Built &t, const hurray_policy *p, const ModelPolicy &m, Reader &in) {
  std::vector<uint8_t> ext = t.table;
  const size_t k = 1 + in.u8() % 31u;
  for (size_t j = 0; j < k; ++j) ext.push_back(in.u8());
  const Outcome o = check_table(ext.data(), ext.size(), p, m);
  failure_context() = [&] {
    std::fprintf(stderr, "  %zu bytes appended\n", k);
    print_hex("extended table", ext.data(), ext.size());
    print_outcome(o);
  };
  const int64_t added = static_cast<int64_t>(t.n);
  if (k % HURRAY_HANDLE_SIZE != 0) {
    const int64_t whole = static_cast<int64_t>(ext.size() / HURRAY_HANDLE_SIZE);
    FUZZ_CHECK(o.status == HURRAY_E_SIZE && o.first.rule == HURRAY_RULE_SIZE &&
                   o.first.byte_offset == whole * HURRAY_HANDLE_SIZE,
               "a table with a partial handle at the end fails BP-SIZE first");
  }
  for (const hurray_error &e : o.all)
    if (e.severity == HURRAY_SEVERITY_ERROR && e.rule != HURRAY_RULE_SIZE)
      FUZZ_CHECK(e.buffer_index == added, "errors are about the appended handle only");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in(data, size);
  hurray_policy *raw = nullptr;
  FUZZ_CHECK(hurray_policy_create(&raw, nullptr) == HURRAY_OK, "policy_create");
  const PolicyPtr policy(raw, hurray_policy_destroy);
  ModelPolicy m;
  const uint8_t b0 = in.u8();
  const Built t = build(in, policy.get(), &m, b0);

  // P1
  const Outcome base = check_table(t.table.data(), t.table.size(), policy.get(), m);
  failure_context() = [&] {
    print_hex("generated table", t.table.data(), t.table.size());
    print_outcome(base);
  };
  FUZZ_CHECK(base.status == HURRAY_OK, "a table built from the valid pairs is valid");
  std::vector<uint8_t> rev;
  for (size_t i = t.n; i-- > 0;)
    rev.insert(rev.end(), t.table.begin() + static_cast<std::ptrdiff_t>(i * HURRAY_HANDLE_SIZE),
               t.table.begin() + static_cast<std::ptrdiff_t>((i + 1) * HURRAY_HANDLE_SIZE));
  FUZZ_CHECK(check_table(rev.data(), rev.size(), policy.get(), m).status == HURRAY_OK,
             "the same handles in reverse order are valid");

  const unsigned change = (b0 >> 3) & 7u;
  if (change <= 5) one_byte(t, base, policy.get(), m, in);  // P2
  else if (change == 6) truncate(t, policy.get(), m, in);   // P3
  else append(t, policy.get(), m, in);                      // P4
  failure_context() = nullptr;
  return 0;
}
