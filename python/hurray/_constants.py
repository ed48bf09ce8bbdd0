"""Numbers of the protocol (TABLES.md) and of DLPack, as module constants."""

DEVICE_CPU, DEVICE_CUDA, DEVICE_ROCM, DEVICE_METAL = 0x00, 0x01, 0x02, 0x03
DEVICE_VULKAN, DEVICE_WEBGPU, DEVICE_HEXAGON, DEVICE_LEVEL_ZERO = 0x04, 0x05, 0x06, 0x07
DEVICE_OPENCL = 0x08
MEMORY_STANDARD, MEMORY_HOST_PINNED, MEMORY_UNIFIED, MEMORY_PEER = 0x00, 0x01, 0x02, 0x03
SYNC_PRODUCER_SYNCED, SYNC_EVENT, SYNC_CONSUMER_STREAM = 0x00, 0x01, 0x02
TRANSPORTS = {"in-process": 0, "ipc": 1, "rdma": 2, "cross-machine": 3}
HANDOFF_READ_ONLY, HANDOFF_OPAQUE_DATA, HANDOFF_QPARAM = 0x1, 0x2, 0x4
HANDLE_SIZE = 16

# hurray_status numbers (hurray.h)
E_INVALID_ARGUMENT, E_SIZE, E_SYNC, E_ALREADY_RELEASED = 1, 2, 8, 9
E_DEVICE_UNAVAILABLE, E_UNSUPPORTED = 10, 12

# DLPack
DLPACK_VERSION = (1, 3)  # what this package declares and asks for (DLPack 1.3)
DLPACK_MAX_NDIM = 64  # HURRAY_DLPACK_MAX_NDIM
DLPACK_FLAG_READ_ONLY, DLPACK_FLAG_IS_COPIED, DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED = 0x1, 0x2, 0x4
# DLDeviceType
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_OPENCL, DL_VULKAN, DL_METAL = 1, 2, 3, 4, 7, 8
DL_ROCM, DL_ROCM_HOST, DL_CUDA_MANAGED, DL_ONEAPI, DL_WEBGPU = 10, 11, 13, 14, 15
# DLDataTypeCode
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_COMPLEX, DL_BOOL = 0, 1, 2, 4, 5, 6

U8_MAX, U32_MAX, U64_MAX = 0xFF, 0xFFFFFFFF, 0xFFFFFFFFFFFFFFFF
I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def check_int(name, value, lo, hi):
    """value as an int in [lo, hi], or ValueError/TypeError naming the field
    (ctypes would silently keep the low bits: Handle(2**64 + 5) is 5)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError("hurray: %s must be an integer, not %s" % (name, type(value).__name__))
    v = value.__index__()
    if not lo <= v <= hi:
        raise ValueError("hurray: %s = %d is out of range [%d, %d]" % (name, v, lo, hi))
    return v
