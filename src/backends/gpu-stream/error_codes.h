// The error codes of the CUDA driver API (CUresult, cuda.h of CUDA 13.0) and
// of the HIP runtime (hipError_t of HIP 5.2, the first name of each number)
// in one list, by number: X(code, CUDA name, HIP name, CUDA description,
// HIP description), "" where that vendor has no code of that number (or no
// description: the short English texts cover the commonest codes, for when
// the runtime gives none). Numbers, not the headers' enumerators, so
// that the plugins build with older headers too. Part of the GPU stream
// driver; each plugin's api file builds its tables from its two columns
// (HURRAY_GPU_DEFINE_ERROR_TABLES, error_text.h).
#pragma once

// clang-format off
#define HURRAY_GPU_ERROR_CODES(X) \
  X(0, "CUDA_SUCCESS", "hipSuccess", "no error", "no error") \
  X(1, "CUDA_ERROR_INVALID_VALUE", "hipErrorInvalidValue", "invalid argument", "invalid argument") \
  X(2, "CUDA_ERROR_OUT_OF_MEMORY", "hipErrorOutOfMemory", "out of memory", "out of memory") \
  X(3, "CUDA_ERROR_NOT_INITIALIZED", "hipErrorNotInitialized", "the driver is not initialized", "the runtime could not be initialized") \
  X(4, "CUDA_ERROR_DEINITIALIZED", "hipErrorDeinitialized", "the driver is shutting down", "") \
  X(5, "CUDA_ERROR_PROFILER_DISABLED", "hipErrorProfilerDisabled", "", "") \
  X(6, "CUDA_ERROR_PROFILER_NOT_INITIALIZED", "hipErrorProfilerNotInitialized", "", "") \
  X(7, "CUDA_ERROR_PROFILER_ALREADY_STARTED", "hipErrorProfilerAlreadyStarted", "", "") \
  X(8, "CUDA_ERROR_PROFILER_ALREADY_STOPPED", "hipErrorProfilerAlreadyStopped", "", "") \
  X(9, "", "hipErrorInvalidConfiguration", "", "") \
  X(12, "", "hipErrorInvalidPitchValue", "", "") \
  X(13, "", "hipErrorInvalidSymbol", "", "") \
  X(17, "", "hipErrorInvalidDevicePointer", "", "") \
  X(21, "", "hipErrorInvalidMemcpyDirection", "", "") \
  X(34, "CUDA_ERROR_STUB_LIBRARY", "", "the CUDA driver library loaded is a stub, not a real driver", "") \
  X(35, "", "hipErrorInsufficientDriver", "", "the installed driver (amdgpu / ROCk) is too old for this runtime") \
  X(36, "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "", "", "") \
  X(46, "CUDA_ERROR_DEVICE_UNAVAILABLE", "", "the CUDA devices are busy or unavailable", "") \
  X(52, "", "hipErrorMissingConfiguration", "", "") \
  X(53, "", "hipErrorPriorLaunchFailure", "", "") \
  X(98, "", "hipErrorInvalidDeviceFunction", "", "") \
  X(100, "CUDA_ERROR_NO_DEVICE", "hipErrorNoDevice", "no CUDA-capable device is detected", "the HIP runtime found no usable GPU") \
  X(101, "CUDA_ERROR_INVALID_DEVICE", "hipErrorInvalidDevice", "invalid device ordinal", "invalid device ordinal") \
  X(102, "CUDA_ERROR_DEVICE_NOT_LICENSED", "", "", "") \
  X(200, "CUDA_ERROR_INVALID_IMAGE", "hipErrorInvalidImage", "", "") \
  X(201, "CUDA_ERROR_INVALID_CONTEXT", "hipErrorInvalidContext", "invalid device context", "") \
  X(202, "CUDA_ERROR_CONTEXT_ALREADY_CURRENT", "hipErrorContextAlreadyCurrent", "", "") \
  X(205, "CUDA_ERROR_MAP_FAILED", "hipErrorMapFailed", "", "") \
  X(206, "CUDA_ERROR_UNMAP_FAILED", "hipErrorUnmapFailed", "", "") \
  X(207, "CUDA_ERROR_ARRAY_IS_MAPPED", "hipErrorArrayIsMapped", "", "") \
  X(208, "CUDA_ERROR_ALREADY_MAPPED", "hipErrorAlreadyMapped", "", "") \
  X(209, "CUDA_ERROR_NO_BINARY_FOR_GPU", "hipErrorNoBinaryForGpu", "", "") \
  X(210, "CUDA_ERROR_ALREADY_ACQUIRED", "hipErrorAlreadyAcquired", "", "") \
  X(211, "CUDA_ERROR_NOT_MAPPED", "hipErrorNotMapped", "", "") \
  X(212, "CUDA_ERROR_NOT_MAPPED_AS_ARRAY", "hipErrorNotMappedAsArray", "", "") \
  X(213, "CUDA_ERROR_NOT_MAPPED_AS_POINTER", "hipErrorNotMappedAsPointer", "", "") \
  X(214, "CUDA_ERROR_ECC_UNCORRECTABLE", "hipErrorECCNotCorrectable", "", "") \
  X(215, "CUDA_ERROR_UNSUPPORTED_LIMIT", "hipErrorUnsupportedLimit", "", "") \
  X(216, "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "hipErrorContextAlreadyInUse", "", "") \
  X(217, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "hipErrorPeerAccessUnsupported", "peer access is not supported between these devices", "peer access is not supported between these devices") \
  X(218, "CUDA_ERROR_INVALID_PTX", "hipErrorInvalidKernelFile", "a PTX JIT compilation failed", "") \
  X(219, "CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "hipErrorInvalidGraphicsContext", "", "") \
  X(220, "CUDA_ERROR_NVLINK_UNCORRECTABLE", "", "", "") \
  X(221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "", "", "") \
  X(222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "", "", "") \
  X(223, "CUDA_ERROR_JIT_COMPILATION_DISABLED", "", "", "") \
  X(224, "CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY", "", "", "") \
  X(225, "CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC", "", "", "") \
  X(226, "CUDA_ERROR_CONTAINED", "", "", "") \
  X(300, "CUDA_ERROR_INVALID_SOURCE", "hipErrorInvalidSource", "", "") \
  X(301, "CUDA_ERROR_FILE_NOT_FOUND", "hipErrorFileNotFound", "", "") \
  X(302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "hipErrorSharedObjectSymbolNotFound", "", "") \
  X(303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED", "hipErrorSharedObjectInitFailed", "", "") \
  X(304, "CUDA_ERROR_OPERATING_SYSTEM", "hipErrorOperatingSystem", "", "") \
  X(400, "CUDA_ERROR_INVALID_HANDLE", "hipErrorInvalidHandle", "invalid resource handle", "invalid resource handle") \
  X(401, "CUDA_ERROR_ILLEGAL_STATE", "hipErrorIllegalState", "", "") \
  X(402, "CUDA_ERROR_LOSSY_QUERY", "", "", "") \
  X(500, "CUDA_ERROR_NOT_FOUND", "hipErrorNotFound", "", "") \
  X(600, "CUDA_ERROR_NOT_READY", "hipErrorNotReady", "", "") \
  X(700, "CUDA_ERROR_ILLEGAL_ADDRESS", "hipErrorIllegalAddress", "", "") \
  X(701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "hipErrorLaunchOutOfResources", "", "") \
  X(702, "CUDA_ERROR_LAUNCH_TIMEOUT", "hipErrorLaunchTimeOut", "", "") \
  X(703, "CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING", "", "", "") \
  X(704, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "hipErrorPeerAccessAlreadyEnabled", "peer access is already enabled", "peer access is already enabled") \
  X(705, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "hipErrorPeerAccessNotEnabled", "peer access has not been enabled", "") \
  X(708, "CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE", "hipErrorSetOnActiveProcess", "", "") \
  X(709, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "hipErrorContextIsDestroyed", "", "") \
  X(710, "CUDA_ERROR_ASSERT", "hipErrorAssert", "", "") \
  X(711, "CUDA_ERROR_TOO_MANY_PEERS", "", "", "") \
  X(712, "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "", "", "") \
  X(713, "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "", "", "") \
  X(714, "CUDA_ERROR_HARDWARE_STACK_ERROR", "", "", "") \
  X(715, "CUDA_ERROR_ILLEGAL_INSTRUCTION", "", "", "") \
  X(716, "CUDA_ERROR_MISALIGNED_ADDRESS", "", "", "") \
  X(717, "CUDA_ERROR_INVALID_ADDRESS_SPACE", "", "", "") \
  X(718, "CUDA_ERROR_INVALID_PC", "", "", "") \
  X(719, "CUDA_ERROR_LAUNCH_FAILED", "hipErrorLaunchFailure", "", "") \
  X(720, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "hipErrorCooperativeLaunchTooLarge", "", "") \
  X(721, "CUDA_ERROR_TENSOR_MEMORY_LEAK", "", "", "") \
  X(800, "CUDA_ERROR_NOT_PERMITTED", "", "operation not permitted", "") \
  X(801, "CUDA_ERROR_NOT_SUPPORTED", "hipErrorNotSupported", "operation not supported", "operation not supported") \
  X(802, "CUDA_ERROR_SYSTEM_NOT_READY", "", "", "") \
  X(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "", "the system has a driver/library version mismatch", "") \
  X(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "", "this device does not support the forward-compatible driver", "") \
  X(805, "CUDA_ERROR_MPS_CONNECTION_FAILED", "", "", "") \
  X(806, "CUDA_ERROR_MPS_RPC_FAILURE", "", "", "") \
  X(807, "CUDA_ERROR_MPS_SERVER_NOT_READY", "", "", "") \
  X(808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED", "", "", "") \
  X(809, "CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED", "", "", "") \
  X(810, "CUDA_ERROR_MPS_CLIENT_TERMINATED", "", "", "") \
  X(811, "CUDA_ERROR_CDP_NOT_SUPPORTED", "", "", "") \
  X(812, "CUDA_ERROR_CDP_VERSION_MISMATCH", "", "", "") \
  X(900, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "hipErrorStreamCaptureUnsupported", "", "") \
  X(901, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "hipErrorStreamCaptureInvalidated", "", "") \
  X(902, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "hipErrorStreamCaptureMerge", "", "") \
  X(903, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "hipErrorStreamCaptureUnmatched", "", "") \
  X(904, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "hipErrorStreamCaptureUnjoined", "", "") \
  X(905, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "hipErrorStreamCaptureIsolation", "", "") \
  X(906, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "hipErrorStreamCaptureImplicit", "", "") \
  X(907, "CUDA_ERROR_CAPTURED_EVENT", "hipErrorCapturedEvent", "", "") \
  X(908, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "hipErrorStreamCaptureWrongThread", "", "") \
  X(909, "CUDA_ERROR_TIMEOUT", "", "", "") \
  X(910, "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", "hipErrorGraphExecUpdateFailure", "", "") \
  X(911, "CUDA_ERROR_EXTERNAL_DEVICE", "", "", "") \
  X(912, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "", "", "") \
  X(913, "CUDA_ERROR_FUNCTION_NOT_LOADED", "", "", "") \
  X(914, "CUDA_ERROR_INVALID_RESOURCE_TYPE", "", "", "") \
  X(915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", "", "", "") \
  X(916, "CUDA_ERROR_KEY_ROTATION", "", "", "") \
  X(999, "CUDA_ERROR_UNKNOWN", "hipErrorUnknown", "unknown error", "unknown error") \
  X(1052, "", "hipErrorRuntimeMemory", "", "") \
  X(1053, "", "hipErrorRuntimeOther", "", "")
// clang-format on
