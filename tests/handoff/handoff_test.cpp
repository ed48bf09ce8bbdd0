// The handoff: layout, wrap/export/check/acquire/release/move, reference
// counting, sync payloads, CPU allocation. Each contract rule is broken on
// purpose and the library's answer checked.
#include <catch2/catch.hpp>

#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

#include "../common/handoff_util.h"
#include "raw_consumer.h"

using namespace hurray_test;

namespace {

int kFakeEvent, kFakeStream, kOtherStream;

// A CUDA buffer described by the caller: the library never touches the
// memory of a device it has no backend for, so a page-aligned fake device
// address is enough to exercise EVENT and CONSUMER_STREAM handoffs.
hurray_buffer_desc cuda_desc(Counter *c) {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle = {1 << 20, 4096, HURRAY_DEVICE_CUDA, 0, HURRAY_MEMORY_STANDARD, 0};
  d.data = reinterpret_cast<void *>(uintptr_t(0x7f0000000000));
  d.free_fn = Counter::on_free;
  d.free_user = c;
  return d;
}

hurray_export_desc event_export(Counter *c) {
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.sync_mode = HURRAY_SYNC_EVENT;
  e.sync_object = &kFakeEvent;
  e.sync_value = 42;
  e.event_free_fn = Counter::on_event;
  e.event_user = c;
  return e;
}

}  // namespace

TEST_CASE("hurray_handoff has the documented fixed layout", "[handoff][abi]") {
  STATIC_REQUIRE(sizeof(hurray_handoff) == 112);
  STATIC_REQUIRE(offsetof(hurray_handoff, version) == 0);
  STATIC_REQUIRE(offsetof(hurray_handoff, flags) == 4);
  STATIC_REQUIRE(offsetof(hurray_handoff, handle) == 8);
  STATIC_REQUIRE(offsetof(hurray_handoff, device_ordinal) == 24);
  STATIC_REQUIRE(offsetof(hurray_handoff, data) == 32);
  STATIC_REQUIRE(offsetof(hurray_handoff, sync_object) == 40);
  STATIC_REQUIRE(offsetof(hurray_handoff, sync_value) == 48);
  STATIC_REQUIRE(offsetof(hurray_handoff, release_event) == 56);
  STATIC_REQUIRE(offsetof(hurray_handoff, release) == 64);
  STATIC_REQUIRE(offsetof(hurray_handoff, private_data) == 72);
  STATIC_REQUIRE(offsetof(hurray_handoff, reserved) == 80);
}

TEST_CASE("wrap, check, acquire, release: the memory is freed once, after release", "[handoff]") {
  Aligned mem(4096);
  Counter c;
  const hurray_buffer_desc d = cpu_desc(mem.p, 4096, &c);
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, nullptr, &h, nullptr) == HURRAY_OK);
  CHECK(h.version == HURRAY_HANDOFF_VERSION);
  CHECK(h.data == mem.p);
  CHECK(h.release != nullptr);
  CHECK(h.release_event == nullptr);
  hurray_buffer_handle back;
  REQUIRE(hurray_handle_decode(h.handle, 16, &back, nullptr) == HURRAY_OK);
  CHECK(back.byte_size == 4096);
  CHECK(back.device_tag == HURRAY_DEVICE_CPU);
  hurray_error err;
  CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK);
  CHECK(hurray_handoff_acquire(nullptr, &h, nullptr, &err) == HURRAY_OK);
  CHECK(c.frees == 0);
  REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);
  CHECK(h.release == nullptr);
  CHECK(c.frees == 1);
  CHECK(c.last_data == mem.p);
}

TEST_CASE("BP-REL-ONCE: a second release is refused and never reaches the producer", "[handoff][BP-REL-ONCE]") {
  Aligned mem(4096);
  Counter c;
  const hurray_buffer_desc d = cpu_desc(mem.p, 64, &c);
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, nullptr, &h, nullptr) == HURRAY_OK);
  hurray_handoff copy = h;  // the classic mistake: two owners of one handoff
  h.release(&h);            // through the raw pointer, as a C consumer would
  CHECK(h.release == nullptr);
  CHECK(c.frees == 1);
  hurray_error err;
  CHECK(hurray_handoff_release(&h, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(std::string(err.rule_id) == "BP-REL-ONCE");
  // the stale copy still has a release pointer: calling it is detected
  REQUIRE(copy.release != nullptr);
  copy.release(&copy);
  CHECK(copy.release == nullptr);
  CHECK(c.frees == 1);
  hurray_handoff copy2 = copy;
  copy2.release = h.release;  // still NULL
  CHECK(hurray_handoff_release(&copy2, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(c.frees == 1);
}

TEST_CASE("BP-REL-ONCE: a stale copy is refused even after its record is reused", "[handoff][BP-REL-ONCE]") {
  Aligned mem(4096);
  Counter c1, c2;
  const hurray_buffer_desc d1 = cpu_desc(mem.p, 64, &c1), d2 = cpu_desc(mem.p, 64, &c2);
  hurray_handoff a, b;
  REQUIRE(hurray_handoff_wrap(nullptr, &d1, nullptr, &a, nullptr) == HURRAY_OK);
  hurray_handoff stale = a;
  REQUIRE(hurray_handoff_release(&a, nullptr) == HURRAY_OK);
  REQUIRE(hurray_handoff_wrap(nullptr, &d2, nullptr, &b, nullptr) == HURRAY_OK);  // likely the same record
  hurray_error err;
  CHECK(hurray_handoff_release(&stale, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(c1.frees == 1);
  CHECK(c2.frees == 0);  // the new handoff is untouched
  CHECK(hurray_handoff_check(&b, nullptr, &err) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&b, nullptr) == HURRAY_OK);
  CHECK(c2.frees == 1);
}

TEST_CASE("move transfers ownership the way Arrow's move does", "[handoff]") {
  Aligned mem(4096);
  Counter c;
  const hurray_buffer_desc d = cpu_desc(mem.p, 64, &c);
  hurray_handoff a, b;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, nullptr, &a, nullptr) == HURRAY_OK);
  REQUIRE(hurray_handoff_move(&a, &b, nullptr) == HURRAY_OK);
  CHECK(a.release == nullptr);
  CHECK(b.release != nullptr);
  hurray_error err;
  CHECK(hurray_handoff_release(&a, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(hurray_handoff_move(&a, &b, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(c.frees == 0);
  CHECK(hurray_handoff_release(&b, nullptr) == HURRAY_OK);
  CHECK(c.frees == 1);
  CHECK(hurray_handoff_move(nullptr, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
}

TEST_CASE("BP-REFCOUNT: the memory outlives the owner and every consumer", "[handoff][BP-REFCOUNT]") {
  Aligned mem(4096);
  Counter c;
  const hurray_buffer_desc d = cpu_desc(mem.p, 4096, &c);
  hurray_buffer *buf;
  REQUIRE(hurray_buffer_wrap(nullptr, &d, &buf, nullptr) == HURRAY_OK);
  hurray_handoff h[3];
  for (auto &x : h) REQUIRE(hurray_buffer_export(buf, nullptr, &x, nullptr) == HURRAY_OK);
  CHECK(h[0].private_data != h[1].private_data);  // each consumer its own
  hurray_buffer_unref(buf);                        // the owner is done first
  CHECK(c.frees == 0);
  REQUIRE(hurray_handoff_release(&h[1], nullptr) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&h[0], nullptr) == HURRAY_OK);
  CHECK(c.frees == 0);
  REQUIRE(hurray_handoff_release(&h[2], nullptr) == HURRAY_OK);
  CHECK(c.frees == 1);
}

TEST_CASE("BP-REFCOUNT: the owner may also be the last one", "[handoff][BP-REFCOUNT]") {
  Aligned mem(4096);
  Counter c;
  const hurray_buffer_desc d = cpu_desc(mem.p, 4096, &c);
  hurray_buffer *buf;
  REQUIRE(hurray_buffer_wrap(nullptr, &d, &buf, nullptr) == HURRAY_OK);
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(buf, nullptr, &h, nullptr) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(c.frees == 0);
  CHECK(hurray_buffer_data(buf) == mem.p);
  hurray_buffer_unref(buf);
  CHECK(c.frees == 1);
}

TEST_CASE("BP-EVREL-ONCE: the event is released exactly once, separately", "[handoff][BP-EVREL-ONCE]") {
  Counter c;
  const hurray_buffer_desc d = cuda_desc(&c);
  const hurray_export_desc e = event_export(&c);
  hurray_handoff h;
  hurray_error err;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, &e, &h, &err) == HURRAY_OK);
  CHECK(h.handle[13] == HURRAY_SYNC_EVENT);
  CHECK(h.sync_object == &kFakeEvent);
  CHECK(h.sync_value == 42);
  REQUIRE(h.release_event != nullptr);
  CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK);
  hurray_handoff copy = h;
  h.release_event(&h);  // raw pointer, after the consumer's stream wait
  CHECK(h.release_event == nullptr);
  CHECK(c.events == 1);
  CHECK(hurray_handoff_release_event(&h, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(std::string(err.rule_id) == "BP-EVREL-ONCE");
  CHECK(hurray_handoff_release_event(&copy, &err) == HURRAY_E_ALREADY_RELEASED);  // stale copy
  CHECK(c.events == 1);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(c.events == 1);  // not again at buffer release
  CHECK(c.frees == 1);
}

TEST_CASE("BP-EVREL-ONCE: a buffer released with its event pending frees the event too", "[handoff][BP-EVREL-ONCE]") {
  Counter c;
  const hurray_buffer_desc d = cuda_desc(&c);
  const hurray_export_desc e = event_export(&c);
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, &e, &h, nullptr) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(c.events == 1);  // the producer's event does not leak
  CHECK(c.frees == 1);
}

TEST_CASE("acquire applies the consumer rule of each sync mode", "[handoff][BP-SYNC-WAIT][BP-SYNC-STREAM]") {
  Counter c;
  hurray_error err;
  SECTION("EVENT without a backend for the device: DEVICE_UNAVAILABLE, event untouched") {
    const hurray_buffer_desc d = cuda_desc(&c);
    const hurray_export_desc e = event_export(&c);
    hurray_handoff h;
    REQUIRE(hurray_handoff_wrap(nullptr, &d, &e, &h, nullptr) == HURRAY_OK);
    CHECK(hurray_handoff_acquire(nullptr, &h, nullptr, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
    CHECK(std::string(err.message).find("CUDA") != std::string::npos);
    CHECK(c.events == 0);
    CHECK(h.release_event != nullptr);
    hurray_handoff_release(&h, nullptr);
  }
  SECTION("CONSUMER_STREAM: only the declared stream") {
    const hurray_buffer_desc d = cuda_desc(&c);
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    e.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;
    e.sync_object = &kFakeStream;
    hurray_handoff h;
    REQUIRE(hurray_handoff_wrap(nullptr, &d, &e, &h, nullptr) == HURRAY_OK);
    CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK);
    CHECK(hurray_handoff_acquire(nullptr, &h, &kFakeStream, &err) == HURRAY_OK);
    CHECK(hurray_handoff_acquire(nullptr, &h, &kOtherStream, &err) == HURRAY_E_SYNC);
    CHECK(std::string(err.rule_id) == "BP-SYNC-STREAM");
    hurray_handoff_release(&h, nullptr);
    CHECK(hurray_handoff_acquire(nullptr, &h, &kFakeStream, &err) == HURRAY_E_ALREADY_RELEASED);
    CHECK(std::string(err.rule_id) == "BP-REL-AFTER");
  }
}

TEST_CASE("BP-SYNC-PAYLOAD at export: the payload must match the sync mode", "[handoff][BP-SYNC-PAYLOAD]") {
  Counter c;
  const hurray_buffer_desc d = cuda_desc(&c);
  hurray_handoff h;
  hurray_error err;
  hurray_export_desc e = event_export(&c);
  e.event_free_fn = nullptr;  // EVENT without its release
  CHECK(hurray_handoff_wrap(nullptr, &d, &e, &h, &err) == HURRAY_E_SYNC);
  CHECK(std::string(err.rule_id) == "BP-SYNC-PAYLOAD");
  e = HURRAY_EXPORT_DESC_INIT;
  e.sync_object = &kFakeEvent;  // PRODUCER_SYNCED carrying an event
  CHECK(hurray_handoff_wrap(nullptr, &d, &e, &h, &err) == HURRAY_E_SYNC);
  CHECK(std::string(err.rule_id) == "BP-SYNC-PAYLOAD");
  e = HURRAY_EXPORT_DESC_INIT;
  e.sync_mode = HURRAY_SYNC_CONSUMER_STREAM;  // no stream declared
  CHECK(hurray_handoff_wrap(nullptr, &d, &e, &h, &err) == HURRAY_E_SYNC);
  e = event_export(&c);
  e.sync_mode = 7;
  CHECK(hurray_handoff_wrap(nullptr, &d, &e, &h, &err) == HURRAY_E_SYNC);
  CHECK(std::string(err.rule_id) == "BP-SYNC-VALUE");
  CHECK(c.frees == 0);  // a refused wrap never frees the caller's memory
  CHECK(c.events == 0);
  // a CPU buffer cannot be exported with an event (BP-SYNC-CPU)
  Aligned mem(4096);
  const hurray_buffer_desc cd = cpu_desc(mem.p, 64, &c);
  e = event_export(&c);
  CHECK(hurray_handoff_wrap(nullptr, &cd, &e, &h, &err) == HURRAY_E_SYNC);
  CHECK(std::string(err.rule_id) == "BP-SYNC-CPU");
}

TEST_CASE("BP-SYNC-PAYLOAD at hurray_buffer_export: its fast path refuses a payload too",
          "[handoff][BP-SYNC-PAYLOAD]") {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 256;
  a.alignment = 64;
  hurray_buffer *b = nullptr;
  hurray_error err;
  REQUIRE(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_OK);
  hurray_handoff h;
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;  // the common case: exported
  REQUIRE(hurray_buffer_export(b, &e, &h, &err) == HURRAY_OK);
  CHECK(hurray_handoff_release(&h, &err) == HURRAY_OK);
  e.sync_object = &kFakeEvent;  // PRODUCER_SYNCED carrying an event
  CHECK(hurray_buffer_export(b, &e, &h, &err) == HURRAY_E_SYNC);
  CHECK(std::string(err.rule_id) == "BP-SYNC-PAYLOAD");
  e = HURRAY_EXPORT_DESC_INIT;
  e.sync_value = 1;
  CHECK(hurray_buffer_export(b, &e, &h, &err) == HURRAY_E_SYNC);
  CHECK(std::string(err.rule_id) == "BP-SYNC-PAYLOAD");
  hurray_buffer_unref(b);
}

TEST_CASE("check catches a tampered handoff (BP-SYNC-PAYLOAD, BP-ALIGN-ADDR, version)", "[handoff][BP-SYNC-PAYLOAD][BP-ALIGN-ADDR]") {
  Aligned mem(8192);
  Counter c;
  const hurray_buffer_desc d = cpu_desc(mem.p, 4096, &c, 4096);
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, nullptr, &h, nullptr) == HURRAY_OK);
  hurray_error err;
  hurray_handoff t = h;
  t.sync_object = &kFakeStream;
  CHECK(hurray_handoff_check(&t, nullptr, &err) == HURRAY_E_SYNC);
  CHECK(std::string(err.rule_id) == "BP-SYNC-PAYLOAD");
  t = h;
  t.data = static_cast<char *>(mem.p) + 64;
  CHECK(hurray_handoff_check(&t, nullptr, &err) == HURRAY_E_ALIGNMENT);
  CHECK(std::string(err.rule_id) == "BP-ALIGN-ADDR");
  t.flags |= HURRAY_HANDOFF_OPAQUE_DATA;  // an opaque handle is not an address
  CHECK(hurray_handoff_check(&t, nullptr, &err) == HURRAY_OK);
  t = h;
  t.version = 2;
  CHECK(hurray_handoff_check(&t, nullptr, &err) == HURRAY_E_UNSUPPORTED);
  t = h;
  t.reserved[3] = 1;
  CHECK(hurray_handoff_check(&t, nullptr, &err) == HURRAY_E_UNSUPPORTED);
  t = h;
  t.handle[15] = 1;
  CHECK(hurray_handoff_check(&t, nullptr, &err) == HURRAY_E_RESERVED);
  // under the IPC policy the 4096 alignment passes, 64 would not
  hurray_policy *ipc;
  hurray_policy_create(&ipc, nullptr);
  hurray_policy_set_transport(ipc, HURRAY_TRANSPORT_IPC, nullptr);
  CHECK(hurray_handoff_check(&h, ipc, &err) == HURRAY_OK);
  hurray_policy_destroy(ipc);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_E_ALREADY_RELEASED);
}

TEST_CASE("BP-ALIGN-EMPTY: an empty buffer may have a NULL pointer", "[handoff][BP-ALIGN-EMPTY]") {
  Counter c;
  const hurray_buffer_desc d = cpu_desc(nullptr, 0, &c, 1);
  hurray_handoff h;
  hurray_error err;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, nullptr, &h, &err) == HURRAY_OK);
  CHECK(h.data == nullptr);
  CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(c.frees == 1);
}

TEST_CASE("wrap refuses bad descriptions and leaves the memory to the caller", "[handoff]") {
  Aligned mem(4096);
  Counter c;
  hurray_handoff h;
  hurray_buffer *b;
  hurray_error err;
  hurray_buffer_desc d = cpu_desc(static_cast<char *>(mem.p) + 8, 64, &c);
  CHECK(hurray_handoff_wrap(nullptr, &d, nullptr, &h, &err) == HURRAY_E_ALIGNMENT);
  CHECK(std::string(err.rule_id) == "BP-ALIGN-ADDR");
  d = cpu_desc(mem.p, 64, &c, 32);
  CHECK(hurray_buffer_wrap(nullptr, &d, &b, &err) == HURRAY_E_ALIGNMENT);
  CHECK(std::string(err.rule_id) == "BP-ALIGN-MIN");
  d = cpu_desc(mem.p, 64, &c);
  d.handle.memory_class = HURRAY_MEMORY_UNIFIED;
  CHECK(hurray_buffer_wrap(nullptr, &d, &b, &err) == HURRAY_E_MEMORY_CLASS);
  d = cpu_desc(mem.p, 64, &c);
  d.handle.sync_mode = HURRAY_SYNC_EVENT;
  CHECK(hurray_buffer_wrap(nullptr, &d, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.rule_id) == "BP-SYNC-PAYLOAD");
  d = cpu_desc(mem.p, 64, &c);
  d.size = 0;
  CHECK(hurray_buffer_wrap(nullptr, &d, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
  d.flags = 0x80;
  d.size = sizeof d;
  CHECK(hurray_buffer_wrap(nullptr, &d, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_buffer_wrap(nullptr, nullptr, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(c.frees == 0);
}

TEST_CASE("option structs: a larger size is accepted, unknown non-zero bytes are not", "[handoff][abi]") {
  Aligned mem(4096);
  Counter c;
  // A descriptor from a newer header: bigger, with a field we do not know.
  struct {
    hurray_buffer_desc d;
    uint64_t future;
  } newer;
  std::memset(&newer, 0, sizeof newer);
  newer.d = cpu_desc(mem.p, 64, &c);
  newer.d.size = sizeof newer;
  hurray_buffer *b;
  hurray_error err;
  REQUIRE(hurray_buffer_wrap(nullptr, &newer.d, &b, &err) == HURRAY_OK);  // zero: fine
  hurray_buffer_unref(b);
  newer.future = 1;
  CHECK(hurray_buffer_wrap(nullptr, &newer.d, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("non-zero") != std::string::npos);
  // A shorter export descriptor than the first published one is refused
  // (struct_size_test.cpp has every struct), never read as an older layout.
  hurray_export_desc old = HURRAY_EXPORT_DESC_INIT;
  old.size = offsetof(hurray_export_desc, sync_object);
  old.flags = HURRAY_HANDOFF_READ_ONLY;
  const hurray_buffer_desc d = cpu_desc(mem.p, 64, &c);
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, &old, &h, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(c.frees == 1);
}

TEST_CASE("wrap of NULL data with a non-zero byte_size says the pointer is NULL",
          "[handoff][BP-ALIGN-ADDR]") {
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle = {100, 64, HURRAY_DEVICE_CPU, 0, HURRAY_MEMORY_STANDARD, 0};
  d.data = nullptr;
  hurray_handoff h;
  hurray_error err{};
  REQUIRE(hurray_handoff_wrap(nullptr, &d, nullptr, &h, &err) == HURRAY_E_ALIGNMENT);
  const std::string m = err.message;
  INFO(m);
  CHECK(std::string(err.rule_id) == "BP-ALIGN-ADDR");
  CHECK(m.find("data pointer is NULL") != std::string::npos);
  CHECK(m.find("byte_size is 100") != std::string::npos);
  CHECK(m.find("BP-ALIGN-EMPTY") != std::string::npos);
  CHECK(m.find("multiple") == std::string::npos);
  hurray_buffer *b = nullptr;
  REQUIRE(hurray_buffer_wrap(nullptr, &d, &b, &err) == HURRAY_E_ALIGNMENT);
  CHECK(std::string(err.message).find("data pointer is NULL") != std::string::npos);
}

TEST_CASE("CPU allocation: any power-of-two alignment >= 64, page-aligned when asked", "[handoff][cpu]") {
  for (uint32_t align = 64; align <= (1u << 16); align <<= 1) {
    hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
    a.byte_size = 1000;
    a.alignment = align;
    hurray_buffer *b;
    REQUIRE(hurray_buffer_alloc(nullptr, &a, &b, nullptr) == HURRAY_OK);
    auto *p = static_cast<unsigned char *>(hurray_buffer_data(b));
    REQUIRE(p != nullptr);
    CHECK(reinterpret_cast<uintptr_t>(p) % align == 0);
    std::memset(p, 0xAB, 1000);
    hurray_buffer_handle h;
    REQUIRE(hurray_buffer_get_handle(b, &h, nullptr) == HURRAY_OK);
    CHECK(h.alignment == align);
    CHECK(h.byte_size == 1000);
    CHECK(hurray_buffer_fd(b) == -1);
    hurray_handoff ho;
    REQUIRE(hurray_buffer_export(b, nullptr, &ho, nullptr) == HURRAY_OK);
    hurray_buffer_unref(b);
    CHECK(hurray_handoff_check(&ho, nullptr, nullptr) == HURRAY_OK);
    CHECK(static_cast<unsigned char *>(ho.data)[999] == 0xAB);
    REQUIRE(hurray_handoff_release(&ho, nullptr) == HURRAY_OK);
  }
}

TEST_CASE("CPU allocation: shareable memory is a memfd another mapping sees", "[handoff][cpu]") {
  // each alignment 8 times: a page-aligned mmap is 64 KiB-aligned by luck 1 time in 16
  for (uint32_t align : {64u, 4096u, 1u << 16, 1u << 16, 1u << 16, 1u << 16, 1u << 16, 1u << 16,
                         1u << 16, 1u << 16}) {
    hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
    a.byte_size = 10000;
    a.alignment = align;
    a.flags = HURRAY_ALLOC_SHAREABLE;
    hurray_buffer *b;
    REQUIRE(hurray_buffer_alloc(nullptr, &a, &b, nullptr) == HURRAY_OK);
    const int fd = hurray_buffer_fd(b);
    REQUIRE(fd >= 0);
    auto *p = static_cast<unsigned char *>(hurray_buffer_data(b));
    CHECK(reinterpret_cast<uintptr_t>(p) % (align < 4096 ? 4096 : align) == 0);
    struct stat st;
    REQUIRE(fstat(fd, &st) == 0);
    CHECK(st.st_size >= 10000);
    p[9999] = 0x5A;
    void *other = mmap(nullptr, 10000, PROT_READ, MAP_SHARED, fd, 0);
    REQUIRE(other != MAP_FAILED);
    CHECK(static_cast<unsigned char *>(other)[9999] == 0x5A);
    munmap(other, 10000);
    hurray_buffer_unref(b);
  }
}

TEST_CASE("CPU allocation refuses what it cannot honour", "[handoff][cpu]") {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  hurray_buffer *b;
  hurray_error err;
  a.byte_size = 64;
  a.alignment = 32;
  CHECK(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_E_ALIGNMENT);
  a.alignment = 96;
  CHECK(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_E_ALIGNMENT);
  CHECK(std::string(err.rule_id) == "BP-ALIGN-POW2");
  a.alignment = 0;  // means 64
  a.device_tag = HURRAY_DEVICE_CUDA;
  CHECK(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_E_DEVICE_UNAVAILABLE);
  CHECK(std::string(err.message).find("CUDA") != std::string::npos);
  a.device_tag = HURRAY_DEVICE_CPU;
  a.memory_class = HURRAY_MEMORY_HOST_PINNED;
  CHECK(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_E_MEMORY_CLASS);
  a.memory_class = 0;
  a.byte_size = ~UINT64_C(0) / 2;
  CHECK(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_E_OUT_OF_MEMORY);
  a.byte_size = 0;  // an empty buffer: no memory, valid handle
  REQUIRE(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_OK);
  CHECK(hurray_buffer_data(b) == nullptr);
  hurray_buffer_unref(b);
}

TEST_CASE("a C consumer releases through the raw pointer without linking libhurray", "[handoff][c]") {
  Aligned mem(4096);
  std::memset(mem.p, 7, 4096);
  Counter c;
  const hurray_buffer_desc d = cpu_desc(mem.p, 4096, &c);
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, nullptr, &h, nullptr) == HURRAY_OK);
  // raw_consumer_sum lives in a shared object that does not link libhurray
  CHECK(raw_consumer_sum(&h) == 7u * 4096u);
  CHECK(h.release == nullptr);
  CHECK(c.frees == 1);
  CHECK(raw_consumer_sum(&h) == 0);  // refuses a released handoff
}

TEST_CASE("CPU: a freed large allocation is reused for the next of its size, aligned as asked",
          "[handoff][alloc]") {
  hurray_error err{};
  hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
  d.byte_size = 1u << 20;
  d.alignment = 4096;
  hurray_buffer *a = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &a, &err) == HURRAY_OK);
  void *const first = hurray_buffer_data(a);
  std::memset(first, 0x5A, d.byte_size);
  hurray_buffer_unref(a);  // kept by the CPU backend's cache

  // The next one of that size is the same block with its pages: writing it
  // all takes (almost) no page fault, where fresh memory takes 256.
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  hurray_buffer *b = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &b, &err) == HURRAY_OK);
  CHECK(hurray_buffer_data(b) == first);
  std::memset(hurray_buffer_data(b), 0xA5, d.byte_size);
  getrusage(RUSAGE_SELF, &after);
  CHECK(after.ru_minflt - before.ru_minflt < 16);

  // A block is only handed out where it honours the alignment asked for.
  hurray_buffer *c = nullptr;
  d.alignment = 1u << 21;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &c, &err) == HURRAY_OK);
  CHECK(reinterpret_cast<uintptr_t>(hurray_buffer_data(c)) % (1u << 21) == 0);
  hurray_buffer_unref(b);
  hurray_buffer_unref(c);

  // Shareable memory is never taken from the cache: it must be a memfd.
  d.alignment = 4096;
  d.flags = HURRAY_ALLOC_SHAREABLE;
  hurray_buffer *s = nullptr;
  REQUIRE(hurray_buffer_alloc(nullptr, &d, &s, &err) == HURRAY_OK);
  CHECK(hurray_buffer_fd(s) >= 0);
  CHECK(hurray_buffer_data(s) != first);
  hurray_buffer_unref(s);
}

// wrap and check answer their common case on a fast path and everything else
// on a checked path; both must give the same answers. wrap is run twice on
// each random input: with descriptors of this library's size (fast path when
// it applies) and with the same descriptors declared 8 bytes larger, zero
// tail (always the checked path). check is compared with an oracle built from
// the public rule engine (hurray_table_validate) and the payload and address
// rules.
namespace {

struct PaddedBuffer {
  hurray_buffer_desc d;
  uint64_t zero;
};
struct PaddedExport {
  hurray_export_desc d;
  uint64_t zero;
};

template <class T>
T pick(uint64_t &s, std::initializer_list<T> xs) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  return xs.begin()[(s >> 33) % xs.size()];
}

bool check_oracle(const hurray_handoff &h, const hurray_policy *policy) {
  constexpr uint32_t known =
      HURRAY_HANDOFF_READ_ONLY | HURRAY_HANDOFF_OPAQUE_DATA | HURRAY_HANDOFF_QPARAM;
  if (h.version != HURRAY_HANDOFF_VERSION || !h.release || (h.flags & ~known) || h.reserved0 ||
      h.reserved[0] || h.reserved[1] || h.reserved[2] || h.reserved[3])
    return false;
  if (hurray_table_validate(h.handle, sizeof h.handle, policy, nullptr) != HURRAY_OK)
    return false;
  hurray_buffer_handle hd;
  if (hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr) != HURRAY_OK) return false;
  const bool obj = h.sync_object, rel = h.release_event;
  switch (hd.sync_mode) {
    case HURRAY_SYNC_PRODUCER_SYNCED:
      if (obj || rel || h.sync_value) return false;
      break;
    case HURRAY_SYNC_EVENT:
      if (!obj || !rel) return false;
      break;
    case HURRAY_SYNC_CONSUMER_STREAM:
      if (!obj || rel) return false;
      break;
    default:
      return false;
  }
  if (h.flags & HURRAY_HANDOFF_OPAQUE_DATA) return true;
  const auto a = reinterpret_cast<uintptr_t>(h.data);
  return hd.byte_size == 0 || (a != 0 && hd.alignment != 0 && a % hd.alignment == 0);
}

void no_event(void *, void *) {}
void fake_release(hurray_handoff *) {}

// Usually `usual`, one time in six one of `others`: most inputs are then
// valid but for one or two fields, where the two paths are likeliest to part.
template <class T>
T mostly(uint64_t &s, T usual, std::initializer_list<T> others) {
  s = s * 6364136223846793005ull + 1442695040888963407ull;
  if ((s >> 40) % 6 != 0) return usual;
  return pick(s, others);
}

}  // namespace

TEST_CASE("wrap: the fast path and the checked path agree on random descriptors",
          "[handoff][fast-path]") {
  Aligned mem(1 << 16);
  Counter c;
  uint64_t s = 12345;
  int accepted = 0, refused = 0;
  for (int i = 0; i < 20000; ++i) {
    hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
    d.handle.byte_size = mostly<uint64_t>(s, 4096, {0, 64, 1ull << 40});
    d.handle.alignment = mostly<uint32_t>(s, 64, {0, 3, 32, 128, 4096});
    d.handle.device_tag = mostly<uint8_t>(s, 0, {1, 4, 6, 8, 9, 0xF0});
    d.handle.sync_mode = mostly<uint8_t>(s, 0, {1, 2});
    d.handle.memory_class = mostly<uint8_t>(s, 0, {1, 2, 3, 4});
    d.handle.reserved = mostly<uint8_t>(s, 0, {1});
    d.data = mostly<void *>(s, mem.p, {static_cast<char *>(mem.p) + 64,
                                       static_cast<char *>(mem.p) + 8, nullptr});
    d.flags = mostly<uint32_t>(s, 0, {HURRAY_HANDOFF_OPAQUE_DATA, 0x80});
    d.device_ordinal = mostly<int32_t>(s, 0, {1});
    d.free_fn = Counter::on_free;
    d.free_user = &c;
    hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
    e.sync_mode = mostly<uint32_t>(s, 0, {1, 2, 7});
    e.sync_object = mostly<void *>(s, nullptr, {&kFakeEvent});
    e.event_free_fn = mostly<void (*)(void *, void *)>(s, nullptr, {no_event});
    e.sync_value = mostly<uint64_t>(s, 0, {5});
    e.flags = mostly<uint32_t>(s, 0, {HURRAY_HANDOFF_READ_ONLY, 0x40});
    const bool no_export = pick<int>(s, {0, 1}) && e.sync_mode == 0 && !e.sync_object &&
                           !e.event_free_fn && !e.sync_value && !e.flags;

    PaddedBuffer pb{};
    pb.d = d;
    pb.d.size = sizeof pb;
    PaddedExport pe{};
    pe.d = e;
    pe.d.size = sizeof pe;
    hurray_handoff fast, checked;
    hurray_error ef, ec;
    const hurray_status sf = hurray_handoff_wrap(nullptr, &d, no_export ? nullptr : &e, &fast, &ef);
    const hurray_status sc = hurray_handoff_wrap(nullptr, &pb.d, &pe.d, &checked, &ec);
    INFO("input " << i << ": fast " << ef.message << " / checked " << ec.message);
    REQUIRE(sf == sc);
    if (sf != HURRAY_OK) {
      CHECK(std::string(ef.rule_id) == std::string(ec.rule_id));
      ++refused;
      continue;
    }
    ++accepted;
    CHECK(fast.version == checked.version);
    CHECK(fast.flags == checked.flags);
    CHECK(std::memcmp(fast.handle, checked.handle, sizeof fast.handle) == 0);
    CHECK(fast.device_ordinal == checked.device_ordinal);
    CHECK(fast.data == checked.data);
    CHECK(fast.sync_object == checked.sync_object);
    CHECK(fast.sync_value == checked.sync_value);
    CHECK((fast.release_event == nullptr) == (checked.release_event == nullptr));
    CHECK(fast.release == checked.release);
    CHECK(hurray_handoff_check(&fast, nullptr, nullptr) == HURRAY_OK);
    const int before = c.frees.load();
    REQUIRE(hurray_handoff_release(&fast, nullptr) == HURRAY_OK);
    REQUIRE(hurray_handoff_release(&checked, nullptr) == HURRAY_OK);
    CHECK(c.frees.load() == before + 2);
  }
  // Both outcomes were exercised, and plenty of each.
  CHECK(accepted > 1000);
  CHECK(refused > 1000);
}

TEST_CASE("check: the fast path answers OK exactly when the rules do, on random handoffs",
          "[handoff][fast-path]") {
  Aligned mem(1 << 16);
  hurray_policy *ipc;
  REQUIRE(hurray_policy_create(&ipc, nullptr) == HURRAY_OK);
  REQUIRE(hurray_policy_set_transport(ipc, HURRAY_TRANSPORT_IPC, nullptr) == HURRAY_OK);
  uint64_t s = 777;
  int ok = 0, bad = 0;
  for (int i = 0; i < 50000; ++i) {
    hurray_handoff h;
    std::memset(&h, 0, sizeof h);
    h.version = mostly<uint32_t>(s, 1, {0, 2});
    h.flags = mostly<uint32_t>(s, 0, {HURRAY_HANDOFF_READ_ONLY, HURRAY_HANDOFF_OPAQUE_DATA, 0x100});
    hurray_buffer_handle hd{};
    hd.byte_size = mostly<uint64_t>(s, 4096, {0, 64, 1ull << 40});
    hd.alignment = mostly<uint32_t>(s, 4096, {0, 3, 32, 64, 128});
    hd.device_tag = mostly<uint8_t>(s, 0, {1, 4, 6, 8, 9, 0xF0, 0xFF});
    hd.sync_mode = mostly<uint8_t>(s, 0, {1, 2, 3});
    hd.memory_class = mostly<uint8_t>(s, 0, {1, 2, 3, 4});
    hd.reserved = mostly<uint8_t>(s, 0, {1});
    REQUIRE(hurray_handle_encode(&hd, h.handle, sizeof h.handle, nullptr) == HURRAY_OK);
    h.device_ordinal = mostly<int32_t>(s, 0, {3});
    h.reserved0 = mostly<uint32_t>(s, 0, {1});
    h.data = mostly<void *>(s, mem.p, {static_cast<char *>(mem.p) + 64,
                                       static_cast<char *>(mem.p) + 8, nullptr});
    h.sync_object = mostly<void *>(s, nullptr, {&kFakeStream});
    h.sync_value = mostly<uint64_t>(s, 0, {9});
    h.release_event = mostly<void (*)(hurray_handoff *)>(s, nullptr, {fake_release});
    h.release = mostly<void (*)(hurray_handoff *)>(s, fake_release, {nullptr});
    h.reserved[pick<int>(s, {0, 1, 2, 3})] = mostly<uint64_t>(s, 0, {1});
    for (const hurray_policy *p : {static_cast<const hurray_policy *>(nullptr),
                                   static_cast<const hurray_policy *>(ipc)}) {
      const bool want = check_oracle(h, p);
      INFO("input " << i << (p ? " (IPC policy)" : ""));
      CHECK((hurray_handoff_check(&h, p, nullptr) == HURRAY_OK) == want);
      (want ? ok : bad)++;
    }
  }
  hurray_policy_destroy(ipc);
  CHECK(ok > 1000);
  CHECK(bad > 1000);
}
