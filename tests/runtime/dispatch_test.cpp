// The dispatch layer (src/runtime/dispatch.h) as a caller of libhurray sees
// it: a NULL optional entry is HURRAY_E_UNSUPPORTED naming the plugin and
// the entry, and a descriptor a plugin returned is closed when the export
// fails, the plugin's failure or one the layer finds (kind 0). The device
// part runs with the stand-in plugin (tests/ipc/fake_gpu_plugin.c, tag CUDA).
#include <catch2/catch.hpp>

#include <hurray.h>
#include <hurray_backend.h>
#include <hurray_ipc.h>

#include <dirent.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include "../common/open_fds.h"
#include "../common/shareable_alloc.h"

namespace {

using hurray_test::open_fds;

}  // namespace

TEST_CASE("dispatch: a NULL optional entry is UNSUPPORTED, naming the plugin and the entry") {
  hurray_backend_native n;
  hurray_error err{};
  CHECK(hurray_device_native(nullptr, HURRAY_DEVICE_CPU, 0, &n, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(std::string(err.message) == "cpu: native: UNSUPPORTED: this backend has no native handles");
}

TEST_CASE("dispatch: a descriptor the plugin returned is closed when its export fails",
          "[.dispatch]") {
  const uint8_t tags[] = {HURRAY_DEVICE_CUDA};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = tags;
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  hurray_ipc_channel *a = nullptr, *c = nullptr;
  hurray_status sc = HURRAY_E_INTERNAL;
  std::thread t([&] { sc = hurray_ipc_channel_from_fd(sv[1], &o, &c, nullptr); });
  REQUIRE(hurray_ipc_channel_from_fd(sv[0], &o, &a, nullptr) == HURRAY_OK);
  t.join();
  REQUIRE(sc == HURRAY_OK);
  hurray_error err{};
  // the stand-in plugin has no native handles either
  hurray_backend_native n;
  CHECK(hurray_device_native(nullptr, HURRAY_DEVICE_CUDA, 0, &n, &err) == HURRAY_E_UNSUPPORTED);
  CHECK(std::string(err.message) ==
        "ipcfake: native: UNSUPPORTED: this backend has no native handles");
  hurray_buffer *b = hurray_test::alloc_shareable(65536, HURRAY_IPC_ALIGNMENT, HURRAY_DEVICE_CUDA);
  const int fds = open_fds();
  struct Case {
    const char *mode;
    hurray_status status;
    const char *message;
  };
  for (const Case &k :
       {Case{"fail", HURRAY_E_BACKEND, "ipcfake: export failed on purpose"},
        Case{"kind0", HURRAY_E_BACKEND,
             "ipcfake: ipc_export_memory: BACKEND: the plugin returned a handle of kind 0, fd "}}) {
    INFO(k.mode);
    REQUIRE(setenv("HURRAY_IPCFAKE_BAD_EXPORT", k.mode, 1) == 0);
    CHECK(hurray_ipc_send(a, b, nullptr, nullptr, &err) == k.status);
    INFO(err.message);
    CHECK(std::string(err.message).rfind(k.message, 0) == 0);
    CHECK(open_fds() == fds);  // the plugin's dup() is closed
  }
  // and a good export still goes through, its descriptor passed and closed
  REQUIRE(unsetenv("HURRAY_IPCFAKE_BAD_EXPORT") == 0);
  uint64_t id = 0;
  REQUIRE(hurray_ipc_send(a, b, nullptr, &id, &err) == HURRAY_OK);
  hurray_handoff h;
  REQUIRE(hurray_ipc_receive(c, 10000, &h, nullptr, &err) == HURRAY_OK);
  CHECK(hurray_ipc_release(&h, &err) == HURRAY_OK);
  hurray_ipc_stats s{};
  s.size = sizeof s;
  for (int i = 0; i < 100 && s.released == 0; ++i) {
    REQUIRE(hurray_ipc_progress(a, 100, nullptr, nullptr) == HURRAY_OK);
    REQUIRE(hurray_ipc_get_stats(a, &s, nullptr) == HURRAY_OK);
  }
  CHECK(s.released == 1);
  hurray_buffer_unref(b);
  hurray_ipc_close(c);
  hurray_ipc_close(a);
}
