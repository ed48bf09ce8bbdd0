// The other process of the IPC view tests (tests/views/views_ipc_test.cpp
// execs it):
//
//   hurray_views_peer FD TAG N   open a channel on descriptor FD announcing
//                                device TAG (besides the CPU), receive N
//                                handoffs and, for each, print one line
//                                "size S align A flags F offset O hash H"
//                                (offset: reserved[0]; hash: FNV-1a of the
//                                bytes for an address, 0 for an opaque
//                                handle), then release it.
//
// Exit status 0 when everything held; otherwise a message on stderr.
#include <hurray_ipc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: hurray_views_peer FD TAG N\n");
    return 2;
  }
  hurray_error err{};
  const uint8_t tags[1] = {static_cast<uint8_t>(std::strtoul(argv[2], nullptr, 0))};
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  if (tags[0] != HURRAY_DEVICE_CPU) {
    o.device_count = 1;
    o.device_tags = tags;
  }
  hurray_ipc_channel *ch = nullptr;
  if (hurray_ipc_channel_from_fd(std::atoi(argv[1]), &o, &ch, &err) != HURRAY_OK) {
    std::fprintf(stderr, "views peer: channel: %s\n", err.message);
    return 1;
  }
  const int n = std::atoi(argv[3]);
  for (int k = 0; k < n; ++k) {
    hurray_handoff h;
    if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_OK ||
        hurray_handoff_check(&h, nullptr, &err) != HURRAY_OK) {
      std::fprintf(stderr, "views peer: receive %d: %s\n", k, err.message);
      return 1;
    }
    hurray_buffer_handle hd;
    hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr);
    uint64_t hash = 0;
    if (!(h.flags & HURRAY_HANDOFF_OPAQUE_DATA)) {
      hash = 1469598103934665603ull;
      const auto *p = static_cast<const unsigned char *>(h.data);
      for (uint64_t i = 0; i < hd.byte_size; ++i) hash = (hash ^ p[i]) * 1099511628211ull;
    }
    std::printf("size %llu align %u flags %u offset %llu hash %016llx\n",
                static_cast<unsigned long long>(hd.byte_size), hd.alignment, h.flags,
                static_cast<unsigned long long>(h.reserved[0]),
                static_cast<unsigned long long>(hash));
    std::fflush(stdout);
    if (hurray_ipc_release(&h, &err) != HURRAY_OK) {
      std::fprintf(stderr, "views peer: release %d: %s\n", k, err.message);
      return 1;
    }
  }
  hurray_ipc_close(ch);
  return 0;
}
