// What the files of the IPC layer share (internal to libhurray): a channel's
// options as read from hurray_ipc_options, making a channel of a connected
// socket, the peer-credential policy and the memfd rules.
#pragma once

#include <hurray_ipc.h>

#include <sys/types.h>

#include <cstdint>
#include <vector>

#include "wire.h"

namespace hurray::ipc {

struct Options {
  uint32_t flags = 0;  // HURRAY_IPC_SEND_ONLY, HURRAY_IPC_ANY_PEER
  int32_t hello_timeout_ms = 10000;
  int32_t io_timeout_ms = 10000;
  uint32_t max_queued = 128;
  uint32_t max_queued_fds = 128;
  std::vector<uint32_t> allowed_uids, allowed_gids;
  std::vector<DeviceCaps> devices;  // what this side announces (none when send-only)
};

// Read (and check) the caller's options; loads the backends of the devices
// to announce.
hurray_status read_options(const hurray_ipc_options *in, Options *o, hurray_error *err);

// Make a channel of a connected socket: send HELLO (unless `hello_sent`),
// wait up to hello_ms for the peer's. Takes the descriptor in every case.
// The peer's credentials must already have passed check_peer.
hurray_status make_channel(int fd, const Options &o, const struct ucred &cred, bool hello_sent,
                           int32_t hello_ms, hurray_ipc_channel **out, hurray_error *err);

// Encode this side's HELLO into buf (kMaxMessage bytes); returns its length.
size_t encode_hello(const Options &o, uint8_t *buf);

// BP-IPC-PEER: read the peer's credentials of a connected socket into *cred
// and check them against the options' policy (same euid, or an allowed uid
// or gid). On refusal HURRAY_E_PROTOCOL naming the rule.
hurray_status check_peer(int fd, const Options &o, struct ucred *cred, hurray_error *err);

// BP-IPC-SEAL: a memfd that arrived is sealed against shrinking (else the
// producer could make this process die of SIGBUS). HURRAY_E_PROTOCOL if not.
hurray_status check_sealed(int fd, hurray_error *err);

// BP-IPC-RO: a descriptor of the same file that cannot be mapped writable
// (a read-only reopen through /proc/self/fd). -1 and *err on failure.
int reopen_read_only(int fd, hurray_error *err);

// HURRAY_IPC_COPY_PER_SEND: a new shareable CPU buffer holding a copy of
// src's h.byte_size bytes (*out: the caller's reference).
hurray_status fresh_copy(hurray_buffer *src, const hurray_buffer_handle &h, hurray_buffer **out,
                         hurray_error *err);

// Map `size` bytes of fd at `offset`, at an address aligned to `alignment`
// (PROT_READ, and PROT_WRITE when `writable`). nullptr and *err on failure:
// HURRAY_E_OUT_OF_MEMORY for ENOMEM, else HURRAY_E_PROTOCOL (the peer's
// descriptor cannot be mapped so).
void *map_aligned(int fd, uint64_t offset, uint64_t size, uint32_t alignment, bool writable,
                  size_t *len_out, hurray_error *err);

int64_t now_ms();
// Milliseconds left of a timeout that started at `start` (negative: forever).
int left_ms(int32_t timeout_ms, int64_t start);
hurray_status io_fail(hurray_error *err, const char *what, int e);

}  // namespace hurray::ipc
