// A C++17 consumer of the installed libhurray, built with the flags of
// hurray.pc: round-trips a handle, validates a private-device table under a
// policy before and after agreeing the tag, and checks the rule IDs; then the
// installed hurray.hpp (a buffer, a handoff, an error carrying its rule).
// Returns non-zero on a wrong result.
#include <hurray.h>
#include <hurray.hpp>  // installed too (issue 32)

#include <array>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string_view>

namespace {

int failures = 0;

void check(bool ok, const char *what, int line) {
  if (!ok) {
    std::fprintf(stderr, "main.cpp:%d: check failed: %s\n", line, what);
    ++failures;
  }
}
#define CHECK(cond) check((cond), #cond, __LINE__)

struct PolicyDeleter {
  void operator()(hurray_policy *p) const noexcept { hurray_policy_destroy(p); }
};
using Policy = std::unique_ptr<hurray_policy, PolicyDeleter>;

}  // namespace

int main() {
  CHECK(hurray_version() == HURRAY_VERSION_NUMBER);

  hurray_buffer_handle h{};
  h.byte_size = 256;
  h.alignment = 128;
  h.device_tag = 0xF3;  // private, unless agreed
  h.memory_class = HURRAY_MEMORY_STANDARD;
  std::array<unsigned char, HURRAY_HANDLE_SIZE> wire{};
  hurray_error err{};
  CHECK(hurray_handle_encode(&h, wire.data(), wire.size(), &err) == HURRAY_OK);
  hurray_buffer_handle back{};
  CHECK(hurray_handle_decode(wire.data(), wire.size(), &back, &err) == HURRAY_OK);
  CHECK(std::memcmp(&back, &h, sizeof h) == 0);
  CHECK(std::string_view(hurray_device_tag_name(back.device_tag)) == "private");

  hurray_policy *raw = nullptr;
  CHECK(hurray_policy_create(&raw, &err) == HURRAY_OK);
  Policy policy(raw);

  CHECK(hurray_table_validate(wire.data(), wire.size(), policy.get(), &err) ==
        HURRAY_E_DEVICE_TAG);
  CHECK(std::string_view(err.rule_id) == "BP-DEV-PRIVATE");
  CHECK(err.rule == HURRAY_RULE_DEV_PRIVATE && err.byte_offset == 12);

  CHECK(hurray_policy_allow_private_tag(policy.get(), 0xF3, 1, &err) == HURRAY_OK);
  CHECK(hurray_table_validate(wire.data(), wire.size(), policy.get(), &err) == HURRAY_OK);
  // Only private tags can be agreed.
  CHECK(hurray_policy_allow_private_tag(policy.get(), HURRAY_DEVICE_CUDA, 1, &err) ==
        HURRAY_E_INVALID_ARGUMENT);
  CHECK(std::string_view(err.rule_id) == "BP-DEV-PRIVATE");

  // The installed C++ layer: a buffer, a handoff released by its destructor.
  {
    auto buf = hurray::buffer::alloc_host(4096);
    hurray::handoff h = buf.export_handoff();
    CHECK(h.bytes().size() == 4096);
  }
  try {
    (void)hurray::decode(wire.data(), wire.size() - 1);
    CHECK(!"a 15-byte handle was decoded");
  } catch (const hurray::error &e) {
    CHECK(std::string_view(e.rule_id()) == "BP-SIZE");
  }

  if (failures != 0) {
    std::fprintf(stderr, "c++ consumer: %d check(s) failed\n", failures);
    return 1;
  }
  std::printf("c++ consumer: OK (libhurray %s)\n", hurray_version_string());
  return 0;
}
