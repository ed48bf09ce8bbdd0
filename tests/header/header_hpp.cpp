// include/hurray.hpp compiles on its own (tests/cxx registers the compile).
#include <hurray.hpp>

#include <type_traits>

static_assert(!std::is_copy_constructible<hurray::handoff>::value, "handoff is move-only");
static_assert(std::is_nothrow_move_constructible<hurray::handoff>::value, "noexcept move");
static_assert(!std::is_copy_constructible<hurray::buffer>::value, "buffer is move-only");
static_assert(!std::is_copy_constructible<hurray::ipc::channel>::value, "channel is move-only");
static_assert(!std::is_copy_constructible<hurray::ipc::listener>::value, "listener is move-only");

int hurray_header_hpp_main() {
  hurray::handoff h;
  return h.release() == HURRAY_E_ALREADY_RELEASED ? 0 : 1;
}
