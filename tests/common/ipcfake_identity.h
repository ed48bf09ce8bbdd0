// The identity the stand-in plugin (tests/ipc/fake_gpu_plugin.c) reports for its device
// of letter `letter` under HURRAY_IPCFAKE_IDENTITY: the UUID "ipcfake device X".
// Shared by the IPC and network identity tests.
#pragma once

#include <hurray_backend.h>

#include <cstdint>
#include <cstring>

namespace hurray_test {
inline hurray_backend_device_identity ipcfake_uuid(char letter) {
  hurray_backend_device_identity id{};
  id.kind = HURRAY_BACKEND_ID_UUID;
  std::memcpy(id.bytes, "ipcfake device ", 15);
  id.bytes[15] = static_cast<uint8_t>(letter);
  return id;
}
}  // namespace hurray_test
