// The name of a memory class, for the messages of the in-tree backend
// plugins. A plugin links neither libhurray nor any other code of ours (it
// may not even call hurray_* functions), so the plugins share this header
// instead of each keeping a copy.
#pragma once

#include <hurray.h>

namespace hurray::plugin {

// "STANDARD", "HOST_PINNED", "UNIFIED", "PEER", else "invalid", "private"
// or "reserved".
inline const char *class_name(unsigned memory_class) noexcept {
  switch (memory_class) {
    case HURRAY_MEMORY_STANDARD:
      return "STANDARD";
    case HURRAY_MEMORY_HOST_PINNED:
      return "HOST_PINNED";
    case HURRAY_MEMORY_UNIFIED:
      return "UNIFIED";
    case HURRAY_MEMORY_PEER:
      return "PEER";
    case HURRAY_MEMORY_INVALID:
      return "invalid";
    default:
      return memory_class >= HURRAY_MEMORY_PRIVATE_FIRST ? "private" : "reserved";
  }
}

}  // namespace hurray::plugin
