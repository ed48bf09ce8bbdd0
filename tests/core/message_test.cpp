// The one format of hurray_error.message (docs/errors.md): the writer every
// layer shares (src/core/message.h) and what the public API fills with it.
#include "../../src/core/message.h"

#include <catch2/catch.hpp>
#include <hurray.h>

#include <cstring>
#include <string>

namespace {

std::string write(const char *rule_id, const char *who, const char *fmt, ...) {
  char message[HURRAY_ERROR_MESSAGE_SIZE];
  va_list ap;
  va_start(ap, fmt);
  hurray::detail::write_message(message, rule_id, who, fmt, ap);
  va_end(ap);
  return message;
}

}  // namespace

TEST_CASE("message: the rule ID first, then who refused, then the text") {
  CHECK(write("BP-SYNC-IPC", "cuda: ipc_export_event", "%s", "no events") ==
        "BP-SYNC-IPC: cuda: ipc_export_event: no events");
  CHECK(write("", "hurray_buffer_view", "%s is NULL", "parent") ==
        "hurray_buffer_view: parent is NULL");
  CHECK(write(nullptr, nullptr, "[cuInit] %s", "CUDA_ERROR_NO_DEVICE") ==
        "[cuInit] CUDA_ERROR_NO_DEVICE");
  CHECK(write("BP-REL-ONCE", nullptr, "released twice") == "BP-REL-ONCE: released twice");
}

TEST_CASE("message: a rule ID the text already starts with is written once, first") {
  CHECK(write("BP-SYNC-PAYLOAD", nullptr, "BP-SYNC-PAYLOAD: %s", "EVENT needs an event") ==
        "BP-SYNC-PAYLOAD: EVENT needs an event");
  CHECK(write("BP-SYNC-PAYLOAD", "hurray_ipc_send", "BP-SYNC-PAYLOAD: bad") ==
        "BP-SYNC-PAYLOAD: hurray_ipc_send: bad");
  // A finer ID of the library (BP-REL-DEFER under BP-REL-AFTER) stays the one first.
  CHECK(write("BP-REL-AFTER", nullptr, "BP-REL-DEFER: x") == "BP-REL-DEFER: x");
  CHECK(write("", "hurray_x", "BP-DEV-ID: no device") == "BP-DEV-ID: hurray_x: no device");
  // Words in capitals are not an ID.
  CHECK(write("BP-SIZE", nullptr, "UNSUPPORTED: x") == "BP-SIZE: UNSUPPORTED: x");
}

TEST_CASE("message: a long message is cut on a character boundary and ends in ...") {
  const std::string ascii(1000, 'x');
  std::string m = write("BP-SIZE", "who", "%s", ascii.c_str());
  CHECK(m.size() == HURRAY_ERROR_MESSAGE_SIZE - 1);
  CHECK(m.rfind("BP-SIZE: who: xxx", 0) == 0);
  CHECK(m.substr(m.size() - 3) == "...");
  // Two-byte characters whose boundary is not where the cut falls.
  std::string e_acute;
  for (int i = 0; i < 300; ++i) e_acute += "\xc3\xa9";
  for (const char *who : {"a", "ab"}) {
    INFO(who);
    m = write(nullptr, who, "%s", e_acute.c_str());
    REQUIRE(m.size() >= 4);
    CHECK(m.size() <= HURRAY_ERROR_MESSAGE_SIZE - 1);
    CHECK(m.substr(m.size() - 3) == "...");
    const std::string body = m.substr(std::strlen(who) + 2, m.size() - std::strlen(who) - 5);
    CHECK(body.size() % 2 == 0);  // whole characters only
    CHECK(body == e_acute.substr(0, body.size()));
  }
  // What fits is never marked.
  const std::string fits(HURRAY_ERROR_MESSAGE_SIZE - 1 - 5, 'y');
  CHECK(write(nullptr, "who", "%s", fits.c_str()) == "who: " + fits);
}

TEST_CASE("message: the public API fills the format") {
  hurray_error err;
  std::memset(&err, 0x55, sizeof err);
  CHECK(hurray_buffer_view(nullptr, 0, 0, nullptr, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string(err.message) == "hurray_buffer_view: parent is NULL");
  CHECK(std::string(err.rule_id).empty());
}
