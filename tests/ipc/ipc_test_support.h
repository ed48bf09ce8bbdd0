// What ipc_test.cpp, ipc_device_test.cpp and release_after_ipc_test.cpp
// share: the peer process (hurray_ipc_test_peer), shareable CPU buffers, the
// channel's counters and a progress loop.
#pragma once

#include <hurray_backend.h>
#include <hurray_ipc.h>

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <algorithm>
#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include "../../src/ipc/wire.h"
#include "../common/ipc_local_pair.h"
#include "../common/peer_process.h"
#include "../common/open_fds.h"
#include "../common/shareable_alloc.h"

#include <catch2/catch.hpp>

#ifndef HURRAY_IPC_PEER
#error "HURRAY_IPC_PEER (path of hurray_ipc_test_peer) is not defined"
#endif

namespace ipctest {

using hurray_test::open_fds;

namespace wire = hurray::ipc;

// Descriptors of this process that are libhurray memfds (one per live
// shareable CPU allocation).
inline int count_memfds() {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  REQUIRE(d);
  while (dirent *e = readdir(d)) {
    char link[300], target[256];
    std::snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
    const ssize_t k = readlink(link, target, sizeof target - 1);
    if (k > 0) {
      target[k] = 0;
      n += std::strstr(target, "memfd:hurray-buffer") != nullptr;
    }
  }
  closedir(d);
  return n;
}

// A child running hurray_ipc_test_peer `mode` `n` with one end of a socket
// pair; its stdout is a pipe this side reads.
struct Peer : hurray_test::PeerProcess {
  Peer(const char *mode, int n, hurray_ipc_options *opts = nullptr)
      : PeerProcess(HURRAY_IPC_PEER, {mode, "{fd}", std::to_string(n)}, opts) {}
  void sigkill() {
    REQUIRE(kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFSIGNALED(status));
    REQUIRE(WTERMSIG(status) == SIGKILL);
    pid = -1;
  }
};

inline hurray_buffer *shareable(uint64_t size, int fill, uint32_t alignment = HURRAY_IPC_ALIGNMENT) {
  hurray_buffer *b = hurray_test::alloc_shareable(size, alignment);
  if (size) std::memset(hurray_buffer_data(b), fill, size);
  return b;
}

inline hurray_ipc_stats stats_of(hurray_ipc_channel *ch) {
  hurray_ipc_stats s;
  s.size = sizeof s;
  REQUIRE(hurray_ipc_get_stats(ch, &s, nullptr) == HURRAY_OK);
  return s;
}

struct Backs {
  std::vector<uint64_t> ids;
  std::vector<hurray_ipc_release_reason> reasons;
  static void on(void *user, uint64_t id, hurray_ipc_release_reason reason) {
    auto *b = static_cast<Backs *>(user);
    b->ids.push_back(id);
    b->reasons.push_back(reason);
  }
};

// Call progress until `done` or the channel closes.
template <class F>
inline hurray_status progress_until(hurray_ipc_channel *ch, F done) {
  hurray_status st = HURRAY_OK;
  while (!done() && st == HURRAY_OK) st = hurray_ipc_progress(ch, 10000, nullptr, nullptr);
  return st;
}

using hurray_test::local_pair;  // ipc_local_pair.h

}  // namespace ipctest
