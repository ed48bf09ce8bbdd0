// The C++ side of the four-language test (tests/rust/four_languages.py),
// written against include/hurray.hpp:
//   cxx_peer consume PATH  receive the Rust producer's buffer, check it, release
//   cxx_peer produce PATH  send a buffer to the Rust consumer, see it released
// HURRAY_FOUR_SKIP_RELEASE=cxx: the consumer exits without releasing.
#include <hurray.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

constexpr std::size_t kSize = 1 << 16;

unsigned char pattern(std::size_t i) { return static_cast<unsigned char>(i * 7 + 3); }

int consume(const char *path) {
  auto ch = hurray::ipc::channel::connect(path);
  std::uint64_t id = 0;
  hurray::handoff h = ch.receive(20000, &id);
  auto bytes = h.bytes();
  if (bytes.size() != kSize) throw std::runtime_error("wrong size");
  for (std::size_t i = 0; i < kSize; ++i)
    if (bytes[i] != std::byte{pattern(i)}) throw std::runtime_error("the bytes differ");
  const char *skip = std::getenv("HURRAY_FOUR_SKIP_RELEASE");
  if (skip != nullptr && std::string(skip) == "cxx") {
    (void)h.into_raw();  // never released: the producer must notice
    std::_Exit(0);
  }
  if (hurray_status s = h.release(); s != HURRAY_OK)
    throw std::runtime_error(std::string("release: ") + hurray_status_name(s));
  std::printf("c++ consumer: buffer %llu checked and released\n", static_cast<unsigned long long>(id));
  return 0;
}

int produce(const char *path) {
  auto listener = hurray::ipc::listener::listen(path);
  auto ch = listener.accept(20000);
  int released = 0, other = 0;
  ch.on_release([&](std::uint64_t, hurray_ipc_release_reason r) {
    (r == HURRAY_IPC_RELEASED ? released : other) += 1;
  });
  auto b = hurray::buffer::alloc_host(kSize, 4096, true);
  for (std::size_t i = 0; i < kSize; ++i) b.bytes()[i] = std::byte{pattern(i)};
  (void)ch.send(b);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (released + other == 0 && std::chrono::steady_clock::now() < deadline) {
    (void)ch.progress(std::nothrow, 50);
  }
  if (released != 1 || other != 0) {
    std::fprintf(stderr, "c++ producer: the consumer did not release (released %d, other %d)\n",
                 released, other);
    return 1;
  }
  std::printf("c++ producer: the rust consumer released the buffer once\n");
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cxx_peer consume|produce PATH\n");
    return 2;
  }
  try {
    if (std::string(argv[1]) == "consume") return consume(argv[2]);
    if (std::string(argv[1]) == "produce") return produce(argv[2]);
  } catch (const hurray::error &e) {
    std::fprintf(stderr, "cxx_peer: %s (rule %s)\n", e.what(), e.rule_id());
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "cxx_peer: %s\n", e.what());
    return 1;
  }
  return 2;
}
