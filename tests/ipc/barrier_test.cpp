// libhurray's exception barrier (guarded() in src/core/internal.h): an
// allocation that fails deep inside an IPC entry point (the options' list
// of allowed uids, copied into a std::vector) comes back from the entry
// point as HURRAY_E_OUT_OF_MEMORY with its message, and no exception
// crosses the C ABI (which would end the process with std::terminate).
// The failure is real, not mocked: a child process lowers its address-space
// limit (RLIMIT_AS) below what the copy needs.
#include <hurray_ipc.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <catch2/catch.hpp>

namespace {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// Under valgrind (its preloaded libraries are in LD_PRELOAD) the tool's own
// memory lives in this address space and its allocator does not throw
// std::bad_alloc, so an RLIMIT_AS test says nothing about the library.
bool under_valgrind() {
  const char *preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "vgpreload") != nullptr;
}

// This process's address space now, in bytes (0 when unknown).
unsigned long long address_space() {
  FILE *f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long pages = 0;
  if (std::fscanf(f, "%llu", &pages) != 1) pages = 0;
  std::fclose(f);
  return pages * static_cast<unsigned long long>(sysconf(_SC_PAGESIZE));
}

struct Outcome {
  hurray_status status;
  char message[HURRAY_ERROR_MESSAGE_SIZE];
};

}  // namespace

TEST_CASE("an allocation failing inside an entry point comes back as OUT_OF_MEMORY, not an exception",
          "[barrier]") {
  if (kSanitized) {
    WARN("not run: the sanitizers' shadow memory does not fit under RLIMIT_AS");
    return;
  }
  if (under_valgrind()) {
    WARN("not run: under valgrind, RLIMIT_AS limits the tool, not the library");
    return;
  }
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {  // the child: one thread, a limit 256 MiB above what it has
    close(fds[0]);
    const rlimit lim{address_space() + (256ull << 20), RLIM_INFINITY};
    if (address_space() == 0 || setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
    const uint32_t uid = getuid();
    hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
    o.allowed_uids = &uid;
    o.allowed_uid_count = 1u << 28;  // a 1 GiB vector: beyond the limit
    hurray_ipc_channel *ch = nullptr;
    hurray_error err{};
    Outcome out{};
    try {
      out.status = hurray_ipc_connect("/nonexistent/hurray-barrier.sock", &o, &ch, &err);
    } catch (...) {
      _exit(5);  // it crossed the C ABI
    }
    std::memcpy(out.message, err.message, sizeof out.message);
    const bool written = write(fds[1], &out, sizeof out) == static_cast<ssize_t>(sizeof out);
    _exit(written ? 0 : 4);
  }
  close(fds[1]);
  Outcome out{};
  const ssize_t n = read(fds[0], &out, sizeof out);
  close(fds[0]);
  int ws = 0;
  REQUIRE(waitpid(pid, &ws, 0) == pid);
  INFO("child wait status " << ws << " (exit 5: an exception crossed the C ABI)");
  REQUIRE(WIFEXITED(ws));
  REQUIRE(WEXITSTATUS(ws) == 0);
  REQUIRE(n == static_cast<ssize_t>(sizeof out));
  CHECK(out.status == HURRAY_E_OUT_OF_MEMORY);
  CHECK(std::string(out.message) == "hurray_ipc: out of memory");
}
