// Points the backend loader of a test program at the stand-in GPU plugin
// (tests/ipc/fake_gpu_plugin.c, built into HURRAY_IPCFAKE_DIR) before any backend
// loads: a static initialiser, included by one file of each program.
#pragma once

#include <cstdlib>

#ifndef HURRAY_IPCFAKE_DIR
#error "HURRAY_IPCFAKE_DIR (the folder of the stand-in plugin) is not defined"
#endif

namespace hurray_test {
inline const bool g_ipcfake_env = [] {
  setenv("HURRAY_BACKEND_PATH", HURRAY_IPCFAKE_DIR, 1);
  setenv("HURRAY_BACKENDS", "cpu,ipcfake", 1);
  return true;
}();
}  // namespace hurray_test
