// The process pair of the network benchmarks (net_bench.cpp,
// ucx_answer_bench.cpp): a server forked from the client, each pinned to a
// CPU of its own, and the port the server listens on passed back through a
// pipe. Also their size arguments ("64K", "1M", "1G").
#pragma once

#include <sched.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace bench {

inline uint64_t parse_size(const std::string &s) {
  char *end = nullptr;
  uint64_t v = std::strtoull(s.c_str(), &end, 10);
  if (*end == 'K' || *end == 'k') v <<= 10;
  if (*end == 'M' || *end == 'm') v <<= 20;
  if (*end == 'G' || *end == 'g') v <<= 30;
  return v;
}

// Pin the calling process to one CPU; -1: leave it where it is.
inline void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("sched_setaffinity");
}

// Fork the server: the child pins itself to server_cpu and _exits with
// serve(fd), which writes the port it listens on (uint16_t) to fd first; the
// parent pins itself to client_cpu. Returns the child (-1: no fork) and sets
// *port, 0 when the server did not start (the child is then reaped).
template <class Serve>
pid_t fork_server(int server_cpu, int client_cpu, Serve serve, uint16_t *port) {
  *port = 0;
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t child = fork();
  if (child < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (child == 0) {
    close(fds[0]);
    pin(server_cpu);
    _exit(serve(fds[1]));
  }
  pin(client_cpu);
  close(fds[1]);
  if (read(fds[0], port, sizeof *port) != static_cast<ssize_t>(sizeof *port)) {
    *port = 0;
    waitpid(child, nullptr, 0);
  }
  close(fds[0]);
  return child;
}

}  // namespace bench
