/* Calls into libhurray the way a C program may: with an enum parameter
 * holding an int outside the enumerators. That is valid C (an enum's
 * values are those of its compatible integer type) and the API promises
 * to refuse such values, so the fuzz targets check that it does without
 * undefined behaviour on the library's (C++) side. In C++ the harness
 * could not even form the value without undefined behaviour itself. */
#include <hurray.h>

hurray_status hurray_fuzz_c_set_transport(hurray_policy *policy, int transport,
                                          hurray_error *err) {
  return hurray_policy_set_transport(policy, (hurray_transport)transport, err);
}

const char *hurray_fuzz_c_transport_name(int transport) {
  return hurray_transport_name((hurray_transport)transport);
}
