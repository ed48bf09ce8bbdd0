// The properties every buffer table must satisfy, whatever its bytes:
// hurray_table_validate and hurray_table_diagnose agree with each other and
// with the independent model (model.h), and every diagnostic is well formed.
// Shared by fuzz_handle and fuzz_table_property.
#pragma once

#include <hurray.h>

#include <cstring>
#include <string>
#include <vector>

#include "fuzz_util.h"
#include "model.h"

namespace hurray_fuzz {

struct Outcome {
  hurray_status status = HURRAY_OK;  // hurray_table_validate
  hurray_error first{};              // its error (when status != OK)
  std::vector<hurray_error> all;     // hurray_table_diagnose, every entry
  size_t errors = 0, warnings = 0;
};

inline void print_outcome(const Outcome &o) {
  std::fprintf(stderr, "  validate: %s\n", hurray_status_name(o.status));
  if (o.status != HURRAY_OK) print_error("validate error", o.first);
  std::fprintf(stderr, "  diagnose: %zu errors, %zu warnings\n", o.errors, o.warnings);
  for (size_t i = 0; i < o.all.size(); ++i) {
    char label[32];
    std::snprintf(label, sizeof label, "diagnostic %zu", i);
    print_error(label, o.all[i]);
  }
}

inline void print_findings(const char *label, const std::vector<ModelFinding> &v) {
  std::fprintf(stderr, "  %s:\n", label);
  for (const ModelFinding &f : v)
    std::fprintf(stderr, "    %s severity %d index %lld offset %lld\n",
                 hurray_rule_id(static_cast<hurray_rule>(f.rule)), f.severity,
                 static_cast<long long>(f.index), static_cast<long long>(f.offset));
}

// Fill with a pattern no call would write, to see what a call touched.
template <class T>
inline void poison(T *p, size_t n = 1) {
  std::memset(static_cast<void *>(p), 0xA5, sizeof(T) * n);
}
template <class T>
inline bool poisoned(const T *p, size_t n = 1) {
  const auto *b = reinterpret_cast<const unsigned char *>(p);
  for (size_t i = 0; i < sizeof(T) * n; ++i)
    if (b[i] != 0xA5) return false;
  return true;
}

// One diagnostic, on its own: a rule ID that is the rule's, a message that
// starts with it, the status and severity of its rule, a position that is a
// field of a complete handle (or, for BP-SIZE, the end of the whole handles).
inline void check_entry(const hurray_error &e, size_t size, const ModelPolicy &pol) {
  FUZZ_CHECK(std::memchr(e.rule_id, '\0', sizeof e.rule_id) != nullptr,
             "rule_id is NUL-terminated inside its 32 bytes");
  FUZZ_CHECK(std::memchr(e.message, '\0', sizeof e.message) != nullptr,
             "message is NUL-terminated inside its 256 bytes");
  const size_t id_len = std::strlen(e.rule_id);
  FUZZ_CHECK(id_len > 0, "every diagnostic has a rule ID");
  FUZZ_CHECK(std::strcmp(e.rule_id, hurray_rule_id(static_cast<hurray_rule>(e.rule))) == 0,
             "rule_id is hurray_rule_id(rule)");
  FUZZ_CHECK(std::strncmp(e.message, e.rule_id, id_len) == 0,
             "the message starts with the rule ID");
  FUZZ_CHECK(e.message[id_len] == ':' || e.message[id_len] == ' ',
             "the rule ID in the message is the whole ID (followed by ':' or ' ')");
  FUZZ_CHECK(e.status == model_status_of(e.rule) && e.status != HURRAY_E_INTERNAL,
             "the status is the one of the rule's family");
  FUZZ_CHECK(e.reserved0 == 0, "reserved0 is zero");
  const hurray_rule_kind kind = hurray_rule_kind_of(static_cast<hurray_rule>(e.rule));
  FUZZ_CHECK(kind == HURRAY_RULE_KIND_REJECT || kind == HURRAY_RULE_KIND_WARN,
             "byte-level findings are reject or warn rules");
  const int32_t want = kind == HURRAY_RULE_KIND_REJECT || pol.warnings_as_errors
                           ? HURRAY_SEVERITY_ERROR
                           : HURRAY_SEVERITY_WARNING;
  FUZZ_CHECK(e.severity == want,
             "severity: reject rules are errors, warn rules warnings unless SHOULDs are errors");
  const int64_t whole = static_cast<int64_t>(size / HURRAY_HANDLE_SIZE);
  if (e.rule == HURRAY_RULE_SIZE) {
    FUZZ_CHECK(size == 0 || size % HURRAY_HANDLE_SIZE != 0, "BP-SIZE only for a bad size");
    FUZZ_CHECK(e.buffer_index == whole && e.byte_offset == whole * HURRAY_HANDLE_SIZE,
               "BP-SIZE points at the partial handle (D11)");
  } else {
    FUZZ_CHECK(e.buffer_index >= 0 && e.buffer_index < whole,
               "a rule of a handle names a complete handle");
    const int64_t field = e.byte_offset - e.buffer_index * HURRAY_HANDLE_SIZE;
    FUZZ_CHECK(field == 8 || field == 12 || field == 13 || field == 14 || field == 15,
               "the offset is the start of a checked field of that handle");
  }
}

// Validate and diagnose `bytes` under `policy` (whose content `model`
// mirrors); check every property of a table; return what was reported.
inline Outcome check_table(const uint8_t *bytes, size_t size, const hurray_policy *policy,
                           const ModelPolicy &model) {
  Outcome o;
  poison(&o.first);
  o.status = hurray_table_validate(bytes, size, policy, &o.first);

  // First pass: count only (out NULL, capacity 0), as hurray-inspect does.
  size_t n_err, n_warn;
  poison(&n_err);
  poison(&n_warn);
  hurray_error arg_err;
  poison(&arg_err);
  const hurray_status counted =
      hurray_table_diagnose(bytes, size, policy, nullptr, 0, &n_err, &n_warn, &arg_err);
  FUZZ_CHECK(poisoned(&arg_err), "diagnose writes err only for argument errors");
  FUZZ_CHECK(!poisoned(&n_err) && !poisoned(&n_warn), "diagnose stores both counts");
  const size_t total = n_err + n_warn;

  // Second pass: exactly the room counted, plus two guard entries.
  o.all.resize(total + 2);
  poison(o.all.data(), o.all.size());
  const hurray_status diagnosed = hurray_table_diagnose(
      bytes, size, policy, o.all.data(), total, &o.errors, &o.warnings, &arg_err);
  const bool guards_intact = poisoned(&o.all[total], 2);
  o.all.resize(total);
  failure_context() = [&o, bytes, size] {
    print_hex("table", bytes, size);
    print_outcome(o);
  };
  FUZZ_CHECK(guards_intact, "diagnose writes no entry beyond capacity");
  FUZZ_CHECK(poisoned(&arg_err), "diagnose writes err only for argument errors");
  FUZZ_CHECK(o.errors == n_err && o.warnings == n_warn,
             "diagnose counts the same with and without room for the entries");
  FUZZ_CHECK(counted == diagnosed, "diagnose's status does not depend on its capacity");
  FUZZ_CHECK(o.status == diagnosed, "validate's status equals diagnose's status");
  FUZZ_CHECK((o.status == HURRAY_OK) == (o.errors == 0),
             "a table is valid exactly when diagnose counts no error");

  size_t errors_seen = 0, warnings_seen = 0;
  const hurray_error *first_error = nullptr;
  for (const hurray_error &e : o.all) {
    check_entry(e, size, model);
    if (e.severity == HURRAY_SEVERITY_ERROR) {
      ++errors_seen;
      if (!first_error) first_error = &e;
    } else {
      ++warnings_seen;
    }
  }
  FUZZ_CHECK(errors_seen == o.errors && warnings_seen == o.warnings,
             "the entries' severities add up to the counts");
  if (o.status != HURRAY_OK) {
    FUZZ_CHECK(o.first.status == o.status, "validate's err carries its status");
    FUZZ_CHECK(first_error != nullptr && same_error(*first_error, o.first),
               "diagnose's first error equals validate's error, byte for byte "
               "(rule, index, offset, message)");
  }

  // D5: BP-SIZE first, then by byte offset.
  for (size_t i = 0; i < o.all.size(); ++i) {
    if (o.all[i].rule == HURRAY_RULE_SIZE) FUZZ_CHECK(i == 0, "BP-SIZE is reported first");
    if (i > 0 && o.all[i - 1].rule != HURRAY_RULE_SIZE)
      FUZZ_CHECK(o.all[i - 1].byte_offset <= o.all[i].byte_offset,
                 "findings come in byte-offset order");
  }

  // The independent model finds the same things.
  std::vector<ModelFinding> got, want = model_table(bytes, size, model);
  for (const hurray_error &e : o.all)
    got.push_back({e.rule, e.severity, e.buffer_index, e.byte_offset});
  sort_findings(&got);
  sort_findings(&want);
  if (got != want) {
    print_findings("library (sorted)", got);
    print_findings("model (sorted)", want);
  }
  FUZZ_CHECK(got == want, "diagnose reports what the model of docs/spec finds");

  // Deterministic: a second call says the same, byte for byte.
  hurray_error again;
  poison(&again);
  FUZZ_CHECK(hurray_table_validate(bytes, size, policy, &again) == o.status,
             "validate is deterministic");
  if (o.status != HURRAY_OK) FUZZ_CHECK(same_error(again, o.first), "validate's err is deterministic");
  failure_context() = nullptr;  // it points at o, about to move
  return o;
}

}  // namespace hurray_fuzz
