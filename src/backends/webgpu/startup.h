// What Dawn and the libraries under it do by themselves at start-up
// (startup.cpp): the EGL platform of a headless machine, and their stderr.
#pragma once

namespace hurray::webgpu {

// Sets EGL_PLATFORM=surfaceless for the process when it is unset and no
// display is named (WAYLAND_DISPLAY, DISPLAY). True when it set it.
bool choose_headless_egl();

// While one lives, whatever the process writes to fd 2 is caught instead:
// Dawn prints its adapter-discovery warnings (a Vulkan device that lacks a
// feature, eglInitialize failing) and libwayland its XDG_RUNTIME_DIR error
// straight to stderr, with no callback to route them (Dawn's logging
// callback is per device, and there is no device yet). On destruction fd 2
// is restored and the lines caught go to stderr, prefixed "hurray: webgpu: ",
// only under HURRAY_LOG=debug. The cost: fd 2 is process-wide, so what
// another thread writes to stderr during the probe (once per process, while
// libhurray loads this plugin) is caught too, and shown only under
// HURRAY_LOG=debug.
class QuietStderr {
 public:
  QuietStderr();
  ~QuietStderr();
  QuietStderr(const QuietStderr &) = delete;
  QuietStderr &operator=(const QuietStderr &) = delete;

 private:
  int saved_ = -1;  // the real fd 2
  int file_ = -1;   // the memfd catching it
};

}  // namespace hurray::webgpu
