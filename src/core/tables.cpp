// The protocol's tables as data, in one place: device tags, memory classes,
// sync modes, the (device_tag, memory_class) validity table (TABLES.md §3),
// GPU-memory and alignment guidance (§2, §5), default IPC capabilities (§5),
// rule IDs and their summaries (RULES.md), and status names.
#include <cstddef>
#include <iterator>

#include "internal.h"

namespace hurray::detail {
namespace {

constexpr const char *kClassNames[] = {"STANDARD", "HOST_PINNED", "UNIFIED", "PEER"};
constexpr const char *kSyncNames[] = {"PRODUCER_SYNCED", "EVENT", "CONSUMER_STREAM"};
constexpr const char *kTransportNames[] = {"in-process", "ipc", "rdma", "cross-machine"};

// The row of `table` whose key is `key`; nullptr when there is none.
template <class Row, size_t N, class Key>
constexpr const Row *find_row(const Row (&table)[N], Key key) noexcept {
  for (const Row &row : table)
    if (row.key == key) return &row;
  return nullptr;
}

struct RuleRow {
  hurray_rule key;
  const char *id;
  hurray_rule_kind kind;
};

// IDs and kinds come from the public X-macro, so that they have one source.
// The macro writes one initializer per rule and nothing else.
#define HURRAY_RULE_ROW_(name, num, id, kind) {HURRAY_RULE_##name, id, HURRAY_RULE_KIND_##kind},
constexpr RuleRow kRules[] = {HURRAY_RULE_MAP(HURRAY_RULE_ROW_)};
#undef HURRAY_RULE_ROW_

struct SummaryRow {
  hurray_rule key;
  const char *text;
};

// Summaries are this project's restatement of RULES.md, one per rule, in the
// order of HURRAY_RULE_MAP (checked below).
// clang-format off
constexpr SummaryRow kSummaries[] = {
    {HURRAY_RULE_NONE, "no rule"},
    {HURRAY_RULE_SIZE, "a handle is 16 bytes and a buffer table a whole, non-empty number of handles"},
    {HURRAY_RULE_LE, "multi-byte fields are little-endian on every host"},
    {HURRAY_RULE_RESERVED, "byte 15 of a handle is zero"},
    {HURRAY_RULE_ALIGN_POW2, "alignment is a non-zero power of two"},
    {HURRAY_RULE_ALIGN_MIN, "a non-empty buffer declares alignment of at least 64"},
    {HURRAY_RULE_ALIGN_EMPTY, "an empty buffer may declare any power of two and any pointer, NULL included"},
    {HURRAY_RULE_ALIGN_ADDR, "a non-empty buffer's base address is a multiple of its declared alignment"},
    {HURRAY_RULE_ALIGN_IPC, "on the IPC and RDMA transports a non-empty buffer declares alignment of at least 4096"},
    {HURRAY_RULE_ALIGN_GPU_PAGE, "a non-empty buffer in GPU memory should declare alignment of at least 4096"},
    {HURRAY_RULE_ALIGN_HEXAGON, "a non-empty HEXAGON buffer should declare alignment of at least 128"},
    {HURRAY_RULE_ALIGN_TRUST, "a reader relies on no alignment stronger than declared"},
    {HURRAY_RULE_DEV_INVALID, "device_tag 0xFF is invalid"},
    {HURRAY_RULE_DEV_RESERVED, "device_tags 0x09-0xEF are reserved"},
    {HURRAY_RULE_DEV_PRIVATE, "a private device_tag (0xF0-0xFE) needs an explicit out-of-band agreement"},
    {HURRAY_RULE_MC_INVALID, "memory_class 0x04-0xEF and 0xFF are not defined"},
    {HURRAY_RULE_MC_PAIR, "the (device_tag, memory_class) pair is valid in the protocol's table"},
    {HURRAY_RULE_COLOC, "all handles of one buffer table share device_tag and memory_class"},
    {HURRAY_RULE_PUT_DEVICE, "a receiver refuses a transfer rather than placing it on another device"},
    {HURRAY_RULE_SYNC_VALUE, "sync_mode is 0x00, 0x01 or 0x02"},
    {HURRAY_RULE_SYNC_CPU, "a CPU handle is PRODUCER_SYNCED"},
    {HURRAY_RULE_SYNC_NET, "handles crossing machines (cross-machine, RDMA) are PRODUCER_SYNCED"},
    {HURRAY_RULE_SYNC_IPC, "over IPC, EVENT needs a device with IPC events and CONSUMER_STREAM one with IPC streams"},
    {HURRAY_RULE_SYNC_PAYLOAD, "the handoff payload matches sync_mode: event and event-release for EVENT, a stream for CONSUMER_STREAM, nothing for PRODUCER_SYNCED"},
    {HURRAY_RULE_SYNC_WAIT, "with EVENT the consumer waits on the event on every stream it uses first"},
    {HURRAY_RULE_SYNC_STREAM, "with CONSUMER_STREAM the consumer uses only its declared streams until it waits"},
    {HURRAY_RULE_SYNC_FENCE, "a CPU producer with concurrent writers fences before handoff"},
    {HURRAY_RULE_REL_ONCE, "a buffer is released exactly once; a second release is detected and not forwarded"},
    {HURRAY_RULE_REL_AFTER, "no access after release, no release while device work is pending"},
    {HURRAY_RULE_REL_THREAD, "a release callback may be called from any thread"},
    {HURRAY_RULE_EVREL_ONCE, "with EVENT the event is released exactly once, separately from the buffer"},
    {HURRAY_RULE_REFCOUNT, "each consumer gets its own handoff; memory is freed after the last release"},
    {HURRAY_RULE_IPC_RELEASE, "an IPC producer keeps the segment until every consumer released or is gone"},
    {HURRAY_RULE_NET_OWN, "across machines the sender owns the source and the receiver its copy"},
    {HURRAY_RULE_ZC_NOCOPY, "handoff never copies the bytes"},
    {HURRAY_RULE_ZC_NOMUT, "the producer does not modify a handed-off buffer until release"},
    {HURRAY_RULE_ZC_QPARAM, "quantization-parameter buffers are never modified after the descriptor"},
    {HURRAY_RULE_ZC_STABLE, "the base address is stable while a consumer holds the buffer"},
};
// clang-format on

constexpr bool summaries_follow_rules() noexcept {
  if (std::size(kSummaries) != std::size(kRules)) return false;
  for (size_t i = 0; i < std::size(kRules); ++i)
    if (kSummaries[i].key != kRules[i].key) return false;
  return true;
}
static_assert(summaries_follow_rules(),
              "kSummaries: one row per rule of HURRAY_RULE_MAP, in order");

struct StatusRow {
  int key;
  const char *name;
  const char *message;
};

// Names and messages from the public X-macro, one initializer per status.
#define HURRAY_STATUS_ROW_(name, num, msg) {num, "HURRAY_" #name, msg},
constexpr StatusRow kStatuses[] = {HURRAY_STATUS_MAP(HURRAY_STATUS_ROW_)};
#undef HURRAY_STATUS_ROW_

}  // namespace

TagKind tag_kind(uint8_t tag) noexcept {
  if (tag <= HURRAY_DEVICE_OPENCL) return TagKind::Named;
  if (tag == HURRAY_DEVICE_INVALID) return TagKind::Invalid;
  if (tag >= HURRAY_DEVICE_PRIVATE_FIRST) return TagKind::Private;
  return TagKind::Reserved;
}

ClassKind class_kind(uint8_t mc) noexcept {
  if (mc <= HURRAY_MEMORY_PEER) return ClassKind::Named;
  if (mc == HURRAY_MEMORY_INVALID) return ClassKind::Invalid;
  if (mc >= HURRAY_MEMORY_PRIVATE_FIRST) return ClassKind::Private;
  return ClassKind::Reserved;
}

const DeviceInfo *device_info(uint8_t tag) noexcept {
  switch (tag_kind(tag)) {
    case TagKind::Named: return &kNamedDevices[tag];
    case TagKind::Private: return &kPrivateDevice;
    default: return nullptr;
  }
}

bool pair_valid(uint8_t tag, uint8_t mc) noexcept {
  const DeviceInfo *d = device_info(tag);
  if (!d) return false;
  switch (class_kind(mc)) {
    case ClassKind::Named: return (d->valid_classes >> mc) & 1u;
    case ClassKind::Private: return d->private_classes_ok;
    default: return false;
  }
}

hurray_status status_of_rule(hurray_rule rule) noexcept {
  switch (rule) {
    case HURRAY_RULE_SIZE: return HURRAY_E_SIZE;
    case HURRAY_RULE_RESERVED: return HURRAY_E_RESERVED;
    case HURRAY_RULE_ALIGN_POW2:
    case HURRAY_RULE_ALIGN_MIN:
    case HURRAY_RULE_ALIGN_ADDR:
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
    case HURRAY_RULE_SYNC_IPC:
    case HURRAY_RULE_SYNC_PAYLOAD: return HURRAY_E_SYNC;
    case HURRAY_RULE_REL_ONCE:
    case HURRAY_RULE_EVREL_ONCE: return HURRAY_E_ALREADY_RELEASED;
    default: return HURRAY_E_INTERNAL;
  }
}

}  // namespace hurray::detail

using namespace hurray::detail;

extern "C" {

HURRAY_API unsigned hurray_version(void) { return HURRAY_VERSION_NUMBER; }
HURRAY_API const char *hurray_version_string(void) { return HURRAY_VERSION_STRING; }

HURRAY_API const char *hurray_status_name(hurray_status status) {
  const StatusRow *row = find_row(kStatuses, static_cast<int>(status));
  return row ? row->name : "HURRAY_E_UNKNOWN";
}

HURRAY_API const char *hurray_status_message(hurray_status status) {
  const StatusRow *row = find_row(kStatuses, static_cast<int>(status));
  return row ? row->message : "unknown status";
}

HURRAY_API const char *hurray_rule_id(hurray_rule rule) {
  const RuleRow *row = find_row(kRules, rule);
  return row ? row->id : "";
}

HURRAY_API hurray_rule_kind hurray_rule_kind_of(hurray_rule rule) {
  const RuleRow *row = find_row(kRules, rule);
  return row ? row->kind : HURRAY_RULE_KIND_NONE;
}

HURRAY_API const char *hurray_rule_summary(hurray_rule rule) {
  const SummaryRow *row = find_row(kSummaries, rule);
  return row ? row->text : "unknown rule";
}

HURRAY_API const char *hurray_device_tag_name(uint8_t tag) {
  switch (tag_kind(tag)) {
    case TagKind::Named: return kNamedDevices[tag].name;
    case TagKind::Private: return "private";
    case TagKind::Reserved: return "reserved";
    case TagKind::Invalid: break;
  }
  return "invalid";
}

HURRAY_API const char *hurray_memory_class_name(uint8_t mc) {
  switch (class_kind(mc)) {
    case ClassKind::Named: return kClassNames[mc];
    case ClassKind::Private: return "private";
    case ClassKind::Reserved: return "reserved";
    case ClassKind::Invalid: break;
  }
  return "invalid";
}

HURRAY_API const char *hurray_sync_mode_name(uint8_t mode) {
  return mode <= HURRAY_SYNC_CONSUMER_STREAM ? kSyncNames[mode] : "invalid";
}

HURRAY_API const char *hurray_transport_name(hurray_transport t) {
  unsigned v = static_cast<unsigned>(t);
  return v <= HURRAY_TRANSPORT_CROSS_MACHINE ? kTransportNames[v] : "invalid";
}

HURRAY_API int hurray_memory_class_valid_for(uint8_t tag, uint8_t mc) {
  return pair_valid(tag, mc) ? 1 : 0;
}

}  // extern "C"
