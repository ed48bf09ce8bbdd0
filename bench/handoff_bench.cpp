// Side-by-side benchmarks: each libhurray path against a baseline doing the
// same work in the same run. bench/run.py turns the pairs into ratios in
// docs/performance.md. No timing is asserted anywhere.
#include <benchmark/benchmark.h>
#include <hurray.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

alignas(4096) unsigned char g_mem[4096];
void no_free(void *, void *) {}

// ---- wrap + check + acquire + release of a CPU handoff ----

void BM_Handoff_Hurray(benchmark::State &state) {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle.byte_size = sizeof g_mem;
  d.handle.alignment = 4096;
  d.data = g_mem;
  d.free_fn = no_free;
  for (auto _ : state) {
    hurray_handoff h;
    if (hurray_handoff_wrap(nullptr, &d, nullptr, &h, nullptr) != HURRAY_OK ||
        hurray_handoff_check(&h, nullptr, nullptr) != HURRAY_OK ||
        hurray_handoff_acquire(nullptr, &h, nullptr, nullptr) != HURRAY_OK)
      state.SkipWithError("handoff failed");
    benchmark::DoNotOptimize(h.data);
    h.release(&h);
  }
}
BENCHMARK(BM_Handoff_Hurray);

// The same round trip the DLPack way: the producer heap-allocates a managed
// tensor (DLManagedTensorVersioned's layout, declared here), the consumer
// checks its device and data pointer and calls the deleter, which frees it.
struct DLDevice { int32_t device_type, device_id; };
struct DLDataType { uint8_t code, bits; uint16_t lanes; };
struct DLTensor {
  void *data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t *shape, *strides;
  uint64_t byte_offset;
};
struct DLManagedTensorVersioned {
  struct { uint32_t major, minor; } version;
  void *manager_ctx;
  void (*deleter)(DLManagedTensorVersioned *self);
  uint64_t flags;
  DLTensor dl_tensor;
};
struct Managed {  // one allocation: the tensor and its shape
  DLManagedTensorVersioned t;
  int64_t shape[1];
};

void dlpack_deleter(DLManagedTensorVersioned *self) {
  no_free(self->manager_ctx, self->dl_tensor.data);
  std::free(reinterpret_cast<Managed *>(self));
}

DLManagedTensorVersioned *dlpack_export(void *data, int64_t n) {
  auto *m = static_cast<Managed *>(std::malloc(sizeof(Managed)));
  if (!m) return nullptr;
  m->shape[0] = n;
  m->t.version = {1, 0};
  m->t.manager_ctx = nullptr;
  m->t.deleter = dlpack_deleter;
  m->t.flags = 0;
  m->t.dl_tensor = {data, {1 /* kDLCPU */, 0}, 1, {1, 8, 1}, m->shape, nullptr, 0};
  return &m->t;
}

void BM_Handoff_DLPack(benchmark::State &state) {
  for (auto _ : state) {
    DLManagedTensorVersioned *t = dlpack_export(g_mem, sizeof g_mem);
    benchmark::DoNotOptimize(t);
    if (!t || t->version.major != 1 || t->dl_tensor.device.device_type != 1 ||
        reinterpret_cast<uintptr_t>(t->dl_tensor.data) % 64 != 0)
      state.SkipWithError("dlpack failed");
    benchmark::DoNotOptimize(t->dl_tensor.data);
    t->deleter(t);
  }
}
BENCHMARK(BM_Handoff_DLPack);

// The DLPack way as producers implement it: the managed tensor also holds a
// reference on the owner of the memory (PyTorch's ATenDLMTensor holds an
// at::Tensor, whose copy and destruction are atomic increments and
// decrements), so that the memory outlives the consumer.
std::atomic<int64_t> g_owner_refs{1};

void dlpack_owned_deleter(DLManagedTensorVersioned *self) {
  if (static_cast<std::atomic<int64_t> *>(self->manager_ctx)->fetch_sub(1, std::memory_order_acq_rel) == 1)
    no_free(nullptr, self->dl_tensor.data);
  std::free(reinterpret_cast<Managed *>(self));
}

void BM_Handoff_DLPackOwned(benchmark::State &state) {
  for (auto _ : state) {
    DLManagedTensorVersioned *t = dlpack_export(g_mem, sizeof g_mem);
    benchmark::DoNotOptimize(t);
    if (!t) state.SkipWithError("dlpack failed");
    g_owner_refs.fetch_add(1, std::memory_order_relaxed);
    t->manager_ctx = &g_owner_refs;
    t->deleter = dlpack_owned_deleter;
    if (t->version.major != 1 || t->dl_tensor.device.device_type != 1 ||
        reinterpret_cast<uintptr_t>(t->dl_tensor.data) % 64 != 0)
      state.SkipWithError("dlpack failed");
    benchmark::DoNotOptimize(t->dl_tensor.data);
    t->deleter(t);
  }
}
BENCHMARK(BM_Handoff_DLPackOwned);

// ---- one handle: decode + validate, against copying its 16 bytes ----

void BM_Validate1_Hurray(benchmark::State &state) {
  const unsigned char b[16] = {0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 0, 0, 0};
  for (auto _ : state) {
    benchmark::DoNotOptimize(b);
    benchmark::DoNotOptimize(hurray_table_validate(b, sizeof b, nullptr, nullptr));
  }
}
BENCHMARK(BM_Validate1_Hurray);

void BM_Validate1_Memcpy(benchmark::State &state) {
  const unsigned char b[16] = {0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 0, 0, 0};
  unsigned char out[16];
  for (auto _ : state) {
    benchmark::DoNotOptimize(b);
    std::memcpy(out, b, sizeof out);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_Validate1_Memcpy);

// ---- a batch: 1M handles (16 MiB) validated in one call, against memcpy ----

constexpr size_t kBatch = 1 << 20;

std::vector<unsigned char> make_batch(size_t n = kBatch) {
  std::vector<unsigned char> t(n * HURRAY_HANDLE_SIZE);
  for (size_t i = 0; i < n; ++i) {
    const hurray_buffer_handle h = {uint64_t(i) * 64, 4096, HURRAY_DEVICE_CUDA,
                                    uint8_t(i % 3), HURRAY_MEMORY_STANDARD, 0};
    hurray_handle_encode(&h, &t[i * HURRAY_HANDLE_SIZE], HURRAY_HANDLE_SIZE, nullptr);
  }
  return t;
}

void BM_Batch_Hurray(benchmark::State &state) {
  const auto t = make_batch();
  for (auto _ : state)
    if (hurray_table_validate(t.data(), t.size(), nullptr, nullptr) != HURRAY_OK)
      state.SkipWithError("batch invalid");
  state.counters["ns_per_handle"] = benchmark::Counter(
      double(kBatch), benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Batch_Hurray)->Unit(benchmark::kMicrosecond);

void BM_Batch_Memcpy(benchmark::State &state) {
  const auto t = make_batch();
  std::vector<unsigned char> out(t.size());
  for (auto _ : state) {
    std::memcpy(out.data(), t.data(), t.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Batch_Memcpy)->Unit(benchmark::kMicrosecond);

// The same pair swept over table sizes (bench/run.py plots it).
void BM_Sweep_Hurray(benchmark::State &state) {
  const auto t = make_batch(size_t(state.range(0)));
  for (auto _ : state)
    if (hurray_table_validate(t.data(), t.size(), nullptr, nullptr) != HURRAY_OK)
      state.SkipWithError("batch invalid");
}
BENCHMARK(BM_Sweep_Hurray)->RangeMultiplier(4)->Range(1 << 4, 1 << 22);

void BM_Sweep_Memcpy(benchmark::State &state) {
  const auto t = make_batch(size_t(state.range(0)));
  std::vector<unsigned char> out(t.size());
  for (auto _ : state) {
    std::memcpy(out.data(), t.data(), t.size());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_Sweep_Memcpy)->RangeMultiplier(4)->Range(1 << 4, 1 << 22);

}  // namespace

BENCHMARK_MAIN();
