// The DLPack bridge against consumers and producers that get it wrong
// (issue 22): byte_offset folded into data where data is an address (PyTorch
// 1.x ignores byte_offset), DLPack 1.1 declared, padded sub-byte types, and
// an ndim above HURRAY_DLPACK_MAX_NDIM refused before shape[] is read.
#include <catch2/catch.hpp>

#include <hurray_dlpack.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

std::atomic<int> g_frees{0}, g_deleted{0};
void on_free(void *, void *) { g_frees++; }
void on_delete(hurray_dl_managed_tensor_versioned *) { g_deleted++; }
void on_delete_legacy(hurray_dl_managed_tensor *) { g_deleted++; }

hurray_handoff wrap(void *data, uint64_t n, uint32_t buffer_flags = 0, uint8_t tag = 0) {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.flags = buffer_flags;
  d.handle.byte_size = n;
  d.handle.alignment = tag ? 4096 : 64;
  d.handle.device_tag = tag;
  d.data = data;
  d.free_fn = on_free;
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  hurray_handoff h;
  hurray_error err;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, &e, &h, &err) == HURRAY_OK);
  return h;
}

constexpr hurray_dl_data_type kU8 = {HURRAY_DL_UINT, 8, 1};

// A producer's tensor that declares DLPack 1.1, deleted through on_delete.
hurray_dl_managed_tensor_versioned tensor_1_1(void *data, hurray_dl_device device, int32_t ndim,
                                              hurray_dl_data_type dtype, int64_t *shape) {
  hurray_dl_managed_tensor_versioned v{};
  v.version = {1, 1};
  v.deleter = on_delete;
  v.dl_tensor.data = data;
  v.dl_tensor.device = device;
  v.dl_tensor.ndim = ndim;
  v.dl_tensor.dtype = dtype;
  v.dl_tensor.shape = shape;
  return v;
}

}  // namespace

TEST_CASE("export: byte_offset is folded into data on an address device, both structs",
          "[dlpack][export][offset]") {
  alignas(64) static unsigned char mem[256];
  g_frees = 0;
  const int64_t shape[1] = {4};
  hurray_handoff h = wrap(mem, sizeof mem);
  hurray_dl_managed_tensor_versioned *t = nullptr;
  REQUIRE(hurray_dlpack_export_versioned(&h, kU8, 1, shape, nullptr, 64, &t, nullptr) ==
          HURRAY_OK);
  CHECK(t->dl_tensor.data == mem + 64);
  CHECK(t->dl_tensor.byte_offset == 0);
  CHECK(t->version.major == 1);
  CHECK(t->version.minor == 3);  // DLPack 1.3
  t->deleter(t);
  h = wrap(mem, sizeof mem);
  hurray_dl_managed_tensor *l = nullptr;
  REQUIRE(hurray_dlpack_export_legacy(&h, kU8, 1, shape, nullptr, 100, &l, nullptr) ==
          HURRAY_OK);
  CHECK(l->dl_tensor.data == mem + 100);
  CHECK(l->dl_tensor.byte_offset == 0);
  l->deleter(l);
  CHECK(g_frees == 2);
}

TEST_CASE("export: an opaque handle keeps its byte_offset beside it",
          "[dlpack][export][offset]") {
  g_frees = 0;
  void *const handle = reinterpret_cast<void *>(uintptr_t{0x1234});
  hurray_handoff h = wrap(handle, 8192, HURRAY_HANDOFF_OPAQUE_DATA, HURRAY_DEVICE_OPENCL);
  const int64_t shape[1] = {16};
  hurray_dl_managed_tensor_versioned *t = nullptr;
  hurray_error err;
  REQUIRE(hurray_dlpack_export_versioned(&h, kU8, 1, shape, nullptr, 4096, &t, &err) ==
          HURRAY_OK);
  CHECK(t->dl_tensor.device.device_type == HURRAY_DL_OPENCL);
  CHECK(t->dl_tensor.data == handle);  // a handle is never offset
  CHECK(t->dl_tensor.byte_offset == 4096);
  t->deleter(t);
  CHECK(g_frees == 1);
}

TEST_CASE("import: an ndim above HURRAY_DLPACK_MAX_NDIM is refused before shape is read",
          "[dlpack][import][ndim]") {
  // Two shape entries at the very end of a page; the next page is
  // inaccessible, so reading a third entry faults.
  const long page = sysconf(_SC_PAGESIZE);
  void *m = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(m != MAP_FAILED);
  REQUIRE(mprotect(static_cast<char *>(m) + page, page, PROT_NONE) == 0);
  int64_t *shape = reinterpret_cast<int64_t *>(static_cast<char *>(m) + page) - 2;
  shape[0] = 1;
  shape[1] = 1;
  alignas(64) static unsigned char data[64];
  g_deleted = 0;
  for (const int32_t ndim : {INT32_MAX, HURRAY_DLPACK_MAX_NDIM + 1}) {
    hurray_dl_managed_tensor_versioned v = tensor_1_1(data, {HURRAY_DL_CPU, 0}, ndim, kU8, shape);
    v.dl_tensor.strides = shape;
    hurray_handoff h;
    hurray_error err;
    CHECK(hurray_dlpack_import_versioned(nullptr, &v, &h, &err) == HURRAY_E_INVALID_ARGUMENT);
    CHECK(std::string(err.message).find("HURRAY_DLPACK_MAX_NDIM") != std::string::npos);
    hurray_dl_managed_tensor l{v.dl_tensor, nullptr, on_delete_legacy};
    CHECK(hurray_dlpack_import_legacy(nullptr, &l, &h, &err) == HURRAY_E_INVALID_ARGUMENT);
  }
  CHECK(g_deleted == 0);  // refused: still the producer's
  munmap(m, 2 * page);
}

TEST_CASE("import: padded sub-byte elements (DLPack 1.1 flag) take one byte each",
          "[dlpack][import][subbyte]") {
  alignas(64) static unsigned char data[64];
  int64_t shape[1] = {10};
  hurray_dl_managed_tensor_versioned v =
      tensor_1_1(data, {HURRAY_DL_CPU, 0}, 1, hurray_dl_data_type{HURRAY_DL_INT, 4, 1}, shape);
  hurray_handoff h;
  hurray_error err;
  // Packed (no flag): still refused.
  CHECK(hurray_dlpack_import_versioned(nullptr, &v, &h, &err) == HURRAY_E_UNSUPPORTED);
  hurray_dl_managed_tensor l{v.dl_tensor, nullptr, on_delete_legacy};
  CHECK(hurray_dlpack_import_legacy(nullptr, &l, &h, &err) == HURRAY_E_UNSUPPORTED);
  v.flags = HURRAY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED;
  g_deleted = 0;
  REQUIRE(hurray_dlpack_import_versioned(nullptr, &v, &h, &err) == HURRAY_OK);
  hurray_buffer_handle hd;
  REQUIRE(hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr) == HURRAY_OK);
  CHECK(hd.byte_size == 10);  // one byte per 4-bit element
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(g_deleted == 1);
}

TEST_CASE("import with options: a producer synchronised to a stream gives CONSUMER_STREAM",
          "[dlpack][import][sync]") {
  int64_t shape[1] = {1024};
  void *const device_data = reinterpret_cast<void *>(uintptr_t{0x7f0000000000});
  hurray_dl_managed_tensor_versioned v = tensor_1_1(device_data, {HURRAY_DL_CUDA, 0}, 1, kU8, shape);
  void *const stream = reinterpret_cast<void *>(uintptr_t{0x5000});
  hurray_dlpack_import_options o = HURRAY_DLPACK_IMPORT_OPTIONS_INIT;
  o.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;
  o.stream = stream;
  hurray_handoff h;
  hurray_error err;
  g_deleted = 0;
  REQUIRE(hurray_dlpack_import_versioned_opts(nullptr, &v, &o, &h, &err) == HURRAY_OK);
  hurray_buffer_handle hd;
  REQUIRE(hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr) == HURRAY_OK);
  CHECK(hd.sync_mode == HURRAY_SYNC_CONSUMER_STREAM);
  CHECK(h.sync_object == stream);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(g_deleted == 1);
  // NULL options: as the function without them (PRODUCER_SYNCED).
  REQUIRE(hurray_dlpack_import_versioned_opts(nullptr, &v, nullptr, &h, &err) == HURRAY_OK);
  REQUIRE(hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr) == HURRAY_OK);
  CHECK(hd.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  // The legacy struct takes the same declaration.
  hurray_dl_managed_tensor l{v.dl_tensor, nullptr, on_delete_legacy};
  REQUIRE(hurray_dlpack_import_legacy_opts(nullptr, &l, &o, &h, &err) == HURRAY_OK);
  REQUIRE(hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr) == HURRAY_OK);
  CHECK(hd.sync_mode == HURRAY_SYNC_CONSUMER_STREAM);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(g_deleted == 3);
}

TEST_CASE("import with options: malformed declarations and a CPU stream are refused",
          "[dlpack][import][sync]") {
  alignas(64) static unsigned char data[64];
  int64_t shape[1] = {64};
  hurray_dl_managed_tensor_versioned v = tensor_1_1(data, {HURRAY_DL_CPU, 0}, 1, kU8, shape);
  hurray_handoff h;
  hurray_error err;
  g_deleted = 0;
  hurray_dlpack_import_options o = HURRAY_DLPACK_IMPORT_OPTIONS_INIT;
  o.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;
  o.stream = data;
  CHECK(hurray_dlpack_import_versioned_opts(nullptr, &v, &o, &h, &err) == HURRAY_E_SYNC);
  CHECK(std::string(err.rule_id) == "BP-SYNC-CPU");
  o.stream = nullptr;
  CHECK(hurray_dlpack_import_versioned_opts(nullptr, &v, &o, &h, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  o = HURRAY_DLPACK_IMPORT_OPTIONS_INIT;
  o.sync_mode = HURRAY_SYNC_EVENT;
  CHECK(hurray_dlpack_import_versioned_opts(nullptr, &v, &o, &h, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  o = HURRAY_DLPACK_IMPORT_OPTIONS_INIT;
  o.size = 8;
  CHECK(hurray_dlpack_import_versioned_opts(nullptr, &v, &o, &h, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  o = HURRAY_DLPACK_IMPORT_OPTIONS_INIT;
  o.flags = 1;
  CHECK(hurray_dlpack_import_versioned_opts(nullptr, &v, &o, &h, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(g_deleted == 0);
  o = HURRAY_DLPACK_IMPORT_OPTIONS_INIT;
  REQUIRE(hurray_dlpack_import_versioned_opts(nullptr, &v, &o, &h, &err) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(g_deleted == 1);
}
