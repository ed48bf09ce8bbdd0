// An IPC channel on an inherited socket descriptor that announces one
// device tag, for the peer programs the IPC tests exec (no Catch2).
#pragma once

#include <hurray_ipc.h>

#include <cstdint>

namespace hurray_test {

inline hurray_status channel_on(int fd, uint8_t tag, hurray_ipc_channel **ch, hurray_error *err) {
  const uint8_t tags[] = {tag};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.device_count = 1;
  o.device_tags = tags;
  return hurray_ipc_channel_from_fd(fd, &o, ch, err);
}

}  // namespace hurray_test
