// What Dawn and the system libraries under it (Mesa's EGL, the Vulkan
// loader, libwayland) decide by themselves while probe() runs: the EGL
// platform on a machine without a display, and the lines they print on
// stderr.
#include "startup.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace hurray::webgpu {

// Dawn's OpenGL ES backend opens EGL with eglGetDisplay(EGL_DEFAULT_DISPLAY),
// and Mesa then picks its platform from EGL_PLATFORM, else from what it can
// connect to (Wayland, X11). With no display at all that fails
// (eglInitialize: EGL_NOT_INITIALIZED, after libwayland's "XDG_RUNTIME_DIR
// is invalid" lines) and WebGPU is unavailable on a headless machine, which
// surfaceless (render nodes or llvmpipe, no window system) serves. Dawn's C
// API offers no way to hand it an EGLDisplay or a platform (its
// RequestAdapterOptionsGetGLProc is a C++ extension of dawn::native, not in
// the webgpu.h a packaged libwebgpu exports), so the variable is set for the
// process, before Dawn first touches EGL: only when the user set none and
// neither WAYLAND_DISPLAY nor DISPLAY names a display. Mesa reads it once,
// so this must come before the first eglGetDisplay of the process (probe()
// is the plugin's first call). setenv is not safe against a getenv running
// at the same moment on another thread; probe() runs once, under the loader's
// lock, while libhurray loads its plugins.
bool choose_headless_egl() {
  auto set = [](const char *name) {
    const char *v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (set("EGL_PLATFORM") || set("WAYLAND_DISPLAY") || set("DISPLAY")) return false;
  return setenv("EGL_PLATFORM", "surfaceless", 0) == 0;
}

namespace {

bool debug_log() {
  const char *v = std::getenv("HURRAY_LOG");
  return v != nullptr && std::strcmp(v, "debug") == 0;
}

void write_all(int fd, const char *p, size_t n) {
  while (n > 0) {
    const ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

// fd 2 goes to an anonymous file (memfd: no size limit to block a writer, as
// a pipe's would) until the destructor puts it back.
QuietStderr::QuietStderr() {
  std::fflush(stderr);
  const int file = memfd_create("hurray-webgpu-stderr", MFD_CLOEXEC);
  if (file < 0) return;
  saved_ = dup(2);
  if (saved_ < 0 || dup2(file, 2) < 0) {
    if (saved_ >= 0) close(saved_);
    saved_ = -1;
    close(file);
    return;
  }
  file_ = file;
}

// Restores fd 2, then hands what was caught to HURRAY_LOG=debug (each line
// prefixed "hurray: webgpu: ") or drops it.
QuietStderr::~QuietStderr() {
  if (file_ < 0) return;
  std::fflush(stderr);
  dup2(saved_, 2);
  close(saved_);
  if (debug_log()) try {
    std::string text;
    char buf[4096];
    ssize_t n;
    off_t at = 0;
    while ((n = pread(file_, buf, sizeof buf, at)) > 0 && text.size() < (1u << 20)) {
      text.append(buf, static_cast<size_t>(n));
      at += n;
    }
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      if (end > start) {
        const std::string line = "hurray: webgpu: " + text.substr(start, end - start) + "\n";
        write_all(2, line.data(), line.size());
      }
      start = end + 1;
    }
  } catch (...) {  // out of memory: what was caught is dropped
  }
  close(file_);
}

}  // namespace hurray::webgpu
