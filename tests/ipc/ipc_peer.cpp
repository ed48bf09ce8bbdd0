// The other process of the IPC tests (tests/ipc/ipc_test.cpp execs it).
//
//   hurray_ipc_test_peer consume FD N     receive N buffers (buffer i all byte i % 255 + 1), write
//                                         0xAB into the last byte, release;
//                                         fails if a descriptor leaked
//   hurray_ipc_test_peer hold FD N        receive N buffers, write 'R' to
//                                         stdout, then wait to be killed
//   hurray_ipc_test_peer misbehave FD     receive 1; send RELEASE for an ID
//                                         never sent, and for the received one
//                                         twice; then receive and release 1
//   hurray_ipc_test_peer garbage FD       receive 1 and hold it, send a malformed
//                                         message, wait for EOF
//   hurray_ipc_test_peer produce FD N     send N 64 KiB buffers of byte i+1,
//                                         write 'S' to stdout, wait to be killed
//   hurray_ipc_test_peer connect PATH N   connect to PATH, then as consume
//   hurray_ipc_test_peer window FD N K    receive N buffers, releasing them in batches
//                                         of K (0: of 1 to 100 at random), the
//                                         later ones first; its window: 128 handoffs,
//                                         100 descriptors (max_queued, _fds)
//   hurray_ipc_test_peer consume-device FD announce CUDA (the stand-in plugin), receive
//                                         1 EVENT buffer, acquire (waits), check, release
//   hurray_ipc_test_peer consume-vulkan FD announce Vulkan, receive 1 UNIFIED buffer,
//                                         check its bytes through the mapping, release
//   hurray_ipc_test_peer consume-cuda FD  announce CUDA (the real plugin), receive 1 STANDARD
//                                         EVENT buffer, acquire (the host waits on the
//                                         imported event), copy it to the host with the
//                                         driver's cuMemcpyDtoH, check every byte, release
//   hurray_ipc_test_peer hold-cuda FD     as consume-cuda up to the check, then write 'R'
//                                         to stdout and wait to be killed
//
// Exit status 0 when everything held; otherwise a message on stderr.
#include <hurray_ipc.h>

#include <hurray_backend.h>

#include <dirent.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../../src/ipc/wire.h"
#include "../common/ipc_channel_on.h"

namespace {

using hurray_test::channel_on;

int die(const char *what, const hurray_error *err = nullptr) {
  std::fprintf(stderr, "ipc peer: %s%s%s\n", what, err ? ": " : "", err ? err->message : "");
  return 1;
}

int count_fds() {
  int n = 0;
  if (DIR *d = opendir("/proc/self/fd")) {
    while (dirent *e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// Receive one buffer and check that every byte is `expect` (0: any).
bool receive_checked(hurray_ipc_channel *ch, hurray_handoff *h, uint64_t *id, unsigned expect,
                     hurray_error *err) {
  if (hurray_ipc_receive(ch, 30000, h, id, err) != HURRAY_OK) return false;
  hurray_buffer_handle hd;
  hurray_handle_decode(h->handle, sizeof h->handle, &hd, nullptr);
  const auto *p = static_cast<const unsigned char *>(h->data);
  for (uint64_t i = 0; i < hd.byte_size; i += 4096)
    if (expect && p[i] != expect) {
      std::snprintf(err->message, sizeof err->message, "byte %llu is 0x%02X, expected 0x%02X",
                    static_cast<unsigned long long>(i), p[i], expect);
      return false;
    }
  return true;
}

void send_raw(int fd, const hurray::ipc::Message &m) {
  uint8_t buf[hurray::ipc::kMaxMessage];
  const size_t n = hurray::ipc::encode(m, buf, sizeof buf);
  if (write(fd, buf, n) != static_cast<ssize_t>(n)) std::perror("ipc peer: write");
}

// The bytes the "[.cuda]" test (ipc_test.cpp) writes last, before it records
// the event: the same function there.
unsigned char cuda_pattern(size_t i) {
  return static_cast<unsigned char>(i * 31 + (i >> 8) + 0x5C);
}

// Receive one CUDA EVENT handoff, wait for its event on the host, read the
// device memory back with the driver itself (libhurray has no public copy
// out of a received device handoff: the plugin's own libcuda handle, slot [4]
// of hurray_device_native, and its primary context, slot [1]) and check
// every byte. On success *h is acquired and not yet released.
bool receive_cuda(hurray_ipc_channel *ch, hurray_handoff *h, hurray_error *err) {
  auto say = [&](const char *what) {
    std::snprintf(err->message, sizeof err->message, "%s", what);
    return false;
  };
  if (hurray_ipc_receive(ch, 30000, h, nullptr, err) != HURRAY_OK) return false;
  hurray_buffer_handle hd;
  if (hurray_handle_decode(h->handle, sizeof h->handle, &hd, err) != HURRAY_OK) return false;
  if (hd.device_tag != HURRAY_DEVICE_CUDA || hd.memory_class != HURRAY_MEMORY_STANDARD ||
      hd.sync_mode != HURRAY_SYNC_EVENT || !h->sync_object || !h->release_event ||
      (h->flags & HURRAY_HANDOFF_OPAQUE_DATA) || !h->data || hd.byte_size != 65536)
    return say("not a 64 KiB CUDA STANDARD EVENT handoff with a device address");
  if (hurray_handoff_acquire(nullptr, h, nullptr, err) != HURRAY_OK)  // cuEventSynchronize
    return false;
  if (h->release_event) return say("acquire did not release the event (BP-EVREL-ONCE)");
  hurray_backend_native nat{};
  if (hurray_device_native(nullptr, HURRAY_DEVICE_CUDA, h->device_ordinal, &nat, err) != HURRAY_OK)
    return false;
  using push_fn = int (*)(void *);
  using pop_fn = int (*)(void **);
  using dtoh_fn = int (*)(void *, unsigned long long, size_t);
  using name_fn = int (*)(int, const char **);
  void *lib = nat.handles[4];
  auto push = lib ? reinterpret_cast<push_fn>(dlsym(lib, "cuCtxPushCurrent_v2")) : nullptr;
  auto pop = lib ? reinterpret_cast<pop_fn>(dlsym(lib, "cuCtxPopCurrent_v2")) : nullptr;
  auto dtoh = lib ? reinterpret_cast<dtoh_fn>(dlsym(lib, "cuMemcpyDtoH_v2")) : nullptr;
  auto name = lib ? reinterpret_cast<name_fn>(dlsym(lib, "cuGetErrorName")) : nullptr;
  if (!push || !pop || !dtoh)
    return say("no libcuda handle (hurray_device_native slot [4]), or no cuCtxPushCurrent_v2, "
               "cuCtxPopCurrent_v2 or cuMemcpyDtoH_v2 in it");
  std::vector<unsigned char> got(hd.byte_size);
  int r = push(nat.handles[1]);
  if (r == 0) {
    r = dtoh(got.data(), static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(h->data)),
             got.size());
    void *popped = nullptr;
    pop(&popped);
  }
  if (r != 0) {
    const char *n = nullptr;
    if (!name || name(r, &n) != 0 || !n) n = "CUresult";
    std::snprintf(err->message, sizeof err->message,
                  "cuCtxPushCurrent_v2/cuMemcpyDtoH_v2 of the imported memory: %s (%d)", n, r);
    return false;
  }
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != cuda_pattern(i)) {
      std::snprintf(err->message, sizeof err->message,
                    "byte %zu of the imported CUDA memory is 0x%02X, expected 0x%02X (the bytes "
                    "written before the event)",
                    i, got[i], cuda_pattern(i));
      return false;
    }
  return true;
}

int consume(hurray_ipc_channel *ch, int n) {
  hurray_error err{};
  for (int i = 0; i < n; ++i) {
    hurray_handoff h;
    uint64_t id;
    if (!receive_checked(ch, &h, &id, static_cast<unsigned>(i % 255 + 1), &err))
      return die("receive", &err);
    hurray_buffer_handle hd;
    hurray_handle_decode(h.handle, sizeof h.handle, &hd, nullptr);
    if (hd.byte_size) static_cast<unsigned char *>(h.data)[hd.byte_size - 1] = 0xAB;
    if (hurray_ipc_release(&h, &err) != HURRAY_OK) return die("release", &err);
  }
  return 0;
}

}  // namespace

int main(int argc, char **argv) {
  if (argc < 3) return die("usage: hurray_ipc_test_peer MODE FD|PATH [N]");
  const std::string mode = argv[1];
  const int n = argc > 3 ? std::atoi(argv[3]) : 1;
  hurray_ipc_channel *ch = nullptr;
  hurray_error err{};
  // Descriptors before the channel, and after it is closed: the same, less
  // the inherited socket the channel took over (no leak, however many
  // handoffs went through).
  const int before = count_fds();
  auto no_leak = [&](int rc, int inherited) {
    if (rc == 0 && count_fds() != before - inherited) {
      std::fprintf(stderr, "ipc peer: %d descriptors before, %d after %d handoffs\n", before,
                   count_fds(), n);
      return 1;
    }
    return rc;
  };
  if (mode == "connect") {
    if (hurray_ipc_connect(argv[2], nullptr, &ch, &err) != HURRAY_OK) return die("connect", &err);
    const int rc = consume(ch, n);
    hurray_ipc_close(ch);
    return no_leak(rc, 0);
  }
  if (mode == "consume-vulkan") {
    // Vulkan UNIFIED memory (host-mapped): check the 256 bytes i * 3 + 7
    if (channel_on(std::atoi(argv[2]), HURRAY_DEVICE_VULKAN, &ch, &err) != HURRAY_OK)
      return die("channel", &err);
    hurray_handoff h;
    if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_OK) return die("receive", &err);
    if (h.handle[12] != HURRAY_DEVICE_VULKAN || (h.flags & HURRAY_HANDOFF_OPAQUE_DATA))
      return die("not a host-mapped Vulkan buffer");
    const auto *p = static_cast<const unsigned char *>(h.data);
    for (int i = 0; i < 256; ++i)
      if (p[i] != static_cast<unsigned char>(i * 3 + 7)) return die("wrong bytes in Vulkan memory");
    if (hurray_ipc_release(&h, &err) != HURRAY_OK) return die("release", &err);
    hurray_ipc_close(ch);
    return 0;
  }
  if (mode == "consume-device") {
    // the stand-in device plugin (fake_gpu_plugin.c) on tag CUDA: one EVENT
    // buffer; acquire waits for the producer's event, then every byte is 0x22
    if (channel_on(std::atoi(argv[2]), HURRAY_DEVICE_CUDA, &ch, &err) != HURRAY_OK)
      return die("channel", &err);
    hurray_handoff h;
    if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_OK) return die("receive", &err);
    if (h.handle[12] != HURRAY_DEVICE_CUDA || h.handle[13] != HURRAY_SYNC_EVENT || !h.sync_object ||
        !h.release_event)
      return die("not a CUDA-tagged EVENT handoff");
    if (hurray_handoff_acquire(nullptr, &h, nullptr, &err) != HURRAY_OK)  // BP-SYNC-WAIT
      return die("acquire", &err);
    if (h.release_event) return die("acquire did not release the event (BP-EVREL-ONCE)");
    const auto *p = static_cast<const unsigned char *>(h.data);
    for (int i = 0; i < 65536; ++i)
      if (p[i] != 0x22) return die("the bytes before the event was reached");
    if (hurray_ipc_release(&h, &err) != HURRAY_OK) return die("release", &err);
    hurray_ipc_close(ch);
    return 0;
  }
  if (mode == "consume-cuda" || mode == "hold-cuda") {
    // the real CUDA plugin: one STANDARD buffer with an interprocess event
    if (channel_on(std::atoi(argv[2]), HURRAY_DEVICE_CUDA, &ch, &err) != HURRAY_OK)
      return die("channel", &err);
    hurray_handoff h;
    if (!receive_cuda(ch, &h, &err)) return die("consume-cuda", &err);
    if (mode == "hold-cuda") {
      if (write(1, "R", 1) != 1) return die("write");
      for (;;) pause();
    }
    if (hurray_ipc_release(&h, &err) != HURRAY_OK) return die("release", &err);
    hurray_ipc_close(ch);
    return 0;
  }
  // the socket itself, for the modes that write behind the channel's back
  // (hurray_ipc_fd is a readiness descriptor, not the socket)
  const int raw = (mode == "misbehave" || mode == "garbage") ? dup(std::atoi(argv[2])) : -1;
  hurray_ipc_options window = HURRAY_IPC_OPTIONS_INIT;
  window.max_queued_fds = 100;  // below max_queued: the descriptors bind first
  if (hurray_ipc_channel_from_fd(std::atoi(argv[2]), mode == "window" ? &window : nullptr, &ch,
                                 &err) != HURRAY_OK)
    return die("channel", &err);

  if (mode == "consume") {
    const int rc = consume(ch, n);
    hurray_ipc_close(ch);
    return no_leak(rc, 1);
  }
  if (mode == "hold") {
    hurray_handoff held[64];
    for (int i = 0; i < n && i < 64; ++i) {
      uint64_t id;
      if (!receive_checked(ch, &held[i], &id, 0, &err)) return die("receive", &err);
    }
    if (write(1, "R", 1) != 1) return die("write");
    for (;;) pause();
  }
  if (mode == "misbehave") {
    hurray_handoff h;
    uint64_t id;
    if (!receive_checked(ch, &h, &id, 0, &err)) return die("receive", &err);
    hurray::ipc::Message m{};
    m.type = hurray::ipc::Type::Release;
    m.id = 999999;  // never sent
    send_raw(raw, m);
    m.id = id;  // released here, behind libhurray's back ...
    send_raw(raw, m);
    if (hurray_ipc_release(&h, &err) != HURRAY_OK)  // ... and again, properly
      return die("release", &err);
    if (hurray_handoff_release(&h, &err) != HURRAY_E_ALREADY_RELEASED)
      return die("a second local release was not refused");
    if (!receive_checked(ch, &h, &id, 0x5A, &err)) return die("receive after", &err);
    if (hurray_ipc_release(&h, &err) != HURRAY_OK) return die("release after", &err);
    hurray_ipc_close(ch);
    return 0;
  }
  if (mode == "garbage") {
    hurray_handoff held, h;
    uint64_t id;
    if (!receive_checked(ch, &held, &id, 0, &err)) return die("receive", &err);
    const char junk[] = "this is not a hurray message";
    if (write(raw, junk, sizeof junk) != sizeof junk) return die("write");
    if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_E_IO)
      return die("expected the producer to hang up", &err);
    if (hurray_ipc_release(&held, &err) != HURRAY_E_IO)
      return die("the release reached a producer that hung up", &err);
    hurray_ipc_close(ch);
    return 0;
  }
  if (mode == "window") {  // within the window (100 descriptors) whatever the pattern
    const int k = argc > 4 ? std::atoi(argv[4]) : 1;
    std::vector<hurray_handoff> held;
    held.reserve(128);
    uint32_t seed = 12345;
    int batch = k;
    for (int i = 0; i < n; ++i) {
      if (batch == 0) {
        seed = seed * 1103515245u + 12345u;
        batch = static_cast<int>((seed >> 16) % 100) + 1;
      }
      hurray_handoff h;
      if (hurray_ipc_receive(ch, 30000, &h, nullptr, &err) != HURRAY_OK)
        return die("receive", &err);
      held.push_back(h);
      if (static_cast<int>(held.size()) == batch || i == n - 1) {
        for (size_t j = held.size(); j-- > 0;)
          if (hurray_ipc_release(&held[j], &err) != HURRAY_OK) return die("release", &err);
        held.clear();
        batch = k;
      }
    }
    hurray_ipc_close(ch);
    return 0;
  }
  if (mode == "produce") {
    for (int i = 0; i < n; ++i) {
      hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
      d.flags = HURRAY_ALLOC_SHAREABLE;
      d.byte_size = 64 << 10;
      d.alignment = HURRAY_IPC_ALIGNMENT;
      hurray_buffer *b;
      if (hurray_buffer_alloc(nullptr, &d, &b, &err) != HURRAY_OK) return die("alloc", &err);
      std::memset(hurray_buffer_data(b), i + 1, d.byte_size);
      if (hurray_ipc_send(ch, b, nullptr, nullptr, &err) != HURRAY_OK) return die("send", &err);
      hurray_buffer_unref(b);
    }
    if (write(1, "S", 1) != 1) return die("write");
    for (;;) pause();
  }
  return die("unknown mode");
}
