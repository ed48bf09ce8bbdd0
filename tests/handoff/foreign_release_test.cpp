// hurray_handoff_release and hurray_handoff_release_event on a foreign
// handoff: one another producer made (its own release callback, not
// libhurray's). hurray.h promises that the second call is refused
// (BP-REL-ONCE, BP-EVREL-ONCE) and never reaches the producer, even when the
// producer's callback does not set `release` (or `release_event`) to NULL
// itself, as a careless or older producer may.
#include <hurray.h>

#include <catch2/catch.hpp>

#include <cstring>
#include <string>

namespace {

struct Producer {
  int releases = 0;
  int event_releases = 0;
};

// Callbacks that count and leave the struct as it is (no NULLing).
void careless_release(hurray_handoff *self) {
  ++static_cast<Producer *>(self->private_data)->releases;
}
void careless_release_event(hurray_handoff *self) {
  ++static_cast<Producer *>(self->private_data)->event_releases;
}

alignas(64) unsigned char g_bytes[4096];

hurray_handoff foreign_handoff(Producer *p, uint8_t sync_mode, uint8_t tag, uint32_t align) {
  hurray_handoff h;
  std::memset(&h, 0, sizeof h);
  h.version = HURRAY_HANDOFF_VERSION;
  const hurray_buffer_handle bh = {sizeof g_bytes, align, tag, sync_mode, HURRAY_MEMORY_STANDARD,
                                   0};
  REQUIRE(hurray_handle_encode(&bh, h.handle, sizeof h.handle, nullptr) == HURRAY_OK);
  h.data = g_bytes;
  h.release = careless_release;
  h.private_data = p;
  return h;
}

}  // namespace

TEST_CASE("foreign handoff: a second release is refused and never reaches the producer "
          "(BP-REL-ONCE)",
          "[handoff][foreign]") {
  Producer p;
  hurray_handoff h = foreign_handoff(&p, HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_DEVICE_CPU, 64);
  REQUIRE(hurray_handoff_check(&h, nullptr, nullptr) == HURRAY_OK);

  hurray_error err{};
  REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);
  CHECK(p.releases == 1);
  CHECK(h.release == nullptr);  // libhurray marks it released for the producer

  std::memset(&err, 0, sizeof err);
  CHECK(hurray_handoff_release(&h, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(err.status == HURRAY_E_ALREADY_RELEASED);
  CHECK(std::string(err.rule_id) == "BP-REL-ONCE");
  CHECK(p.releases == 1);  // the producer's callback ran once
  CHECK(hurray_handoff_release(&h, nullptr) == HURRAY_E_ALREADY_RELEASED);
  CHECK(p.releases == 1);
}

TEST_CASE("foreign handoff: a second event release is refused and never reaches the producer "
          "(BP-EVREL-ONCE)",
          "[handoff][foreign]") {
  Producer p;
  int event = 0;  // stands for the producer's event; nothing waits on it here
  hurray_handoff h = foreign_handoff(&p, HURRAY_SYNC_EVENT, HURRAY_DEVICE_CUDA, 4096);
  h.sync_object = &event;
  h.release_event = careless_release_event;

  hurray_error err{};
  REQUIRE(hurray_handoff_release_event(&h, &err) == HURRAY_OK);
  CHECK(p.event_releases == 1);
  CHECK(h.release_event == nullptr);
  std::memset(&err, 0, sizeof err);
  CHECK(hurray_handoff_release_event(&h, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(std::string(err.rule_id) == "BP-EVREL-ONCE");
  CHECK(p.event_releases == 1);

  // The buffer's release: once, and the event is not released again by it.
  REQUIRE(hurray_handoff_release(&h, &err) == HURRAY_OK);
  CHECK(hurray_handoff_release(&h, &err) == HURRAY_E_ALREADY_RELEASED);
  CHECK(p.releases == 1);
  CHECK(p.event_releases == 1);
}

TEST_CASE("foreign handoff: a moved-from struct cannot be released, the moved-to one once",
          "[handoff][foreign]") {
  Producer p;
  hurray_handoff a = foreign_handoff(&p, HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_DEVICE_CPU, 64);
  hurray_handoff b;
  REQUIRE(hurray_handoff_move(&a, &b, nullptr) == HURRAY_OK);
  CHECK(hurray_handoff_release(&a, nullptr) == HURRAY_E_ALREADY_RELEASED);
  CHECK(p.releases == 0);
  CHECK(hurray_handoff_release(&b, nullptr) == HURRAY_OK);
  CHECK(hurray_handoff_release(&b, nullptr) == HURRAY_E_ALREADY_RELEASED);
  CHECK(p.releases == 1);
}

TEST_CASE("foreign handoff: hurray_handoff_check reads only its own version of the struct",
          "[handoff][foreign]") {
  Producer p;
  hurray_handoff h = foreign_handoff(&p, HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_DEVICE_CPU, 64);
  REQUIRE(hurray_handoff_check(&h, nullptr, nullptr) == HURRAY_OK);
  for (const uint32_t v : {0u, HURRAY_HANDOFF_VERSION + 1u}) {
    h.version = v;  // a struct never filled in, or a newer layout
    hurray_error err{};
    CHECK(hurray_handoff_check(&h, nullptr, &err) == HURRAY_E_UNSUPPORTED);
    CHECK(err.status == HURRAY_E_UNSUPPORTED);
  }
  h.version = HURRAY_HANDOFF_VERSION;
  CHECK(hurray_handoff_release(&h, nullptr) == HURRAY_OK);
  CHECK(p.releases == 1);
}
