// A hand-made handoff whose sync mode keeps it off the network (EVENT,
// CONSUMER_STREAM: BP-SYNC-NET), for the tests that check the client refuses
// it before sending (net_test.cpp, net_window_test.cpp).
#pragma once

#include <hurray.h>

#include <cstring>

#include "net_support.h"

namespace nettest {

// The 4096 bytes at `bytes`, tagged Vulkan HOST_PINNED, of sync mode `sync`,
// whose sync object is `event` and whose releases only mark it released.
inline hurray_handoff synced_handoff(unsigned char *bytes, uint8_t sync, int *event) {
  hurray_handoff h;
  std::memset(&h, 0, sizeof h);
  h.version = HURRAY_HANDOFF_VERSION;
  hurray_buffer_handle bh = {4096, 4096, HURRAY_DEVICE_VULKAN, sync, HURRAY_MEMORY_HOST_PINNED, 0};
  hurray_handle_encode(&bh, h.handle, sizeof h.handle, nullptr);
  h.data = bytes;
  h.sync_object = event;
  if (sync == HURRAY_SYNC_EVENT) h.release_event = noop_release_event;
  h.release = noop_release;
  return h;
}

}  // namespace nettest
