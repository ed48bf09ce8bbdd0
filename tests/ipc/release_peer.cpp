// The consumer process of release_after_ipc_test.cpp:
//
//   hurray_ipc_release_peer FD   announce Vulkan; receive one Vulkan buffer; close a gate
//                                on the Vulkan plugin's queue (a submission waiting on a
//                                timeline semaphore only this process signals) and release
//                                the buffer after the queue's work (hurray_handoff_release_after,
//                                so its RELEASE can only leave once the gate opens); write
//                                'R' to stdout; receive a second (CPU) buffer, the producer's
//                                "go"; release it; open the gate; wait (bounded) until the
//                                deferred RELEASE has left; exit 0.
//
// The test SIGKILLs it after 'R' in the other case. Exit status 0 when
// everything held; otherwise a message on stderr.
#include <hurray_backend.h>
#include <hurray_ipc.h>

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "ipc_channel_on.h"
#include "vulkan_gate.h"

namespace {

int die(const char *what, const hurray_error *err = nullptr) {
  std::fprintf(stderr, "release peer: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return die("usage: hurray_ipc_release_peer FD");
  hurray_error err{};
  hurray_ipc_channel *ch = nullptr;
  if (hurray_test::channel_on(std::atoi(argv[1]), HURRAY_DEVICE_VULKAN, &ch, &err) != HURRAY_OK)
    return die("channel", &err);
  hurray_handoff h;
  if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_OK) return die("receive", &err);
  if (h.handle[12] != HURRAY_DEVICE_VULKAN) return die("not a Vulkan buffer");

  hurray_test::VkGateBase gate;
  if (const char *failed = gate.close(&err)) return die(failed, &err);
  VkQueue queue = gate.vk.queue;
  if (hurray_handoff_release_after(nullptr, &h, queue, nullptr, 0, &err) != HURRAY_OK)
    return die("release_after", &err);
  if (write(1, "R", 1) != 1) return die("write");

  hurray_handoff go;
  if (hurray_ipc_receive(ch, 30000, &go, nullptr, &err) != HURRAY_OK) return die("receive go", &err);
  if (hurray_handoff_release(&go, &err) != HURRAY_OK) return die("release go", &err);
  if (!gate.open()) return die("vkSignalSemaphore");
  for (int i = 0; i < 3000; ++i) {  // at most 30 s
    hurray_ipc_stats st;
    st.size = sizeof st;
    if (hurray_ipc_get_stats(ch, &st, &err) != HURRAY_OK) return die("stats", &err);
    if (st.releases_sent >= 2) {
      hurray_ipc_close(ch);
      return 0;  // (the gate waits for the queue to idle)
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return die("the deferred RELEASE never left");
}
