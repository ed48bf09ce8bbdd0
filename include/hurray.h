/*
 * hurray.h - the public C API of libhurray, the reference implementation of
 * the Hurray buffer protocol.
 *
 * This header is C99 and C++ (any standard) clean under
 * -Wall -Wextra -Werror -pedantic. Its ABI is frozen: types only grow at the
 * end of option structs (never here for plain value types), enums only gain
 * values, functions are only added. See abi/ and hurray.map.
 *
 * Conventions used by every function below:
 *  - A fallible call returns hurray_status (HURRAY_OK == 0) and takes an
 *    optional trailing `hurray_error *err`. NULL is always accepted; when it
 *    is not NULL and the call fails, *err is filled completely.
 *  - Rule IDs (BP-...) are those of the protocol's RULES.md; docs/spec/ in
 *    this repository restates them.
 *  - Unless stated otherwise, functions are thread-safe for distinct
 *    arguments, and const arguments may be shared between threads.
 *  - Option and descriptor structs whose first field is `uint32_t size`
 *    (start them from their _INIT macro) are read as Linux's
 *    copy_struct_from_user reads its structs: a size below the struct's
 *    size in 1.0 (its first published version) is refused with
 *    HURRAY_E_INVALID_ARGUMENT naming the struct and both sizes; a larger
 *    size (a later header) is accepted when the bytes this library does
 *    not know are zero.
 */
#ifndef HURRAY_H
#define HURRAY_H

/** \file hurray.h
 *  \brief The public C API of libhurray: the 16-byte handle and its codec,
 *  validation under a policy, buffers and handoffs, devices, contexts and
 *  errors (the conventions every function follows open the header's
 *  source). */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/** \defgroup version Version and export macros                            */
/* ------------------------------------------------------------------------ */

#define HURRAY_VERSION_MAJOR 1 /**< major version of this header */
#define HURRAY_VERSION_MINOR 0 /**< minor version of this header */
#define HURRAY_VERSION_PATCH 0 /**< patch version of this header */
/** Release number as one integer: MAJOR * 10000 + MINOR * 100 + PATCH. */
#define HURRAY_VERSION_NUMBER                                                  \
  (HURRAY_VERSION_MAJOR * 10000 + HURRAY_VERSION_MINOR * 100 +                 \
   HURRAY_VERSION_PATCH)
/** Release of this header as a string, "MAJOR.MINOR.PATCH". */
#define HURRAY_VERSION_STRING "1.0.0"

#if defined(_WIN32)
#define HURRAY_API
#elif defined(__GNUC__) || defined(__clang__)
#define HURRAY_API __attribute__((visibility("default")))
#else
#define HURRAY_API
#endif

/** \brief The version of the library actually loaded, as HURRAY_VERSION_NUMBER
 *  would spell it. Compare with the macro to detect a header/library mismatch. */
HURRAY_API unsigned hurray_version(void);
/** \brief The loaded library's version, e.g. "1.0.0". Static storage. */
HURRAY_API const char *hurray_version_string(void);

/* ------------------------------------------------------------------------ */
/** \defgroup status Status codes                                          */
/* ------------------------------------------------------------------------ */

/** X-macro of every status: XX(NAME, number, message). The numbers are part
 *  of the ABI and never change; new codes are only appended. */
#define HURRAY_STATUS_MAP(XX)                                                  \
  XX(OK, 0, "success")                                                         \
  XX(E_INVALID_ARGUMENT, 1, "invalid argument passed to a libhurray function") \
  XX(E_SIZE, 2, "input is not a whole, non-empty number of 16-byte handles")   \
  XX(E_RESERVED, 3, "the reserved byte of a handle is not zero")               \
  XX(E_ALIGNMENT, 4, "the declared or actual alignment breaks the protocol")   \
  XX(E_DEVICE_TAG, 5, "the device tag is invalid, reserved or not agreed")     \
  XX(E_MEMORY_CLASS, 6,                                                        \
     "the memory class is invalid or not valid for the device tag")            \
  XX(E_COLOCATION, 7,                                                          \
     "buffers of one table differ in device tag or memory class")              \
  XX(E_SYNC, 8, "the sync mode or its payload is not allowed here")            \
  XX(E_ALREADY_RELEASED, 9, "the buffer or event was already released")        \
  XX(E_DEVICE_UNAVAILABLE, 10, "the device or its runtime is not available")   \
  XX(E_OUT_OF_MEMORY, 11, "out of memory")                                     \
  XX(E_UNSUPPORTED, 12, "the operation is not supported for this buffer")      \
  XX(E_BACKEND, 13, "the device runtime reported an error")                    \
  XX(E_IO, 14, "an input/output operation failed")                             \
  XX(E_PROTOCOL, 15, "a peer sent a malformed or unexpected message")          \
  XX(E_INTERNAL, 99, "internal error in libhurray (please report it)")

/** \brief Result of every fallible call. 0 is success. */
typedef enum hurray_status {
#define HURRAY_XX_(name, num, msg) HURRAY_##name = num,
  HURRAY_STATUS_MAP(HURRAY_XX_)
#undef HURRAY_XX_
  HURRAY_STATUS_FORCE_32BIT_ = 0x7fffffff
} hurray_status;

/** \brief "HURRAY_E_SIZE" for HURRAY_E_SIZE; "HURRAY_E_UNKNOWN" for a number
 *  this library does not know. Static storage, never NULL. */
HURRAY_API const char *hurray_status_name(hurray_status status);
/** \brief One-line English description of a status. Static, never NULL. */
HURRAY_API const char *hurray_status_message(hurray_status status);

/* ------------------------------------------------------------------------ */
/** \defgroup rules Rule IDs of the protocol                               */
/* ------------------------------------------------------------------------ */

/** Kind of a rule: REJECT makes a handle invalid, WARN is a SHOULD (reported,
 *  the handle stays valid unless SHOULDs are errors), CONTRACT is behaviour
 *  the library enforces at run time (release, synchronisation...). */
typedef enum hurray_rule_kind {
  HURRAY_RULE_KIND_NONE = 0,
  HURRAY_RULE_KIND_REJECT = 1,
  HURRAY_RULE_KIND_WARN = 2,
  HURRAY_RULE_KIND_CONTRACT = 3
} hurray_rule_kind;

/** X-macro of every rule: XX(NAME, number, "ID", kind). Numbers are
 *  stable. */
#define HURRAY_RULE_MAP(XX)                                                    \
  XX(NONE, 0, "", NONE)                                                        \
  XX(SIZE, 1, "BP-SIZE", REJECT)                                               \
  XX(LE, 2, "BP-LE", REJECT)                                                   \
  XX(RESERVED, 3, "BP-RESERVED", REJECT)                                       \
  XX(ALIGN_POW2, 10, "BP-ALIGN-POW2", REJECT)                                  \
  XX(ALIGN_MIN, 11, "BP-ALIGN-MIN", REJECT)                                    \
  XX(ALIGN_EMPTY, 12, "BP-ALIGN-EMPTY", NONE)                                  \
  XX(ALIGN_ADDR, 13, "BP-ALIGN-ADDR", REJECT)                                  \
  XX(ALIGN_IPC, 14, "BP-ALIGN-IPC", REJECT)                                    \
  XX(ALIGN_GPU_PAGE, 15, "BP-ALIGN-GPU-PAGE", WARN)                            \
  XX(ALIGN_HEXAGON, 16, "BP-ALIGN-HEXAGON", WARN)                              \
  XX(ALIGN_TRUST, 17, "BP-ALIGN-TRUST", CONTRACT)                              \
  XX(DEV_INVALID, 20, "BP-DEV-INVALID", REJECT)                                \
  XX(DEV_RESERVED, 21, "BP-DEV-RESERVED", REJECT)                              \
  XX(DEV_PRIVATE, 22, "BP-DEV-PRIVATE", REJECT)                                \
  XX(MC_INVALID, 23, "BP-MC-INVALID", REJECT)                                  \
  XX(MC_PAIR, 24, "BP-MC-PAIR", REJECT)                                        \
  XX(COLOC, 25, "BP-COLOC", REJECT)                                            \
  XX(PUT_DEVICE, 26, "BP-PUT-DEVICE", CONTRACT)                                \
  XX(SYNC_VALUE, 30, "BP-SYNC-VALUE", REJECT)                                  \
  XX(SYNC_CPU, 31, "BP-SYNC-CPU", REJECT)                                      \
  XX(SYNC_NET, 32, "BP-SYNC-NET", REJECT)                                      \
  XX(SYNC_IPC, 33, "BP-SYNC-IPC", REJECT)                                      \
  XX(SYNC_PAYLOAD, 34, "BP-SYNC-PAYLOAD", REJECT)                              \
  XX(SYNC_WAIT, 35, "BP-SYNC-WAIT", CONTRACT)                                  \
  XX(SYNC_STREAM, 36, "BP-SYNC-STREAM", CONTRACT)                              \
  XX(SYNC_FENCE, 37, "BP-SYNC-FENCE", CONTRACT)                                \
  XX(REL_ONCE, 40, "BP-REL-ONCE", CONTRACT)                                    \
  XX(REL_AFTER, 41, "BP-REL-AFTER", CONTRACT)                                  \
  XX(REL_THREAD, 42, "BP-REL-THREAD", CONTRACT)                                \
  XX(EVREL_ONCE, 43, "BP-EVREL-ONCE", CONTRACT)                                \
  XX(REFCOUNT, 44, "BP-REFCOUNT", CONTRACT)                                    \
  XX(IPC_RELEASE, 45, "BP-IPC-RELEASE", CONTRACT)                              \
  XX(NET_OWN, 46, "BP-NET-OWN", CONTRACT)                                      \
  XX(ZC_NOCOPY, 50, "BP-ZC-NOCOPY", CONTRACT)                                  \
  XX(ZC_NOMUT, 51, "BP-ZC-NOMUT", CONTRACT)                                    \
  XX(ZC_QPARAM, 52, "BP-ZC-QPARAM", CONTRACT)                                  \
  XX(ZC_STABLE, 53, "BP-ZC-STABLE", CONTRACT)

/** \brief Every rule of the protocol, by stable number. */
typedef enum hurray_rule {
#define HURRAY_XX_(name, num, id, kind) HURRAY_RULE_##name = num,
  HURRAY_RULE_MAP(HURRAY_XX_)
#undef HURRAY_XX_
  HURRAY_RULE_FORCE_32BIT_ = 0x7fffffff
} hurray_rule;

/** \brief The rule's ID, e.g. "BP-ALIGN-MIN"; "" for HURRAY_RULE_NONE or an
 *  unknown number. Static storage, never NULL. */
HURRAY_API const char *hurray_rule_id(hurray_rule rule);
/** \brief REJECT, WARN or CONTRACT; HURRAY_RULE_KIND_NONE if unknown. */
HURRAY_API hurray_rule_kind hurray_rule_kind_of(hurray_rule rule);
/** \brief One-sentence statement of the rule. Static storage, never NULL. */
HURRAY_API const char *hurray_rule_summary(hurray_rule rule);

/* ------------------------------------------------------------------------ */
/** \defgroup error Error details                                           */
/* ------------------------------------------------------------------------ */

#define HURRAY_ERROR_RULE_ID_SIZE 32  /**< bytes of hurray_error.rule_id */
#define HURRAY_ERROR_MESSAGE_SIZE 256 /**< bytes of hurray_error.message */

/** Severity of a hurray_error entry (HURRAY_SEVERITY_ERROR is 0, so a
 *  zeroed struct is an error). */
typedef enum hurray_severity {
  HURRAY_SEVERITY_ERROR = 0,
  HURRAY_SEVERITY_WARNING = 1
} hurray_severity;

/** \brief Details of a failure or of one diagnostic. Plain value type owned
 *  by the caller (typically on the stack); 320 bytes, layout frozen.
 *
 *  status:       the hurray_status of this entry (for a warning, the status
 *                it would have as an error, e.g. HURRAY_E_ALIGNMENT).
 *  rule:         a hurray_rule, HURRAY_RULE_NONE when no protocol rule applies
 *                (e.g. HURRAY_E_INVALID_ARGUMENT).
 *  severity:     a hurray_severity.
 *  buffer_index: index of the handle in the buffer table, -1 if none.
 *  byte_offset:  offset in the input of the first byte of the field at
 *                fault, -1 if none.
 *  rule_id:      NUL-terminated copy of hurray_rule_id(rule).
 *  message:      NUL-terminated English sentence, "[RULE-ID: ]who: what"
 *                (the rule ID first when a rule applies, then the function,
 *                layer or plugin that refused); docs/errors.md has the
 *                format, the same in every library and plugin.
 */
typedef struct hurray_error {
  int32_t status;       /**< a hurray_status */
  uint32_t rule;        /**< a hurray_rule; HURRAY_RULE_NONE if none applies */
  int32_t severity;     /**< a hurray_severity */
  int32_t reserved0;    /**< zero */
  int64_t buffer_index; /**< index in the buffer table, -1 if none */
  int64_t byte_offset;  /**< offset of the field at fault in the input, -1 if none */
  char rule_id[HURRAY_ERROR_RULE_ID_SIZE];  /**< e.g. "BP-ALIGN-MIN", or "" */
  char message[HURRAY_ERROR_MESSAGE_SIZE];  /**< English, the rule ID first if any */
} hurray_error;

/* ------------------------------------------------------------------------ */
/** \defgroup wire Wire values of the 16-byte buffer handle                 */
/* ------------------------------------------------------------------------ */

/** Size in bytes of one encoded buffer handle. */
#define HURRAY_HANDLE_SIZE 16
/** Minimum alignment of a non-empty buffer (BP-ALIGN-MIN). */
#define HURRAY_MIN_ALIGNMENT 64
/** Minimum alignment on the IPC and RDMA transports (BP-ALIGN-IPC). */
#define HURRAY_IPC_ALIGNMENT 4096

/** \brief device_tag (byte 12). Values 0x09-0xEF are reserved (rejected),
 *  0xF0-0xFE private (rejected unless agreed), 0xFF invalid. */
typedef enum hurray_device_tag {
  HURRAY_DEVICE_CPU = 0x00,
  HURRAY_DEVICE_CUDA = 0x01,
  HURRAY_DEVICE_ROCM = 0x02,
  HURRAY_DEVICE_METAL = 0x03,
  HURRAY_DEVICE_VULKAN = 0x04,
  HURRAY_DEVICE_WEBGPU = 0x05,
  HURRAY_DEVICE_HEXAGON = 0x06,
  HURRAY_DEVICE_LEVEL_ZERO = 0x07,
  HURRAY_DEVICE_OPENCL = 0x08,
  HURRAY_DEVICE_PRIVATE_FIRST = 0xF0,
  HURRAY_DEVICE_PRIVATE_LAST = 0xFE,
  HURRAY_DEVICE_INVALID = 0xFF
} hurray_device_tag;

/** \brief memory_class (byte 14, ADR-020). 0x04-0xEF reserved and 0xFF
 *  invalid (rejected); 0xF0-0xFE private (only with a private device tag). */
typedef enum hurray_memory_class {
  HURRAY_MEMORY_STANDARD = 0x00,
  HURRAY_MEMORY_HOST_PINNED = 0x01,
  HURRAY_MEMORY_UNIFIED = 0x02,
  HURRAY_MEMORY_PEER = 0x03,
  HURRAY_MEMORY_PRIVATE_FIRST = 0xF0,
  HURRAY_MEMORY_PRIVATE_LAST = 0xFE,
  HURRAY_MEMORY_INVALID = 0xFF
} hurray_memory_class;

/** \brief sync_mode (byte 13). Any other value is rejected. */
typedef enum hurray_sync_mode {
  HURRAY_SYNC_PRODUCER_SYNCED = 0x00,
  HURRAY_SYNC_EVENT = 0x01,
  HURRAY_SYNC_CONSUMER_STREAM = 0x02
} hurray_sync_mode;

/** \brief The transport a handle travels on; it selects the rules that
 *  apply (TABLES.md section 5). */
typedef enum hurray_transport {
  HURRAY_TRANSPORT_IN_PROCESS = 0,
  HURRAY_TRANSPORT_IPC = 1,
  HURRAY_TRANSPORT_RDMA = 2,
  HURRAY_TRANSPORT_CROSS_MACHINE = 3,
  HURRAY_TRANSPORT_FORCE_32BIT_ = 0x7fffffff /**< any int is a valid value to pass */
} hurray_transport;

/** \brief The decoded fields of one 16-byte handle, in wire order.
 *
 *  Fields are plain integers (not the enums above) so that any byte value,
 *  valid or not, survives a decode/encode round trip. On a little-endian
 *  host the in-memory layout equals the wire layout, but always use
 *  hurray_handle_encode()/hurray_handle_decode() to convert. */
typedef struct hurray_buffer_handle {
  uint64_t byte_size;   /**< offset 0: size in bytes; 0 = empty buffer */
  uint32_t alignment;   /**< offset 8: guaranteed alignment, a power of two */
  uint8_t device_tag;   /**< offset 12: a hurray_device_tag value */
  uint8_t sync_mode;    /**< offset 13: a hurray_sync_mode value */
  uint8_t memory_class; /**< offset 14: a hurray_memory_class value */
  uint8_t reserved;     /**< offset 15: must be 0 (BP-RESERVED) */
} hurray_buffer_handle;

/* Layout checks that fail to compile on an unusual ABI (C99 has no
 * _Static_assert, hence the array-size idiom). */
typedef char hurray_check_handle_size_[sizeof(hurray_buffer_handle) == 16 ? 1 : -1];
typedef char hurray_check_error_size_[sizeof(hurray_error) == 320 ? 1 : -1];

/** \brief "CUDA" for 0x01; "reserved", "private" or "invalid" for the
 *  ranges. Static storage, never NULL. */
HURRAY_API const char *hurray_device_tag_name(uint8_t device_tag);
/** \brief "UNIFIED" for 0x02; "reserved", "private" or "invalid" for the
 *  ranges. Static storage, never NULL. */
HURRAY_API const char *hurray_memory_class_name(uint8_t memory_class);
/** \brief "EVENT" for 0x01; "invalid" for undefined values. */
HURRAY_API const char *hurray_sync_mode_name(uint8_t sync_mode);
/** \brief "in-process", "ipc", "rdma", "cross-machine"; "invalid" else. */
HURRAY_API const char *hurray_transport_name(hurray_transport transport);

/** \brief 1 if (device_tag, memory_class) is a valid pair in the protocol's
 *  validity table (BP-MC-PAIR), 0 otherwise. Whether a private tag is
 *  agreed is a policy question and is not considered here. */
HURRAY_API int hurray_memory_class_valid_for(uint8_t device_tag,
                                             uint8_t memory_class);

/* ------------------------------------------------------------------------ */
/** \defgroup codec Encoding and decoding (BP-LE, BP-SIZE)                  */
/* ------------------------------------------------------------------------ */

/** \brief Decode exactly 16 little-endian bytes into *out, on any host.
 *
 *  No rule is checked beyond the size: every field is copied as found, so
 *  that tools can show invalid handles. Call hurray_handle_validate() (or
 *  use hurray_table_validate() on the bytes) to check them.
 *  \param bytes  readable for `size` bytes; never read past them.
 *  \param size   must be HURRAY_HANDLE_SIZE, else HURRAY_E_SIZE (BP-SIZE).
 *  \param out    receives the fields; untouched on failure.
 *  \param err    optional: filled on failure. */
HURRAY_API hurray_status hurray_handle_decode(const void *bytes, size_t size,
                                              hurray_buffer_handle *out,
                                              hurray_error *err);

/** \brief Encode *handle as 16 little-endian bytes into out[0..15].
 *
 *  Writes the fields as given (no validation); encode(decode(x)) == x for
 *  every 16-byte x.
 *  \param handle   the fields to write.
 *  \param out      receives the 16 bytes.
 *  \param out_size must be >= HURRAY_HANDLE_SIZE, else HURRAY_E_SIZE and
 *                  nothing is written.
 *  \param err      optional: filled on failure. */
HURRAY_API hurray_status hurray_handle_encode(
    const hurray_buffer_handle *handle, void *out, size_t out_size,
    hurray_error *err);

/* ------------------------------------------------------------------------ */
/** \defgroup policy Validation policy (opaque)                             */
/* ------------------------------------------------------------------------ */

/** \brief Which rules apply when validating: transport, agreed private
 *  device tags, per-device IPC sync capabilities, SHOULDs as errors.
 *
 *  Every validation function accepts NULL for the default policy: in-process
 *  transport, no private tag agreed, SHOULDs are warnings, and the IPC
 *  capabilities of TABLES.md section 5 (CUDA, ROCM, VULKAN and LEVEL_ZERO
 *  export IPC events; no device exports IPC streams).
 *
 *  A policy is not locked: do not call a setter while another thread
 *  validates with the same policy. Reading it from many threads at once is
 *  fine. */
typedef struct hurray_policy hurray_policy;

/** Flags for hurray_policy_set_ipc_sync(). */
#define HURRAY_IPC_SYNC_EVENTS 0x1u  /**< device exports IPC events */
#define HURRAY_IPC_SYNC_STREAMS 0x2u /**< device exports IPC streams */

/** \brief Create a policy with the defaults above. *out receives it; the
 *  caller owns it and frees it with hurray_policy_destroy(). */
HURRAY_API hurray_status hurray_policy_create(hurray_policy **out,
                                              hurray_error *err);
/** \brief Free a policy. NULL is a no-op. */
HURRAY_API void hurray_policy_destroy(hurray_policy *policy);
/** \brief Select the transport (default HURRAY_TRANSPORT_IN_PROCESS). */
HURRAY_API hurray_status hurray_policy_set_transport(
    hurray_policy *policy, hurray_transport transport, hurray_error *err);
/** \brief Agree (allow != 0) or withdraw agreement on a private device tag
 *  0xF0-0xFE (BP-DEV-PRIVATE). Any other tag: HURRAY_E_INVALID_ARGUMENT. */
HURRAY_API hurray_status hurray_policy_allow_private_tag(hurray_policy *policy,
                                                         uint8_t device_tag,
                                                         int allow,
                                                         hurray_error *err);
/** \brief Declare what a device exports across processes, as a mask of
 *  HURRAY_IPC_SYNC_* flags (BP-SYNC-IPC). Replaces the previous value. */
HURRAY_API hurray_status hurray_policy_set_ipc_sync(hurray_policy *policy,
                                                    uint8_t device_tag,
                                                    unsigned flags,
                                                    hurray_error *err);
/** \brief Treat warn rules (SHOULDs) as errors when enable != 0. */
HURRAY_API hurray_status hurray_policy_set_warnings_as_errors(
    hurray_policy *policy, int enable, hurray_error *err);

/* ------------------------------------------------------------------------ */
/** \defgroup validate Validation                                          */
/* ------------------------------------------------------------------------ */

/** \brief Check one decoded handle against every reject rule under `policy`
 *  (NULL = default). Returns HURRAY_OK or the status of the first violation,
 *  in byte order of the fields (alignment, device_tag, sync_mode,
 *  memory_class, reserved). Warnings are not reported unless the policy
 *  makes them errors. Allocation-free. */
HURRAY_API hurray_status hurray_handle_validate(
    const hurray_buffer_handle *handle, const hurray_policy *policy,
    hurray_error *err);

/** \brief BP-ALIGN-ADDR: check that `address`, the numeric base address a
 *  producer hands off with `handle`, is a multiple of the declared alignment.
 *  Empty buffers accept any address, NULL included (BP-ALIGN-EMPTY). Call it
 *  only where the address is a pointer, not an opaque device handle. */
HURRAY_API hurray_status hurray_handle_check_address(
    const hurray_buffer_handle *handle, const void *address,
    hurray_error *err);

/** \brief Validate a buffer table: `size` bytes holding N >= 1 handles back
 *  to back (index 0 the data buffer). Checks BP-SIZE first, then each handle
 *  in order, including BP-COLOC against handle 0. Returns the first error;
 *  never reads past `size`. Allocation-free. */
HURRAY_API hurray_status hurray_table_validate(const void *bytes, size_t size,
                                               const hurray_policy *policy,
                                               hurray_error *err);

/** \brief Report every error and warning of a buffer table.
 *
 *  Writes up to `capacity` entries to out[] (out may be NULL when capacity
 *  is 0), in the order hurray_table_validate() meets them, and stores the
 *  total number found in *n_errors and *n_warnings (either may be NULL), even
 *  beyond capacity, so a caller can size a second call. Returns HURRAY_OK when
 *  the table is valid (warnings allowed), else the status of the first error,
 *  which is always the one hurray_table_validate() returns. `err` is filled
 *  only for argument errors (then nothing else is written). */
HURRAY_API hurray_status hurray_table_diagnose(
    const void *bytes, size_t size, const hurray_policy *policy,
    hurray_error *out, size_t capacity, size_t *n_errors, size_t *n_warnings,
    hurray_error *err);

/* ------------------------------------------------------------------------ */
/** \defgroup context Context (opaque): guard mode and, later, backends     */
/* ------------------------------------------------------------------------ */

/** \brief State the library owns for a producer or consumer: guard mode and
 *  its reports (and, with the backends, the device registry).
 *
 *  Every function taking a `hurray_context *` accepts NULL for the process's
 *  default context, whose guard mode is on when the environment variable
 *  HURRAY_GUARD is set to 1 at its first use; it reports handoffs still live
 *  at process exit on stderr. A context is thread-safe. */
typedef struct hurray_context hurray_context;

/** \brief A guard-mode report: `report` is a hurray_error naming the rule
 *  (e.g. BP-REL-ONCE) whose message says where the handoff was created.
 *  Called on the thread that broke the rule; must not call back into the
 *  context that reports. */
typedef void (*hurray_guard_fn)(void *user, const hurray_error *report);

/** \brief Create a context (guard off). Free it with hurray_context_destroy. */
HURRAY_API hurray_status hurray_context_create(hurray_context **out,
                                               hurray_error *err);
/** \brief Drop the caller's context. With guard mode on, every handoff of the
 *  context still live is reported as a leak. Handoffs still live keep the
 *  context's memory alive until they are released. NULL is a no-op. */
HURRAY_API void hurray_context_destroy(hurray_context *ctx);
/** \brief Turn guard mode, the protocol sanitizer, on or off. Applies to
 *  handoffs created afterwards. Off, it costs one branch per call. */
HURRAY_API hurray_status hurray_context_set_guard(hurray_context *ctx,
                                                  int enable, hurray_error *err);
/** \brief Where guard reports go (NULL fn: stderr, the default). */
HURRAY_API hurray_status hurray_context_set_guard_callback(
    hurray_context *ctx, hurray_guard_fn fn, void *user, hurray_error *err);
/** \brief The rules this context's producers are held to when they wrap,
 *  allocate and export (NULL: the default in-process policy). The policy is
 *  copied. Agreeing a private device tag here is what lets a producer use
 *  it. Set it before the context is used from other threads. */
HURRAY_API hurray_status hurray_context_set_policy(hurray_context *ctx,
                                                   const hurray_policy *policy,
                                                   hurray_error *err);
/** \brief Number of guard reports the context has made so far. */
HURRAY_API uint64_t hurray_context_guard_count(const hurray_context *ctx);

/* ------------------------------------------------------------------------ */
/** \defgroup handoff The handoff: one buffer, one consumer, released once  */
/* ------------------------------------------------------------------------ */

/** hurray_handoff.version of this header's layout. */
#define HURRAY_HANDOFF_VERSION 1u

/** hurray_handoff.flags (and the flags of the descriptors below). */
#define HURRAY_HANDOFF_READ_ONLY 0x1u   /**< the consumer must not write */
#define HURRAY_HANDOFF_OPAQUE_DATA 0x2u /**< data is an opaque device handle,
                                             not a numeric address */
#define HURRAY_HANDOFF_QPARAM 0x4u      /**< a quantization-parameter buffer:
                                             never modified (BP-ZC-QPARAM) */
/** With OPAQUE_DATA only: the buffer starts `reserved[0]` bytes into the
 *  device object that `data` names (a view, hurray_buffer_view(), of an
 *  opaque-handle buffer such as a cl_mem or a Vulkan buffer); a consumer adds
 *  that offset to every access. Set only when the offset is not zero; a
 *  library older than this flag refuses such a handoff (unknown flag). */
#define HURRAY_HANDOFF_OPAQUE_OFFSET 0x8u

/** \brief One buffer handed to one consumer (defined below). */
typedef struct hurray_handoff hurray_handoff;

/** \brief One buffer handed from a producer to one consumer.
 *
 *  A plain struct with a fixed layout (112 bytes on 64-bit hosts), so that a
 *  consumer in any language can use and release it without linking
 *  libhurray, and two libhurray versions interoperate.
 *
 *  Ownership rules:
 *  - The consumer owns the struct it received. It calls `release(self)`
 *    exactly once (BP-REL-ONCE), from any thread (BP-REL-THREAD), after its
 *    device work on the buffer has completed (BP-REL-AFTER). The callback
 *    sets `self->release` to NULL: a released struct has release == NULL.
 *  - With sync_mode EVENT, the consumer first waits on `sync_object` on every
 *    stream it uses (BP-SYNC-WAIT), then calls `release_event(self)` exactly
 *    once (BP-EVREL-ONCE), which sets `self->release_event` to NULL. For the
 *    other modes release_event is NULL.
 *  - To pass ownership on, move the struct (hurray_handoff_move): copy it and
 *    set the source's release to NULL. Releasing two copies is a double
 *    release; handoffs made by libhurray detect it and never forward the
 *    second call to the producer.
 *  - The producer keeps `data` valid and unchanged (BP-ZC-NOMUT,
 *    BP-ZC-STABLE) until release.
 *
 *  Fields:
 *  version        HURRAY_HANDOFF_VERSION.
 *  flags          HURRAY_HANDOFF_* bits.
 *  handle         the 16 wire bytes (hurray_handle_decode() reads them).
 *  device_ordinal which device of device_tag (0 for CPU).
 *  data           base address, or an opaque handle when OPAQUE_DATA is set;
 *                 may be NULL for an empty buffer.
 *  sync_object    EVENT: the producer's event; CONSUMER_STREAM: the stream the
 *                 consumer declared; PRODUCER_SYNCED: NULL (BP-SYNC-PAYLOAD).
 *  sync_value     EVENT: the value to wait for on timeline-style events; else 0.
 *  release_event  EVENT: releases the event; else NULL.
 *  release        releases the buffer; NULL once released.
 *  private_data   the producer's; consumers leave it alone.
 *  reserved       zero, except reserved[0] with HURRAY_HANDOFF_OPAQUE_OFFSET:
 *                 the offset of the buffer in the object data names. */
struct hurray_handoff {
  uint32_t version;                   /**< HURRAY_HANDOFF_VERSION */
  uint32_t flags;                     /**< HURRAY_HANDOFF_* bits */
  uint8_t handle[HURRAY_HANDLE_SIZE]; /**< the 16 wire bytes */
  int32_t device_ordinal;             /**< which device of the tag; 0 for CPU */
  uint32_t reserved0;                 /**< zero */
  void *data;           /**< base address, or an opaque handle (OPAQUE_DATA) */
  void *sync_object;    /**< EVENT: the event; CONSUMER_STREAM: the stream */
  uint64_t sync_value;  /**< EVENT: the value to wait for; else 0 */
  void (*release_event)(hurray_handoff *self); /**< EVENT: release the event once */
  void (*release)(hurray_handoff *self);       /**< release the buffer once */
  void *private_data;   /**< the producer's */
  uint64_t reserved[4]; /**< zero; [0]: the offset with OPAQUE_OFFSET */
};

typedef char hurray_check_handoff_size_[sizeof(void *) != 8 ||
                                                sizeof(hurray_handoff) == 112
                                            ? 1
                                            : -1];

/* ---- producer side ------------------------------------------------------ */

/** \brief A producer's buffer: memory plus its handle, reference counted.
 *  The owner's reference and every live handoff keep it alive; the memory is
 *  freed when the last one goes (BP-REFCOUNT), on whichever thread. */
typedef struct hurray_buffer hurray_buffer;

/** \brief Frees wrapped memory: called exactly once, with the descriptor's
 *  free_user and data, when the owner and every consumer are done. */
typedef void (*hurray_free_fn)(void *user, void *data);

/** \brief Memory the caller owns, described for hurray_buffer_wrap() and
 *  hurray_handoff_wrap(). Start from HURRAY_BUFFER_DESC_INIT.
 *  `handle.sync_mode` must be PRODUCER_SYNCED here: each export chooses its
 *  own sync mode. flags: HURRAY_HANDOFF_OPAQUE_DATA, HURRAY_HANDOFF_QPARAM. */
typedef struct hurray_buffer_desc {
  uint32_t size; /**< sizeof(hurray_buffer_desc) */
  uint32_t flags;              /**< HURRAY_HANDOFF_OPAQUE_DATA, HURRAY_HANDOFF_QPARAM */
  hurray_buffer_handle handle; /**< the buffer; sync_mode PRODUCER_SYNCED */
  void *data;                  /**< base address, or opaque handle (OPAQUE_DATA) */
  int32_t device_ordinal;      /**< which device of handle.device_tag */
  uint32_t reserved0;          /**< zero */
  hurray_free_fn free_fn;      /**< may be NULL: nothing to free */
  void *free_user;             /**< passed to free_fn */
} hurray_buffer_desc;
/** Initialiser of hurray_buffer_desc: its size set, everything else zero. */
#define HURRAY_BUFFER_DESC_INIT                                                \
  { (uint32_t)sizeof(hurray_buffer_desc), 0, {0, 0, 0, 0, 0, 0}, NULL, 0, 0,    \
    NULL, NULL }

/** \brief How one export synchronises: the sync mode and its payload.
 *  Start from HURRAY_EXPORT_DESC_INIT (PRODUCER_SYNCED, writable).
 *  For EVENT, `sync_object` is the event and `event_free_fn(event_user,
 *  sync_object)` is called exactly once when the consumer releases it. */
typedef struct hurray_export_desc {
  uint32_t size; /**< sizeof(hurray_export_desc) */
  uint32_t flags; /**< HURRAY_HANDOFF_READ_ONLY */
  uint32_t sync_mode; /**< a hurray_sync_mode */
  uint32_t reserved0;   /**< zero */
  void *sync_object;    /**< EVENT: the event; CONSUMER_STREAM: the consumer's stream */
  uint64_t sync_value;  /**< EVENT: the value to wait for (timeline events) */
  void (*event_free_fn)(void *user, void *event); /**< EVENT: frees the event, once */
  void *event_user;     /**< passed to event_free_fn */
} hurray_export_desc;
/** Initialiser of hurray_export_desc: its size set, PRODUCER_SYNCED, no
 *  event. */
#define HURRAY_EXPORT_DESC_INIT                                                \
  { (uint32_t)sizeof(hurray_export_desc), 0, 0, 0, NULL, 0, NULL, NULL }

/** Flags of hurray_alloc_desc. */
#define HURRAY_ALLOC_SHAREABLE 0x1u /**< memory another process can map
                                         (CPU: a memfd, see hurray_buffer_fd) */

/** \brief Memory for the library to allocate through the device's backend.
 *  Start from HURRAY_ALLOC_DESC_INIT. alignment: a power of two >= 64
 *  (>= 4096 gives page-aligned memory); 0 means 64. */
typedef struct hurray_alloc_desc {
  uint32_t size; /**< sizeof(hurray_alloc_desc) */
  uint32_t flags;          /**< HURRAY_ALLOC_SHAREABLE */
  uint64_t byte_size;      /**< bytes to allocate; 0: an empty buffer */
  uint32_t alignment;      /**< power of two >= 64; 0 means 64 */
  uint8_t device_tag;      /**< the device to allocate on */
  uint8_t memory_class;    /**< the memory class to allocate */
  uint8_t reserved0[2];    /**< zero */
  int32_t device_ordinal;  /**< which device of the tag */
  uint32_t reserved1;      /**< zero */
} hurray_alloc_desc;
/** Initialiser of hurray_alloc_desc: its size set, everything else zero. */
#define HURRAY_ALLOC_DESC_INIT                                                 \
  { (uint32_t)sizeof(hurray_alloc_desc), 0, 0, 0, 0, 0, {0, 0}, 0, 0 }

/** \brief Wrap memory the caller owns. The handle is validated in-process
 *  and, unless OPAQUE_DATA, the address against the alignment
 *  (BP-ALIGN-ADDR). *out holds the owner's reference. */
HURRAY_API hurray_status hurray_buffer_wrap(hurray_context *ctx,
                                            const hurray_buffer_desc *desc,
                                            hurray_buffer **out,
                                            hurray_error *err);
/** \brief Allocate through the device's backend (built in: CPU). Non-CPU
 *  devices return HURRAY_E_DEVICE_UNAVAILABLE until their backend is loaded. */
HURRAY_API hurray_status hurray_buffer_alloc(hurray_context *ctx,
                                             const hurray_alloc_desc *desc,
                                             hurray_buffer **out,
                                             hurray_error *err);
/** \brief Hand the buffer to one more consumer: fills *out with a handoff of
 *  its own (desc NULL: PRODUCER_SYNCED, writable). Checks the handle and the
 *  payload (BP-SYNC-PAYLOAD) before anything is handed out. Thread-safe. */
HURRAY_API hurray_status hurray_buffer_export(hurray_buffer *buffer,
                                              const hurray_export_desc *desc,
                                              hurray_handoff *out,
                                              hurray_error *err);
/** \brief A view: `length` bytes of `parent` at `offset` as a buffer of its
 *  own (docs/spec/views.md). Its handle: the parent's device, class and
 *  ordinal, byte_size `length`, and the largest power-of-two alignment
 *  dividing both `offset` and the parent's alignment. Refused: a range
 *  outside the parent (HURRAY_E_INVALID_ARGUMENT, BP-VIEW-BOUNDS); a
 *  non-empty view below 64-aligned (HURRAY_E_ALIGNMENT, BP-ALIGN-MIN); a
 *  handle the context's policy refuses. Empty views are allowed. A view of
 *  a view views the first parent. *out holds the owner's reference; the
 *  view keeps the parent's memory alive (so the parent may go first), and
 *  is used like any buffer (export, copies from its start, IPC, network,
 *  DLPack). hurray_buffer_data(): the parent's address plus the offset, or
 *  an opaque parent's handle (its handoffs then carry the offset,
 *  HURRAY_HANDOFF_OPAQUE_OFFSET); hurray_buffer_fd() is -1. Thread-safe. */
HURRAY_API hurray_status hurray_buffer_view(hurray_buffer *parent, uint64_t offset,
                                            uint64_t length, hurray_buffer **out,
                                            hurray_error *err);
/** \brief Drop the owner's reference. NULL is a no-op. */
HURRAY_API void hurray_buffer_unref(hurray_buffer *buffer);
/** \brief The buffer's data pointer (NULL for an empty buffer). */
HURRAY_API void *hurray_buffer_data(const hurray_buffer *buffer);
/** \brief The buffer's handle (sync_mode PRODUCER_SYNCED). */
HURRAY_API hurray_status hurray_buffer_get_handle(const hurray_buffer *buffer,
                                                  hurray_buffer_handle *out,
                                                  hurray_error *err);
/** \brief The file descriptor of a SHAREABLE CPU allocation (owned by the
 *  buffer: do not close it), else -1. */
HURRAY_API int hurray_buffer_fd(const hurray_buffer *buffer);

/** \brief Copy n bytes from host memory into the buffer at `offset`, through
 *  its backend (device memory included). Buffers the library did not
 *  allocate must be host memory (CPU, not opaque). */
HURRAY_API hurray_status hurray_buffer_copy_from_host(hurray_buffer *buffer,
                                                      uint64_t offset,
                                                      const void *src, uint64_t n,
                                                      hurray_error *err);
/** \brief Copy n bytes of the buffer at `offset` into host memory. */
HURRAY_API hurray_status hurray_buffer_copy_to_host(const hurray_buffer *buffer,
                                                    uint64_t offset, void *dst,
                                                    uint64_t n, hurray_error *err);

/** \brief Wrap and export in one call, for the common single-consumer case:
 *  the memory is freed when the consumer releases. Allocation-free once
 *  the library's record pools are warm. */
HURRAY_API hurray_status hurray_handoff_wrap(hurray_context *ctx,
                                             const hurray_buffer_desc *buffer,
                                             const hurray_export_desc *exp,
                                             hurray_handoff *out,
                                             hurray_error *err);

/* ---- consumer side ------------------------------------------------------ */

/** \brief Check a received handoff before use: version, reserved words, the
 *  handle under `policy` (NULL: in-process), the payload against sync_mode
 *  (BP-SYNC-PAYLOAD) and, unless OPAQUE_DATA, the address against the
 *  alignment (BP-ALIGN-ADDR; empty buffers accept NULL). */
HURRAY_API hurray_status hurray_handoff_check(const hurray_handoff *handoff,
                                              const hurray_policy *policy,
                                              hurray_error *err);
/** \brief Make the buffer safe to touch, as its sync_mode says: nothing for
 *  PRODUCER_SYNCED; for EVENT, have `consumer_stream` (NULL: the host) wait on
 *  the event through the device's backend, then release the event exactly
 *  once; for CONSUMER_STREAM, `consumer_stream` must be the declared stream
 *  (BP-SYNC-STREAM). */
HURRAY_API hurray_status hurray_handoff_acquire(hurray_context *ctx,
                                                hurray_handoff *handoff,
                                                void *consumer_stream,
                                                hurray_error *err);
/** \brief Release the event of an EVENT handoff, exactly once
 *  (BP-EVREL-ONCE): a second call is HURRAY_E_ALREADY_RELEASED. */
HURRAY_API hurray_status hurray_handoff_release_event(hurray_handoff *handoff,
                                                      hurray_error *err);
/** \brief Release the buffer, exactly once (BP-REL-ONCE): a second call, or
 *  a call on a stale copy of a libhurray handoff, is
 *  HURRAY_E_ALREADY_RELEASED and never reaches the producer. */
HURRAY_API hurray_status hurray_handoff_release(hurray_handoff *handoff,
                                                hurray_error *err);
/** \brief Release the buffer once device work on it completes, without
 *  waiting (BP-REL-AFTER, BP-REL-DEFER): the work queued so far on `stream`
 *  (NULL: the device's default stream) or, when `event` is not NULL, (event,
 *  event_value) recorded on the handoff's device. On success the handoff is
 *  moved in (release becomes NULL) and its release runs exactly once on the
 *  thread the completion arrives on; on error the caller still owns it. A
 *  backend without the entry waits on the host first (see
 *  hurray_device_release_after_deferred). */
HURRAY_API hurray_status hurray_handoff_release_after(hurray_context *ctx,
                                                      hurray_handoff *handoff,
                                                      void *stream, void *event,
                                                      uint64_t event_value,
                                                      hurray_error *err);
/** \brief hurray_handoff_release_after with (event, event_value), the event
 *  handed over too: the caller need not know when the deferred release no
 *  longer needs it (BP-REL-AFTER, BP-REL-DEFER; docs/spec/release-after.md).
 *
 *  `event` (not NULL) is an event recorded on the handoff's device, as for
 *  hurray_handoff_release_after (e.g. hurray_event_record's sync_object and
 *  sync_value); `event_free_fn` (not NULL) frees it, with `event_user`.
 *  On success the handoff and the event are moved in: once the event has
 *  completed, the handoff is released, then `event_free_fn(event_user,
 *  event)` is called, exactly once each and in that order, on the thread the
 *  completion arrives on (possibly before this call returns; the CPU and a
 *  backend without the entry do so before it returns). On error
 *  (HURRAY_E_INVALID_ARGUMENT for a NULL argument, HURRAY_E_ALREADY_RELEASED
 *  (BP-REL-ONCE) for a released handoff, a backend's refusal of the event)
 *  nothing was taken: the caller still owns the handoff and the event, and
 *  `event_free_fn` is not called. A release still pending when its plugin
 *  shuts down never runs, and its event is never freed. Thread-safe. */
HURRAY_API hurray_status hurray_handoff_release_after_event(
    hurray_context *ctx, hurray_handoff *handoff, void *event, uint64_t event_value,
    void (*event_free_fn)(void *user, void *event), void *event_user,
    hurray_error *err);
/** \brief Move ownership: *dst = *src, then src is marked released. dst must
 *  not hold a live handoff (it is overwritten). */
HURRAY_API hurray_status hurray_handoff_move(hurray_handoff *src,
                                             hurray_handoff *dst,
                                             hurray_error *err);

/* ------------------------------------------------------------------------ */
/** \defgroup devices Devices: backends loaded on first use                */
/* ------------------------------------------------------------------------ */

/* The CPU backend is built in; every other device tag is served by a plugin
 * (hurray_backend.h) found in $HURRAY_BACKEND_PATH or <libdir>/hurray/ and
 * loaded the first time the device is used. HURRAY_BACKENDS=cpu,vulkan
 * restricts which plugins may load; HURRAY_LOG=debug explains each step on
 * stderr. A device whose plugin or runtime is missing answers
 * HURRAY_E_DEVICE_UNAVAILABLE with the reason, and is never replaced by
 * another device (BP-PUT-DEVICE). hurray_buffer_alloc() allocates through
 * these backends. */

/* hurray_backend.h defines these; repeated here as incomplete types. */
struct hurray_backend_device_info;
struct hurray_backend_native;
struct hurray_backend_device_identity;

/** \brief Number of devices with this tag (loads its backend if needed). */
HURRAY_API hurray_status hurray_device_count(hurray_context *ctx,
                                             uint8_t device_tag, int32_t *count,
                                             hurray_error *err);
/** \brief Describe one device (name, memory classes, IPC capabilities). */
HURRAY_API hurray_status hurray_device_info(
    hurray_context *ctx, uint8_t device_tag, int32_t device_ordinal,
    struct hurray_backend_device_info *out, hurray_error *err);
/** \brief The backend's native handles for a device, for callers that
 *  submit their own work on it (see hurray_backend.h). */
HURRAY_API hurray_status hurray_device_native(hurray_context *ctx,
                                              uint8_t device_tag,
                                              int32_t device_ordinal,
                                              struct hurray_backend_native *out,
                                              hurray_error *err);
/** \brief The device's stable identity (struct in hurray_backend.h): its
 *  UUID, else PCI address or LUID, the same in every process whatever the
 *  device order there; kind HURRAY_BACKEND_ID_NONE where the backend has
 *  none (CPU, WebGPU, PoCL). docs/spec/identity.md. */
HURRAY_API hurray_status hurray_device_identity(
    hurray_context *ctx, uint8_t device_tag, int32_t device_ordinal,
    struct hurray_backend_device_identity *out, hurray_error *err);
/** \brief *ordinal = this process's device of the tag whose identity equals
 *  *identity (kind and bytes). None has it: HURRAY_E_DEVICE_UNAVAILABLE,
 *  BP-DEV-ID (*ordinal -1); kind NONE: HURRAY_E_INVALID_ARGUMENT. */
HURRAY_API hurray_status hurray_device_find(
    hurray_context *ctx, uint8_t device_tag,
    const struct hurray_backend_device_identity *identity, int32_t *ordinal,
    hurray_error *err);
/** \brief *deferred = 1 if the device's backend defers
 *  hurray_handoff_release_after to its completion, 0 if it waits on the host
 *  then releases (the detail of hurray_device_info says so too). */
HURRAY_API hurray_status hurray_device_release_after_deferred(
    hurray_context *ctx, uint8_t device_tag, int32_t device_ordinal,
    int *deferred, hurray_error *err);
/** \brief Record an event after the work queued on `stream` (NULL: the
 *  device's default stream) and make *desc an EVENT export carrying it:
 *  sync_mode, sync_object, sync_value, event_free_fn and event_user are set,
 *  the rest of *desc is kept. If the export then fails, free the event with
 *  desc->event_free_fn(desc->event_user, desc->sync_object). */
HURRAY_API hurray_status hurray_event_record(hurray_context *ctx,
                                             uint8_t device_tag,
                                             int32_t device_ordinal,
                                             void *stream,
                                             hurray_export_desc *desc,
                                             hurray_error *err);
/** \brief Write a human-readable report of the backends: the plugins
 *  found and where, the devices each sees with their memory classes and IPC
 *  capabilities, and why a plugin or device is unavailable. Returns the
 *  length of the whole report (like snprintf); writes at most cap bytes,
 *  NUL-terminated when cap > 0. Loads every plugin it finds. */
HURRAY_API size_t hurray_backend_report(hurray_context *ctx, char *out,
                                        size_t cap);

/* The IPC channel, the DLPack bridge and network transfers have headers of
 * their own: hurray_ipc.h, hurray_dlpack.h, hurray_net.h. */

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HURRAY_H */
