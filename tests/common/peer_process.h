// A peer process for the IPC tests: a child exec'd with one end of a socket
// pair (an argument "{fd}" is replaced by its descriptor's number) and its
// stdout a pipe this side reads; this side's end becomes an IPC channel.
// The child is SIGKILLed and reaped when the object goes, if still running.
// Shared by tests/ipc (the test peer, the release-after peer) and
// tests/views.
#pragma once

#include <hurray_ipc.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "child_process.h"

namespace hurray_test {

struct PeerProcess : ChildProcess {
  hurray_ipc_channel *ch = nullptr;

  PeerProcess(const char *exe, std::vector<std::string> args, const hurray_ipc_options *opts) {
    int sv[2], pipefd[2];
    REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    REQUIRE(pipe2(pipefd, O_CLOEXEC) == 0);
    const int fd = dup(sv[1]);  // without CLOEXEC: crosses exec
    REQUIRE(fd >= 0);
    args.insert(args.begin(), exe);
    for (auto &a : args)
      if (a == "{fd}") a = std::to_string(fd);
    std::vector<char *> argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      dup2(pipefd[1], 1);
      execv(exe, argv.data());
      _exit(127);
    }
    close(fd);
    close(sv[1]);
    close(pipefd[1]);
    out = pipefd[0];
    hurray_error err{};
    const hurray_status st = hurray_ipc_channel_from_fd(sv[0], opts, &ch, &err);
    INFO(err.message);
    REQUIRE(st == HURRAY_OK);
  }
  ~PeerProcess() {
    if (ch) hurray_ipc_close(ch);
  }
  // Wait for the child's one-byte signal on its stdout.
  char signal_byte() {
    char c = 0;
    REQUIRE(read(out, &c, 1) == 1);
    return c;
  }
};

}  // namespace hurray_test
