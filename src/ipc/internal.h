// What the files of the IPC layer share (internal to libhurray): a channel's
// options as read from hurray_ipc_options, the channel object itself and
// its lifecycle (channel.cpp; its references and shutting it lifetime.cpp;
// the time and error helpers helpers.cpp), reading the socket (read.cpp), sending a
// message (send.cpp), making a channel of a connected socket, the
// peer-credential policy and the memfd rules.
#pragma once

#include <hurray_ipc.h>

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "../core/internal.h"
#include "../runtime/backends.h"
#include "../runtime/dispatch.h"
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
// wait up to hello_ms for the peer's, then (a peer of protocol version 2 or
// later) send DEVICES and wait, within the same hello_ms, for the peer's.
// Takes the descriptor in every case. The peer's credentials must already
// have passed check_peer.
hurray_status make_channel(int fd, const Options &o, const struct ucred &cred, bool hello_sent,
                           int32_t hello_ms, hurray_ipc_channel **out, hurray_error *err);
// The two halves of make_channel, for the listener's asynchronous handshakes:
// a channel object for fd with HELLO sent (unless `hello_sent`; the
// descriptor is taken in every case) ...
hurray_status new_channel(int fd, const Options &o, const struct ucred &cred, bool hello_sent,
                          hurray_ipc_channel **out, hurray_error *err);
// ... and the rest of its handshake (HELLO read; DEVICES sent and read with a
// peer of version 2 or later), reading for at most `ms` from `start` (0: only
// what is there). *done once it is complete; HURRAY_OK and !*done: nothing
// more came in time. An error leaves the channel closed (the caller unrefs it).
hurray_status handshake(hurray_ipc_channel *ch, int32_t ms, int64_t start, bool *done,
                        hurray_error *err);

// Encode this side's HELLO into buf (kMaxMessage bytes); returns its length.
size_t encode_hello(const Options &o, uint8_t *buf);

// BP-IPC-PEER: read the peer's credentials of a connected socket into *cred
// and check them against the options' policy (same euid, or an allowed uid
// or gid). On refusal HURRAY_E_PROTOCOL naming the rule.
hurray_status check_peer(int fd, const Options &o, struct ucred *cred, hurray_error *err);

// BP-IPC-RO: a descriptor of the same file that cannot be mapped writable
// (a read-only reopen through /proc/self/fd). -1 and *err on failure.
int reopen_read_only(int fd, hurray_error *err);

// The device identity of a HANDOFF (identity.cpp): m->id_* = the identity of
// the device (tag, ordinal), NONE when it has none (or is the CPU).
void describe_identity(uint8_t tag, int32_t ordinal, Message *m) noexcept;
// m->device_ordinal = this process's device with m's identity; unchanged
// when m carries none or no local device has one; else
// HURRAY_E_DEVICE_UNAVAILABLE, BP-IPC-DEVICE-ID.
hurray_status map_identity(Message *m, hurray_error *err) noexcept;

// The DEVICES message of this side (identity.cpp): every device of each tag
// it announced but the CPU, with its identity (NONE when it has none); a
// tag whose devices would not fit in kMaxDeviceIds entries is left out.
void describe_devices(const Options &o, Message *m) noexcept;
// BP-IPC-DEVICE-ID on the producer's side: a HANDOFF m (its identity set)
// whose device the peer's DEVICES shows it lacks is refused,
// HURRAY_E_DEVICE_UNAVAILABLE. Passes when m carries no identity, the peer
// sent no DEVICES (version 1), or none of its devices of the tag has one.
hurray_status check_peer_identity(const hurray_ipc_channel *ch, const Message &m,
                                  hurray_error *err) noexcept;

// HURRAY_IPC_COPY_PER_SEND: a new shareable CPU buffer holding a copy of
// src's h.byte_size bytes (*out: the caller's reference).
hurray_status fresh_copy(hurray_buffer *src, const hurray_buffer_handle &h, hurray_buffer **out,
                         hurray_error *err);

// ---- the time and error helpers (helpers.cpp) ----

int64_t now_ms();
// Milliseconds left of a timeout that started at `start` (negative: forever).
int left_ms(int32_t timeout_ms, int64_t start);
// HURRAY_E_IO "[what] ENAME: strerror (details)" (docs/errors.md's vendor shape).
hurray_status io_fail(hurray_error *err, const char *what, int e, const char *details = nullptr);

// ---- the channel (channel.cpp) ----

// A consumer's mapping of a memfd the producer sent (the CPU backend's
// import), kept after its release so that the same memory sent again is not
// imported again (the common case: a producer cycling through a pool of
// buffers). At most kCacheEntries mappings and kCacheBytes per channel,
// least recently released first out (freed through the backend), looked up
// oldest first (a pool cycled in order hits at once); emptied
// when the channel closes. The key is the file's identity: a mapped file
// stays alive, so its inode number cannot be reused meanwhile. A file in the
// cache passed the backend's checks when it was imported (sealed against
// shrinking, at least offset + byte_size long), which no later message can
// undo; a hit also needs the same kind, offset, size and access.
struct CachedMap {
  dev_t dev;
  ino_t ino;
  uint32_t kind;
  uint64_t offset;
  uint64_t byte_size;  // the memory handle's
  bool writable;
  hurray::detail::Backend backend;
  hurray_backend_allocation alloc;  // the import, alloc.data its address
};
constexpr size_t kCacheEntries = 64;  // a HANDOFF_MANY's worth (kMaxBatch)
constexpr size_t kCacheBytes = size_t{256} << 20;

struct Batch;  // the datagrams of one read (below)

// A message that arrived with its descriptors, waiting for hurray_ipc_receive.
struct Pending {
  Message m;
  int fds[kMaxFds];
  uint8_t nfds;
  // a HANDOFF with a slot (protocol version 5), resolved when it is taken
  // (slots.cpp): `cached` a mapping taken from the cache (hit), else
  // fds[0] a copy of the slot's descriptor and `cached` its key (keyed)
  bool hit, keyed;
  CachedMap cached;
};

void close_fds(Pending &p);  // closes p's descriptors

// Work to do once the channel's mutex is released.
struct Deferred {
  struct Back {
    hurray_handoff handoff;
    uint64_t id;
    hurray_ipc_release_reason reason;
  };
  std::vector<Back> back;
  hurray_ipc_release_fn fn = nullptr;
  void *user = nullptr;
};

// The policy of the IPC rules (BP-ALIGN-IPC, BP-SYNC-IPC), checked on both sides.
const hurray_policy &ipc_policy();

}  // namespace hurray::ipc

// The channel (hurray_ipc.h): a connected AF_UNIX SOCK_SEQPACKET socket
// carrying the messages of wire.h, one datagram per message, descriptors
// attached with SCM_RIGHTS.
//
// Producer side: every sent buffer is an ordinary in-process export
// (hurray_buffer_export) kept in `out` under its ID; that export is the
// reference that keeps the memory alive (BP-REFCOUNT). A RELEASE message, the
// peer's death or closing the channel releases it (BP-IPC-RELEASE).
//
// Consumer side: a received buffer is mapped and wrapped with
// hurray_handoff_wrap(); the wrap's free function unmaps and sends RELEASE,
// so release-exactly-once (BP-REL-ONCE) is the handoff layer's own.
//
// Locking: one mutex per channel. Work that may call user code (dropping a
// producer reference can run a free function; the release callback) is
// collected in a Deferred list and done after the mutex is released.
struct hurray_ipc_channel {
  std::mutex rd;  // the one thread reading the socket (taken before mu)
  std::mutex mu;        // everything below
  bool got_hello = false;
  // a peer of protocol version 2 or later: DEVICES sent to it, and its own
  bool devices_sent = false, got_devices = false;
  // a peer of protocol version 3 or later: its WINDOW (flow control); this
  // side sends no HANDOFF that would leave more than window_handoffs
  // handoffs, or window_fds descriptors, unreleased
  bool got_window = false;
  uint32_t window_handoffs = 0, window_fds = 0;
  size_t out_fds = 0;  // descriptors of the handoffs in `out`
  std::atomic<int64_t> refs{1};
  int sock = -1;  // closed when the last reference goes, so a waiter's fd stays valid
  // hurray_ipc_fd's readiness set, made at its first call (under mu): an
  // epoll holding sock (POLLIN; POLLOUT too while a try_send waits for
  // room) and `ready`, an eventfd signalled while the inbox holds a
  // handoff or the channel is closed. Closed with the last reference.
  int ep = -1, ready = -1;
  bool ready_signalled = false, room_watched = false;
  std::atomic<bool> open{true};  // false once closed (hurray_ipc_fd says -1)
  bool closed = false;         // under mu
  const char *why_closed = "";  // static string, under mu
  int32_t peer_pid = 0;
  uint32_t peer_uid = 0, peer_gid = 0;
  size_t queued_fds = 0;  // descriptors held by the inbox (BP-IPC-LIMIT)
  hurray::ipc::Message peer{};  // the peer's HELLO
  hurray::ipc::Message peer_devices{};  // the peer's DEVICES (id_count 0 until then)
  hurray::ipc::Options opts;
  uint64_t next_id = 1;
  struct Out {
    hurray_handoff handoff;  // the export that holds the buffer
    uint8_t nfds;            // descriptors its HANDOFF carried
  };
  std::unordered_map<uint64_t, Out> out;  // sent, not yet back
  std::deque<hurray::ipc::Pending> inbox;              // received, not yet taken
  hurray_ipc_release_fn fn = nullptr;
  void *user = nullptr;
  hurray_ipc_stats stats{};
  // the reader's datagrams (only the thread holding rd uses them), made with
  // the channel
  hurray::ipc::Batch *rbatch = nullptr;
  std::deque<hurray::ipc::CachedMap> maps;  // the consumer's mapping cache (oldest first)
  size_t map_bytes = 0;
  // descriptor slots (protocol version 5, slots.cpp). As a consumer: the
  // slots this side announced in its WINDOW (taken from the process's
  // descriptor budget), what the peer's messages put in them as they are
  // read (`slot_mode`: 0 empty, 1 read-only, 2 writable; BP-IPC-SLOT) and,
  // as they are received, the descriptors (`slot_fds`).
  uint32_t slots = 0;
  std::vector<uint8_t> slot_mode;
  struct SlotFd {
    int fd;
    dev_t dev;
    ino_t ino;
  };
  std::vector<SlotFd> slot_fds;
  // As a producer: the peer's slots (its WINDOW) and what this side put in
  // them: a memory object's serial and access, least recently used out.
  struct PeerSlot {
    uint64_t serial;  // 0: empty
    bool read_only;
    uint64_t used;
  };
  std::vector<PeerSlot> peer_slots;
  uint64_t slot_clock = 0;

  void drop_maps() {  // under mu, or when the last reference goes
    for (hurray::ipc::CachedMap &c : maps) hurray::detail::dispatch::free(c.backend, &c.alloc);
    maps.clear();
    map_bytes = 0;
  }
};

namespace hurray::ipc {

// ---- a channel's references and state changes (lifetime.cpp) ----

void channel_ref(hurray_ipc_channel *ch);
void channel_unref(hurray_ipc_channel *ch);  // the last one closes the socket, frees ch
// Make `ready` say whether a call would make progress without reading the
// socket (a queued handoff, a closed channel); under mu. No-op until
// hurray_ipc_fd made the readiness set.
void update_ready(hurray_ipc_channel *ch);
// Watch the socket for room (POLLOUT) in the readiness set, or stop; under mu.
void watch_room(hurray_ipc_channel *ch, bool on);
// Run what was deferred (without the channel's locks).
void finish(Deferred &d);
// The channel is done (under mu); see lifetime.cpp.
void shut(hurray_ipc_channel *ch, hurray_ipc_release_reason reason, const char *why,
          bool drop_inbox, Deferred &d);

// ---- sending (send.cpp) ----

// Send one message (under mu), reading what the peer sent while the socket
// is full, for at most the channel's io_timeout_ms. With `blocked`, a full
// socket is not waited for: *blocked = true, nothing sent, HURRAY_E_IO, the
// channel stays open and its readiness set watches for room.
hurray_status send_msg(hurray_ipc_channel *ch, const uint8_t *bytes, size_t n, const int *fds,
                       size_t nfds, Deferred &d, hurray_error *err, bool *blocked = nullptr);

// Everything of a send that comes before the channel's lock (send.cpp):
// the checks (IPC rules, the peer's devices, shareability), the HANDOFF
// (m, its id still 0), its descriptors and the local export that holds the
// buffer. discard() closes the descriptors this side owns and, unless the
// HANDOFF was sent (the export is then the channel's `out` entry), releases
// the export.
struct Prepared {
  Message m{};
  int fds[kMaxFds] = {-1, -1};
  int nfds = 0;
  bool own_fd = false;  // fds[0] is ours to close
  int event_fd = -1;    // ours to close
  hurray_handoff local{};
  uint64_t serial = 0;  // the memory object's (slots: 0 none)
};
hurray_status prepare(hurray_ipc_channel *ch, hurray_buffer *buffer,
                      const hurray_export_desc *desc, Prepared *p, hurray_error *err);
void discard(Prepared &p, bool sent);

// ---- descriptor slots (slots.cpp, protocol version 5) ----

// The slots this side announces in its WINDOW to a peer of version 5 (under
// mu): kSlots when they fit the process's descriptor budget (see slots.cpp),
// else 0; sets up the consumer's table.
uint32_t announce_slots(hurray_ipc_channel *ch);
// The consumer's table is gone: its descriptors closed, the budget given
// back (under mu, or with the last reference).
void drop_slots(hurray_ipc_channel *ch);
// BP-IPC-SLOT for a HANDOFF (or entry) as it is read, in order (under mu):
// a slot this side announced, an installed one for a use, with the access
// it was installed with; records installs.
hurray_status check_slot(hurray_ipc_channel *ch, const Message &m, size_t at, hurray_error *err);
// A taken HANDOFF with a slot (under mu): an install puts its descriptor in
// the slot; then a cached mapping of the slot's memory (p->hit) or a copy
// of its descriptor (p->fds[0], p->keyed). HURRAY_E_IO when no copy can be
// made.
hurray_status resolve_slot(hurray_ipc_channel *ch, Pending *p, hurray_error *err);
// The producer's choice for a prepared CPU handoff (under mu, just before
// it is sent): use the slot that holds its memory with its access, or
// install it in a free or the least recently used slot; p->m's slot fields
// and p->nfds follow. `undo` records the table entry it changed (restore it
// with unassign_slot when the message was not sent).
struct SlotUndo {
  int slot = -1;
  hurray_ipc_channel::PeerSlot was{};
};
void assign_slot(hurray_ipc_channel *ch, Prepared *p, SlotUndo *undo);
void unassign_slot(hurray_ipc_channel *ch, Prepared *p, const SlotUndo &undo);

// ---- releasing in batches (batch.cpp, receive.cpp) ----

// While hurray_ipc_release_many() releases handoffs on a thread, the free
// function of a received handoff (receive.cpp) leaves its RELEASE here
// instead of sending it, with the channel reference of its record; the
// batch then goes as RELEASE_MANY (one RELEASE each to a peer before
// version 4).
struct Collected {
  hurray_ipc_channel *ch;  // a reference
  uint64_t id;
};
extern thread_local std::vector<Collected> *t_collect;
// Send one RELEASE of `id` (receive.cpp).
hurray_status send_release(hurray_ipc_channel *ch, uint64_t id, hurray_error *err);

// ---- the process's descriptor budget (budget.cpp) ----

// Descriptors held by handoffs queued on all channels together: at most
// fd_budget() (BP-IPC-LIMIT). take() reserves n, or says false when they do
// not fit; give() returns them (a handoff received, or dropped).
uint32_t fd_budget();
size_t fd_budget_held();
bool fd_budget_take(size_t n);
void fd_budget_give(size_t n);

// ---- reading the socket (read.cpp) ----
//
// One thread at a time reads (the channel's `rd` lock, taken before `mu` and
// never while holding it, except with try_lock), in batches with recvmmsg:
// one system call waits for the first message and takes what else is there.
// What was read is then handled under `mu`.

constexpr unsigned kBatch = 8;

struct Datagram {
  uint8_t buf[kMaxBatchMessage + 1];  // a HANDOFF_MANY's (16 KiB)
  // room for a HANDOFF_MANY's descriptors and more, so that one too many is
  // counted (and closed), not cut off by the kernel
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * (kMaxBatchFds + 2))];
};

struct Batch {
  Datagram dg[kBatch];
  mmsghdr hdr[kBatch];
  iovec iov[kBatch];
  unsigned n = 0;      // datagrams read
  int error = 0;       // errno of a failed read (not EAGAIN)
};

// How long to wait for the first message: -1 forever, 0 not at all.
bool poll_in(int sock, int ms);
// Read up to kBatch datagrams (rd held, not mu).
void recv_batch(int sock, bool block, Batch *b);

enum class Read { Message, Nothing, Closed, Error };

// Handle what recv_batch read (under mu); see read.cpp.
Read handle_batch(hurray_ipc_channel *ch, Batch &b, Deferred &d, uint32_t *handled,
                  hurray_error *err);

// Take the reader lock within `ms` (-1: forever).
bool lock_reader(hurray_ipc_channel *ch, int ms);

// One round of reading for progress/receive/HELLO: take the reader lock
// within the time left, read a batch (waiting for the first message as the
// timeout says), handle it under mu. Returns what handle_batch says, or
// Nothing on a timeout. `stop_when` (under mu) ends the wait early when
// another reader already did the work (e.g. queued a handoff).
template <class Stop>
Read read_round(hurray_ipc_channel *ch, int32_t timeout_ms, int64_t start, Deferred &d,
                uint32_t *handled, hurray_error *err, Stop stop_when) {
  if (!lock_reader(ch, left_ms(timeout_ms, start))) return Read::Nothing;
  std::unique_lock<std::mutex> rlock(ch->rd, std::adopt_lock);
  {
    std::lock_guard<std::mutex> lock(ch->mu);
    if (stop_when()) return Read::Message;
    if (ch->closed) {
      detail::fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "hurray_ipc: the channel is closed (%s)",
                   ch->why_closed);
      return Read::Closed;
    }
  }
  Batch *b = ch->rbatch;  // the reader's (rd held): 130 KiB, too much for a stack
  if (timeout_ms > 0) {
    if (!poll_in(ch->sock, left_ms(timeout_ms, start))) return Read::Nothing;
    recv_batch(ch->sock, false, b);
  } else {
    recv_batch(ch->sock, timeout_ms < 0, b);
  }
  std::lock_guard<std::mutex> lock(ch->mu);
  return handle_batch(ch, *b, d, handled, err);
}

}  // namespace hurray::ipc
