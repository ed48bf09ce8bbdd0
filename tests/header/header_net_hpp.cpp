// include/hurray_net.hpp compiles on its own (tests/cxx registers the compile).
#include <hurray_net.hpp>

#include <type_traits>

static_assert(!std::is_copy_constructible<hurray::net::server>::value, "server is move-only");
static_assert(std::is_nothrow_move_constructible<hurray::net::server>::value, "noexcept move");
static_assert(!std::is_copy_constructible<hurray::net::client>::value, "client is move-only");
static_assert(!std::is_copy_constructible<hurray::net::received>::value, "received owns its buffer");

int hurray_header_net_hpp_main() {
  hurray::net::client c;
  return c ? 1 : 0;
}
