// An independent model of the byte-level rules, written from
// docs/spec/buffer-protocol.md (sections 1-4) and the protocol's RULES.md,
// not from src/core. The fuzz targets compare hurray_table_diagnose() with
// it: same findings (rule, severity, buffer index, byte offset) for every
// input and policy. It reads the bytes itself (little-endian by hand) and
// keeps its own copy of the validity tables, so a mistake in the library's
// codec or tables does not cancel out.
//
// One reading the documents leave open, made here as the library does:
// a CPU handle that is not PRODUCER_SYNCED on the IPC transport is reported
// under BP-SYNC-CPU only, not also under BP-SYNC-IPC (CPU can never declare
// IPC capabilities, so the question of what it exports is not asked).
#pragma once

#include <hurray.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hurray_fuzz {

struct ModelFinding {
  uint32_t rule;
  int32_t severity;
  int64_t index;
  int64_t offset;
  friend bool operator==(const ModelFinding &, const ModelFinding &) = default;
};

// What a hurray_policy holds, kept next to it by the fuzz targets: every
// setter they call is mirrored here when (and only when) the model says it
// succeeds.
struct ModelPolicy {
  hurray_transport transport = HURRAY_TRANSPORT_IN_PROCESS;
  bool warnings_as_errors = false;
  std::array<bool, 256> agreed{};    // private tags agreed out of band
  std::array<uint8_t, 256> ipc{};    // HURRAY_IPC_SYNC_* per device tag

  ModelPolicy() {
    // D4: CUDA, ROCM, VULKAN and LEVEL_ZERO export IPC events by default.
    for (int t : {0x01, 0x02, 0x04, 0x07}) ipc[static_cast<size_t>(t)] = HURRAY_IPC_SYNC_EVENTS;
  }
  bool is_default() const { return *this == ModelPolicy(); }
  friend bool operator==(const ModelPolicy &, const ModelPolicy &) = default;

  static bool named(uint8_t tag) { return tag <= 0x08; }
  static bool private_tag(uint8_t tag) { return tag >= 0xF0 && tag <= 0xFE; }

  // hurray_policy_allow_private_tag: only private tags can be agreed.
  bool allow_private(uint8_t tag, bool allow) {
    if (!private_tag(tag)) return false;
    agreed[tag] = allow;
    return true;
  }
  // hurray_policy_set_ipc_sync: known flags, a named or private tag, and
  // nothing for CPU.
  bool set_ipc_sync(uint8_t tag, unsigned flags) {
    if (flags & ~3u) return false;
    if (!named(tag) && !private_tag(tag)) return false;
    if (tag == 0x00 && flags != 0) return false;
    ipc[tag] = static_cast<uint8_t>(flags);
    return true;
  }
};

// Section 2 of buffer-protocol.md: valid memory classes of each named tag,
// bit n for class n (STANDARD 0, HOST_PINNED 1, UNIFIED 2, PEER 3).
inline constexpr uint8_t kModelClasses[9] = {
    0x1,  // CPU: STANDARD
    0xF,  // CUDA: all four
    0xF,  // ROCM
    0x7,  // METAL: no PEER
    0x7,  // VULKAN
    0x1,  // WEBGPU
    0x5,  // HEXAGON: STANDARD, UNIFIED
    0xF,  // LEVEL_ZERO
    0x7,  // OPENCL
};

inline bool model_pair_valid(uint8_t tag, uint8_t mc) {
  const bool private_mc = mc >= 0xF0 && mc <= 0xFE;
  if (ModelPolicy::named(tag)) return mc <= 3 && ((kModelClasses[tag] >> mc) & 1);
  if (ModelPolicy::private_tag(tag)) return mc == 0 || private_mc;
  return false;
}

inline bool model_gpu_memory(uint8_t tag) {
  return tag == 0x01 || tag == 0x02 || tag == 0x03 || tag == 0x04 || tag == 0x05 ||
         tag == 0x07 || tag == 0x08;
}

// The status a finding of `rule` carries (hurray.h's status list).
inline hurray_status model_status_of(uint32_t rule) {
  switch (rule) {
    case HURRAY_RULE_SIZE: return HURRAY_E_SIZE;
    case HURRAY_RULE_RESERVED: return HURRAY_E_RESERVED;
    case HURRAY_RULE_ALIGN_POW2:
    case HURRAY_RULE_ALIGN_MIN:
    case HURRAY_RULE_ALIGN_IPC:
    case HURRAY_RULE_ALIGN_GPU_PAGE:
    case HURRAY_RULE_ALIGN_HEXAGON: return HURRAY_E_ALIGNMENT;
    case HURRAY_RULE_DEV_INVALID:
    case HURRAY_RULE_DEV_RESERVED:
    case HURRAY_RULE_DEV_PRIVATE: return HURRAY_E_DEVICE_TAG;
    case HURRAY_RULE_MC_INVALID:
    case HURRAY_RULE_MC_PAIR: return HURRAY_E_MEMORY_CLASS;
    case HURRAY_RULE_COLOC: return HURRAY_E_COLOCATION;
    case HURRAY_RULE_SYNC_VALUE:
    case HURRAY_RULE_SYNC_CPU:
    case HURRAY_RULE_SYNC_NET:
    case HURRAY_RULE_SYNC_IPC: return HURRAY_E_SYNC;
    default: return HURRAY_E_INTERNAL;  // no byte-level rule
  }
}

// Findings for the complete handle at p[0..15], table index `index`;
// `first` is handle 0's bytes, or null for handle 0 itself.
inline void model_handle(const uint8_t *p, int64_t index, const uint8_t *first,
                         const ModelPolicy &pol, std::vector<ModelFinding> *out) {
  uint64_t byte_size = 0;
  for (int k = 7; k >= 0; --k) byte_size = byte_size << 8 | p[k];
  uint32_t alignment = 0;
  for (int k = 11; k >= 8; --k) alignment = alignment << 8 | p[k];
  const uint8_t tag = p[12], sync = p[13], mc = p[14], rsv = p[15];
  const int64_t base = index * HURRAY_HANDLE_SIZE;
  const int32_t warn = pol.warnings_as_errors ? HURRAY_SEVERITY_ERROR : HURRAY_SEVERITY_WARNING;
  auto add = [&](hurray_rule rule, int32_t severity, int field) {
    out->push_back({static_cast<uint32_t>(rule), severity, index, base + field});
  };
  const bool nonempty = byte_size != 0;
  const bool pow2 = alignment != 0 && (alignment & (alignment - 1)) == 0;
  const bool ipc_like = pol.transport == HURRAY_TRANSPORT_IPC ||
                        pol.transport == HURRAY_TRANSPORT_RDMA;
  const bool network = pol.transport == HURRAY_TRANSPORT_RDMA ||
                       pol.transport == HURRAY_TRANSPORT_CROSS_MACHINE;
  const bool known_tag = ModelPolicy::named(tag) || ModelPolicy::private_tag(tag);

  // byte 8: alignment (D2: 0 is not a power of two, even when empty)
  if (!pow2) add(HURRAY_RULE_ALIGN_POW2, HURRAY_SEVERITY_ERROR, 8);
  if (nonempty && alignment < 64) add(HURRAY_RULE_ALIGN_MIN, HURRAY_SEVERITY_ERROR, 8);
  if (nonempty && ipc_like && alignment < 4096)
    add(HURRAY_RULE_ALIGN_IPC, HURRAY_SEVERITY_ERROR, 8);
  if (nonempty && model_gpu_memory(tag) && alignment < 4096)
    add(HURRAY_RULE_ALIGN_GPU_PAGE, warn, 8);
  if (nonempty && tag == 0x06 && alignment < 128) add(HURRAY_RULE_ALIGN_HEXAGON, warn, 8);

  // byte 12: device_tag, then co-location with handle 0
  if (tag == 0xFF) add(HURRAY_RULE_DEV_INVALID, HURRAY_SEVERITY_ERROR, 12);
  else if (tag >= 0x09 && tag <= 0xEF) add(HURRAY_RULE_DEV_RESERVED, HURRAY_SEVERITY_ERROR, 12);
  else if (ModelPolicy::private_tag(tag) && !pol.agreed[tag])
    add(HURRAY_RULE_DEV_PRIVATE, HURRAY_SEVERITY_ERROR, 12);
  if (first && tag != first[12]) add(HURRAY_RULE_COLOC, HURRAY_SEVERITY_ERROR, 12);

  // byte 13: sync_mode
  if (sync > 2) {
    add(HURRAY_RULE_SYNC_VALUE, HURRAY_SEVERITY_ERROR, 13);
  } else if (sync != 0) {
    if (tag == 0x00) add(HURRAY_RULE_SYNC_CPU, HURRAY_SEVERITY_ERROR, 13);
    if (network) add(HURRAY_RULE_SYNC_NET, HURRAY_SEVERITY_ERROR, 13);
    if (pol.transport == HURRAY_TRANSPORT_IPC && known_tag && tag != 0x00) {
      const unsigned need = sync == 1 ? HURRAY_IPC_SYNC_EVENTS : HURRAY_IPC_SYNC_STREAMS;
      if (!(pol.ipc[tag] & need)) add(HURRAY_RULE_SYNC_IPC, HURRAY_SEVERITY_ERROR, 13);
    }
  }

  // byte 14: memory_class (D6: no pair question for a reserved/invalid tag)
  const bool mc_defined = mc <= 3 || (mc >= 0xF0 && mc <= 0xFE);
  if (!mc_defined) add(HURRAY_RULE_MC_INVALID, HURRAY_SEVERITY_ERROR, 14);
  else if (known_tag && !model_pair_valid(tag, mc)) add(HURRAY_RULE_MC_PAIR, HURRAY_SEVERITY_ERROR, 14);
  if (first && mc != first[14]) add(HURRAY_RULE_COLOC, HURRAY_SEVERITY_ERROR, 14);

  // byte 15: reserved
  if (rsv != 0) add(HURRAY_RULE_RESERVED, HURRAY_SEVERITY_ERROR, 15);
}

// Every finding for a table of `size` bytes (D1, D5, D11).
inline std::vector<ModelFinding> model_table(const uint8_t *p, size_t size,
                                             const ModelPolicy &pol) {
  std::vector<ModelFinding> out;
  const size_t n = size / HURRAY_HANDLE_SIZE;
  if (size == 0 || size % HURRAY_HANDLE_SIZE != 0)
    out.push_back({HURRAY_RULE_SIZE, HURRAY_SEVERITY_ERROR, static_cast<int64_t>(n),
                   static_cast<int64_t>(n * HURRAY_HANDLE_SIZE)});
  for (size_t i = 0; i < n; ++i)
    model_handle(p + i * HURRAY_HANDLE_SIZE, static_cast<int64_t>(i), i ? p : nullptr, pol,
                 &out);
  return out;
}

// Order-insensitive comparison key: D5 fixes the order by byte offset but
// not among the rules of one field, so findings are compared as a sorted
// list; the order itself is checked separately.
inline void sort_findings(std::vector<ModelFinding> *v) {
  std::sort(v->begin(), v->end(), [](const ModelFinding &a, const ModelFinding &b) {
    if (a.offset != b.offset) return a.offset < b.offset;
    if (a.rule != b.rule) return a.rule < b.rule;
    return a.severity < b.severity;
  });
}

}  // namespace hurray_fuzz
