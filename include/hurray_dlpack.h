/*
 * hurray_dlpack.h - the DLPack bridge of libhurray: a hurray_handoff as a
 * DLPack tensor and a DLPack tensor as a hurray_handoff, with the
 * (device_tag, memory_class) <-> DLDeviceType mapping of TABLES.md section 6.
 *
 * C99 and C++ clean like hurray.h; functions are only added (hurray.map).
 *
 * Why the DLPack structs here are called hurray_dl_*, not DLTensor & co.
 * ----------------------------------------------------------------------
 * The bridge needs DLPack's structs, and Debian's dlpack.h (0.6) lacks the
 * versioned one. Declaring them under DLPack's own names, guarded by
 * `#ifndef DLPACK_VERSION`, breaks in both include orders: after a 0.6
 * dlpack.h the guard hides DLManagedTensorVersioned, which 0.6 does not
 * have; before any dlpack.h the user's header redefines every type. So this
 * header declares the same structs, field for field (DLPack 1.x ABI, checked
 * below by size), under the hurray_dl_ prefix: they never clash with a
 * dlpack.h of any version, and a program that has one converts with a
 * pointer cast, e.g. (struct DLManagedTensorVersioned *)t (dlpack.h declares
 * the struct tag; in C++ or with its typedef, DLManagedTensorVersioned *). The constants keep
 * DLPack's numbers (HURRAY_DL_CUDA == kDLCUDA == 2).
 *
 * Ownership, in one paragraph: an export moves the handoff into the tensor;
 * the tensor's deleter releases it, exactly once (BP-REL-ONCE), from any
 * thread (BP-REL-THREAD), and frees the tensor. An import takes over the
 * tensor; the handoff's release calls the tensor's deleter exactly once. On
 * failure nothing moves: the caller still owns what it passed in.
 */
#ifndef HURRAY_DLPACK_H
#define HURRAY_DLPACK_H

/** \file hurray_dlpack.h
 *  \brief The DLPack bridge: a hurray_handoff as a DLPack tensor, and a
 *  DLPack tensor as a hurray_handoff. */

#include "hurray.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------ */
/** \defgroup dlpack DLPack bridge                                          */
/* ------------------------------------------------------------------------ */

/** The DLPack major version this header's structs follow (DLPACK_MAJOR_VERSION). */
#define HURRAY_DLPACK_MAJOR_VERSION 1
/** The DLPack minor version the exported tensors declare (DLPACK_MINOR_VERSION):
 *  DLPack 1.3. Exported tensors always carry strides when ndim != 0 (1.2);
 *  imports accept NULL strides (compact row-major) from older producers. */
#define HURRAY_DLPACK_MINOR_VERSION 3

/** The most dimensions an import or export accepts. A tensor with a larger
 *  (or negative) ndim is refused (HURRAY_E_INVALID_ARGUMENT) before any
 *  shape[] or strides[] entry is read, so a hostile ndim cannot make the
 *  library read past the arrays the producer really has. numpy allows 64,
 *  PyTorch fewer. */
#define HURRAY_DLPACK_MAX_NDIM 64

/** hurray_dl_managed_tensor_versioned.flags: the consumer must not write
 *  (DLPACK_FLAG_BITMASK_READ_ONLY). */
#define HURRAY_DLPACK_FLAG_READ_ONLY 0x1u
/** hurray_dl_managed_tensor_versioned.flags: the producer copied the data
 *  (DLPACK_FLAG_BITMASK_IS_COPIED); libhurray never sets it (BP-ZC-NOCOPY). */
#define HURRAY_DLPACK_FLAG_IS_COPIED 0x2u
/** hurray_dl_managed_tensor_versioned.flags: sub-byte elements are padded
 *  (DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED). */
#define HURRAY_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED 0x4u

/** \brief DLDeviceType: DLPack's device numbers (kDLCPU ...). Only the ones
 *  TABLES.md section 6 maps are listed; the field that holds one is an
 *  int32_t, so any number can be read. */
typedef enum hurray_dl_device_type {
  HURRAY_DL_CPU = 1,            /**< kDLCPU */
  HURRAY_DL_CUDA = 2,           /**< kDLCUDA */
  HURRAY_DL_CUDA_HOST = 3,      /**< kDLCUDAHost: pinned host memory */
  HURRAY_DL_OPENCL = 4,         /**< kDLOpenCL (data is a cl_mem) */
  HURRAY_DL_VULKAN = 7,         /**< kDLVulkan (data is opaque) */
  HURRAY_DL_METAL = 8,          /**< kDLMetal (data is opaque) */
  HURRAY_DL_VPI = 9,            /**< kDLVPI: no mapping, refused */
  HURRAY_DL_ROCM = 10,          /**< kDLROCM */
  HURRAY_DL_ROCM_HOST = 11,     /**< kDLROCMHost: pinned host memory */
  HURRAY_DL_EXT_DEV = 12,       /**< kDLExtDev: no mapping, refused */
  HURRAY_DL_CUDA_MANAGED = 13,  /**< kDLCUDAManaged: unified memory */
  HURRAY_DL_ONEAPI = 14,        /**< kDLOneAPI: Level Zero / SYCL USM */
  HURRAY_DL_WEBGPU = 15,        /**< kDLWebGPU (data is opaque) */
  HURRAY_DL_HEXAGON = 16,       /**< kDLHexagon */
  HURRAY_DL_MAIA = 17,          /**< kDLMAIA: no mapping, refused */
  HURRAY_DL_TRN = 18            /**< kDLTrn (AWS Trainium, DLPack 1.3): no mapping, refused */
} hurray_dl_device_type;

/** \brief DLDataTypeCode: DLPack's element kinds (kDLInt ...). */
typedef enum hurray_dl_data_type_code {
  HURRAY_DL_INT = 0,            /**< kDLInt: signed integer */
  HURRAY_DL_UINT = 1,           /**< kDLUInt: unsigned integer */
  HURRAY_DL_FLOAT = 2,          /**< kDLFloat: IEEE floating point */
  HURRAY_DL_OPAQUE_HANDLE = 3,  /**< kDLOpaqueHandle */
  HURRAY_DL_BFLOAT = 4,         /**< kDLBfloat: bfloat16 */
  HURRAY_DL_COMPLEX = 5,        /**< kDLComplex: two floats */
  HURRAY_DL_BOOL = 6,           /**< kDLBool: one byte per element */
  HURRAY_DL_FLOAT8_E3M4 = 7,       /**< kDLFloat8_e3m4 (DLPack 1.3) */
  HURRAY_DL_FLOAT8_E4M3 = 8,       /**< kDLFloat8_e4m3 */
  HURRAY_DL_FLOAT8_E4M3B11FNUZ = 9, /**< kDLFloat8_e4m3b11fnuz */
  HURRAY_DL_FLOAT8_E4M3FN = 10,    /**< kDLFloat8_e4m3fn */
  HURRAY_DL_FLOAT8_E4M3FNUZ = 11,  /**< kDLFloat8_e4m3fnuz */
  HURRAY_DL_FLOAT8_E5M2 = 12,      /**< kDLFloat8_e5m2 */
  HURRAY_DL_FLOAT8_E5M2FNUZ = 13,  /**< kDLFloat8_e5m2fnuz */
  HURRAY_DL_FLOAT8_E8M0FNU = 14,   /**< kDLFloat8_e8m0fnu */
  HURRAY_DL_FLOAT6_E2M3FN = 15,    /**< kDLFloat6_e2m3fn: 6 bits (sub-byte: padded only) */
  HURRAY_DL_FLOAT6_E3M2FN = 16,    /**< kDLFloat6_e3m2fn: 6 bits (sub-byte: padded only) */
  HURRAY_DL_FLOAT4_E2M1FN = 17     /**< kDLFloat4_e2m1fn: 4 bits (sub-byte: padded only) */
} hurray_dl_data_type_code;

/** \brief DLDevice: where a tensor lives. 8 bytes. */
typedef struct hurray_dl_device {
  int32_t device_type; /**< a hurray_dl_device_type (DLDeviceType) */
  int32_t device_id;   /**< which device of the type; 0 for the CPU */
} hurray_dl_device;

/** \brief DLDataType: the element type, e.g. {HURRAY_DL_FLOAT, 32, 1} for
 *  float32. 4 bytes. */
typedef struct hurray_dl_data_type {
  uint8_t code;   /**< a hurray_dl_data_type_code */
  uint8_t bits;   /**< bits of one lane, e.g. 8, 16, 32, 64 */
  uint16_t lanes; /**< lanes of a vector type; 1 for scalars */
} hurray_dl_data_type;

/** \brief DLTensor: the tensor a DLPack consumer reads. 48 bytes on 64-bit
 *  hosts. Element i of a tensor is at
 *  (char *)data + byte_offset + sum_k(index_k * strides[k]) * itemsize. */
typedef struct hurray_dl_tensor {
  void *data;                 /**< base address, or an opaque handle (OpenCL, Vulkan, Metal, WebGPU) */
  hurray_dl_device device;    /**< the device of the memory */
  int32_t ndim;               /**< number of dimensions, >= 0 */
  hurray_dl_data_type dtype;  /**< the element type */
  int64_t *shape;             /**< ndim extents, each >= 0 */
  int64_t *strides;           /**< ndim strides in elements; NULL: compact row-major */
  uint64_t byte_offset;       /**< bytes from data to the first element */
} hurray_dl_tensor;

/** \brief DLManagedTensor, DLPack's legacy (pre-1.0) owning struct, which
 *  numpy 1.x takes in a "dltensor" capsule. No version, no flags. */
typedef struct hurray_dl_managed_tensor {
  hurray_dl_tensor dl_tensor; /**< the tensor */
  void *manager_ctx;          /**< the producer's */
  /** Called exactly once by the consumer when done; frees the tensor. */
  void (*deleter)(struct hurray_dl_managed_tensor *self);
} hurray_dl_managed_tensor;

/** \brief DLPackVersion. */
typedef struct hurray_dl_pack_version {
  uint32_t major; /**< a consumer refuses a major version it does not know */
  uint32_t minor; /**< minor versions are backward compatible */
} hurray_dl_pack_version;

/** \brief DLManagedTensorVersioned, DLPack 1.x's owning struct (capsule
 *  name "dltensor_versioned"), with a version and flags (READ_ONLY ...). */
typedef struct hurray_dl_managed_tensor_versioned {
  hurray_dl_pack_version version; /**< {HURRAY_DLPACK_MAJOR_VERSION, minor} */
  void *manager_ctx;              /**< the producer's */
  /** Called exactly once by the consumer when done; frees the tensor. */
  void (*deleter)(struct hurray_dl_managed_tensor_versioned *self);
  uint64_t flags;                 /**< HURRAY_DLPACK_FLAG_* bits */
  hurray_dl_tensor dl_tensor;     /**< the tensor */
} hurray_dl_managed_tensor_versioned;

/* DLPack's ABI on 64-bit hosts: these sizes are what dlpack.h gives. */
typedef char hurray_check_dl_tensor_size_[sizeof(void *) != 8 ||
                                                  sizeof(hurray_dl_tensor) == 48
                                              ? 1
                                              : -1];
typedef char hurray_check_dl_managed_size_[sizeof(void *) != 8 ||
                                                   sizeof(hurray_dl_managed_tensor) == 64
                                               ? 1
                                               : -1];
typedef char hurray_check_dl_versioned_size_[
    sizeof(void *) != 8 || sizeof(hurray_dl_managed_tensor_versioned) == 80 ? 1 : -1];

/* ---- DLPack 1.3's C exchange API (DLPackExchangeAPI) ---------------------- */
/** \brief DLPackExchangeAPIHeader: the part of the table that stays stable
 *  across DLPack versions. A consumer checks version.major (1) first. */
typedef struct hurray_dl_exchange_api_header {
  hurray_dl_pack_version version;                 /**< the table's DLPack version */
  struct hurray_dl_exchange_api_header *prev_api; /**< an older table, or NULL */
} hurray_dl_exchange_api_header;

/** \brief DLPackExchangeAPI (DLPack 1.3): the C functions a Python array
 *  library publishes, as an int on its type named `__dlpack_c_exchange_api__`,
 *  so that another library exchanges tensors without Python objects in
 *  between. `py_object` and `out_py_object` are PyObject pointers; each
 *  function returns 0, or -1 with a Python exception set (the GIL held).
 *  The Python package's (python/hurray, hurray._native) takes hurray.Tensor
 *  and hurray.Buffer objects, gives hurray.Handoff objects, and allocates
 *  CPU tensors through libhurray. Same layout as dlpack.h's struct. */
typedef struct hurray_dl_exchange_api {
  hurray_dl_exchange_api_header header; /**< version and chain */
  /** A new tensor of the prototype's dtype, ndim, shape and device;
   *  set_error(error_ctx, kind, message) is called exactly when -1 is returned. */
  int (*managed_tensor_allocator)(hurray_dl_tensor *prototype,
                                  hurray_dl_managed_tensor_versioned **out, void *error_ctx,
                                  void (*set_error)(void *error_ctx, const char *kind,
                                                    const char *message));
  /** The object as an owning tensor (no stream synchronisation). */
  int (*managed_tensor_from_py_object_no_sync)(void *py_object,
                                               hurray_dl_managed_tensor_versioned **out);
  /** An owning tensor (ownership taken, on failure too) as a Python object. */
  int (*managed_tensor_to_py_object_no_sync)(hurray_dl_managed_tensor_versioned *tensor,
                                             void **out_py_object);
  /** The object as a borrowed DLTensor, valid until control returns to the
   *  object's owner; may be NULL in a table. */
  int (*dltensor_from_py_object_no_sync)(void *py_object, hurray_dl_tensor *out);
  /** The producer's current stream on a device (NULL on the CPU). */
  int (*current_work_stream)(int32_t device_type, int32_t device_id,
                             void **out_current_stream);
} hurray_dl_exchange_api;

/* ---- the device mapping (TABLES.md section 6) ---------------------------- */

/** \brief The DLDeviceType of a (device_tag, memory_class) pair, as TABLES.md
 *  section 6 says: (CPU, STANDARD) -> kDLCPU, (CUDA, HOST_PINNED) ->
 *  kDLCUDAHost, (CUDA, UNIFIED) -> kDLCUDAManaged, (LEVEL_ZERO, any) ->
 *  kDLOneAPI, ...
 *  \param device_tag    a hurray_device_tag value.
 *  \param memory_class  a hurray_memory_class value.
 *  \param dl_device_type receives the hurray_dl_device_type; untouched on
 *                       failure. Must not be NULL.
 *  \param err           optional.
 *  \return HURRAY_OK; HURRAY_E_DEVICE_TAG naming BP-DEV-PRIVATE for a private
 *  tag (DLPack has none), or the rule the pair breaks (BP-DEV-RESERVED,
 *  BP-DEV-INVALID, BP-MC-INVALID, BP-MC-PAIR). Thread-safe, no allocation. */
HURRAY_API hurray_status hurray_dlpack_device_to_dl(uint8_t device_tag,
                                                    uint8_t memory_class,
                                                    int32_t *dl_device_type,
                                                    hurray_error *err);

/** \brief The (device_tag, memory_class) pair of a DLDeviceType, as TABLES.md
 *  section 6 says "back from DLPack": kDLCUDAHost -> (CUDA, HOST_PINNED),
 *  kDLMetal -> (METAL, STANDARD), ...
 *  \param dl_device_type a DLDeviceType number.
 *  \param device_tag     receives the tag; must not be NULL.
 *  \param memory_class   receives the class; must not be NULL.
 *  \param err            optional.
 *  \return HURRAY_OK; HURRAY_E_DEVICE_TAG naming BP-DEV-INVALID for kDLVPI,
 *  kDLExtDev, kDLMAIA and numbers DLPack does not define (no mapping). */
HURRAY_API hurray_status hurray_dlpack_device_from_dl(int32_t dl_device_type,
                                                      uint8_t *device_tag,
                                                      uint8_t *memory_class,
                                                      hurray_error *err);

/* ---- handoff -> DLPack ---------------------------------------------------- */

/** \brief Make a DLPack 1.x tensor of a handoff, zero-copy: data is the
 *  handoff's, the device its (device_tag, memory_class) mapped by
 *  hurray_dlpack_device_to_dl() with device_id = device_ordinal, and the
 *  flags carry READ_ONLY (a READ_ONLY or QPARAM handoff).
 *
 *  On success the handoff is moved into the tensor (handoff->release is NULL
 *  afterwards) and *out is a tensor allocated by the library. Its deleter,
 *  called exactly once from any thread, releases the handoff (BP-REL-ONCE,
 *  BP-REL-THREAD) and frees the tensor. On failure *handoff is untouched and
 *  still the caller's, and *out is not written.
 *
 *  \param handoff  a live handoff that passes hurray_handoff_check() (default
 *                  policy). An EVENT handoff must be acquired first
 *                  (hurray_handoff_acquire): DLPack carries no event
 *                  (BP-SYNC-WAIT). CONSUMER_STREAM handoffs are exported for
 *                  the declared stream, as DLPack's stream argument does.
 *  \param dtype    the element type; bits * lanes a whole number of bytes.
 *  \param ndim     number of dimensions, 0 (a scalar) to HURRAY_DLPACK_MAX_NDIM.
 *  \param shape    ndim extents >= 0 (copied); may be NULL when ndim is 0.
 *  \param strides  ndim strides in elements (copied), negative allowed; NULL
 *                  for compact row-major (the tensor then carries explicit
 *                  row-major strides).
 *  \param byte_offset bytes from the handoff's data to element 0. For a
 *                  device whose data is an address it is folded into the
 *                  tensor's data (dl_tensor.byte_offset is then 0, as numpy
 *                  and PyTorch export, so that consumers which ignore
 *                  byte_offset read the right bytes); an opaque handle
 *                  (OPAQUE_DATA, OpenCL, Vulkan, Metal, WebGPU) keeps it.
 *  \param out      receives the tensor; must not be NULL.
 *  \param err      optional.
 *  \return HURRAY_OK; HURRAY_E_INVALID_ARGUMENT when the layout reaches
 *  outside the buffer's byte_size or is malformed; the mapping's status for
 *  a device DLPack has no type for; the check's status for a bad handoff. */
HURRAY_API hurray_status hurray_dlpack_export_versioned(
    hurray_handoff *handoff, hurray_dl_data_type dtype, int32_t ndim,
    const int64_t *shape, const int64_t *strides, uint64_t byte_offset,
    hurray_dl_managed_tensor_versioned **out, hurray_error *err);

/** \brief As hurray_dlpack_export_versioned(), but the legacy
 *  DLManagedTensor that numpy 1.x and other pre-1.0 consumers take. The
 *  legacy struct has no READ_ONLY flag, so a READ_ONLY or QPARAM handoff is
 *  refused (HURRAY_E_UNSUPPORTED naming BP-ZC-NOMUT) rather than handed to a
 *  consumer that would think it writable: use the versioned export.
 *  Parameters and ownership are those of hurray_dlpack_export_versioned().
 *  \param handoff  a live handoff, moved into the tensor on success.
 *  \param dtype    the element type.
 *  \param ndim     number of dimensions.
 *  \param shape    ndim extents (copied).
 *  \param strides  ndim strides in elements (copied), or NULL.
 *  \param byte_offset bytes from the handoff's data to element 0.
 *  \param out      receives the tensor; must not be NULL.
 *  \param err      optional.
 *  \return HURRAY_OK or the status of the first problem found. */
HURRAY_API hurray_status hurray_dlpack_export_legacy(
    hurray_handoff *handoff, hurray_dl_data_type dtype, int32_t ndim,
    const int64_t *shape, const int64_t *strides, uint64_t byte_offset,
    hurray_dl_managed_tensor **out, hurray_error *err);

/* ---- DLPack -> handoff ---------------------------------------------------- */

/** \brief Take a DLPack 1.x tensor over as a handoff, zero-copy.
 *
 *  The handoff describes the bytes the tensor spans: from its lowest to its
 *  highest element (negative strides included), so byte_size is
 *  shape x dtype for a compact tensor; its data is the address of the lowest
 *  byte; its handle is (device_tag, memory_class) of the tensor's device
 *  (hurray_dlpack_device_from_dl), PRODUCER_SYNCED (a DLPack producer has
 *  synchronised for the consumer), device_ordinal = device_id, and READ_ONLY
 *  when the tensor's flags say so. Alignment: the largest power of two that
 *  divides the address, at most 4096; an address aligned to less than 64
 *  is refused (HURRAY_E_ALIGNMENT naming BP-ALIGN-MIN). For devices whose
 *  DLPack data is an opaque handle (OpenCL, Vulkan, Metal, WebGPU) the
 *  handoff is OPAQUE_DATA with alignment 64, and byte_offset must be 0 and
 *  strides non-negative (BP-ZC-NOCOPY: a handle cannot be offset without a
 *  copy).
 *
 *  On success the handoff owns the tensor: its release (exactly once, any
 *  thread) calls tensor->deleter(tensor) once. On failure nothing changes and
 *  the caller still owns the tensor (and calls its deleter).
 *
 *  \param ctx     the context whose policy the handle is validated under
 *                 (NULL: the default context).
 *  \param tensor  the tensor; version.major must be 1 (else
 *                 HURRAY_E_UNSUPPORTED). Must not be NULL.
 *  \param out     receives the handoff; must not be NULL.
 *  \param err     optional.
 *  \return HURRAY_OK; HURRAY_E_DEVICE_TAG (BP-DEV-INVALID) for a device
 *  type without a mapping; HURRAY_E_ALIGNMENT (BP-ALIGN-MIN, or BP-ALIGN-ADDR
 *  when the first byte of a non-empty tensor would be at address 0);
 *  HURRAY_E_UNSUPPORTED (BP-ZC-NOCOPY) as above, or for an element type of
 *  a fractional number of bytes (a sub-byte type is accepted when the
 *  versioned tensor's flags say IS_SUBBYTE_TYPE_PADDED: one byte per lane);
 *  HURRAY_E_INVALID_ARGUMENT for an ndim above HURRAY_DLPACK_MAX_NDIM
 *  (refused before shape[] is read) or a malformed
 *  tensor (negative ndim or extent, NULL shape, zero bits or lanes, a size
 *  that overflows 64 bits, NULL data for a non-empty tensor). */
HURRAY_API hurray_status hurray_dlpack_import_versioned(
    hurray_context *ctx, hurray_dl_managed_tensor_versioned *tensor,
    hurray_handoff *out, hurray_error *err);

/** \brief As hurray_dlpack_import_versioned(), for a legacy DLManagedTensor
 *  (e.g. from numpy 1.x's __dlpack__): no version to check, never READ_ONLY.
 *  \param ctx     the context (NULL: the default context).
 *  \param tensor  the tensor; must not be NULL.
 *  \param out     receives the handoff; must not be NULL.
 *  \param err     optional.
 *  \return HURRAY_OK or the status of the first problem found. */
HURRAY_API hurray_status hurray_dlpack_import_legacy(hurray_context *ctx,
                                                     hurray_dl_managed_tensor *tensor,
                                                     hurray_handoff *out,
                                                     hurray_error *err);

/** \brief What the importer knows of a tensor's synchronisation (issue 22),
 *  for hurray_dlpack_import_versioned_opts() and _legacy_opts(). Start from
 *  HURRAY_DLPACK_IMPORT_OPTIONS_INIT.
 *
 *  A DLPack producer synchronises only when its __dlpack__ (or equivalent)
 *  is given the consumer's stream: the importer declares what it asked for.
 *  sync_mode HURRAY_SYNC_PRODUCER_SYNCED: the data is ready for any reader
 *  (always the case on the CPU, whose DLPack tensors have no streams).
 *  HURRAY_SYNC_CONSUMER_STREAM: the producer was asked to make `stream` wait
 *  for its work; the handoff is CONSUMER_STREAM with that stream as its
 *  sync_object, so its consumer uses only that stream until it waits
 *  (BP-SYNC-STREAM). EVENT is refused: DLPack carries no event. */
typedef struct hurray_dlpack_import_options {
  uint32_t size;      /**< sizeof(hurray_dlpack_import_options) */
  uint32_t flags;     /**< zero (reserved) */
  uint32_t sync_mode; /**< HURRAY_SYNC_PRODUCER_SYNCED or HURRAY_SYNC_CONSUMER_STREAM */
  uint32_t reserved0; /**< zero */
  void *stream;       /**< CONSUMER_STREAM: the stream the producer synchronised to */
} hurray_dlpack_import_options;
/** Initialiser of hurray_dlpack_import_options: its size set,
 *  PRODUCER_SYNCED, no stream. */
#define HURRAY_DLPACK_IMPORT_OPTIONS_INIT                                       \
  { (uint32_t)sizeof(hurray_dlpack_import_options), 0, 0, 0, NULL }

/** \brief As hurray_dlpack_import_versioned(), with the importer's
 *  synchronisation declaration. `options` NULL is the same as
 *  HURRAY_DLPACK_IMPORT_OPTIONS_INIT (PRODUCER_SYNCED).
 *  \param ctx      the context (NULL: the default context).
 *  \param tensor   the tensor; must not be NULL.
 *  \param options  the declaration, or NULL. size below the struct's, nonzero
 *                  flags or reserved0, an EVENT or unknown sync_mode,
 *                  CONSUMER_STREAM without a stream: HURRAY_E_INVALID_ARGUMENT;
 *                  CONSUMER_STREAM on the CPU: HURRAY_E_SYNC (BP-SYNC-CPU).
 *  \param out      receives the handoff; must not be NULL.
 *  \param err      optional.
 *  \return HURRAY_OK or the status of the first problem found; on failure
 *  the caller still owns the tensor. */
HURRAY_API hurray_status hurray_dlpack_import_versioned_opts(
    hurray_context *ctx, hurray_dl_managed_tensor_versioned *tensor,
    const hurray_dlpack_import_options *options, hurray_handoff *out, hurray_error *err);

/** \brief As hurray_dlpack_import_legacy(), with the importer's
 *  synchronisation declaration (see hurray_dlpack_import_versioned_opts()).
 *  \param ctx      the context (NULL: the default context).
 *  \param tensor   the tensor; must not be NULL.
 *  \param options  the declaration, or NULL (PRODUCER_SYNCED).
 *  \param out      receives the handoff; must not be NULL.
 *  \param err      optional.
 *  \return HURRAY_OK or the status of the first problem found. */
HURRAY_API hurray_status hurray_dlpack_import_legacy_opts(
    hurray_context *ctx, hurray_dl_managed_tensor *tensor,
    const hurray_dlpack_import_options *options, hurray_handoff *out, hurray_error *err);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* HURRAY_DLPACK_H */
