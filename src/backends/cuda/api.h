// What src/backends/cuda offers the rest of the plugin: the table of CUDA
// driver entry points resolved with dlsym (the plugin links no libcuda), and
// the names and statuses of CUresult codes. Not installed.
#pragma once

#include <cuda.h>  // types and prototypes only: built with the toolkit's headers
#include <hurray_backend.h>

#include "cuda_symbols.h"  // struct Api and kSymbols, from symbols.txt
#include "gpu-stream/error_text.h"

namespace hurray::cuda {

// Api (cuda_symbols.h, written from symbols.txt) holds every driver function
// the plugin calls, resolved at run time, required or not. cuda.h maps
// several API names to versioned symbols with macros (#define cuMemAlloc
// cuMemAlloc_v2), so a member listed as cuMemAlloc is named cuMemAlloc_v2,
// has the prototype of that versioned symbol, and is looked up by that name
// (kit/member_name.h); code writes api.cuMemAlloc and gets it. cu_api.cpp
// checks the versioned names at compile time. Every symbol listed exists in
// the drivers of CUDA 11.0 and later; a missing required one makes probe()
// report HURRAY_E_DEVICE_UNAVAILABLE. A missing optional one is nullptr. The
// optional ones improve messages, except cuLaunchHostFunc (CUDA 10.0):
// without it release_after waits on the host (gpu-stream/release.cpp), and
// the virtual memory management calls (cuMemCreate ...
// cuMemImportFromShareableHandle, CUDA 10.2/11.0): without them memory
// crosses processes by cuIpcGetMemHandle only (gpu-stream/vmm.cpp).

// load_api and the error functions (gpu-stream/runtime_api.h).
#include "gpu-stream/runtime_api.h"

}  // namespace hurray::cuda
