// hurray.h compiles on its own as C++11 (-pedantic -Werror) and keeps C linkage.
#include <hurray.h>

static_assert(sizeof(hurray_buffer_handle) == HURRAY_HANDLE_SIZE, "16-byte handle");
static_assert(sizeof(hurray_error) == 320, "frozen error struct");

// Taking the address with the C signature proves the declaration's type.
hurray_status (*const hurray_header_cxx_decode)(const void *, size_t, hurray_buffer_handle *,
                                                hurray_error *) = &hurray_handle_decode;
