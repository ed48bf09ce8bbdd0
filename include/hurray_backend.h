/*
 * hurray_backend.h - the device plugin ABI of libhurray (version 1).
 *
 * A backend is a shared object, `libhurray-<name>.so`, that serves one
 * device_tag. libhurray finds plugins in $HURRAY_BACKEND_PATH (a colon-
 * separated list of folders) and in <libdir>/hurray/, loads a device's plugin
 * the first time that device is used, and never at library load.
 *
 * A plugin exports exactly one symbol:
 *
 *     const hurray_backend_v1 *hurray_backend_entry(void);
 *
 * returning a table that lives as long as the plugin is loaded. The loader
 * refuses (and explains with HURRAY_LOG=debug) a table whose api_version is not
 * HURRAY_BACKEND_API_VERSION or whose size is smaller than it expects, and a
 * plugin whose device_tag another loaded plugin already serves.
 *
 * Rules for plugin authors:
 *  - Do not initialise the vendor runtime in the entry function or at load
 *    time: do it in probe(), which the loader calls once, on first use.
 *  - Link no vendor runtime: dlopen it in probe(), so that a machine without
 *    the driver loads the plugin and gets HURRAY_E_DEVICE_UNAVAILABLE with
 *    the reason ("libvulkan.so.1: cannot open shared object file").
 *  - Translate vendor errors at the boundary: a hurray_status and a message
 *    such as "[vkAllocateMemory] VK_ERROR_OUT_OF_DEVICE_MEMORY".
 *  - Never apply protocol rules: libhurray validates handles; the plugin
 *    allocates, synchronises and copies.
 *  - Every function may be called from any thread; the plugin locks what it
 *    must. Optional functions may be NULL.
 *  - Fill `err` on failure with hurray_backend_fail-style messages; err may be
 *    NULL.
 *  - No C++ exception (or any other unwinding) may leave an entry: the
 *    in-tree plugins put every entry behind one barrier (src/backends/kit:
 *    std::bad_alloc becomes HURRAY_E_OUT_OF_MEMORY, anything else
 *    HURRAY_E_INTERNAL).
 *
 * What the loader guarantees (each entry below says "Loader:"): libhurray
 * calls an entry only with the state probe() returned, with a device
 * ordinal it has checked against device_count() (an ordinal at or above it
 * is refused as HURRAY_E_DEVICE_UNAVAILABLE, BP-PUT-DEVICE, before the
 * plugin is called), with handles it has validated, and with copy ranges
 * inside the allocation. Other callers (tests, tools that load a plugin
 * themselves) are not bound by this, so a plugin still refuses a bad
 * argument without crashing: a NULL state is HURRAY_E_INVALID_ARGUMENT, a
 * bad ordinal HURRAY_E_DEVICE_UNAVAILABLE, in every in-tree plugin.
 *
 * examples/backend-private/ is a complete plugin for private device tag 0xF0.
 */
#ifndef HURRAY_BACKEND_H
#define HURRAY_BACKEND_H

/** \file hurray_backend.h
 *  \brief The device plugin ABI (version 1): the table a libhurray-NAME.so
 *  plugin exports through hurray_backend_entry(). */

#include "hurray.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The plugin ABI version of this header (hurray_backend_v1.api_version). */
#define HURRAY_BACKEND_API_VERSION 1u
/** The name of the one symbol a plugin exports. */
#define HURRAY_BACKEND_ENTRY_SYMBOL "hurray_backend_entry"

/** \brief One allocation made by a backend. Filled by alloc() and
 *  ipc_import(); libhurray keeps it and hands it back to free(). */
typedef struct hurray_backend_allocation {
  void *data;            /**< host address, device address, or opaque handle */
  uint64_t byte_size;    /**< as asked */
  uint32_t alignment;    /**< guaranteed alignment of data (when an address) */
  uint32_t flags;        /**< HURRAY_HANDOFF_OPAQUE_DATA when data is a handle */
  int32_t device;        /**< device ordinal */
  uint8_t memory_class;  /**< as asked */
  uint8_t reserved0[3];  /**< zero */
  void *host;            /**< host-visible mapping of the memory, or NULL */
  void *plugin_data;     /**< the plugin's own */
  uint64_t reserved[2];  /**< the plugin's own too */
} hurray_backend_allocation;

/** Capability bits of hurray_backend_device_info.ipc. */
#define HURRAY_BACKEND_IPC_EVENTS HURRAY_IPC_SYNC_EVENTS   /**< events cross processes */
#define HURRAY_BACKEND_IPC_STREAMS HURRAY_IPC_SYNC_STREAMS /**< streams cross processes */
#define HURRAY_BACKEND_IPC_MEMORY 0x4u                     /**< memory crosses processes */

/** \brief What one device offers. */
typedef struct hurray_backend_device_info {
  char name[128];           /**< e.g. "llvmpipe (LLVM 15.0.6, 256 bits)" */
  uint32_t memory_classes;  /**< bit n set: memory class n can be allocated */
  uint32_t ipc;             /**< HURRAY_BACKEND_IPC_* bits */
  uint32_t min_alignment;   /**< alignment every allocation has at least */
  uint32_t reserved0;       /**< zero */
  char detail[256];         /**< free text: which memory types serve which class */
} hurray_backend_device_info;

/** \brief An IPC handle: what crosses to another process for memory or an
 *  event. fd is a file descriptor to pass with SCM_RIGHTS (-1 if none);
 *  bytes carry an opaque vendor handle (CUDA's is 64 bytes). */
typedef struct hurray_backend_ipc_handle {
  uint32_t kind; /**< plugin-defined, non-zero */
  int32_t fd;         /**< descriptor to pass with SCM_RIGHTS, or -1 */
  uint64_t byte_size; /**< size of the memory */
  uint64_t offset;    /**< offset of the buffer in the exported object */
  uint8_t bytes[64];  /**< opaque vendor handle */
} hurray_backend_ipc_handle;

/** Kinds of hurray_backend_device_identity. */
#define HURRAY_BACKEND_ID_NONE 0u /**< no stable identity known */
#define HURRAY_BACKEND_ID_UUID 1u /**< bytes: the vendor's 16-byte device UUID */
#define HURRAY_BACKEND_ID_LUID 2u /**< bytes[0..7]: an 8-byte LUID, the rest zero */
#define HURRAY_BACKEND_ID_PCI 3u  /**< bytes[0..3] PCI domain (LE), [4] bus,
                                       [5] device, [6] function, the rest zero */

/** \brief A device's stable identity (the device_identity entry). Two
 *  devices are the same when kind and all 16 bytes are equal. */
typedef struct hurray_backend_device_identity {
  uint32_t kind;      /**< HURRAY_BACKEND_ID_* */
  uint32_t reserved0; /**< zero */
  uint8_t bytes[16];  /**< the identity; unused bytes zero */
} hurray_backend_device_identity;

/** \brief Native handles of a device, for producers and consumers that
 *  submit their own work on the backend's device. What each slot holds is
 *  defined per backend in its documentation, a page of docs/backends/
 *  (Vulkan: instance, physical
 *  device, device, queue, queue family index; OpenCL: platform, device,
 *  context, command queue). */
typedef struct hurray_backend_native {
  void *handles[8]; /**< per backend; unused slots NULL */
} hurray_backend_native;

/** \brief The function table of a plugin, version 1. */
typedef struct hurray_backend_v1 {
  uint32_t api_version; /**< HURRAY_BACKEND_API_VERSION */
  uint32_t size;        /**< sizeof(hurray_backend_v1) */
  const char *name;     /**< short name, e.g. "vulkan" */
  uint8_t device_tag;   /**< the tag this plugin serves */
  uint8_t reserved0[7]; /**< zero */

  /** Open the vendor runtime. On success *state is the plugin's state for
   *  every later call. HURRAY_E_DEVICE_UNAVAILABLE with the reason when the
   *  runtime or a device is missing. Called once.
   *  Loader: once per process, on first use of the device tag, state not
   *  NULL; never from the entry function or at library load. */
  hurray_status (*probe)(void **state, hurray_error *err);
  /** Release everything (at process exit or context teardown). Optional.
   *  Loader: with the state of a successful probe, at most once; allocations
   *  and events still alive are the plugin's to release. */
  void (*shutdown)(void *state);
  /** Number of devices (>= 1 after a successful probe). libhurray reads it
   *  once when the backend becomes ready and trusts ordinals below it without
   *  asking again; it asks again for an ordinal at or above it.
   *  Loader: with the state of a successful probe; a result below 1 after
   *  probe makes the backend unavailable. */
  int32_t (*device_count)(void *state);
  /** Describe a device. Loader: 0 <= device < device_count(), out not NULL. */
  hurray_status (*device_info)(void *state, int32_t device,
                               hurray_backend_device_info *out,
                               hurray_error *err);

  /** Allocate byte_size bytes of memory_class, aligned to at least
   *  `alignment` (a power of two >= 64). flags: HURRAY_ALLOC_SHAREABLE
   *  when the memory must be exportable. An absent class is
   *  HURRAY_E_DEVICE_UNAVAILABLE, never another class (BP-PUT-DEVICE).
   *  Loader: a valid ordinal, memory_class, byte_size and alignment from a
   *  handle libhurray validated (BP-ALIGN-*, BP-MC-*), out not NULL and
   *  zeroed. */
  hurray_status (*alloc)(void *state, int32_t device, uint8_t memory_class,
                         uint64_t byte_size, uint32_t alignment, uint32_t flags,
                         hurray_backend_allocation *out, hurray_error *err);
  /** Free an allocation made by alloc() or ipc_import_memory().
   *  Loader: only such an allocation of this plugin, once. */
  void (*free)(void *state, hurray_backend_allocation *allocation);
  /** Copy between host memory and an allocation.
   *  Loader: src made by this plugin, [offset, offset + n) inside its
   *  byte_size, dst not NULL when n > 0. */
  hurray_status (*copy_to_host)(void *state, const hurray_backend_allocation *src,
                                uint64_t offset, void *dst, uint64_t n,
                                hurray_error *err);
  /** The other direction. Loader: as copy_to_host. */
  hurray_status (*copy_from_host)(void *state, hurray_backend_allocation *dst,
                                  uint64_t offset, const void *src, uint64_t n,
                                  hurray_error *err);
  /** Optional: say what a pointer is (device, memory class), for checking a
   *  handle's device_tag/memory_class against the real allocation.
   *  Loader: ptr as the caller declared it; device or memory_class may be
   *  NULL. Memory the plugin does not know is HURRAY_E_INVALID_ARGUMENT. */
  hurray_status (*classify)(void *state, const void *ptr, int32_t *device,
                            uint8_t *memory_class, hurray_error *err);

  /** Record an event on `stream` (NULL: the device's default stream) after
   *  the work queued so far: *event and *value are what a consumer waits on
   *  (value is 0 for binary events). Release it with event_release.
   *  Loader: a valid ordinal; event and value not NULL; stream is the
   *  caller's (the plugin's documentation says which streams it accepts). */
  hurray_status (*event_record)(void *state, int32_t device, void *stream,
                                void **event, uint64_t *value, hurray_error *err);
  /** Make `stream` wait for (event, value) before its later work; stream
   *  NULL waits on the host (BP-SYNC-WAIT).
   *  Loader: a valid ordinal and an event from event_record or
   *  ipc_import_event of the same device. */
  hurray_status (*event_wait)(void *state, int32_t device, void *event,
                              uint64_t value, void *stream, hurray_error *err);
  /** Release an event from event_record or ipc_import_event.
   *  Loader: once per event. */
  void (*event_release)(void *state, int32_t device, void *event);

  /** Optional IPC: export / import memory and events. NULL entries mean
   *  the plugin has no IPC (the loader answers HURRAY_E_UNSUPPORTED).
   *  Loader: an allocation of this plugin, out not NULL. */
  hurray_status (*ipc_export_memory)(void *state,
                                     const hurray_backend_allocation *allocation,
                                     hurray_backend_ipc_handle *out,
                                     hurray_error *err);
  /** Map memory another process exported. Loader: a valid ordinal and a
   *  handle as received from the peer (kind not checked: the plugin checks
   *  it is one of its own, a four-character code). */
  hurray_status (*ipc_import_memory)(void *state, int32_t device,
                                     const hurray_backend_ipc_handle *handle,
                                     uint8_t memory_class,
                                     hurray_backend_allocation *out,
                                     hurray_error *err);
  /** Export an event for another process. Loader: a valid ordinal and an
   *  event from event_record of that device. */
  hurray_status (*ipc_export_event)(void *state, int32_t device, void *event,
                                    hurray_backend_ipc_handle *out,
                                    hurray_error *err);
  /** Open an event another process exported. Loader: a valid ordinal,
   *  a handle as received from the peer, event not NULL. */
  hurray_status (*ipc_import_event)(void *state, int32_t device,
                                    const hurray_backend_ipc_handle *handle,
                                    void **event, hurray_error *err);

  /** Optional: native handles of a device (see hurray_backend_native;
   *  each plugin's slots are in its page of docs/backends/). Loader: a valid
   *  ordinal, out not NULL. */
  hurray_status (*native)(void *state, int32_t device, hurray_backend_native *out,
                          hurray_error *err);

  /* Added before 1.0.0 in place of reserved[0] and reserved[1]: the table's
   * size is unchanged, and a plugin built before leaves both NULL. */

  /** Optional: the device's stable identity, the same in every process
   *  whatever the device order there (CUDA_VISIBLE_DEVICES, containers):
   *  the vendor's device UUID, else its strongest identity (PCI address,
   *  LUID). NULL entry, or kind HURRAY_BACKEND_ID_NONE: the device has none
   *  libhurray can match (imports then fall back to the ordinal).
   *  Loader: a valid ordinal, out not NULL and zeroed. */
  hurray_status (*device_identity)(void *state, int32_t device,
                                   struct hurray_backend_device_identity *out,
                                   hurray_error *err);
  /** Optional: call done(user) exactly once, from any thread, once the
   *  work that uses a buffer has completed, and return at once: when event
   *  is not NULL, once (event, value) of event_record/ipc_import_event has
   *  completed; else once the work queued on `stream` so far has (stream
   *  NULL: the device's default stream). On an error return done is never
   *  called. done must not call into this plugin on the thread that calls
   *  it before returning from this entry (it may run inline when the work
   *  has completed already). NULL entry: libhurray waits on the host
   *  (event_wait with stream NULL), then calls done, and says so in
   *  hurray_device_info. Loader: a valid ordinal, done not NULL. */
  hurray_status (*release_after)(void *state, int32_t device, void *stream, void *event,
                                 uint64_t value, void (*done)(void *user), void *user,
                                 hurray_error *err);

  /* Added in 1.1 in place of reserved[0]: the table's size is unchanged,
   * and a plugin built before leaves it NULL. */

  /** Optional: export memory the plugin did not allocate (a buffer wrapped
   *  around the caller's device pointer, or a view of one) for another
   *  process: the plugin finds the runtime allocation that holds
   *  [data, data + byte_size) and exports that allocation, with out->offset
   *  where data lies in it and out->byte_size >= byte_size. The consumer
   *  imports it with ipc_import_memory. NULL entry: wrapped memory of this
   *  plugin cannot be sent (HURRAY_E_UNSUPPORTED). On success out->fd (if
   *  >= 0) is the caller's. Loader: a valid ordinal, the memory_class the
   *  buffer was wrapped as, data not NULL, byte_size > 0, out not NULL. */
  hurray_status (*ipc_export_pointer)(void *state, int32_t device, uint8_t memory_class,
                                      const void *data, uint64_t byte_size,
                                      hurray_backend_ipc_handle *out, hurray_error *err);

  void *reserved[5]; /**< NULL */
} hurray_backend_v1;

/** The entry symbol's type. */
typedef const hurray_backend_v1 *(*hurray_backend_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HURRAY_BACKEND_H */
