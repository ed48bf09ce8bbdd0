// main() of hurray_net_tests. UCX reads part of its configuration when its
// libraries are loaded, before main(), and the sanitizers read theirs at
// process start; so the test environment is set here and the program starts
// itself again with it, whether it runs under CTest or by hand. The caller's
// values win.
//
// Under AddressSanitizer the leak check at exit walks every thread's dynamic
// TLS, which LeakSanitizer learns by intercepting __tls_get_addr. With the
// libraries UCX dlopens, compiler-rt 14 on glibc 2.36 records a bogus range
// for one of them (seen: "DTLS 14 at 0x0e21-0x400001f23", depending only on
// the size of the environment) and its tracer dies reading it ("Tracer caught
// signal 11"). intercept_tls_get_addr=0 leaves dynamic TLS out of the roots;
// libhurray and libhurray-net keep no heap pointer there.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

int main(int argc, char **argv) {
  if (!std::getenv("HURRAY_NET_TEST_ENV")) {
    setenv("UCX_TLS", "tcp", 0);  // the same transport on every machine
    setenv("UCX_WARN_UNUSED_ENV_VARS", "n", 0);
    setenv("POCL_CACHE_DIR", HURRAY_NET_POCL_CACHE, 0);  // PoCL's kernel cache in the build tree
    const char *asan = std::getenv("ASAN_OPTIONS");
    std::string opts = asan ? asan : "";
    if (opts.find("intercept_tls_get_addr") == std::string::npos)
      opts += (opts.empty() ? "" : ":") + std::string("intercept_tls_get_addr=0");
    setenv("ASAN_OPTIONS", opts.c_str(), 1);  // read by ASan builds only
    setenv("HURRAY_NET_TEST_ENV", "1", 1);
    execv("/proc/self/exe", argv);
    std::perror("hurray_net_tests: execv /proc/self/exe");
    return 1;
  }
  return Catch::Session().run(argc, argv);
}
