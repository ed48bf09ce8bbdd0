// Device memory between real processes over the IPC channel: Vulkan's
// OPAQUE_FD, the stand-in device plugin's table, the real CUDA plugin. Each
// runs as its own test (hidden tag); the process tests without a device are
// in ipc_test.cpp.

#include "ipc_test_support.h"

using namespace ipctest;

// Run as its own CTest test (hidden tag): exit 77, reported as skipped, where
// there is no Vulkan device with exportable memory.
TEST_CASE("Vulkan memory crosses to another process as an OPAQUE_FD", "[.vulkan]") {
  int32_t n = 0;
  hurray_error err{};
  if (hurray_device_count(nullptr, HURRAY_DEVICE_VULKAN, &n, &err) != HURRAY_OK) {
    std::printf("skipped: %s\n", err.message);
    std::exit(77);
  }
  const uint8_t tags[] = {HURRAY_DEVICE_VULKAN};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = tags;
  Peer peer("consume-vulkan", 1, &o);
  hurray_ipc_peer_info info;
  info.size = sizeof info;
  REQUIRE(hurray_ipc_peer(peer.ch, &info, nullptr) == HURRAY_OK);
  REQUIRE(info.device_count == 2);
  CHECK(info.devices[1].device_tag == HURRAY_DEVICE_VULKAN);
  CHECK(info.devices[1].memory_classes & (1u << HURRAY_MEMORY_UNIFIED));
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.flags = HURRAY_ALLOC_SHAREABLE;
  d.byte_size = 65536;
  d.alignment = HURRAY_IPC_ALIGNMENT;
  d.device_tag = HURRAY_DEVICE_VULKAN;
  d.memory_class = HURRAY_MEMORY_UNIFIED;
  hurray_buffer *b = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &b, &err) == HURRAY_OK);
  unsigned char in[256];
  for (int i = 0; i < 256; ++i) in[i] = static_cast<unsigned char>(i * 3 + 7);
  REQUIRE(hurray_buffer_copy_from_host(b, 0, in, sizeof in, &err) == HURRAY_OK);
  Backs backs;
  hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr);
  const hurray_status st = hurray_ipc_send(peer.ch, b, nullptr, nullptr, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  hurray_buffer_unref(b);
  progress_until(peer.ch, [&] { return backs.ids.size() == 1; });
  REQUIRE(backs.ids.size() == 1);
  CHECK(backs.reasons[0] == HURRAY_IPC_RELEASED);
  CHECK(peer.wait_exit() == 0);  // the consumer read the bytes through its own import
  // memory that was not allocated shareable cannot cross: refused before sending
  d.flags = 0;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &b, &err) == HURRAY_OK);
  CHECK(hurray_ipc_send(peer.ch, b, nullptr, nullptr, &err) != HURRAY_OK);
  hurray_buffer_unref(b);
  CHECK(stats_of(peer.ch).sent == 1);
  // a peer that did not announce Vulkan gets none (BP-PUT-DEVICE), nothing sent
  hurray_ipc_channel *x = nullptr, *y = nullptr;
  local_pair(&x, &y);
  d.flags = HURRAY_ALLOC_SHAREABLE;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &b, &err) == HURRAY_OK);
  CHECK(hurray_ipc_send(x, b, nullptr, nullptr, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.rule_id) == "BP-PUT-DEVICE");
  CHECK(stats_of(x).sent == 0);
  hurray_handoff h;
  CHECK(hurray_ipc_receive(y, 0, &h, nullptr, &err) == HURRAY_E_IO);
  hurray_buffer_unref(b);
  hurray_ipc_close(x);
  hurray_ipc_close(y);
}

// Run as its own CTest test (hidden tag) with the stand-in device plugin
// (fake_gpu_plugin.c) serving tag CUDA and HURRAY_IPCFAKE_DEFER=1: device
// memory and its event cross through the backend table's ipc_* functions,
// and the consumer's acquire waits until the producer reaches the event.
TEST_CASE("device memory and its event cross through the backend table", "[.device]") {
  hurray_error err{};
  const uint8_t tags[] = {HURRAY_DEVICE_CUDA};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = tags;
  Peer peer("consume-device", 1, &o);
  hurray_buffer *b = hurray_test::alloc_shareable(65536, HURRAY_IPC_ALIGNMENT, HURRAY_DEVICE_CUDA);
  std::vector<unsigned char> bytes(65536, 0x11);
  REQUIRE(hurray_buffer_copy_from_host(b, 0, bytes.data(), bytes.size(), &err) == HURRAY_OK);
  // CONSUMER_STREAM does not cross processes (BP-SYNC-IPC): refused, nothing sent
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;
  e.sync_object = &e;
  CHECK(hurray_ipc_send(peer.ch, b, &e, nullptr, &err) != HURRAY_OK);
  CHECK(std::string(err.rule_id) == "BP-SYNC-IPC");
  // EVENT: the event is recorded now and reached later (HURRAY_IPCFAKE_DEFER)
  e = HURRAY_EXPORT_DESC_INIT;
  REQUIRE(hurray_event_record(nullptr, HURRAY_DEVICE_CUDA, 0, nullptr, &e, &err) == HURRAY_OK);
  const hurray_status st = hurray_ipc_send(peer.ch, b, &e, nullptr, &err);
  INFO(err.message);
  REQUIRE(st == HURRAY_OK);
  // the "device work" the event stands for: write, then reach the event
  std::fill(bytes.begin(), bytes.end(), 0x22);
  REQUIRE(hurray_buffer_copy_from_host(b, 0, bytes.data(), bytes.size(), &err) == HURRAY_OK);
  const uint64_t one = 1;
  REQUIRE(write(static_cast<int>(reinterpret_cast<uintptr_t>(e.sync_object) - 1), &one,
                sizeof one) == static_cast<ssize_t>(sizeof one));
  Backs backs;
  hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr);
  progress_until(peer.ch, [&] { return backs.ids.size() == 1; });
  REQUIRE(backs.ids.size() == 1);
  CHECK(backs.reasons[0] == HURRAY_IPC_RELEASED);
  CHECK(peer.wait_exit() == 0);  // it waited for the event, then saw 0x22 everywhere
  const hurray_ipc_stats s = stats_of(peer.ch);
  CHECK(s.sent == 1);
  CHECK(s.released == 1);
  hurray_buffer_unref(b);
}

// ---- the real CUDA plugin ----

namespace {

// Byte i of the 64 KiB the "[.cuda]" test writes before recording its event
// (ipc_peer.cpp checks the same function); the bytes written before those
// are its complement, so a consumer that reads too early sees the difference.
unsigned char cuda_pattern(size_t i) {
  return static_cast<unsigned char>(i * 31 + (i >> 8) + 0x5C);
}

// The driver under the CUDA plugin, through its own dlopen handle (slot [4]
// of hurray_device_native) and primary context (slot [1]): is `p` a live
// device allocation? (cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
// is CUDA_SUCCESS and CU_MEMORYTYPE_DEVICE for live device memory, an error
// once it is freed.) Returns the CUresult; *type is the memory type.
int cuda_pointer_type(const hurray_backend_native &nat, const void *p, unsigned *type) {
  using push_fn = int (*)(void *);
  using pop_fn = int (*)(void **);
  using attr_fn = int (*)(void *, int, unsigned long long);
  auto push = reinterpret_cast<push_fn>(dlsym(nat.handles[4], "cuCtxPushCurrent_v2"));
  auto pop = reinterpret_cast<pop_fn>(dlsym(nat.handles[4], "cuCtxPopCurrent_v2"));
  auto attr = reinterpret_cast<attr_fn>(dlsym(nat.handles[4], "cuPointerGetAttribute"));
  REQUIRE(push);
  REQUIRE(pop);
  REQUIRE(attr);
  REQUIRE(push(nat.handles[1]) == 0);
  *type = 0;
  const int r = attr(type, 2 /* CU_POINTER_ATTRIBUTE_MEMORY_TYPE */,
                     static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(p)));
  void *popped = nullptr;
  pop(&popped);
  return r;
}

// A 64 KiB SHAREABLE STANDARD CUDA buffer holding the complement of
// cuda_pattern, then (a second copy) cuda_pattern itself.
hurray_buffer *cuda_buffer() {
  hurray_buffer *b = hurray_test::alloc_shareable(65536, HURRAY_IPC_ALIGNMENT, HURRAY_DEVICE_CUDA);
  hurray_error err{};
  std::vector<unsigned char> bytes(65536);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(~cuda_pattern(i));
  hurray_status st = hurray_buffer_copy_from_host(b, 0, bytes.data(), bytes.size(), &err);
  INFO("hurray_buffer_copy_from_host: " << err.message);
  REQUIRE(st == HURRAY_OK);
  return b;
}

void write_second_pattern(hurray_buffer *b) {
  std::vector<unsigned char> bytes(65536);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = cuda_pattern(i);
  hurray_error err{};
  const hurray_status st = hurray_buffer_copy_from_host(b, 0, bytes.data(), bytes.size(), &err);
  INFO("hurray_buffer_copy_from_host: " << err.message);
  REQUIRE(st == HURRAY_OK);
}

// Record an event on the plugin's stream of CUDA device 0 (after the copies)
// and send `b` with it. The event is the channel's from then on.
uint64_t send_with_event(hurray_ipc_channel *ch, hurray_buffer *b) {
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  hurray_error err{};
  hurray_status st = hurray_event_record(nullptr, HURRAY_DEVICE_CUDA, 0, nullptr, &e, &err);
  INFO("hurray_event_record(CUDA 0): " << err.message);
  REQUIRE(st == HURRAY_OK);
  REQUIRE(e.sync_mode == HURRAY_SYNC_EVENT);
  uint64_t id = 0;
  st = hurray_ipc_send(ch, b, &e, &id, &err);
  if (st != HURRAY_OK && e.event_free_fn) e.event_free_fn(e.event_user, e.sync_object);
  INFO("hurray_ipc_send(EVENT): " << err.message);
  REQUIRE(st == HURRAY_OK);
  return id;
}

}  // namespace

// Run by tests/gpu/cuda-check.sh (part "ipc-channel") on a machine with an
// NVIDIA GPU, after its device probe passed, with HURRAY_BACKENDS=cpu,cuda:
// not registered in CTest. Without a CUDA device it fails at once with the
// loader's reason (DEVICE_UNAVAILABLE), which is what the script's probe
// rules out first. Device memory crosses as a cuIpcGetMemHandle handle and
// its interprocess event as a cuIpcGetEventHandle handle; the consumer
// (ipc_peer.cpp, consume-cuda) waits on the event, copies the memory out
// with cuMemcpyDtoH and checks every byte. Then a consumer that holds the
// buffer is SIGKILLed and the producer's channel gives the memory back:
// cuMemFree'd (the driver no longer knows the pointer).
TEST_CASE("CUDA device memory and its event cross to another process, and come back", "[.cuda]") {
  int32_t count = 0;
  hurray_error err{};
  const hurray_status avail = hurray_device_count(nullptr, HURRAY_DEVICE_CUDA, &count, &err);
  if (avail != HURRAY_OK)
    std::printf("cuda-ipc: no CUDA device: %s: %s\n", hurray_status_name(avail), err.message);
  INFO("hurray_device_count(CUDA): " << hurray_status_name(avail) << ": " << err.message);
  REQUIRE(avail == HURRAY_OK);
  REQUIRE(count >= 1);
  hurray_backend_device_info info{};
  REQUIRE(hurray_device_info(nullptr, HURRAY_DEVICE_CUDA, 0, &info, &err) == HURRAY_OK);
  INFO("CUDA device 0: " << info.name << " (" << info.detail << ")");
  CHECK((info.memory_classes & (1u << HURRAY_MEMORY_STANDARD)) != 0);
  CHECK((info.ipc & HURRAY_BACKEND_IPC_MEMORY) != 0);
  CHECK((info.ipc & HURRAY_BACKEND_IPC_EVENTS) != 0);
  hurray_backend_native nat{};
  REQUIRE(hurray_device_native(nullptr, HURRAY_DEVICE_CUDA, 0, &nat, &err) == HURRAY_OK);
  REQUIRE(nat.handles[4] != nullptr);  // the plugin's libcuda handle

  const uint8_t tags[] = {HURRAY_DEVICE_CUDA};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = tags;

  // ---- 1. an EVENT handoff, waited on, read and released by the consumer
  {
    Peer peer("consume-cuda", 1, &o);
    hurray_ipc_peer_info pi;
    pi.size = sizeof pi;
    REQUIRE(hurray_ipc_peer(peer.ch, &pi, &err) == HURRAY_OK);
    REQUIRE(pi.device_count == 2);
    CHECK(pi.devices[1].device_tag == HURRAY_DEVICE_CUDA);
    CHECK((pi.devices[1].memory_classes & (1u << HURRAY_MEMORY_STANDARD)) != 0);
    Backs backs;
    REQUIRE(hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr) == HURRAY_OK);
    hurray_buffer *b = cuda_buffer();
    // CONSUMER_STREAM does not cross processes (BP-SYNC-IPC): refused, nothing sent
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    e.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;
    e.sync_object = nat.handles[3] ? nat.handles[3] : &e;  // the plugin's stream
    CHECK(hurray_ipc_send(peer.ch, b, &e, nullptr, &err) != HURRAY_OK);
    CHECK(std::string(err.rule_id) == "BP-SYNC-IPC");
    CHECK(stats_of(peer.ch).sent == 0);
    // the bytes the consumer must see, then the event after them
    write_second_pattern(b);
    const uint64_t id = send_with_event(peer.ch, b);
    progress_until(peer.ch, [&] { return backs.ids.size() == 1; });
    REQUIRE(backs.ids.size() == 1);
    CHECK(backs.ids[0] == id);
    CHECK(backs.reasons[0] == HURRAY_IPC_RELEASED);
    const hurray_ipc_stats s = stats_of(peer.ch);
    CHECK(s.sent == 1);
    CHECK(s.released == 1);
    CHECK(s.outstanding == 0);
    CHECK(s.releases_refused == 0);
    // 0: it waited on the imported event, then read the 64 KiB with cuMemcpyDtoH
    CHECK(peer.wait_exit() == 0);
    // still the producer's memory, unchanged
    std::vector<unsigned char> back(65536);
    REQUIRE(hurray_buffer_copy_to_host(b, 0, back.data(), back.size(), &err) == HURRAY_OK);
    size_t wrong = 0;
    for (size_t i = 0; i < back.size(); ++i) wrong += back[i] != cuda_pattern(i);
    CHECK(wrong == 0);
    hurray_buffer_unref(b);
  }

  // ---- 2. the consumer is SIGKILLed holding the buffer: reclaimed, freed
  {
    Peer peer("hold-cuda", 1, &o);
    Backs backs;
    REQUIRE(hurray_ipc_set_release_callback(peer.ch, Backs::on, &backs, nullptr) == HURRAY_OK);
    hurray_buffer *b = cuda_buffer();
    write_second_pattern(b);
    const void *const p = hurray_buffer_data(b);
    const uint64_t id = send_with_event(peer.ch, b);
    hurray_buffer_unref(b);  // only the channel holds it now (BP-REFCOUNT)
    REQUIRE(peer.signal_byte() == 'R');  // the consumer imported, waited, read: it holds it
    unsigned type = 0;
    CHECK(cuda_pointer_type(nat, p, &type) == 0);  // CUDA_SUCCESS: live
    CHECK(type == 2);                              // CU_MEMORYTYPE_DEVICE
    CHECK(stats_of(peer.ch).outstanding == 1);
    peer.sigkill();
    CHECK(progress_until(peer.ch, [] { return false; }) == HURRAY_E_IO);
    const hurray_ipc_stats s = stats_of(peer.ch);
    CHECK(s.closed == 1);
    CHECK(s.sent == 1);
    CHECK(s.reclaimed == 1);
    CHECK(s.released == 0);
    CHECK(s.outstanding == 0);
    REQUIRE(backs.ids.size() == 1);
    CHECK(backs.ids[0] == id);
    CHECK(backs.reasons[0] == HURRAY_IPC_PEER_GONE);
    // BP-IPC-RELEASE: the last reference went with the dead consumer, and
    // the plugin freed the memory (the driver no longer knows the address)
    const int r = cuda_pointer_type(nat, p, &type);
    INFO("cuPointerGetAttribute on the reclaimed buffer: CUresult " << r);
    CHECK(r != 0);
  }
  // what ran (whether every check held is the exit status)
  std::printf("cuda-ipc: both rounds ran on '%s' (EVENT handoff read back by the consumer; "
              "SIGKILLed holder reclaimed)\n",
              info.name);
}
