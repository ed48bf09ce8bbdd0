// include/hurray_dlpack.hpp compiles on its own (tests/cxx registers the compile).
#include <hurray_dlpack.hpp>

#include <type_traits>

static_assert(!std::is_copy_constructible<hurray::dlpack::tensor>::value, "tensor is move-only");
static_assert(std::is_nothrow_move_constructible<hurray::dlpack::tensor>::value, "noexcept move");
static_assert(!std::is_copy_constructible<hurray::dlpack::legacy_tensor>::value,
              "legacy_tensor is move-only");
static_assert(hurray::dlpack::dtype<float>().bits == 32, "dtype<float>");

int hurray_header_dlpack_hpp_main() {
  hurray::dlpack::tensor t;
  return t ? 1 : 0;
}
