// fuzz_dlpack_import: DLPack tensors built from fuzz bytes, imported as
// handoffs (hurray_dlpack_import_legacy / _versioned), checked against a
// model of the import written here from hurray_dlpack.h and TABLES.md §6.
//
// The import never touches the tensor's memory, so the data pointer is a
// fuzzed number like every other field. Properties:
//  P1 the library accepts exactly when the model does, with the model's
//     status (same order of checks: version, device, dtype, ndim, shape,
//     size overflow, NULL data, opaque handle, address, alignment);
//  P2 a refusal fills hurray_error: a message, a message that starts with
//     the rule ID when a rule is named, BP-DEV-INVALID for a device without
//     a mapping, BP-ALIGN-MIN for an address aligned to less than 64,
//     BP-ZC-NOCOPY for an offset opaque handle, BP-ALIGN-ADDR for a first
//     byte at address 0; and the tensor's deleter is
//     not called (the caller still owns it);
//  P3 an accepted import gives a handoff that passes hurray_handoff_check,
//     whose handle validates, whose byte_size is what the tensor spans
//     (shape x dtype when compact), whose device is the §6 pair, data the
//     lowest byte spanned, alignment a power of two >= 64 dividing it (when
//     not opaque), READ_ONLY exactly when the versioned flags say so;
//  P4 exported back (as one uint8 vector of byte_size elements, versioned)
//     the tensor has the original device type and id; its deleter releases
//     the import, which deletes the original tensor exactly once; a stale
//     copy of the handoff is refused (BP-REL-ONCE) and deletes nothing.
//
// Input layout (tests/fuzz/make_corpus.py writes seeds in it):
//   byte 0      bit 0 versioned; bit 1 READ_ONLY flag; bit 2 NULL strides;
//               bit 3 NULL shape; bit 4 version.major 2 instead of 1;
//               bit 5 IS_SUBBYTE_TYPE_PADDED flag (versioned);
//               bit 6 ndim 65 + byte 2 (above HURRAY_DLPACK_MAX_NDIM: refused
//               before the 6-entry shape is read, or ASan says so)
//   byte 1      DLDeviceType: (int8) value, so -128..127
//   byte 2      ndim: (int8) value; values > 6 are taken % 7
//   bytes 3-6   dtype: code, bits, lanes (LE u16)
//   bytes 7-10  device_id (LE i32)
//   bytes 11-18 data pointer (LE u64; never dereferenced)
//   bytes 19-26 byte_offset (LE u64)
//   then ndim x (shape LE i16, stride LE i16)
//   (bytes past the end of the input read as 0)
#include <hurray_dlpack.h>

#include <cstring>
#include <string>

#include "fuzz_util.h"

using namespace hurray_fuzz;

namespace {

__extension__ typedef __int128 i128;

constexpr i128 kI64Max = INT64_MAX, kI64Min = INT64_MIN;
constexpr i128 kU64Max = UINT64_MAX;

int g_deleted = 0;
void delete_legacy(hurray_dl_managed_tensor *) { ++g_deleted; }
void delete_versioned(hurray_dl_managed_tensor_versioned *) { ++g_deleted; }

struct Pair {
  bool ok;
  uint8_t tag, mc;
};

// TABLES.md §6, "back from DLPack".
Pair pair_of(int32_t dl) {
  switch (dl) {
    case 1: return {true, HURRAY_DEVICE_CPU, HURRAY_MEMORY_STANDARD};
    case 2: return {true, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_STANDARD};
    case 3: return {true, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_HOST_PINNED};
    case 13: return {true, HURRAY_DEVICE_CUDA, HURRAY_MEMORY_UNIFIED};
    case 10: return {true, HURRAY_DEVICE_ROCM, HURRAY_MEMORY_STANDARD};
    case 11: return {true, HURRAY_DEVICE_ROCM, HURRAY_MEMORY_HOST_PINNED};
    case 8: return {true, HURRAY_DEVICE_METAL, HURRAY_MEMORY_STANDARD};
    case 7: return {true, HURRAY_DEVICE_VULKAN, HURRAY_MEMORY_STANDARD};
    case 15: return {true, HURRAY_DEVICE_WEBGPU, HURRAY_MEMORY_STANDARD};
    case 16: return {true, HURRAY_DEVICE_HEXAGON, HURRAY_MEMORY_STANDARD};
    case 14: return {true, HURRAY_DEVICE_LEVEL_ZERO, HURRAY_MEMORY_STANDARD};
    case 4: return {true, HURRAY_DEVICE_OPENCL, HURRAY_MEMORY_STANDARD};
    default: return {false, 0, 0};
  }
}

bool opaque(int32_t dl) { return dl == 4 || dl == 7 || dl == 8 || dl == 15; }

struct Model {
  hurray_status status = HURRAY_OK;
  const char *rule = "";  // the rule a refusal must name, "" when none is required
  uint64_t bytes = 0, addr = 0;
  uint32_t alignment = 0;
  Pair pair{};
};

Model model(const hurray_dl_tensor &t, bool versioned, uint32_t major, bool padded) {
  Model m;
  auto refuse = [&m](hurray_status st, const char *rule) {
    m.status = st;
    m.rule = rule;
    return m;
  };
  if (versioned && major != 1) return refuse(HURRAY_E_UNSUPPORTED, "");
  m.pair = pair_of(t.device.device_type);
  if (!m.pair.ok) return refuse(HURRAY_E_DEVICE_TAG, "BP-DEV-INVALID");
  if (t.dtype.bits == 0 || t.dtype.lanes == 0) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
  const uint64_t bits = versioned && padded && t.dtype.bits < 8
                            ? uint64_t{8} * t.dtype.lanes
                            : uint64_t{t.dtype.bits} * t.dtype.lanes;
  if (bits % 8) return refuse(HURRAY_E_UNSUPPORTED, "");
  const uint64_t itemsize = bits / 8;
  if (t.ndim < 0 || t.ndim > HURRAY_DLPACK_MAX_NDIM) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
  if (t.ndim > 0 && !t.shape) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
  bool empty = false;
  for (int32_t k = 0; k < t.ndim; ++k) {
    if (t.shape[k] < 0) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
    if (t.shape[k] == 0) empty = true;
  }
  i128 lo = 0, hi = 0;
  if (!empty) {
    i128 row = 1;
    for (int32_t k = t.ndim - 1; k >= 0; --k) {
      const i128 s = t.strides ? i128{t.strides[k]} : row;
      const i128 ext = (i128{t.shape[k]} - 1) * s;
      if (ext > kI64Max || ext < kI64Min) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
      if (ext > 0) hi += ext;
      if (ext < 0) lo += ext;
      if (hi > kI64Max || lo < kI64Min) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
      if (!t.strides) {
        row *= t.shape[k];
        if (row > kI64Max) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
      }
    }
    const i128 elems = hi - lo + 1;
    if (elems > kI64Max) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
    const i128 bytes = elems * i128{itemsize};
    if (bytes > kU64Max) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
    m.bytes = static_cast<uint64_t>(bytes);
  }
  const auto data = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(t.data));
  if (!empty && !t.data) return refuse(HURRAY_E_INVALID_ARGUMENT, "");
  if (opaque(t.device.device_type)) {
    if (t.byte_offset != 0 || lo != 0) return refuse(HURRAY_E_UNSUPPORTED, "BP-ZC-NOCOPY");
    m.addr = data;
    m.alignment = 64;
    return m;
  }
  const i128 addr = i128{data} + t.byte_offset + lo * i128{itemsize};
  if (i128{data} + t.byte_offset > kU64Max || addr < 0 || addr + m.bytes > kU64Max)
    return refuse(HURRAY_E_INVALID_ARGUMENT, "");
  m.addr = static_cast<uint64_t>(addr);
  if (empty) {
    m.alignment = 64;
    return m;
  }
  if (m.addr == 0) return refuse(HURRAY_E_ALIGNMENT, "BP-ALIGN-ADDR");
  const uint64_t lowbit = m.addr & (~m.addr + 1);
  m.alignment = static_cast<uint32_t>(lowbit < 4096 ? lowbit : 4096);
  if (m.alignment < 64) return refuse(HURRAY_E_ALIGNMENT, "BP-ALIGN-MIN");
  return m;
}

std::string describe(const hurray_dl_tensor &t) {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "device %d/%d ndim %d dtype {%u,%u,%u} data 0x%" PRIxPTR " byte_offset %" PRIu64
                " strides %s",
                t.device.device_type, t.device.device_id, t.ndim, unsigned{t.dtype.code},
                unsigned{t.dtype.bits}, unsigned{t.dtype.lanes},
                reinterpret_cast<uintptr_t>(t.data), t.byte_offset, t.strides ? "given" : "NULL");
  std::string s = buf;
  for (int32_t k = 0; t.shape && k < t.ndim && k < 6; ++k)
    s += " [" + std::to_string(t.shape[k]) + ":" +
         (t.strides ? std::to_string(t.strides[k]) : std::string("-")) + "]";
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Reader in(data, size);
  const uint8_t flags = in.u8();
  const bool versioned = flags & 1, read_only = flags & 2, null_strides = flags & 4,
             null_shape = flags & 8;
  const uint32_t major = flags & 16 ? 2 : 1;
  const bool padded = flags & 32, huge_ndim = flags & 64;
  hurray_dl_tensor t{};
  t.device.device_type = static_cast<int8_t>(in.u8());
  int32_t ndim = static_cast<int8_t>(in.u8());
  if (ndim > 6) ndim %= 7;
  t.ndim = huge_ndim ? 65 + (ndim < 0 ? 0 : ndim) : ndim;
  t.dtype.code = in.u8();
  t.dtype.bits = in.u8();
  t.dtype.lanes = in.u16();
  t.device.device_id = static_cast<int32_t>(in.u32());
  t.data = reinterpret_cast<void *>(static_cast<uintptr_t>(in.u64()));
  t.byte_offset = in.u64();
  int64_t shape[6] = {}, strides[6] = {};
  for (int32_t k = 0; k < ndim; ++k) {
    shape[k] = static_cast<int16_t>(in.u16());
    strides[k] = static_cast<int16_t>(in.u16());
  }
  t.shape = null_shape ? nullptr : shape;
  t.strides = null_strides ? nullptr : strides;
  failure_context() = [&] { std::fprintf(stderr, "  tensor: %s\n", describe(t).c_str()); };

  hurray_dl_managed_tensor legacy{t, nullptr, delete_legacy};
  hurray_dl_managed_tensor_versioned ver{};
  ver.version = {major, 0};
  ver.deleter = delete_versioned;
  ver.flags = (read_only ? HURRAY_DLPACK_FLAG_READ_ONLY : 0) |
              (padded ? HURRAY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED : 0);
  ver.dl_tensor = t;

  g_deleted = 0;
  hurray_handoff h;
  hurray_error err;
  std::memset(&err, 0, sizeof err);
  const hurray_status st = versioned ? hurray_dlpack_import_versioned(nullptr, &ver, &h, &err)
                                     : hurray_dlpack_import_legacy(nullptr, &legacy, &h, &err);
  const Model m = model(t, versioned, major, padded);

  // P1
  FUZZ_CHECK(st == m.status, "the library and the model disagree on the import's status");
  if (st != HURRAY_OK) {
    // P2
    FUZZ_CHECK(err.status == st, "hurray_error.status is the returned status");
    FUZZ_CHECK(err.message[0] != '\0', "a refusal carries a message");
    const std::string rule_id = err.rule_id, message = err.message;
    if (err.rule != HURRAY_RULE_NONE)
      FUZZ_CHECK(rule_id == hurray_rule_id(static_cast<hurray_rule>(err.rule)) &&
                     message.rfind(rule_id + ":", 0) == 0,
                 "a named rule starts the message");
    if (m.rule[0]) FUZZ_CHECK(rule_id == m.rule, "the refusal names the rule the model expects");
    FUZZ_CHECK(g_deleted == 0, "a refused tensor is not deleted (the caller still owns it)");
    verdict_refused({rule_id});
    return 0;
  }
  verdict_accepted();

  // P3
  FUZZ_CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK, "the handoff passes its check");
  hurray_buffer_handle hd;
  FUZZ_CHECK(hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr) == HURRAY_OK, "decode");
  FUZZ_CHECK(hurray_handle_validate(&hd, nullptr, nullptr) == HURRAY_OK, "the handle validates");
  FUZZ_CHECK(hd.byte_size == m.bytes, "byte_size is the span of shape x strides x dtype");
  FUZZ_CHECK(hd.device_tag == m.pair.tag && hd.memory_class == m.pair.mc,
             "the device is the TABLES.md section 6 pair");
  FUZZ_CHECK(hd.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED, "a DLPack tensor is producer-synced");
  FUZZ_CHECK(hd.alignment == m.alignment, "alignment as the model says");
  FUZZ_CHECK(reinterpret_cast<uintptr_t>(h.data) == m.addr, "data is the lowest byte spanned");
  FUZZ_CHECK(((h.flags & HURRAY_HANDOFF_OPAQUE_DATA) != 0) == opaque(t.device.device_type),
             "OPAQUE_DATA exactly for the opaque DLPack devices");
  FUZZ_CHECK(((h.flags & HURRAY_HANDOFF_READ_ONLY) != 0) == (versioned && read_only),
             "READ_ONLY carried over from the versioned flags");
  if (hd.device_tag != HURRAY_DEVICE_CPU)
    FUZZ_CHECK(h.device_ordinal == t.device.device_id, "device_id becomes device_ordinal");
  FUZZ_CHECK(g_deleted == 0, "nothing deleted while the handoff lives");

  // P4
  hurray_handoff stale = h;
  const int64_t n = static_cast<int64_t>(hd.byte_size);
  hurray_dl_managed_tensor_versioned *back = nullptr;
  const hurray_dl_data_type u8 = {HURRAY_DL_UINT, 8, 1};
  if (n >= 0) {
    FUZZ_CHECK(hurray_dlpack_export_versioned(&h, u8, 1, &n, nullptr, 0, &back, &err) ==
                   HURRAY_OK,
               "the imported handoff exports back");
    FUZZ_CHECK(back->dl_tensor.device.device_type == t.device.device_type,
               "the device type survives the round trip");
    FUZZ_CHECK(back->dl_tensor.device.device_id ==
                   (hd.device_tag == HURRAY_DEVICE_CPU ? 0 : t.device.device_id),
               "the device id survives the round trip");
    FUZZ_CHECK(((back->flags & HURRAY_DLPACK_FLAG_READ_ONLY) != 0) == (versioned && read_only),
               "READ_ONLY survives the round trip");
    back->deleter(back);
  } else {  // more than INT64_MAX bytes: no int64 shape can say so
    FUZZ_CHECK(hurray_handoff_release(&h, &err) == HURRAY_OK, "release");
  }
  FUZZ_CHECK(g_deleted == 1, "releasing the import deletes the tensor exactly once");
  FUZZ_CHECK(hurray_handoff_release(&stale, &err) == HURRAY_E_ALREADY_RELEASED &&
                 std::string(err.rule_id) == "BP-REL-ONCE",
             "a stale copy is refused, naming BP-REL-ONCE");
  FUZZ_CHECK(g_deleted == 1, "and deletes nothing");
  return 0;
}
