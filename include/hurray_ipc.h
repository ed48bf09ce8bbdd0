/*
 * hurray_ipc.h - handing buffers to another process without copying them
 * (the IPC transport of the Hurray buffer protocol).
 *
 * A channel is one connected Unix domain socket (SOCK_SEQPACKET) between two
 * processes. Either side may send buffers and receive them; the side that
 * sends a buffer is its producer for that buffer, the other its consumer.
 * The messages, their framing and the order of events are described in
 * docs/spec/ipc.md.
 *
 *  - hurray_ipc_send() validates the buffer's handle under the IPC rules
 *    (BP-ALIGN-IPC, BP-SYNC-IPC) before a byte is sent, then passes the
 *    memory itself: a CPU buffer from hurray_buffer_alloc() with
 *    HURRAY_ALLOC_SHAREABLE travels as its memfd (SCM_RIGHTS), device
 *    memory as its backend's IPC handle (Vulkan: an OPAQUE_FD; CUDA, HIP,
 *    Level Zero: their IPC handles).
 *  - The producer keeps a reference to the buffer until the consumer
 *    releases it or dies (BP-REFCOUNT, BP-IPC-RELEASE); it learns of each
 *    release through hurray_ipc_progress() (a callback and the statistics).
 *  - hurray_ipc_receive() gives the consumer an ordinary hurray_handoff
 *    whose memory is mapped into its address space; its release (once,
 *    BP-REL-ONCE) unmaps the memory and tells the producer.
 *
 * Thread safety: every function may be called from any thread, on the same
 * channel too. One thread at a time reads a channel's socket (the others
 * wait for it, or find its work done); sending and releasing do not wait
 * for a reader, so a thread blocked in hurray_ipc_receive() does not hold
 * up another thread's release. The release callback is called without any
 * lock held, on the thread that read the release (hurray_ipc_progress(),
 * hurray_ipc_receive(), hurray_ipc_send(), a release) or that called
 * hurray_ipc_close(), so it may call back into the channel. A received
 * handoff may be released from any thread, also after its channel is
 * closed.
 *
 * This header is C99 and C++ clean; it only adds to the frozen ABI of
 * hurray.h (see hurray.map).
 */
#ifndef HURRAY_IPC_H
#define HURRAY_IPC_H

/** \file hurray_ipc.h
 *  \brief Handing buffers to another process without copying them, over a
 *  Unix domain socket channel. */

#include "hurray.h"

#ifdef __cplusplus
extern "C" {
#endif

/** \defgroup ipc IPC: zero-copy handoff between processes
 *  @{ */

/** The version of the channel's wire format this library speaks
 *  (docs/spec/ipc.md). Both sides announce theirs in HELLO. Version 2 adds
 *  the view offset of a HANDOFF (a device view, hurray_buffer_view()), the
 *  device identity of a HANDOFF, and DEVICES (each side's devices' identities,
 *  after HELLO), each sent only to a peer that announced 2 or more. Version
 *  3 (1.1) adds WINDOW after DEVICES: each side's max_queued and
 *  max_queued_fds, which the other side's sends then stay within (flow
 *  control), sent only to a peer that announced 3 or more. Version 4 (1.1)
 *  adds HANDOFF_MANY and RELEASE_MANY (hurray_ipc_send_many(),
 *  hurray_ipc_release_many()), sent only to a peer that announced 4 or
 *  more; an older peer gets one HANDOFF or RELEASE at a time. Version 5
 *  (1.1) adds descriptor slots: a consumer keeps the memfds of up to 64 of
 *  the producer's memories (counted in the descriptor budget), and a
 *  handoff of memory it holds crosses without a descriptor. */
#define HURRAY_IPC_PROTOCOL_VERSION 5u
/** At most this many handoffs travel in one HANDOFF_MANY message (their
 *  descriptors, up to 2 each, in one SCM_RIGHTS message: 128, under the
 *  kernel's 253), and at most this many IDs in one RELEASE_MANY (since 1.1).
 *  hurray_ipc_send_many() splits a longer list. */
#define HURRAY_IPC_MAX_BATCH 64
/** At most this many devices are announced in a HELLO message. */
#define HURRAY_IPC_MAX_DEVICES 16

/** \brief A connected channel to one other process (opaque). */
typedef struct hurray_ipc_channel hurray_ipc_channel;
/** \brief A listening socket that accepts channels (opaque). */
typedef struct hurray_ipc_listener hurray_ipc_listener;

/** Flags of hurray_ipc_options. */
/** This side only sends: its HELLO announces no device, so a libhurray
 *  peer sends it nothing, and a HANDOFF that arrives anyway is refused as a
 *  protocol error (BP-IPC-ANNOUNCED). */
#define HURRAY_IPC_SEND_ONLY 0x1u
/** Accept a peer of any uid and gid (no BP-IPC-PEER check). */
#define HURRAY_IPC_ANY_PEER 0x2u
/** For an untrusted consumer: each hurray_ipc_send() of a CPU buffer sends
 *  a fresh shareable copy of its bytes (freed when released), so what the
 *  consumer keeps after its release (a descriptor cannot be revoked) never
 *  shows later contents; any CPU buffer with an address may then be sent,
 *  wrapped memory too. Costs an allocation and a copy per send. */
#define HURRAY_IPC_COPY_PER_SEND 0x4u

/** \brief Options of a channel. Start from HURRAY_IPC_OPTIONS_INIT; NULL
 *  where a function takes options means all defaults. The struct grows at
 *  its end (`size` says which fields the caller knows; the others take
 *  their defaults).
 *
 *  Access control (BP-IPC-PEER): on accept, connect and from_fd the
 *  peer's credentials (SO_PEERCRED, from the kernel) are checked: a peer
 *  of this process's effective uid is allowed, as is one whose uid is in
 *  allowed_uids or whose gid is in allowed_gids; any other peer is refused
 *  with HURRAY_E_PROTOCOL before a message is exchanged, unless `flags`
 *  has HURRAY_IPC_ANY_PEER. */
typedef struct hurray_ipc_options {
  uint32_t size;            /**< sizeof(hurray_ipc_options) */
  uint32_t flags;           /**< HURRAY_IPC_SEND_ONLY, HURRAY_IPC_ANY_PEER,
                                 HURRAY_IPC_COPY_PER_SEND */
  int32_t hello_timeout_ms; /**< how long to wait for the peer's HELLO (and
                                 DEVICES, version 2); 0: 10000 ms;
                                 negative: forever */
  uint32_t device_count;    /**< number of entries in device_tags */
  const uint8_t *device_tags; /**< devices to announce besides the CPU (their
                                   backends are loaded now); NULL: CPU only */
  /* ---- added before 1.0.0: access control and limits (0/NULL: defaults) */
  uint32_t allowed_uid_count; /**< entries in allowed_uids */
  uint32_t allowed_gid_count; /**< entries in allowed_gids */
  const uint32_t *allowed_uids; /**< peer uids allowed besides this euid */
  const uint32_t *allowed_gids; /**< peer (primary) gids allowed */
  int32_t io_timeout_ms;    /**< how long hurray_ipc_send() and a release
                                 wait for room in the socket before the
                                 channel is closed as stuck (HURRAY_E_IO);
                                 0: 10000 ms; negative: forever */
  uint32_t max_queued;      /**< received handoffs queued for
                                 hurray_ipc_receive() at most; one more
                                 closes the channel (BP-IPC-LIMIT); 0: 128.
                                 Since 1.1 also the window told to a peer of
                                 protocol version 3: it keeps at most this
                                 many of its handoffs unreleased here */
  uint32_t max_queued_fds;  /**< descriptors held by queued handoffs at
                                 most (BP-IPC-LIMIT); 0: 128; the window's
                                 descriptors likewise (told as 2 when
                                 less) */
  uint32_t reserved0;       /**< zero */
} hurray_ipc_options;
/** Initialiser of hurray_ipc_options: CPU only, default timeouts, limits
 *  and access control (the same uid). */
#define HURRAY_IPC_OPTIONS_INIT                                                \
  { (uint32_t)sizeof(hurray_ipc_options), 0, 0, 0, NULL, 0, 0, NULL, NULL, 0, \
    0, 0, 0 }

/** \brief One device a side of a channel can send and receive. */
typedef struct hurray_ipc_device_caps {
  uint8_t device_tag;      /**< a hurray_device_tag */
  uint8_t reserved0[3];    /**< zero */
  uint32_t memory_classes; /**< bit n set: memory class n is supported */
} hurray_ipc_device_caps;

/** \brief What the other side announced in its HELLO message. */
typedef struct hurray_ipc_peer_info {
  uint32_t size;             /**< set by the caller: sizeof(hurray_ipc_peer_info) */
  uint32_t protocol_version; /**< the peer's HURRAY_IPC_PROTOCOL_VERSION */
  int32_t pid;               /**< the peer's process ID (from the kernel) */
  uint32_t device_count;     /**< entries used in devices */
  hurray_ipc_device_caps devices[HURRAY_IPC_MAX_DEVICES]; /**< the peer's devices */
  /* ---- added before 1.0.0 (filled when `size` covers them) */
  uint32_t uid;              /**< the peer's effective user ID (from the kernel) */
  uint32_t gid;              /**< the peer's effective group ID (from the kernel) */
} hurray_ipc_peer_info;

/** \brief Counters of a channel, since it was opened. */
typedef struct hurray_ipc_stats {
  uint32_t size;              /**< set by the caller: sizeof(hurray_ipc_stats) */
  uint32_t closed;            /**< 1 once the channel is closed (peer gone,
                                   malformed message or hurray_ipc_close) */
  uint64_t sent;              /**< buffers sent (hurray_ipc_send) */
  uint64_t released;          /**< sent buffers the peer released */
  uint64_t reclaimed;         /**< sent buffers taken back because the peer
                                   died or the channel closed */
  uint64_t outstanding;       /**< sent buffers neither released nor reclaimed */
  uint64_t received;          /**< buffers received (hurray_ipc_receive) */
  uint64_t releases_sent;     /**< release messages sent to the peer */
  uint64_t releases_failed;   /**< releases that could not reach the peer */
  uint64_t releases_refused;  /**< release messages refused: a buffer this side
                                   never sent, or released twice (BP-REL-ONCE) */
  uint64_t messages_rejected; /**< malformed messages (each closes the channel) */
} hurray_ipc_stats;

/** Why a sent buffer came back (the release callback's `reason`). */
typedef enum hurray_ipc_release_reason {
  HURRAY_IPC_RELEASED = 0,    /**< the consumer released it */
  HURRAY_IPC_PEER_GONE = 1,   /**< the consumer died or hung up without releasing */
  HURRAY_IPC_CLOSED = 2       /**< this side closed the channel */
} hurray_ipc_release_reason;

/** \brief Called once for every sent buffer when the producer's reference to
 *  it is dropped: `id` is what hurray_ipc_send() returned. */
typedef void (*hurray_ipc_release_fn)(void *user, uint64_t id,
                                      hurray_ipc_release_reason reason);

/* ---- opening channels ---------------------------------------------------- */

/** \brief Listen on the Unix socket `path`, made mode 0600 whatever the
 *  umask (put it in a private directory, e.g. $XDG_RUNTIME_DIR: the
 *  directory's permissions are the other half of the access control). A
 *  stale socket file there is replaced; a path where a listener still
 *  answers is refused, HURRAY_E_IO (BP-IPC-LISTEN). `opts` applies to
 *  every channel accepted. */
HURRAY_API hurray_status hurray_ipc_listen(const char *path,
                                           const hurray_ipc_options *opts,
                                           hurray_ipc_listener **out,
                                           hurray_error *err);
/** \brief A descriptor to poll for POLLIN in the caller's event loop (an
 *  epoll descriptor since 1.1; before, the listening socket): it is readable
 *  whenever hurray_ipc_accept(listener, 0, ...) would make progress, that is
 *  when a connection is waiting or a HELLO or DEVICES came for a handshake
 *  waiting in the listener. A loop that calls accept with timeout 0 each
 *  time it is readable (until accept says HURRAY_E_IO) loses no connection.
 *  Owned by the listener: do not read or close it. */
HURRAY_API int hurray_ipc_listener_fd(const hurray_ipc_listener *listener);
/** \brief Wait up to timeout_ms (0: do not wait; negative: forever) for a
 *  connection whose peer passes the credential check (BP-IPC-PEER) and has
 *  sent its HELLO (and its DEVICES, a peer of protocol version 2). The
 *  handshake is asynchronous: connections whose HELLO (or DEVICES) has not
 *  come wait in the listener (up to hello_timeout_ms each, then they are
 *  closed), so a silent connection delays neither this call nor another
 *  connection. A timeout is HURRAY_E_IO; a refused peer, or a
 *  malformed first message, is HURRAY_E_PROTOCOL for this call (that
 *  connection is closed; call again for the next). */
HURRAY_API hurray_status hurray_ipc_accept(hurray_ipc_listener *listener,
                                           int32_t timeout_ms,
                                           hurray_ipc_channel **out,
                                           hurray_error *err);
/** \brief Close the listening socket and remove its file, if it is still the
 *  one this listener made. Channels already accepted stay open. NULL is a
 *  no-op. */
HURRAY_API void hurray_ipc_listener_destroy(hurray_ipc_listener *listener);

/** \brief Connect to a listener at `path`, check its credentials (those of
 *  the process that listened; BP-IPC-PEER: HURRAY_E_PROTOCOL if refused)
 *  and exchange HELLO messages. */
HURRAY_API hurray_status hurray_ipc_connect(const char *path,
                                            const hurray_ipc_options *opts,
                                            hurray_ipc_channel **out,
                                            hurray_error *err);
/** \brief Make a channel of a connected AF_UNIX SOCK_SEQPACKET socket (one
 *  end of socketpair(), say, inherited across fork and exec) and exchange
 *  HELLO messages (the peer's credentials are checked as on connect). The
 *  channel owns `fd` from this call on, also when it fails (the descriptor
 *  is then closed). */
HURRAY_API hurray_status hurray_ipc_channel_from_fd(int fd,
                                                    const hurray_ipc_options *opts,
                                                    hurray_ipc_channel **out,
                                                    hurray_error *err);
/** \brief Close the channel: every buffer it sent and that is still out is
 *  taken back (reason HURRAY_IPC_CLOSED; the peer's mappings stay valid),
 *  and handoffs it received stay valid until released (their release then
 *  only unmaps). NULL is a no-op. */
HURRAY_API void hurray_ipc_close(hurray_ipc_channel *channel);

/* ---- the channel --------------------------------------------------------- */

/** \brief A descriptor to poll for POLLIN in the caller's event loop; -1
 *  once closed. Since 1.1 it is an epoll descriptor (made at the first call;
 *  before, the channel's socket) that is readable whenever a call with
 *  timeout 0 would make progress: a message arrived (call
 *  hurray_ipc_progress() or hurray_ipc_receive()), a received handoff is
 *  queued (also one read by another call, e.g. a send waiting for room),
 *  the peer hung up or the channel was closed (the call then says
 *  HURRAY_E_IO), or, after hurray_ipc_try_send() found no room, there is
 *  room again (it stays readable until a try_send gets through). Owned by
 *  the channel: do not read, write or close it. */
HURRAY_API int hurray_ipc_fd(const hurray_ipc_channel *channel);
/** \brief What the peer announced in HELLO, and who it is (pid, uid, gid,
 *  from the kernel). out->size must be set (a size below 152, the
 *  struct's size in 1.0, is refused with HURRAY_E_INVALID_ARGUMENT); a
 *  caller built against a later, larger version gets the fields this
 *  library knows. */
HURRAY_API hurray_status hurray_ipc_peer(const hurray_ipc_channel *channel,
                                         hurray_ipc_peer_info *out,
                                         hurray_error *err);
/** \brief The channel's counters. out->size must be set. */
HURRAY_API hurray_status hurray_ipc_get_stats(const hurray_ipc_channel *channel,
                                              hurray_ipc_stats *out,
                                              hurray_error *err);
/** \brief Call `fn(user, id, reason)` once for each sent buffer when it comes
 *  back (see hurray_ipc_release_reason). NULL removes the callback. */
HURRAY_API hurray_status hurray_ipc_set_release_callback(
    hurray_ipc_channel *channel, hurray_ipc_release_fn fn, void *user,
    hurray_error *err);

/* ---- producer ------------------------------------------------------------ */

/** \brief Hand `buffer` to the peer, without copying it.
 *
 *  `desc` chooses the sync mode as in hurray_buffer_export() (NULL:
 *  PRODUCER_SYNCED, writable; HURRAY_HANDOFF_READ_ONLY maps it read-only in
 *  the consumer). Before anything is sent the handle is validated under the
 *  IPC rules (BP-ALIGN-IPC: alignment >= 4096; BP-SYNC-IPC), the peer must
 *  have announced the device and memory class, and the memory must be
 *  shareable: allocated by hurray_buffer_alloc() with HURRAY_ALLOC_SHAREABLE
 *  (CPU memory travels as its memfd, device memory as its backend's IPC
 *  handle). PRODUCER_SYNCED and EVENT cross (device buffers; the event, from
 *  hurray_event_record(), travels as its backend's IPC handle, is owned as
 *  hurray_buffer_export() owns it, and the consumer's acquire waits on it);
 *  CONSUMER_STREAM is HURRAY_E_UNSUPPORTED (BP-SYNC-IPC). On success the
 *  channel holds a reference to the buffer until the peer releases it or
 *  dies, and *id (may be NULL) names this handoff in the release callback.
 *  The buffer may be sent any number of times, on any channels.
 *
 *  A READ_ONLY CPU handoff travels as a read-only descriptor, which the
 *  consumer cannot map writable (BP-IPC-RO). A consumer keeps access to
 *  the memory after its release (a descriptor cannot be revoked): send an
 *  untrusted consumer a buffer of its own. When the peer reads nothing for
 *  io_timeout_ms (hurray_ipc_options) the channel is closed and this is
 *  HURRAY_E_IO. A peer of protocol version 3 announced a window (its
 *  max_queued and max_queued_fds): a send that would leave more of this
 *  side's handoffs unreleased waits for its RELEASEs, up to io_timeout_ms,
 *  then is HURRAY_E_IO with nothing sent and the channel open
 *  (docs/spec/ipc.md "Flow control"). */
HURRAY_API hurray_status hurray_ipc_send(hurray_ipc_channel *channel,
                                         hurray_buffer *buffer,
                                         const hurray_export_desc *desc,
                                         uint64_t *id, hurray_error *err);
/** \brief hurray_ipc_send() without waiting (since 1.1): when the socket
 *  has no room this returns HURRAY_OK with *id = 0 (IDs start at 1): nothing
 *  was sent, no reference was taken and the channel stays open; the
 *  descriptor of hurray_ipc_fd() then also becomes readable when there is
 *  room, so that a single-threaded producer polls it and tries again, and a
 *  consumer that reads nothing stalls nobody else (nor is its channel closed
 *  by io_timeout_ms). Any other result is hurray_ipc_send()'s. `id` must not
 *  be NULL (HURRAY_E_INVALID_ARGUMENT). */
HURRAY_API hurray_status hurray_ipc_try_send(hurray_ipc_channel *channel,
                                             hurray_buffer *buffer,
                                             const hurray_export_desc *desc, uint64_t *id,
                                             hurray_error *err);
/** \brief Hand `count` buffers to the peer (since 1.1): what
 *  hurray_ipc_send() does for each, `desc` (may be NULL) applying to all,
 *  in HANDOFF_MANY messages of up to HURRAY_IPC_MAX_BATCH handoffs each
 *  (one datagram, one system call; a peer of protocol version 3 or older
 *  gets one HANDOFF each). Each handoff counts on its own in the peer's
 *  window: a batch that does not fit goes in parts as RELEASEs open it,
 *  waiting up to io_timeout_ms for them. The buffers of one message are all
 *  checked before it is sent; on the first failure the call stops: *sent
 *  (may be NULL) says how many went, in order, ids[i] (may be NULL; else
 *  `count` entries) is the ID of buffers[i] or 0 where it did not go, and
 *  the channel stays open unless the status says it closed. On the
 *  consumer's side hurray_ipc_receive() takes the handoffs of a batch one
 *  by one. */
HURRAY_API hurray_status hurray_ipc_send_many(hurray_ipc_channel *channel,
                                              hurray_buffer *const *buffers, size_t count,
                                              const hurray_export_desc *desc, uint64_t *ids,
                                              size_t *sent, hurray_error *err);
/** \brief Read what the peer sent, waiting up to timeout_ms for the first
 *  message (0: do not wait; negative: forever): release messages drop the
 *  producer's references (and call the release callback), handoffs are
 *  queued for hurray_ipc_receive(). *count (may be NULL) is the number of
 *  messages handled. When the peer is gone every outstanding buffer is
 *  reclaimed and the result is HURRAY_E_IO; a malformed message closes the
 *  channel with HURRAY_E_PROTOCOL, as does a HANDOFF of a device or memory
 *  class this side did not announce (BP-IPC-ANNOUNCED; no backend is
 *  touched) or one past the inbox's limits (BP-IPC-LIMIT): the handoffs
 *  queued on the channel are then dropped and their descriptors closed. */
HURRAY_API hurray_status hurray_ipc_progress(hurray_ipc_channel *channel,
                                             int32_t timeout_ms, uint32_t *count,
                                             hurray_error *err);

/* ---- consumer ------------------------------------------------------------ */

/** \brief Receive the next buffer, waiting up to timeout_ms (0: do not wait;
 *  negative: forever): its memory is mapped here and *out is a handoff like
 *  any other (check, acquire, release exactly once). Its release unmaps the
 *  memory and sends the release message; hurray_ipc_release() does the same
 *  and says whether the message reached the producer. *id (may be NULL) is
 *  the producer's ID of the handoff. The handle is validated under the IPC
 *  rules first. A released mapping may be kept in a small cache of the
 *  channel and reused when the same memory comes again (docs/spec/ipc.md).
 *  Nothing within timeout_ms, or a closed channel, is
 *  HURRAY_E_IO (hurray_ipc_get_stats() tells them apart); a malformed
 *  message closes the channel with HURRAY_E_PROTOCOL, and so does a
 *  handoff this side cannot use: a handle breaking the IPC rules
 *  (err->rule names it), a CPU memfd not sealed against shrinking
 *  (BP-IPC-SEAL), too small, or that cannot be mapped as its flags say.
 *  Running out of memory or address space is HURRAY_E_OUT_OF_MEMORY. */
HURRAY_API hurray_status hurray_ipc_receive(hurray_ipc_channel *channel,
                                            int32_t timeout_ms,
                                            hurray_handoff *out, uint64_t *id,
                                            hurray_error *err);
/** \brief Release a received handoff as hurray_handoff_release() does
 *  (exactly once; the memory is unmapped in any case), and report whether
 *  the release message reached the producer: HURRAY_E_IO when the producer
 *  is gone or the channel is closed (also when it read nothing for
 *  io_timeout_ms: the channel is then closed). For a handoff that did not come from
 *  hurray_ipc_receive() this is hurray_handoff_release(). */
HURRAY_API hurray_status hurray_ipc_release(hurray_handoff *handoff,
                                            hurray_error *err);

/** \brief Release `count` handoffs (since 1.1), each exactly once as
 *  hurray_handoff_release() does (every one is released, also after a
 *  failure), telling the producers of those from hurray_ipc_receive() in
 *  RELEASE_MANY messages of up to HURRAY_IPC_MAX_BATCH IDs per channel (one
 *  RELEASE each to a peer of protocol version 3 or older) instead of one
 *  message per handoff. Handoffs of any origin may be mixed. The result is
 *  the first failure: a release's (as hurray_handoff_release() says), else
 *  a message's that did not reach its producer (HURRAY_E_IO, as
 *  hurray_ipc_release() says). A handoff whose memory someone still holds
 *  (a shared or acquired reference) sends its RELEASE on its own when that
 *  reference goes. */
HURRAY_API hurray_status hurray_ipc_release_many(hurray_handoff *handoffs, size_t count,
                                                 hurray_error *err);

/** \brief Set the process's descriptor budget for IPC (since 1.1): the
 *  descriptors held by received handoffs waiting in the queues of all
 *  channels for hurray_ipc_receive(), together, stay within max_fds
 *  (BP-IPC-LIMIT; each channel's max_queued_fds bounds one peer, this all of
 *  them). A HANDOFF, or an entry of a HANDOFF_MANY, past it is refused as one
 *  past its channel's limit is: that channel is closed, HURRAY_E_PROTOCOL,
 *  the error naming the budget. 0: the default, half of RLIMIT_NOFILE's soft
 *  limit when first needed (at least 64). *previous (may be NULL) is the
 *  budget before. Below 2 (one HANDOFF's descriptors) is
 *  HURRAY_E_INVALID_ARGUMENT. A budget lowered below what is held refuses
 *  new handoffs until enough are received. */
HURRAY_API hurray_status hurray_ipc_set_fd_budget(uint32_t max_fds, uint32_t *previous,
                                                  hurray_error *err);

/** @} */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HURRAY_IPC_H */
