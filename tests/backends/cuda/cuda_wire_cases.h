// The HANDOFFs the raw wire peer (cuda_fake_wire_peer.cpp) sends, in order,
// and what the consumer (cuda_fake_wire_test.cpp) must answer to each: VMM
// memory of the plugin's kind (CUDA 'CUV1', HIP 'HIV1': cuda_ipc_driver.h)
// a hostile producer breaks one way each, then a correct one. Every bad one
// is refused HURRAY_E_INVALID_ARGUMENT naming BP-IPC-DEVMEM (docs/spec/ipc.md), given back with RELEASE, its descriptor
// closed; the channel stays open.
#pragma once

#include "cuda_ipc_driver.h"

namespace cuda_wire_test {

struct Case {
  const char *name;  // the peer's
  const char *says;  // in the consumer's error message
};

inline constexpr Case kBad[] = {
    {"offset-past", "do not fit"},      // offset at the allocation's end
    {"size-past", "do not fit"},        // 8192 bytes from 4096 before the end
    {"offset-wrap", "do not fit"},      // offset 2^64 - 10: offset + size wraps
    {"size-odd", "do not fit"},         // the allocation's size no multiple of 2 MiB
    {"size-zero", "do not fit"},        // an allocation of 0 bytes
    {"size-lie", cuda_ipc_test::kVmmMap},  // says 4 MiB, the descriptor holds 2
    {"garbage", "not zeros"},           // 64 vendor bytes of 0xA5
    {"memfd", cuda_ipc_test::kVmmImport},  // a memfd the driver did not export
    {"pipe", "not a memory descriptor"},
    {"socket", "not a memory descriptor"},
    {"folder", "not a memory descriptor"},
    {"none", "came without"},           // has_fd 0
    {"kind-cum1", "travels without"},   // the descriptor under the IPC memory handle's kind
    {"kind-other", GPU_IPC_PICK("its kind is 'HPV1'", "its kind is 'CUV1'")},  // another backend's
};
inline constexpr int kBadCount = sizeof kBad / sizeof kBad[0];

// The correct HANDOFF after them: 8192 bytes at offset 4096 of a 2 MiB VMM
// allocation, each 0x5A; the consumer writes 0xEE into the first and
// releases it, which the peer checks.
inline constexpr unsigned long long kGoodOffset = 4096, kGoodSize = 8192;

}  // namespace cuda_wire_test
