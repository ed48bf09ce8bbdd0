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

#include <vulkan/vulkan.h>

namespace {

int die(const char *what, const hurray_error *err = nullptr) {
  std::fprintf(stderr, "release peer: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
  return 1;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 2) return die("usage: hurray_ipc_release_peer FD");
  hurray_error err{};
  const uint8_t tags[] = {HURRAY_DEVICE_VULKAN};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = tags;
  hurray_ipc_channel *ch = nullptr;
  if (hurray_ipc_channel_from_fd(std::atoi(argv[1]), &o, &ch, &err) != HURRAY_OK)
    return die("channel", &err);
  hurray_handoff h;
  if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_OK) return die("receive", &err);
  if (h.handle[12] != HURRAY_DEVICE_VULKAN) return die("not a Vulkan buffer");

  hurray_backend_native nat{};
  if (hurray_device_native(nullptr, HURRAY_DEVICE_VULKAN, 0, &nat, &err) != HURRAY_OK)
    return die("native", &err);
  auto instance = static_cast<VkInstance>(nat.handles[0]);
  auto dev = static_cast<VkDevice>(nat.handles[2]);
  auto queue = static_cast<VkQueue>(nat.handles[3]);
  PFN_vkGetInstanceProcAddr gipa = nullptr;
  std::memcpy(&gipa, &nat.handles[5], sizeof gipa);
  auto gdpa = reinterpret_cast<PFN_vkGetDeviceProcAddr>(gipa(instance, "vkGetDeviceProcAddr"));
  auto create = reinterpret_cast<PFN_vkCreateSemaphore>(gdpa(dev, "vkCreateSemaphore"));
  auto submit = reinterpret_cast<PFN_vkQueueSubmit>(gdpa(dev, "vkQueueSubmit"));
  auto signal = reinterpret_cast<PFN_vkSignalSemaphore>(gdpa(dev, "vkSignalSemaphore"));
  auto destroy = reinterpret_cast<PFN_vkDestroySemaphore>(gdpa(dev, "vkDestroySemaphore"));
  auto wait_idle = reinterpret_cast<PFN_vkQueueWaitIdle>(gdpa(dev, "vkQueueWaitIdle"));
  if (!create || !submit || !signal || !destroy || !wait_idle)
    return die("Vulkan functions missing");
  VkSemaphoreTypeCreateInfo type{};
  type.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO;
  type.semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE;
  VkSemaphoreCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO;
  ci.pNext = &type;
  VkSemaphore gate = VK_NULL_HANDLE;
  if (create(dev, &ci, nullptr, &gate) != VK_SUCCESS) return die("vkCreateSemaphore");
  const uint64_t one = 1;
  const VkPipelineStageFlags stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT;
  VkTimelineSemaphoreSubmitInfo tl{};
  tl.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO;
  tl.waitSemaphoreValueCount = 1;
  tl.pWaitSemaphoreValues = &one;
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.pNext = &tl;
  si.waitSemaphoreCount = 1;
  si.pWaitSemaphores = &gate;
  si.pWaitDstStageMask = &stage;
  if (submit(queue, 1, &si, VK_NULL_HANDLE) != VK_SUCCESS) return die("vkQueueSubmit");
  if (hurray_handoff_release_after(nullptr, &h, queue, nullptr, 0, &err) != HURRAY_OK)
    return die("release_after", &err);
  if (write(1, "R", 1) != 1) return die("write");

  hurray_handoff go;
  if (hurray_ipc_receive(ch, 30000, &go, nullptr, &err) != HURRAY_OK) return die("receive go", &err);
  if (hurray_handoff_release(&go, &err) != HURRAY_OK) return die("release go", &err);
  VkSemaphoreSignalInfo s{};
  s.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO;
  s.semaphore = gate;
  s.value = 1;
  if (signal(dev, &s) != VK_SUCCESS) return die("vkSignalSemaphore");
  for (int i = 0; i < 3000; ++i) {  // at most 30 s
    hurray_ipc_stats st;
    st.size = sizeof st;
    if (hurray_ipc_get_stats(ch, &st, &err) != HURRAY_OK) return die("stats", &err);
    if (st.releases_sent >= 2) {
      hurray_ipc_close(ch);
      wait_idle(queue);
      destroy(dev, gate, nullptr);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return die("the deferred RELEASE never left");
}
