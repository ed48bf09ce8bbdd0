/*
 * hurray_net.h - cross-machine transfers of Hurray buffers over UCX
 * (libhurray-net.so.1, a library of its own: libhurray never links UCX).
 *
 * C99 and C++ clean. A server listens; a client connects, learns in a HELLO
 * which devices and memory classes the server offers, then PUTs buffers to
 * it and GETs buffers the server registered. The rules (docs/spec/network.md):
 *  - BP-NET-OWN: nothing is shared. The sender keeps its source; the receiver
 *    owns the copy it allocated (a hurray_buffer it unrefs).
 *  - BP-SYNC-NET: every handle on the wire is PRODUCER_SYNCED; an EVENT or
 *    CONSUMER_STREAM handle is refused before anything is sent, and again by
 *    the receiver.
 *  - BP-PUT-DEVICE: the receiver allocates on exactly the declared device and
 *    memory class, or refuses with HURRAY_E_DEVICE_UNAVAILABLE; it never
 *    places a buffer elsewhere.
 *  - BP-ALIGN-IPC: under the RDMA transport policy a non-empty buffer
 *    declares alignment >= 4096.
 * Client and server objects are not thread-safe: use each from one thread at
 * a time. Debian's UCX has no GPU support, so GPU memory is always staged
 * through host memory.
 */
#ifndef HURRAY_NET_H
#define HURRAY_NET_H

/** \file hurray_net.h
 *  \brief Cross-machine transfers of Hurray buffers over UCX (libhurray-net). */

#include <hurray.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/** \defgroup net Network transfers (libhurray-net, UCX)                    */
/* ------------------------------------------------------------------------ */

/** Version of the wire protocol a HELLO carries. */
#define HURRAY_NET_PROTOCOL_VERSION 1

/** \brief A listening server (opaque). Create it with
 *  hurray_net_server_create(), drive it with hurray_net_server_poll(). */
typedef struct hurray_net_server hurray_net_server;

/** \brief A client connected to one server (opaque). */
typedef struct hurray_net_client hurray_net_client;

/** \brief Allocates the destination of one PUT on a server, in place of
 *  hurray_buffer_alloc() (hurray_net_server_config.alloc): lets the receiving
 *  application give PUTs memory it owns and recycles, e.g. a pool of
 *  receive buffers wrapped with hurray_buffer_wrap() whose free_fn returns
 *  the memory to the pool. Called on the thread that polls the server.
 *  \param user       hurray_net_server_config.alloc_user
 *  \param buffer_id  the name the client gave the buffer
 *  \param desc       what the PUT declares: byte_size, alignment,
 *                    device_tag, memory_class, device_ordinal
 *  \param out        receives the owner's reference of a buffer of exactly
 *                    desc->byte_size bytes on exactly desc's device, ordinal
 *                    and memory class (BP-PUT-DEVICE), aligned to at least
 *                    desc->alignment; the server checks it and refuses the
 *                    PUT (and unrefs the buffer) when it does not match
 *  \param err        the reason when it returns an error, which the server
 *                    sends to the client as the PUT's answer (e.g.
 *                    HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_E_OUT_OF_MEMORY)
 *  \return HURRAY_OK with *out set, or the status the PUT is refused with. */
typedef hurray_status (*hurray_net_alloc_fn)(void *user, uint64_t buffer_id,
                                             const hurray_alloc_desc *desc,
                                             hurray_buffer **out,
                                             hurray_error *err);

/** \brief The resources a server grants its peers (docs/spec/network.md,
 *  section 4, N19). Start from HURRAY_NET_LIMITS_INIT: every 0 is the
 *  default named beside it (hurray_net_server_limits() tells them). A peer
 *  over a limit is refused (its PUT or GET answered
 *  with HURRAY_E_OUT_OF_MEMORY and a message naming the limit, or its
 *  connection rejected) or disconnected; the server's other peers are not
 *  affected. */
typedef struct hurray_net_limits {
  uint32_t size;                 /**< sizeof(hurray_net_limits) */
  uint32_t reserved0;            /**< zero */
  uint64_t max_put_bytes;        /**< largest byte_size a PUT may declare;
                                      0: conn_bytes_in_flight, at most 2^30
                                      (1 GiB); UINT64_MAX: none */
  uint64_t conn_bytes_in_flight; /**< bytes of PUTs being received on one
                                      connection, staging copies counted;
                                      0: half of total_bytes_in_flight (no
                                      one client takes it all), at most
                                      2^31; UINT64_MAX: none */
  uint64_t total_bytes_in_flight; /**< the same over every connection;
                                      0: half of what the process can
                                      allocate at create (its RLIMIT_AS less
                                      what it maps, or MemAvailable, the
                                      smaller; the other half is left to
                                      what the application holds and to
                                      UCX), at most 2^32; UINT64_MAX: none.
                                      Whatever the budgets, a PUT of 16 MiB
                                      or more is admitted only while the
                                      process can allocate it and 64 MiB
                                      more, so an admitted PUT is not
                                      refused by the allocator (NET-LIMIT,
                                      with the numbers, otherwise) */
  uint32_t conn_puts_in_flight;  /**< PUTs being received on one connection;
                                      0: 256 */
  uint32_t total_puts_in_flight; /**< the same over every connection; 0: 4096 */
  uint32_t conn_gets_in_flight;  /**< GETs being sent on one connection; 0: 16 */
  uint32_t conn_unsent_answers;  /**< answers a connection has not taken yet;
                                      one more disconnects it; 0: 1024 */
  uint32_t max_connections;      /**< connections at once; 0: 256 */
  uint32_t max_connections_per_peer; /**< connections at once from one
                                      address; 0: 64 */
  int32_t stall_timeout_ms;      /**< a connection with transfers in flight
                                      and no progress for this long (no
                                      message, no completion, no bytes of a
                                      PUT arriving) is disconnected and its
                                      budget returned; 0: 10000 (a stalled
                                      PUT holds its bytes 10 s at most, a
                                      slow one that moves is not cut);
                                      negative: never */
  int32_t idle_timeout_ms;       /**< a connection with nothing in flight and
                                      no message for this long is
                                      disconnected; 0: 600000; negative: never */
  int32_t handshake_timeout_ms;  /**< a connection must finish its bootstrap
                                      (HELLO, key, addresses) within this;
                                      0: 10000 */
  uint32_t reserved1;            /**< zero */
} hurray_net_limits;
/** Initialiser of hurray_net_limits: every limit at its default. */
#define HURRAY_NET_LIMITS_INIT                                                 \
  { (uint32_t)sizeof(hurray_net_limits), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, \
    0, 0 }

/** hurray_net_server_config.flags: listen beyond loopback without a shared
 *  key (anyone who reaches the port may PUT and GET: only on a network that
 *  is itself trusted). */
#define HURRAY_NET_SERVER_NO_AUTH 0x1u

/** \brief How a server listens and what it offers. Start from
 *  HURRAY_NET_SERVER_CONFIG_INIT. A size below 96, this struct's size in
 *  1.0 (the first published), is refused with HURRAY_E_INVALID_ARGUMENT. */
typedef struct hurray_net_server_config {
  uint32_t size;           /**< sizeof(hurray_net_server_config) */
  uint32_t transport;      /**< HURRAY_TRANSPORT_CROSS_MACHINE (default) or
                                HURRAY_TRANSPORT_RDMA: the rules received
                                handles are validated under */
  const char *address;     /**< address to listen on; NULL: 127.0.0.1 (this
                                machine only); any other address, "0.0.0.0"
                                included, only when named here */
  uint16_t port;           /**< TCP port; 0: any free port
                                (hurray_net_server_port() tells) */
  uint16_t reserved0;      /**< zero */
  uint32_t n_devices;      /**< number of entries in devices; 0: offer every
                                device this machine has */
  const uint8_t *devices;  /**< device tags offered (a subset of those present);
                                copied at create */
  hurray_context *context; /**< allocations go through it; NULL: the default */
  hurray_net_alloc_fn alloc; /**< allocates each PUT's destination; NULL:
                                  hurray_buffer_alloc() through context */
  void *alloc_user;        /**< passed to alloc */
  const hurray_net_limits *limits; /**< NULL: every limit at its default
                                        (HURRAY_NET_LIMITS_INIT); copied at
                                        create */
  const char *allow;       /**< the peers admitted: a comma-separated list of
                                IPv4/IPv6 addresses and CIDR blocks, e.g.
                                "127.0.0.1,10.1.0.0/16,::1"; checked before a
                                connection is accepted; NULL: any peer */
  const char *key;         /**< the shared key (16 to 4096 bytes, NUL-ended)
                                every client must prove it holds; never sent;
                                NULL: none (or key_file) */
  const char *key_file;    /**< a file holding the key (one trailing newline
                                dropped); read at create */
  uint32_t flags;          /**< HURRAY_NET_SERVER_NO_AUTH */
  uint32_t reserved1;      /**< zero */
} hurray_net_server_config;
/** Initialiser of hurray_net_server_config: cross-machine, 127.0.0.1, any
 *  port, default limits, any peer, no key. A server listening beyond
 *  loopback needs a key (key or key_file) or HURRAY_NET_SERVER_NO_AUTH. */
#define HURRAY_NET_SERVER_CONFIG_INIT                                          \
  { (uint32_t)sizeof(hurray_net_server_config),                               \
    (uint32_t)HURRAY_TRANSPORT_CROSS_MACHINE, NULL, 0, 0, 0, NULL, NULL, NULL, \
    NULL, NULL, NULL, NULL, NULL, 0, 0 }

/** \brief How a client connects. Start from HURRAY_NET_CLIENT_CONFIG_INIT. */
typedef struct hurray_net_client_config {
  uint32_t size;           /**< sizeof(hurray_net_client_config) */
  uint32_t transport;      /**< HURRAY_TRANSPORT_CROSS_MACHINE (default) or
                                HURRAY_TRANSPORT_RDMA: the rules handles are
                                validated under before anything is sent */
  const char *address;     /**< the server's host name or IP address */
  uint16_t port;           /**< the server's port */
  uint16_t reserved0;      /**< zero */
  int32_t timeout_ms;      /**< limit for the connection and for each call;
                                0: 60000; negative: none */
  hurray_context *context; /**< GET allocations go through it; NULL: default */
  const char *key;         /**< the server's shared key, proved in the
                                bootstrap and never sent; NULL: none (or
                                key_file) */
  const char *key_file;    /**< a file holding the key */
} hurray_net_client_config;
/** Initialiser of hurray_net_client_config: cross-machine, 60 s timeout, no
 *  key. A size below 48, the struct's size in 1.0 (the first published),
 *  is refused with HURRAY_E_INVALID_ARGUMENT. */
#define HURRAY_NET_CLIENT_CONFIG_INIT                                          \
  { (uint32_t)sizeof(hurray_net_client_config),                               \
    (uint32_t)HURRAY_TRANSPORT_CROSS_MACHINE, NULL, 0, 0, 0, NULL, NULL, NULL }

/** \brief One device a peer offers, as its HELLO says. */
typedef struct hurray_net_device {
  uint8_t device_tag;      /**< a hurray_device_tag */
  uint8_t reserved0[3];    /**< zero */
  int32_t count;           /**< devices of this tag (ordinals 0..count-1) */
  uint32_t memory_classes; /**< bit n set: memory class n can be allocated */
  uint32_t reserved1;      /**< zero */
} hurray_net_device;

/** \brief Where a transferred buffer goes: its name and its destination.
 *  For a PUT the destination is on the server, for a GET on the client.
 *  Start from HURRAY_NET_TRANSFER_DESC_INIT (CPU, STANDARD, ordinal 0). */
typedef struct hurray_net_transfer_desc {
  uint32_t size;          /**< sizeof(hurray_net_transfer_desc) */
  uint32_t reserved0;     /**< zero */
  uint64_t buffer_id;     /**< the buffer's name: reported to the server for a
                               PUT, looked up by the server for a GET */
  uint8_t device_tag;     /**< destination device (BP-PUT-DEVICE) */
  uint8_t memory_class;   /**< destination memory class */
  uint8_t reserved1[2];   /**< zero */
  int32_t device_ordinal; /**< which device of device_tag */
} hurray_net_transfer_desc;
/** Initialiser of hurray_net_transfer_desc. */
#define HURRAY_NET_TRANSFER_DESC_INIT                                          \
  { (uint32_t)sizeof(hurray_net_transfer_desc), 0, 0, 0, 0, {0, 0}, 0 }

/** \brief A buffer that landed on the server through a PUT. The server owns
 *  it (BP-NET-OWN): `buffer` is the owner's reference, released with
 *  hurray_buffer_unref(); export handoffs from it to hand it on. */
typedef struct hurray_net_received {
  uint32_t size;                /**< sizeof(hurray_net_received), set by the caller */
  uint32_t reserved0;           /**< zero */
  uint64_t buffer_id;           /**< the name the client gave */
  hurray_buffer *buffer;        /**< NULL when nothing landed in time */
  hurray_buffer_handle handle;  /**< the landed buffer's handle (PRODUCER_SYNCED) */
  int32_t device_ordinal;       /**< which device of handle.device_tag */
  uint32_t reserved1;           /**< zero */
} hurray_net_received;

/** \brief Counters of a server, for monitoring and tests. */
typedef struct hurray_net_stats {
  uint64_t connections;      /**< clients accepted so far */
  uint64_t disconnections;   /**< clients gone (closed or failed) */
  uint64_t puts_landed;      /**< PUTs whose data landed */
  uint64_t puts_refused;     /**< PUTs refused with an answer (rule, device,
                                  malformed or truncated message) */
  uint64_t gets_served;      /**< GETs whose data was sent */
  uint64_t gets_refused;     /**< GETs refused with an answer */
  uint64_t transfers_failed; /**< transfers cut off (peer gone, transport error) */
  uint64_t in_flight;        /**< transfers whose data is moving now */
  uint64_t pending;          /**< landed PUTs not yet taken by poll */
  uint64_t live_buffers;     /**< buffers this server allocated and still holds
                                  (in flight or pending) */
} hurray_net_stats;

/* ---- server ------------------------------------------------------------ */

/** \brief Create a server listening on config->address:config->port over
 *  UCX (UCX_TLS and the other UCX_* variables apply). The HELLO offers the
 *  devices present (restricted to config->devices) with their memory
 *  classes. *out receives the server; free it with hurray_net_server_destroy.
 *  HURRAY_E_IO when UCX cannot start or listen (the message says why). */
HURRAY_API hurray_status hurray_net_server_create(
    const hurray_net_server_config *config, hurray_net_server **out,
    hurray_error *err);
/** \brief Close every connection, cancel transfers in flight, free every
 *  buffer the server still holds (landed PUTs not taken included) and the
 *  registrations. NULL is a no-op. */
HURRAY_API void hurray_net_server_destroy(hurray_net_server *server);
/** \brief The TCP port the server listens on. */
HURRAY_API uint16_t hurray_net_server_port(const hurray_net_server *server);
/** \brief Drive the network for at most timeout_ms milliseconds (0: only what
 *  is ready; negative: until a PUT lands) and return the next landed PUT in
 *  *out (out->buffer is NULL when none landed in time). Accepts clients,
 *  answers HELLOs, validates PUTs (refused ones are answered with the rule),
 *  allocates on exactly the declared device (through config->alloc when the
 *  application gave one), receives the data, serves GETs. Several PUTs of
 *  one client may be in flight at once; each is answered once (the landings
 *  of a window possibly in one message, docs/spec/network.md N15).
 *  out->size must be sizeof(hurray_net_received). */
HURRAY_API hurray_status hurray_net_server_poll(hurray_net_server *server,
                                                int32_t timeout_ms,
                                                hurray_net_received *out,
                                                hurray_error *err);
/** \brief Offer `buffer` to GETs under `buffer_id`. The server takes a
 *  reference of its own (a read-only PRODUCER_SYNCED export), dropped by
 *  hurray_net_server_unregister() or destroy; the caller keeps its own.
 *  An id already registered is HURRAY_E_INVALID_ARGUMENT. */
HURRAY_API hurray_status hurray_net_server_register(hurray_net_server *server,
                                                    uint64_t buffer_id,
                                                    hurray_buffer *buffer,
                                                    hurray_error *err);
/** \brief hurray_net_server_register() for some clients only: a GET of
 *  `buffer_id` is served to a client whose address is in `peers` (a
 *  comma-separated list of addresses and CIDR blocks, as
 *  hurray_net_server_config.allow; NULL: any admitted client) and answered
 *  to any other exactly as an id that is not registered (it learns nothing
 *  of the registration). A list that is not one is HURRAY_E_INVALID_ARGUMENT
 *  (NET-ADMIT) and nothing is registered. */
HURRAY_API hurray_status hurray_net_server_register_for(hurray_net_server *server,
                                                        uint64_t buffer_id,
                                                        hurray_buffer *buffer,
                                                        const char *peers,
                                                        hurray_error *err);
/** \brief Withdraw a registration (GETs in flight finish first). An unknown
 *  id is HURRAY_E_INVALID_ARGUMENT. */
HURRAY_API hurray_status hurray_net_server_unregister(hurray_net_server *server,
                                                      uint64_t buffer_id,
                                                      hurray_error *err);
/** \brief Copy the server's counters into *out. */
HURRAY_API void hurray_net_server_stats(const hurray_net_server *server,
                                        hurray_net_stats *out);
/** \brief The limits `server` applies, every default resolved, into *out
 *  (as a hurray_net_limits that would ask for exactly them): the byte
 *  budgets it derived at create from what its process could allocate, the
 *  timeouts, the counts. out->size must be sizeof(hurray_net_limits) (from
 *  HURRAY_NET_LIMITS_INIT); HURRAY_E_INVALID_ARGUMENT otherwise. Since 1.1. */
HURRAY_API hurray_status hurray_net_server_limits(const hurray_net_server *server,
                                                  hurray_net_limits *out,
                                                  hurray_error *err);

/** \brief A descriptor for an event loop (poll, epoll, libuv's uv_poll_t):
 *  readable (POLLIN) whenever hurray_net_server_poll(server, 0, ...) would
 *  make progress: a connection or bootstrap bytes arriving, a message, a
 *  completed transfer, a PUT landed and not taken, a timeout due (a
 *  bootstrap's handshake, a stall or idle limit). Poll it, then call
 *  hurray_net_server_poll(server, 0, ...) until it returns no buffer; each
 *  call leaves the descriptor readable only when another would progress.
 *  The descriptor is the server's (made at the first call, the same one
 *  after; never close it, it goes with hurray_net_server_destroy); only
 *  wait on it, never read it. -1 (and *err) on failure. Since 1.1. */
HURRAY_API int hurray_net_server_fd(hurray_net_server *server, hurray_error *err);

/* ---- client ------------------------------------------------------------ */

/** \brief Connect to a server: its bootstrap (admission, the shared key's
 *  challenge-response both ways when the server has a key, the UCX worker
 *  addresses), then HELLOs. Unless UCX_NET_DEVICES is set, the client's UCX
 *  uses only the network interface the server is reached through (so it
 *  listens nowhere else). *out receives the client; free it with
 *  hurray_net_client_destroy. HURRAY_E_IO when the server cannot be reached,
 *  HURRAY_E_PROTOCOL when it refuses this client (the message names why:
 *  NET-ADMIT, NET-AUTH) or does not speak this protocol. */
HURRAY_API hurray_status hurray_net_client_connect(
    const hurray_net_client_config *config, hurray_net_client **out,
    hurray_error *err);
/** \brief Close the connection. NULL is a no-op. */
HURRAY_API void hurray_net_client_destroy(hurray_net_client *client);
/** \brief The devices the server offered in its HELLO: up to `capacity`
 *  entries into out (NULL when capacity is 0); *n_devices receives the total. */
HURRAY_API hurray_status hurray_net_client_peer_devices(
    const hurray_net_client *client, hurray_net_device *out, size_t capacity,
    size_t *n_devices, hurray_error *err);
/** \brief The identity (docs/spec/identity.md) the server announced in its
 *  HELLO for its device `device_ordinal` of `device_tag`, in *out: kind
 *  HURRAY_BACKEND_ID_NONE when it announced none for it (the CPU, a device
 *  without one, or a server from before identities). HURRAY_E_DEVICE_UNAVAILABLE
 *  (BP-PUT-DEVICE) when the server offers no such device. */
HURRAY_API hurray_status hurray_net_client_peer_device_identity(
    const hurray_net_client *client, uint8_t device_tag, int32_t device_ordinal,
    struct hurray_backend_device_identity *out, hurray_error *err);
/** \brief *ordinal = the server's ordinal of its device of `device_tag` whose
 *  identity its HELLO announced as `identity`, to name that device in a
 *  PUT's hurray_net_transfer_desc whatever the two machines' device orders.
 *  None: HURRAY_E_DEVICE_UNAVAILABLE, message starting "BP-DEV-ID", *ordinal
 *  -1; an identity of kind NONE: HURRAY_E_INVALID_ARGUMENT. */
HURRAY_API hurray_status hurray_net_client_peer_device_find(
    const hurray_net_client *client, uint8_t device_tag,
    const struct hurray_backend_device_identity *identity, int32_t *ordinal,
    hurray_error *err);
/** \brief PUT the buffer a producer handed to the client: validate the
 *  handoff's handle and the destination handle under the client's transport
 *  (BP-SYNC-NET, BP-ALIGN-IPC...) and check the destination against the
 *  server's HELLO (BP-PUT-DEVICE) before anything is sent; then send the
 *  bytes (rendezvous for large buffers) and wait for the server's answer.
 *  The handoff stays the caller's (BP-NET-OWN). Its data must be
 *  host-addressable (CPU, or mapped device memory); for device memory use
 *  hurray_net_client_put_buffer(), which stages through host memory.
 *  A refusal returns the server's status and rule. */
HURRAY_API hurray_status hurray_net_client_put(hurray_net_client *client,
                                               const hurray_handoff *source,
                                               const hurray_net_transfer_desc *desc,
                                               hurray_error *err);
/** \brief PUT a buffer of any device: like hurray_net_client_put() on a
 *  PRODUCER_SYNCED export of `source`, staged through host memory when the
 *  source is not host-addressable. */
HURRAY_API hurray_status hurray_net_client_put_buffer(
    hurray_net_client *client, hurray_buffer *source,
    const hurray_net_transfer_desc *desc, hurray_error *err);

/* ---- PUTs in flight ------------------------------------------------------
 * A client may keep several PUTs in flight: each *_start call validates
 * exactly as the synchronous call does (nothing is sent when it fails, and no
 * ticket is issued), sends the PUT and returns at once with a ticket; the
 * server receives them in order, answers each, and a refusal or failure of
 * one does not affect the others. With more than one PUT in flight, the
 * server may answer PUTs under 4 MiB that landed in one message, for up to
 * half the PUTs in flight (docs/spec/network.md N15): a ticket may then
 * finish a little after its bytes landed; a refusal is answered at once.
 * hurray_net_client_put_wait() returns a
 * PUT's own result (the server's refusal with its rule, as the synchronous
 * call would) and retires its ticket; hurray_net_client_put_test() tells
 * whether it has finished. Every started PUT is waited for once; PUTs not
 * waited for when the client is destroyed are abandoned (the server drops
 * what has not landed). Tickets of one client are never reused; 0 is never
 * a ticket. The client's timeout_ms counts from the PUT's start. */

/** \brief Start a PUT of a handoff (see hurray_net_client_put()) and return
 *  without waiting: *ticket names it for hurray_net_client_put_wait(). The
 *  handoff stays the caller's (BP-NET-OWN), and its memory must stay valid
 *  and unchanged until the PUT is waited for (or tested done).
 *  On an error *ticket is 0 and nothing was sent. */
HURRAY_API hurray_status hurray_net_client_put_start(
    hurray_net_client *client, const hurray_handoff *source,
    const hurray_net_transfer_desc *desc, uint64_t *ticket, hurray_error *err);
/** \brief Start a PUT of a buffer of any device (see
 *  hurray_net_client_put_buffer()): the client holds a read-only
 *  PRODUCER_SYNCED export of `source` until the bytes are sent (the caller
 *  may unref its own reference at once, but must not write to the buffer
 *  before the PUT is done); memory that is not host-addressable is copied
 *  to host memory here, before this call returns. On an error *ticket is 0
 *  and nothing was sent. */
HURRAY_API hurray_status hurray_net_client_put_buffer_start(
    hurray_net_client *client, hurray_buffer *source,
    const hurray_net_transfer_desc *desc, uint64_t *ticket, hurray_error *err);
/** \brief Drive the network without blocking and tell whether the PUT
 *  `ticket` has finished (*done = 1: its result is ready for
 *  hurray_net_client_put_wait(), which then returns at once) or not
 *  (*done = 0). Does not retire the ticket. HURRAY_E_INVALID_ARGUMENT (and
 *  *done = 0) when `ticket` is not a PUT in flight on this client: never
 *  started, or already waited for. */
HURRAY_API hurray_status hurray_net_client_put_test(hurray_net_client *client,
                                                    uint64_t ticket,
                                                    int32_t *done,
                                                    hurray_error *err);
/** \brief Wait until the PUT `ticket` has finished, retire the ticket and
 *  return the PUT's result: HURRAY_OK when the server answered that it
 *  landed; the server's refusal with its status and rule (e.g.
 *  HURRAY_E_DEVICE_UNAVAILABLE, BP-PUT-DEVICE); HURRAY_E_IO when the
 *  connection was lost or the client's timeout passed. A ticket that is not
 *  in flight on this client (never started, or already waited for) is
 *  HURRAY_E_INVALID_ARGUMENT, with a message that says so. */
HURRAY_API hurray_status hurray_net_client_put_wait(hurray_net_client *client,
                                                    uint64_t ticket,
                                                    hurray_error *err);
/** \brief A descriptor for an event loop: readable (POLLIN) whenever a PUT
 *  in flight has finished (hurray_net_client_put_test() would say done, and
 *  hurray_net_client_put_wait() returns at once) or the network has news
 *  that hurray_net_client_put_test() would take. After each call of this
 *  client it is readable only when another would progress. The descriptor
 *  is the client's (made at the first call; never close it, it goes with
 *  hurray_net_client_destroy); only wait on it. -1 (and *err) on failure.
 *  Since 1.1. */
HURRAY_API int hurray_net_client_fd(hurray_net_client *client, hurray_error *err);

/** \brief GET the buffer the server registered as desc->buffer_id into a
 *  new buffer on the client's device desc->device_tag / memory_class
 *  (BP-PUT-DEVICE applies to the client as receiver). *out receives the
 *  owner's reference (BP-NET-OWN). An unknown id is refused by the server
 *  with HURRAY_E_INVALID_ARGUMENT. */
HURRAY_API hurray_status hurray_net_client_get(hurray_net_client *client,
                                               const hurray_net_transfer_desc *desc,
                                               hurray_buffer **out,
                                               hurray_error *err);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HURRAY_NET_H */
