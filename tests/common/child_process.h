// A child process with its stdout on a pipe this side reads (out), for the
// tests that exec peers and hostile programs (tests/ipc, tests/views). The
// child is SIGKILLed and reaped when the object goes, if still running;
// wait_exit reaps it before. How it is started is the deriving type's.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

namespace hurray_test {

struct ChildProcess {
  pid_t pid = -1;
  int out = -1;  // the child's stdout

  ChildProcess() = default;
  ChildProcess(const ChildProcess &) = delete;
  ChildProcess &operator=(const ChildProcess &) = delete;
  ~ChildProcess() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (out >= 0) close(out);
  }
  // The child's exit status (128 + N when signal N ended it).
  int wait_exit() {
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

}  // namespace hurray_test
