// Guard mode, the protocol sanitizer: every contract rule it watches is
// broken on purpose and the report (rule ID, origin) checked; with guard
// off the same misuse makes no report.
#include <catch2/catch.hpp>

#include <cstring>

#include "../common/handoff_util.h"

using namespace hurray_test;

namespace {

int kEvent;

hurray_handoff make_cpu(hurray_context *ctx, void *mem, size_t n, Counter *c, uint32_t flags = 0,
                        uint32_t export_flags = 0) {
  hurray_buffer_desc d = cpu_desc(mem, n, c);
  d.flags = flags;
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.flags = export_flags;
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(ctx, &d, &e, &h, nullptr) == HURRAY_OK);
  return h;
}

bool names_origin(const hurray_error &e) {
  // the handoff was created in this test program
  return std::strstr(e.message, "created at hurray_handoff_tests") != nullptr;
}

}  // namespace

TEST_CASE("guard: a double release is reported with where the handoff was created", "[guard][BP-REL-ONCE]") {
  Reports r;
  GuardedContext ctx(&r);
  Aligned mem(4096);
  Counter c;
  hurray_handoff h = make_cpu(ctx, mem.p, 64, &c);
  hurray_handoff copy = h;
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  copy.release(&copy);
  CHECK(c.frees == 1);
  REQUIRE(r.rules() == std::vector<std::string>{"BP-REL-ONCE"});
  CHECK(r.all[0].status == HURRAY_E_ALREADY_RELEASED);
  INFO(r.all[0].message);
  CHECK(std::string(r.all[0].message).find("released twice") != std::string::npos);
  CHECK(names_origin(r.all[0]));
  CHECK(hurray_context_guard_count(ctx) == 1);
}

TEST_CASE("guard: a buffer released while its event never was (BP-EVREL-ONCE)", "[guard][BP-EVREL-ONCE]") {
  Reports r;
  GuardedContext ctx(&r);
  Counter c;
  hurray_buffer_desc d = HURRAY_BUFFER_DESC_INIT;
  d.handle = {4096, 4096, HURRAY_DEVICE_ROCM, 0, 0, 0};
  d.data = reinterpret_cast<void *>(uintptr_t(0x10000));
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.sync_mode = HURRAY_SYNC_EVENT;
  e.sync_object = &kEvent;
  e.event_free_fn = Counter::on_event;
  e.event_user = &c;
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(ctx, &d, &e, &h, nullptr) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(c.events == 1);
  REQUIRE(r.rules() == std::vector<std::string>{"BP-EVREL-ONCE"});
  CHECK(names_origin(r.all[0]));
  // and the double event release
  REQUIRE(hurray_handoff_wrap(ctx, &d, &e, &h, nullptr) == HURRAY_OK);
  hurray_handoff copy = h;
  REQUIRE(hurray_handoff_release_event(&h, nullptr) == HURRAY_OK);
  copy.release_event(&copy);
  CHECK(c.events == 2);
  CHECK(r.rules() == std::vector<std::string>{"BP-EVREL-ONCE", "BP-EVREL-ONCE"});
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(r.all.size() == 2);
}

TEST_CASE("guard: handoffs never released are leaks when the context is destroyed", "[guard][leak]") {
  Reports r;
  Aligned mem(4096);
  Counter c;
  hurray_handoff a, b;
  {
    GuardedContext ctx(&r);
    a = make_cpu(ctx, mem.p, 64, &c);
    b = make_cpu(ctx, mem.p, 64, &c);
    hurray_handoff released = make_cpu(ctx, mem.p, 64, &c);
    hurray_handoff_release(&released, nullptr);
  }  // destroyed with two live handoffs
  REQUIRE(r.rules() == std::vector<std::string>{"BP-REL-ONCE", "BP-REL-ONCE"});
  CHECK(std::string(r.all[0].message).find("never released") != std::string::npos);
  CHECK(names_origin(r.all[0]));
  // the handoffs stay usable: the context lives on until they are released
  REQUIRE(hurray_handoff_release(&a, nullptr) == HURRAY_OK);
  REQUIRE(hurray_handoff_release(&b, nullptr) == HURRAY_OK);
  CHECK(c.frees == 3);
}

TEST_CASE("guard: a producer modifying a read-only buffer after handoff (BP-ZC-NOMUT)", "[guard][BP-ZC-NOMUT]") {
  Reports r;
  GuardedContext ctx(&r);
  Aligned mem(4096);
  std::memset(mem.p, 1, 4096);
  Counter c;
  hurray_handoff h = make_cpu(ctx, mem.p, 4096, &c, 0, HURRAY_HANDOFF_READ_ONLY);
  static_cast<unsigned char *>(mem.p)[100] = 2;  // the producer writes anyway
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  REQUIRE(r.rules() == std::vector<std::string>{"BP-ZC-NOMUT"});
  CHECK(names_origin(r.all[0]));
  // unmodified: no report
  h = make_cpu(ctx, mem.p, 4096, &c, 0, HURRAY_HANDOFF_READ_ONLY);
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(r.all.size() == 1);
}

TEST_CASE("guard: a quantization-parameter buffer modified at any time (BP-ZC-QPARAM)", "[guard][BP-ZC-QPARAM]") {
  Reports r;
  GuardedContext ctx(&r);
  Aligned mem(4096);
  std::memset(mem.p, 3, 256);
  Counter c;
  hurray_buffer_desc d = cpu_desc(mem.p, 256, &c);
  d.flags = HURRAY_HANDOFF_QPARAM;
  hurray_buffer *b;
  REQUIRE(hurray_buffer_wrap(ctx, &d, &b, nullptr) == HURRAY_OK);
  static_cast<unsigned char *>(mem.p)[0] = 9;  // modified before any export
  hurray_handoff h;
  REQUIRE(hurray_buffer_export(b, nullptr, &h, nullptr) == HURRAY_OK);
  CHECK(r.rules() == std::vector<std::string>{"BP-ZC-QPARAM"});
  CHECK((h.flags & HURRAY_HANDOFF_QPARAM) != 0);
  static_cast<unsigned char *>(mem.p)[1] = 9;  // and while handed off
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  hurray_buffer_unref(b);
  CHECK(r.rules() == std::vector<std::string>{"BP-ZC-QPARAM", "BP-ZC-QPARAM", "BP-ZC-QPARAM"});
}

TEST_CASE("guard off: the same misuse is refused but not reported", "[guard]") {
  Reports r;
  GuardedContext ctx(&r, /*guard=*/false);
  Aligned mem(4096);
  Counter c;
  hurray_handoff h = make_cpu(ctx, mem.p, 64, &c, 0, HURRAY_HANDOFF_READ_ONLY);
  hurray_handoff copy = h;
  static_cast<unsigned char *>(mem.p)[0] ^= 1;
  REQUIRE(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(hurray_handoff_release(&copy, nullptr) == HURRAY_E_ALREADY_RELEASED);
  CHECK(c.frees == 1);
  hurray_handoff leaked = make_cpu(ctx, mem.p, 64, &c);
  (void)leaked;  // released below, after the context is gone
  hurray_context_destroy(ctx.ctx);
  ctx.ctx = nullptr;
  CHECK(r.all.empty());
  REQUIRE(hurray_handoff_release(&leaked, nullptr) == HURRAY_OK);
}
