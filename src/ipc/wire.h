// The wire format of an IPC channel (docs/spec/ipc.md): fixed-size,
// little-endian messages with a 16-byte header. parse() and encode() are
// pure functions of their arguments (no I/O, no allocation, no global
// state), so a fuzzer drives parse() directly (tests/fuzz/fuzz_ipc_message).
// Self-contained: it uses only the exported part of libhurray, so the fuzz
// replay build can compile it into a program that links the shared library.
#pragma once

#include <hurray.h>

#include <cstddef>
#include <cstdint>

#include "../backends/cpu/cpu.h"

namespace hurray::ipc {

constexpr uint32_t kMagic = 0x50495248u;  // "HRIP" in memory order
constexpr uint16_t kWireVersion = 1;      // of the framing (header layout)
constexpr size_t kHeaderSize = 16;
constexpr size_t kMaxDevices = 16;
constexpr size_t kMaxFds = 2;
constexpr size_t kIpcHandleSize = 88;
constexpr size_t kHelloFixed = 8, kDeviceEntry = 8;
constexpr size_t kHandoffBody = 8 + 16 + 4 + 4 + 8 + 2 * kIpcHandleSize;  // 216
// protocol version 2: a HANDOFF of a device view ends with its view offset
constexpr size_t kHandoffViewBody = kHandoffBody + 8;  // 224
constexpr uint32_t kViewProtocol = 2;  // the peer's HELLO version that reads it
// protocol version 2 too: a HANDOFF of a device that has a stable identity
// ends (after the view offset, if any) with it: kind, reserved, 16 bytes
constexpr size_t kIdentitySize = 24;
constexpr uint32_t kIdentityProtocol = 2;  // the peer's HELLO version that reads it
constexpr size_t kReleaseBody = 8;
// the largest HANDOFF: a view's with an identity, 264
constexpr size_t kMaxHandoff = kHeaderSize + kHandoffViewBody + kIdentitySize;
// protocol version 2 too: DEVICES, the message after HELLO (both ways, to a
// peer whose HELLO announced version 2 or later): per device of the tags the
// sender announced, its tag, ordinal and identity (docs/spec/ipc.md)
constexpr uint32_t kDevicesProtocol = 2;
constexpr size_t kDevicesFixed = 4, kDeviceIdEntry = 24;
constexpr size_t kMaxDeviceIds = 32;  // entries in one DEVICES
constexpr size_t kMaxDevicesMessage = kHeaderSize + kDevicesFixed + kDeviceIdEntry * kMaxDeviceIds;
// the largest message of all (a full DEVICES, 788 bytes)
constexpr size_t kMaxMessage = kMaxDevicesMessage > kMaxHandoff ? kMaxDevicesMessage : kMaxHandoff;
constexpr uint32_t kHandoffFlags = HURRAY_HANDOFF_READ_ONLY | HURRAY_HANDOFF_QPARAM;

// Memory and event kinds are the backends' own four-character codes; the
// CPU backend's memfd is 'CMFD' (src/backends/cpu/cpu.h; an older dev build
// sent 1, which is refused). 0 means "nothing" in every case.
constexpr uint32_t kKindNone = 0;
constexpr uint32_t kKindMemfd = hurray::detail::kCpuMemfdKind;

// protocol version 3: WINDOW, the message after DEVICES (both ways, to a peer
// whose HELLO announced version 3 or later): how many handoffs, holding how
// many descriptors, the sender takes unreleased at most; the peer sends no
// HANDOFF beyond it (docs/spec/ipc.md "Flow control")
constexpr uint32_t kWindowProtocol = 3;
constexpr size_t kWindowBody = 8;

// protocol version 4 (1.1): batches. HANDOFF_MANY carries up to kMaxBatch
// HANDOFF bodies in one datagram, each after an 8-byte entry header (its
// body length, reserved), with every entry's descriptors attached in entry
// order (memory, then event); RELEASE_MANY names up to kMaxBatch IDs.
// kMaxBatch * kMaxFds = 128 descriptors per datagram, under the kernel's
// SCM_MAX_FD (253) (docs/spec/ipc.md "HANDOFF_MANY").
constexpr uint32_t kBatchProtocol = 4;
constexpr size_t kMaxBatch = 64;
constexpr size_t kMaxBatchFds = kMaxBatch * kMaxFds;
constexpr size_t kManyFixed = 4;     // HANDOFF_MANY: count u16, reserved u16
constexpr size_t kEntryHeader = 8;   // per entry: body length u32, reserved u32
constexpr size_t kReleaseManyFixed = 8;  // RELEASE_MANY: count u32, reserved u32
// the largest HANDOFF_MANY: 64 entries of the largest HANDOFF body (16,404 bytes)
constexpr size_t kMaxBatchMessage =
    kHeaderSize + kManyFixed + kMaxBatch * (kEntryHeader + kMaxHandoff - kHeaderSize);

// protocol version 5 (1.1): descriptor slots (docs/spec/ipc.md "Slots").
// A side's WINDOW to a peer of version 5 or later is 16 bytes and adds how
// many descriptors (slots, 0..kMaxSlots) it keeps for the peer; the peer (a
// producer) manages that table: the memory handle's descriptor field of a
// HANDOFF (or an entry) says "no slot", "install in slot s" (the descriptor
// attached) or "use slot s" (none attached) (BP-IPC-SLOT).
constexpr uint32_t kSlotProtocol = 5;
constexpr size_t kWindowSlotBody = 16;
constexpr uint32_t kMaxSlots = 256;
enum SlotOp : uint8_t { kSlotNone = 0, kSlotInstall = 1, kSlotUse = 2 };

enum class Type : uint16_t {
  Hello = 1,
  Handoff = 2,
  Release = 3,
  Devices = 4,
  Window = 5,
  HandoffMany = 6,
  ReleaseMany = 7
};

struct DeviceCaps {
  uint8_t tag;
  uint32_t classes;
};

// One device of a DEVICES message: its tag (one the sender's HELLO announced,
// not the CPU), its ordinal in the sender's process and its identity
// (kind HURRAY_BACKEND_ID_*, NONE with all-zero bytes when it has none).
struct DeviceId {
  uint8_t tag;
  uint16_t ordinal;
  uint32_t kind;
  uint8_t bytes[16];
};

// A memory or event handle as it travels: the backend's IPC handle, with
// has_fd saying whether a descriptor rides along (SCM_RIGHTS).
struct WireHandle {
  uint32_t kind;
  uint32_t has_fd;  // 0 or 1 (the field's low byte)
  // the memory handle of a HANDOFF to a peer that announced slots (byte 1
  // and bytes 2..3 of the field): kSlotNone (slot 0), or install / use `slot`
  uint8_t slot_op;
  uint16_t slot;
  uint64_t byte_size;
  uint64_t offset;
  uint8_t bytes[64];
};

struct Message {
  Type type;
  uint8_t fd_count;  // descriptors that came with the message (header field)
  // HELLO
  uint32_t protocol_version;
  uint16_t device_count;
  DeviceCaps devices[kMaxDevices];
  // HANDOFF and RELEASE
  uint64_t id;
  // HANDOFF
  uint8_t handle[HURRAY_HANDLE_SIZE];
  int32_t device_ordinal;
  uint32_t flags;  // kHandoffFlags bits
  uint64_t sync_value;
  WireHandle memory;
  WireHandle event;
  // where the buffer starts in the memory `memory` exports (a view of device
  // memory, hurray_buffer_view); non-zero exactly in the 224- and 248-byte forms
  uint64_t view_offset;
  // the stable identity of the buffer's device (docs/spec/identity.md):
  // id_kind a HURRAY_BACKEND_ID_* kind, not NONE, exactly in the 240- and
  // 248-byte forms; NONE (all zero) otherwise
  uint32_t id_kind;
  uint8_t id_bytes[16];
  // DEVICES: the sender's devices (no tag and ordinal twice)
  uint16_t id_count;
  DeviceId ids[kMaxDeviceIds];
  // WINDOW: handoffs (>= 1) and their descriptors (>= 2) the sender takes
  // unreleased at most
  uint32_t window_handoffs, window_fds;
  // the 16-byte form (protocol version 5): the slots the sender keeps
  bool window_slots_form;
  uint32_t window_slots;
  // HANDOFF_MANY: its entries (split_many gives them); RELEASE_MANY: its IDs
  // (distinct, none 0)
  uint16_t count;
  uint64_t ids64[kMaxBatch];
};

// Parse one message of n bytes that arrived with nfds descriptors. Every
// length is checked against the type's fixed size, unknown types, versions,
// flags and non-zero reserved bytes are rejected. On failure: HURRAY_E_PROTOCOL
// and *err (may be NULL) names the field; *out is unspecified.
hurray_status parse(const uint8_t *p, size_t n, size_t nfds, Message *out,
                    hurray_error *err) noexcept;

// A DEVICES message `devices` against the HELLO of the same sender: every
// entry's tag is one `hello` announced. On failure HURRAY_E_PROTOCOL, *err
// naming the entry's offset. Pure, like parse().
hurray_status check_devices(const Message &hello, const Message &devices,
                            hurray_error *err) noexcept;

// The entries of a HANDOFF_MANY that parse() accepted (p, n as given to
// it) into entries[0..kMaxBatch): each a HANDOFF as parse() gives one, its
// fd_count its own descriptors (they follow the previous entries' in the
// datagram). Returns the number of entries.
size_t split_many(const uint8_t *p, size_t n, Message *entries) noexcept;

// Encode `count` HANDOFFs (1..kMaxBatch; their id and fields as encode()
// takes them) as one HANDOFF_MANY into out[0..cap); 0 when it does not fit.
// encode_many(split_many(x)) == x for every HANDOFF_MANY x parse accepts.
size_t encode_many(const Message *entries, size_t count, uint8_t *out, size_t cap) noexcept;

// Encode m into out[0..cap); returns the number of bytes, or 0 when cap is
// too small or m cannot be encoded (more devices than kMaxDevices or
// kMaxDeviceIds, a HANDOFF_MANY: encode_many).
// encode(parse(x)) == x for every x that parse accepts.
size_t encode(const Message &m, uint8_t *out, size_t cap) noexcept;

// Number of descriptors a HANDOFF message carries (memory.has_fd + event.has_fd).
inline uint8_t handoff_fds(const Message &m) noexcept {
  return static_cast<uint8_t>(m.memory.has_fd + m.event.has_fd);
}

}  // namespace hurray::ipc
