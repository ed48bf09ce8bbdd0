// Helpers of the core and concurrency tests: build handles and bytes, run
// validation.
#pragma once
#include <hurray.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

namespace hurray_test {

using Bytes = std::vector<unsigned char>;

inline hurray_buffer_handle make(uint64_t size, uint32_t align, uint8_t tag,
                                 uint8_t sync = HURRAY_SYNC_PRODUCER_SYNCED,
                                 uint8_t mc = HURRAY_MEMORY_STANDARD, uint8_t rsv = 0) {
  hurray_buffer_handle h;
  h.byte_size = size;
  h.alignment = align;
  h.device_tag = tag;
  h.sync_mode = sync;
  h.memory_class = mc;
  h.reserved = rsv;
  return h;
}

inline Bytes encode(std::initializer_list<hurray_buffer_handle> hs) {
  Bytes out;
  for (const auto &h : hs) {
    unsigned char b[HURRAY_HANDLE_SIZE];
    hurray_handle_encode(&h, b, sizeof b, nullptr);
    out.insert(out.end(), b, b + sizeof b);
  }
  return out;
}

struct PolicyPtr {
  hurray_policy *p = nullptr;
  explicit PolicyPtr(hurray_transport t = HURRAY_TRANSPORT_IN_PROCESS) {
    hurray_policy_create(&p, nullptr);
    hurray_policy_set_transport(p, t, nullptr);
  }
  ~PolicyPtr() { hurray_policy_destroy(p); }
  PolicyPtr(const PolicyPtr &) = delete;
  PolicyPtr &operator=(const PolicyPtr &) = delete;
  operator hurray_policy *() const { return p; }
};

struct Report {
  hurray_status status;          // from hurray_table_diagnose
  hurray_status first_status;    // from hurray_table_validate
  hurray_error first;            // its error
  std::vector<hurray_error> all;  // every diagnostic
  size_t errors = 0, warnings = 0;

  std::vector<std::string> ids(int severity) const {
    std::vector<std::string> r;
    for (const auto &e : all)
      if (e.severity == severity) r.push_back(e.rule_id);
    return r;
  }
  std::vector<std::string> error_ids() const { return ids(HURRAY_SEVERITY_ERROR); }
  std::vector<std::string> warning_ids() const { return ids(HURRAY_SEVERITY_WARNING); }
};

// Validate bytes both ways. The input is copied into a heap block of exactly
// its size, so a read past the end is caught under AddressSanitizer.
inline Report check(const Bytes &bytes, const hurray_policy *policy = nullptr) {
  std::unique_ptr<unsigned char[]> exact(new unsigned char[bytes.size() ? bytes.size() : 1]);
  std::copy(bytes.begin(), bytes.end(), exact.get());
  const unsigned char *p = bytes.empty() ? nullptr : exact.get();
  Report r;
  r.first_status = hurray_table_validate(p, bytes.size(), policy, &r.first);
  hurray_table_diagnose(p, bytes.size(), policy, nullptr, 0, &r.errors, &r.warnings, nullptr);
  r.all.resize(r.errors + r.warnings);
  size_t e2 = 0, w2 = 0;
  r.status = hurray_table_diagnose(p, bytes.size(), policy, r.all.data(), r.all.size(), &e2,
                                   &w2, nullptr);
  return r;
}

inline Report check(const hurray_buffer_handle &h, const hurray_policy *policy = nullptr) {
  return check(encode({h}), policy);
}

}  // namespace hurray_test
