#include <hurray.hpp>

#include <cstdio>
#include <cstring>

int main() {
  // A handle from the wire: 1 MiB of CUDA memory declared 32-byte aligned.
  hurray_buffer_handle h{};
  h.byte_size = 1 << 20;
  h.alignment = 32;
  h.device_tag = HURRAY_DEVICE_CUDA;
  try {
    hurray::policy().validate(h);  // the default, in-process policy
  } catch (const hurray::error &e) {
    std::printf("refused: %s (rule %s)\n", e.what(), e.rule_id());
  }

  // A buffer handed to one consumer: released exactly once, at the latest
  // when the handoff leaves the scope (an exception too).
  auto buf = hurray::buffer::alloc_host(4096);
  std::memcpy(buf.data(), "hello", 5);
  hurray::handoff consumer = buf.export_handoff();
  std::printf("the consumer sees \"%.5s\"\n", reinterpret_cast<const char *>(consumer.bytes().data()));
  return consumer.release() == HURRAY_OK ? 0 : 1;
}
