/* Built by tests/install/run.sh with find_package(hurray 1.0): the version
 * loaded is the one of the headers, and libhurray-net resolves. */
#include <hurray.h>
#include <hurray_net.h>

#include <stdio.h>
#include <string.h>

int main(void) {
  /* Taking the address makes the link need libhurray-net.so.1. */
  void (*destroy)(hurray_net_server *) = hurray_net_server_destroy;
  if (strcmp(hurray_version_string(), HURRAY_VERSION_STRING) != 0 || destroy == NULL) {
    fprintf(stderr, "libhurray %s, headers %s\n", hurray_version_string(), HURRAY_VERSION_STRING);
    return 1;
  }
  printf("cmake consumer: libhurray %s with libhurray-net\n", hurray_version_string());
  return 0;
}
