#!/usr/bin/env python3
"""Write the seed corpus of the fuzz targets: tests/fuzz/corpus/<target>/.

Every file is named after what it holds, and the name is a claim the
replay (replay_main.cpp) checks for the targets that report a verdict:
ok-* is accepted with no finding, warn-RULE-* accepted with a warning of
RULE, bad-* refused, bad-RULE-* refused under RULE (a rule ID of hurray.h).
fuzz_table_property reports no verdict (its seeds are a table and a change),
so its names claim nothing. The script owns the whole corpus: it rewrites the three directories from scratch, so running it again
gives the same files. `--check` only compares and exits 1 on a difference.

The byte layouts are those documented at the top of each fuzz_*.cpp.
"""
import argparse
import os
import shutil
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# Wire values (include/hurray.h).
CPU, CUDA, ROCM, METAL, VULKAN, WEBGPU, HEXAGON, LEVEL_ZERO, OPENCL = range(9)
TAG_NAMES = ["cpu", "cuda", "rocm", "metal", "vulkan", "webgpu", "hexagon",
             "level-zero", "opencl"]
STANDARD, HOST_PINNED, UNIFIED, PEER = range(4)
PRODUCER_SYNCED, EVENT, CONSUMER_STREAM = range(3)
IN_PROCESS, IPC, RDMA, CROSS_MACHINE = range(4)
WARNINGS_AS_ERRORS = 0x04
SET_IPC_SYNC = 0x80


def handle(size=4096, align=64, tag=CPU, sync=PRODUCER_SYNCED, mc=STANDARD, reserved=0):
    return struct.pack("<QIBBBB", size, align, tag, sync, mc, reserved)


def good_alignment(tag):
    # what no rule or SHOULD complains about in-process
    if tag in (CUDA, ROCM, METAL, VULKAN, WEBGPU, LEVEL_ZERO, OPENCL):
        return 4096
    if tag == HEXAGON:
        return 128
    return 64


# ---------------------------------------------------------------- fuzz_handle
def fuzz_handle_seeds():
    """4 policy bytes (transport|flags, private tag, ipc tag, ipc flags|cap),
    then the table."""
    seeds = {}

    def add(name, table, transport=IN_PROCESS, flags=0, private=0, ipc_tag=0, ipc=0):
        seeds[name] = bytes([transport | flags, private, ipc_tag, ipc]) + table

    # a valid handle for every device tag, and every valid memory class
    valid_classes = {CPU: [STANDARD], CUDA: [0, 1, 2, 3], ROCM: [0, 1, 2, 3],
                     METAL: [0, 1, 2], VULKAN: [0, 1, 2], WEBGPU: [0],
                     HEXAGON: [0, 2], LEVEL_ZERO: [0, 1, 2, 3], OPENCL: [0, 1, 2]}
    for tag, name in enumerate(TAG_NAMES):
        for mc in valid_classes[tag]:
            add(f"ok-{name}-mc{mc}", handle(tag=tag, mc=mc, align=good_alignment(tag)))
    add("ok-private-f0-agreed", handle(tag=0xF0), private=0xF0)
    add("ok-private-fe-private-class", handle(tag=0xFE, mc=0xF3), private=0xFE)
    add("ok-empty-align-1", handle(size=0, align=1))  # BP-ALIGN-EMPTY
    add("ok-cuda-event", handle(tag=CUDA, sync=EVENT, align=4096))
    add("ok-rocm-stream", handle(tag=ROCM, sync=CONSUMER_STREAM, align=4096))
    add("ok-ipc-cuda-event", handle(tag=CUDA, sync=EVENT, align=4096), transport=IPC)
    add("ok-ipc-opencl-event-declared", handle(tag=OPENCL, sync=EVENT, align=4096),
        transport=IPC, ipc_tag=OPENCL, ipc=SET_IPC_SYNC | 1)
    add("ok-ipc-vulkan-stream-declared", handle(tag=VULKAN, sync=CONSUMER_STREAM, align=8192),
        transport=IPC, ipc_tag=VULKAN, ipc=SET_IPC_SYNC | 3)
    add("ok-rdma-cpu-4096", handle(align=4096), transport=RDMA)
    add("ok-cross-machine-cpu", handle(), transport=CROSS_MACHINE)
    add("ok-strict-cuda-page", handle(tag=CUDA, align=4096), flags=WARNINGS_AS_ERRORS)

    # every byte-level rule broken once
    add("bad-BP-SIZE-empty", b"")
    add("bad-BP-SIZE-15-bytes", handle()[:15])
    add("bad-BP-SIZE-17-bytes", handle() + b"\x00")
    add("bad-BP-RESERVED", handle(reserved=1))
    add("bad-BP-ALIGN-POW2", handle(align=96))
    add("bad-BP-ALIGN-POW2-zero-empty", handle(size=0, align=0))  # D2
    add("bad-BP-ALIGN-MIN", handle(align=32))
    add("bad-BP-ALIGN-IPC", handle(align=64), transport=IPC)
    add("bad-BP-ALIGN-IPC-rdma", handle(align=64), transport=RDMA)
    add("warn-BP-ALIGN-GPU-PAGE", handle(tag=CUDA, align=256))
    add("bad-BP-ALIGN-GPU-PAGE-strict", handle(tag=CUDA, align=256), flags=WARNINGS_AS_ERRORS)
    add("warn-BP-ALIGN-HEXAGON", handle(tag=HEXAGON, align=64))
    add("bad-BP-ALIGN-HEXAGON-strict", handle(tag=HEXAGON, align=64), flags=WARNINGS_AS_ERRORS)
    add("bad-BP-DEV-INVALID", handle(tag=0xFF))
    add("bad-BP-DEV-RESERVED", handle(tag=0x09))
    add("bad-BP-DEV-PRIVATE", handle(tag=0xF5))
    add("bad-BP-MC-INVALID", handle(tag=CUDA, mc=0x04, align=4096))
    add("bad-BP-MC-INVALID-ff", handle(mc=0xFF))
    add("bad-BP-MC-PAIR", handle(mc=HOST_PINNED))
    add("bad-BP-MC-PAIR-private-class-named-tag", handle(tag=CUDA, mc=0xF0, align=4096))
    add("bad-BP-COLOC-tag", handle(tag=CUDA, align=4096) + handle(tag=ROCM, align=4096))
    add("bad-BP-COLOC-class", handle(tag=CUDA, align=4096) + handle(tag=CUDA, mc=UNIFIED, align=4096))
    add("bad-BP-SYNC-VALUE", handle(tag=CUDA, sync=3, align=4096))
    add("bad-BP-SYNC-CPU", handle(sync=EVENT))
    add("bad-BP-SYNC-NET", handle(tag=CUDA, sync=EVENT, align=4096), transport=CROSS_MACHINE)
    add("bad-BP-SYNC-NET-rdma", handle(tag=CUDA, sync=CONSUMER_STREAM, align=4096), transport=RDMA)
    add("bad-BP-SYNC-IPC", handle(tag=OPENCL, sync=EVENT, align=4096), transport=IPC)
    add("bad-BP-SYNC-IPC-stream", handle(tag=CUDA, sync=CONSUMER_STREAM, align=4096), transport=IPC)
    add("bad-BP-SYNC-CPU-ipc", handle(sync=EVENT, align=4096), transport=IPC)
    add("bad-several-faults-rdma", handle(size=100, align=48, tag=CPU, sync=1, mc=1, reserved=1),
        transport=RDMA)

    # truncated and multi-handle tables
    three = handle(tag=CUDA, align=4096) + handle(size=128, tag=CUDA, align=4096) * 2
    add("ok-table-3", three)
    add("bad-BP-SIZE-table-3-truncated-1", three[:-1])
    add("bad-BP-SIZE-table-3-truncated-to-1.5", three[:24])
    add("bad-BP-SIZE-table-3-plus-5", three + b"\x01\x02\x03\x04\x05")
    add("bad-BP-COLOC-table-4-at-2", handle(tag=VULKAN, align=4096) * 2
        + handle(tag=METAL, align=4096) + handle(tag=VULKAN, align=4096))
    add("bad-BP-COLOC-table-4-handle-0-differs", handle(tag=ROCM, align=4096) + handle(tag=CUDA, align=4096) * 3)
    add("ok-table-8-empty-qparams", handle(tag=LEVEL_ZERO, align=4096)
        + handle(size=0, align=1, tag=LEVEL_ZERO) * 7)

    # policy setters that must refuse
    add("ok-policy-allow-named-tag-refused", handle(tag=CUDA, align=4096), private=CUDA)
    add("bad-BP-DEV-INVALID-policy-allow-invalid-tag-refused", handle(tag=0xFF), private=0xFF)
    add("ok-policy-ipc-unknown-flag-refused", handle(tag=CUDA, align=4096), transport=IPC,
        ipc_tag=CUDA, ipc=SET_IPC_SYNC | 4)
    add("bad-BP-ALIGN-IPC-policy-ipc-cpu-refused", handle(), transport=IPC, ipc_tag=CPU, ipc=SET_IPC_SYNC | 1)
    add("bad-BP-ALIGN-IPC-policy-ipc-reserved-tag-refused", handle(), transport=IPC, ipc_tag=0x20,
        ipc=SET_IPC_SYNC | 1)
    add("bad-BP-SYNC-IPC-policy-ipc-withdraw-cuda-events", handle(tag=CUDA, sync=EVENT, align=4096),
        transport=IPC, ipc_tag=CUDA, ipc=SET_IPC_SYNC | 0)
    add("bad-policy-small-capacity-3", handle(size=100, align=48, sync=1, mc=1, reserved=1),
        transport=RDMA, ipc=0x30)

    # Regression, found by libFuzzer on its second input: byte 0 = 0x0A asks
    # for the out-of-range transport 4, which a C caller may pass; libhurray
    # loads it as a hurray_transport, undefined behaviour in C++ (UBSan:
    # "load of value 4, which is not a valid value for type
    # 'hurray_transport'" in hurray_policy_set_transport).
    seeds["bad-BP-SIZE-regression-out-of-range-transport"] = b"\x0a"
    return seeds


# -------------------------------------------------------- fuzz_table_property
def fuzz_table_property_seeds():
    """b0 transport|strict<<2|change<<3, b1 tag selector, b2 class selector,
    b3 count-1, b4 IPC capabilities, 10 bytes per handle, then the change."""
    seeds = {}

    def gen(name, tag_sel, n, change, transport=IN_PROCESS, strict=False, mc_sel=0,
            caps=0, sizes=None, change_bytes=b""):
        b0 = transport | (WARNINGS_AS_ERRORS if strict else 0) | (change << 3)
        out = bytes([b0, tag_sel, mc_sel, n - 1, caps])
        for i in range(n):
            size = (sizes[i] if sizes else 4096 * (i + 1))
            empty = 0x80 if size == 0 else 0
            out += struct.pack("<QBB", max(size, 1), i * 3, empty | i)
        seeds[name] = out + change_bytes

    def byte_change(pos, value):
        return struct.pack("<HB", pos, value)

    # every tag (9 named, 3 private), one field changed each time
    fields = [("size", 3), ("align", 9), ("tag", 12), ("sync", 13), ("class", 14),
              ("reserved", 15)]
    tag_sels = list(range(9)) + [9, 16, 23]  # 0xF0, 0xF7, 0xFE
    for k, sel in enumerate(tag_sels):
        fname, off = fields[k % len(fields)]
        handle_index = k % 3
        name = TAG_NAMES[sel] if sel < 9 else "private-%02x" % (0xF0 + sel - 9)
        gen(f"{name}-change-{fname}-of-handle-{handle_index}", sel, 3, k % 6,
            mc_sel=k, change_bytes=byte_change(16 * handle_index + off, 0xFF))
    # the values the spec rejects on their own
    gen("reserved-tag", CUDA, 2, 0, change_bytes=byte_change(12, 0x42))
    gen("unagreed-private-tag", CPU, 2, 0, change_bytes=byte_change(16 + 12, 0xF3))
    gen("sync-value-3", ROCM, 1, 0, change_bytes=byte_change(13, 3))
    gen("class-reserved", VULKAN, 1, 0, change_bytes=byte_change(14, 0x10))
    gen("align-not-pow2", CPU, 1, 0, change_bytes=byte_change(8, 0x41))
    gen("empty-becomes-nonempty", HEXAGON, 2, 0, sizes=[0, 0],
        change_bytes=byte_change(16 + 2, 1))
    gen("handle-0-class-differs", CUDA, 4, 0, mc_sel=1, change_bytes=byte_change(14, 2))
    # transports and SHOULDs as errors
    gen("ipc-cuda-events", CUDA, 3, 1, transport=IPC, change_bytes=byte_change(13, 2))
    gen("ipc-opencl-declared-streams", OPENCL, 2, 2, transport=IPC, caps=0x80 | 2,
        change_bytes=byte_change(16 + 13, 1))
    gen("rdma-level-zero", LEVEL_ZERO, 2, 3, transport=RDMA, change_bytes=byte_change(9, 0))
    gen("cross-machine-webgpu", WEBGPU, 2, 4, transport=CROSS_MACHINE,
        change_bytes=byte_change(13, 1))
    gen("strict-hexagon", HEXAGON, 3, 5, strict=True, change_bytes=byte_change(8, 0x40))
    gen("strict-metal-page", METAL, 2, 0, strict=True, change_bytes=byte_change(16 + 12, 6))
    # truncation (P3) and appending (P4)
    gen("truncate-1-byte", CUDA, 3, 6, change_bytes=struct.pack("<H", 0))
    gen("truncate-whole-handle", ROCM, 3, 6, change_bytes=struct.pack("<H", 15))
    gen("truncate-to-empty", CPU, 1, 6, change_bytes=struct.pack("<H", 15))
    gen("append-5-bytes", VULKAN, 2, 7, change_bytes=bytes([4]) + b"\x11" * 5)
    gen("append-whole-handle", CUDA, 2, 7, change_bytes=bytes([15]) + handle(tag=ROCM))
    gen("append-20-bytes", CPU, 1, 7, change_bytes=bytes([19]) + handle() + b"\x00" * 4)
    return seeds


# --------------------------------------------------------- fuzz_inspect_input
def fuzz_inspect_input_seeds():
    """The text hurray-inspect's --hex gets."""
    hx = lambda b: b.hex().encode()
    one = handle()
    return {
        "ok-one-handle": hx(one),
        "ok-upper-case": hx(one).upper(),
        "ok-spaces": b"00100000 00000000 40000000 00000000",
        "ok-newlines-tabs": b"00100000\t00000000\n 40000000\r\n00000000\n",
        "ok-vertical-tab-form-feed": b"0010\v0000\f00000000",
        "ok-three-handles": hx(handle(tag=CUDA, align=4096) * 3),
        "ok-empty": b"",
        "ok-only-whitespace": b" \t\n\r\v\f",
        "ok-mixed-case": b"aBcDeF0123456789",
        "bad-odd-digits": b"001",
        "bad-odd-digits-after-space": b"00 1",
        "bad-not-hex-z": b"00zz",
        "bad-not-hex-0x-prefix": b"0x0010",
        "bad-not-hex-nul": b"00\x0000",
        "bad-not-hex-high-byte": b"00\xff00",
        "bad-not-hex-dash": b"00-10",
        "bad-raw-handle-bytes": one,
        "ok-hex-of-hex-text": hx(hx(one)),
        # issue 22: escapes (printable), sizes (parse_size).
        "bad-not-hex-escape-sequence": b"00\x1b[31m00",
        "bad-not-hex-backslash": b"00\\x41",
        "bad-size-suffixes": b"64K",
        "bad-size-too-big": b"99999999999999999999G",
    }


# ----------------------------------------------------------- fuzz_ipc_message
# ipc (issue 6): the IPC channel's wire format (docs/spec/ipc.md).
IPC_MAGIC = 0x50495248
HELLO, HANDOFF, RELEASE, DEVICES, WINDOW, HANDOFF_MANY, RELEASE_MANY = 1, 2, 3, 4, 5, 6, 7


def ipc_header(mtype, length, fds=0, version=1, magic=IPC_MAGIC, reserved=b"\0\0\0"):
    return struct.pack("<IHHIB", magic, version, mtype, length, fds) + reserved


def ipc_wire_handle(kind=0, has_fd=0, size=0, offset=0, blob=b""):
    return struct.pack("<IIQQ", kind, has_fd, size, offset) + blob.ljust(64, b"\0")


def ipc_hello(devices=((CPU, 1),), version=1):
    body = struct.pack("<IHH", version, len(devices), 0)
    for tag, classes in devices:
        body += struct.pack("<B3xI", tag, classes)
    return ipc_header(HELLO, len(body)) + body


def ipc_handoff(id_=1, h=None, ordinal=0, flags=0, sync_value=0, memory=None, event=None,
                fds=None, view_offset=0, identity=None):
    h = h if h is not None else handle(size=8192, align=4096)
    memory = memory if memory is not None else ipc_wire_handle(1, 1, 8192)
    event = event if event is not None else ipc_wire_handle()
    body = struct.pack("<Q", id_) + h + struct.pack("<iIQ", ordinal, flags, sync_value)
    body += memory + event
    if view_offset:  # protocol version 2: a device view's 224-byte form (issue 26)
        body += struct.pack("<Q", view_offset)
    if identity is not None:  # protocol version 2: the device's identity (issue 26)
        body += identity
    nfds = fds if fds is not None else memory[4] + event[4]
    return ipc_header(HANDOFF, len(body), nfds) + body


def ipc_identity(kind, data, reserved=0):
    """The 24-byte device identity of a HANDOFF: kind, reserved, 16 bytes."""
    return struct.pack("<II", kind, reserved) + data.ljust(16, b"\0")


def ipc_devices(entries=(), count=None):
    """DEVICES (protocol version 2): count, reserved, per device its tag,
    reserved, ordinal (u16), identity kind (u32) and 16 bytes."""
    body = struct.pack("<HH", len(entries) if count is None else count, 0)
    for tag, ordinal, kind, data in entries:
        body += struct.pack("<BxHI", tag, ordinal, kind) + data.ljust(16, b"\0")
    return ipc_header(DEVICES, len(body)) + body


def ipc_release(id_=1):
    return ipc_header(RELEASE, 8) + struct.pack("<Q", id_)


def ipc_window(handoffs=128, fds=128):
    return ipc_header(WINDOW, 8) + struct.pack("<II", handoffs, fds)


CMFD = 0x44464D43  # the CPU backend's memfd kind, 'CMFD' in memory order


def ipc_slot_handle(op, slot, has_fd=None, kind=CMFD, size=8192):
    """A memory handle naming a slot (protocol version 5): has_fd (1 for an
    install, 0 for a use unless given), the slot operation and the slot."""
    has_fd = (1 if op == 1 else 0) if has_fd is None else has_fd
    return (struct.pack("<IBBHQQ", kind, has_fd, op, slot, size, 0) + bytes(64))


def ipc_window_slots(slots, handoffs=128, fds=128, reserved=0):
    return ipc_header(WINDOW, 16) + struct.pack("<IIII", handoffs, fds, slots, reserved)


def ipc_handoff_many(handoffs, count=None, fds=None, entry_reserved=0):
    """HANDOFF_MANY (protocol version 4): count, reserved, then per entry its
    HANDOFF body's length, reserved, and the body (of an ipc_handoff)."""
    body = struct.pack("<HH", len(handoffs) if count is None else count, 0)
    total = 0
    for h in handoffs:
        body += struct.pack("<II", len(h) - 16, entry_reserved) + h[16:]
        total += h[12]
    return ipc_header(HANDOFF_MANY, len(body), total if fds is None else fds) + body


def ipc_release_many(ids, count=None):
    body = struct.pack("<II", len(ids) if count is None else count, 0)
    body += b"".join(struct.pack("<Q", i) for i in ids)
    return ipc_header(RELEASE_MANY, len(body)) + body


def fuzz_ipc_message_seeds():
    """Byte 0: descriptors that arrived (bit 7 clear: bits 0-1; bit 7 set:
    bits 0-6, a HANDOFF_MANY's); then one datagram."""
    seeds = {}

    def add(name, msg, fds=0):
        seeds[name] = bytes([fds if fds < 4 else 0x80 | fds]) + msg

    add("ok-hello-cpu", ipc_hello())
    add("ok-hello-cpu-vulkan-cuda", ipc_hello(((CPU, 1), (VULKAN, 7), (CUDA, 15))))
    add("ok-hello-16-devices", ipc_hello(tuple((t, 1) for t in range(16))))
    add("ok-hello-future-protocol", ipc_hello(version=7))
    add("ok-handoff-cpu-memfd", ipc_handoff(), fds=1)
    add("ok-handoff-cpu-read-only", ipc_handoff(flags=1), fds=1)
    add("ok-handoff-empty", ipc_handoff(h=handle(size=0, align=4096), memory=ipc_wire_handle()))
    add("ok-handoff-vulkan-opaque-fd", ipc_handoff(h=handle(size=65536, align=4096, tag=VULKAN),
                                                memory=ipc_wire_handle(1, 1, 65536)), fds=1)
    add("ok-handoff-cuda-ipc-handle-event",
        ipc_handoff(h=handle(size=1 << 20, align=4096, tag=CUDA, sync=EVENT), sync_value=3,
                    memory=ipc_wire_handle(2, 0, 1 << 21, 4096, bytes(range(64))),
                    event=ipc_wire_handle(3, 0, 0, 0, bytes(range(64, 128)))))
    add("bad-BP-ALIGN-IPC-handoff", ipc_handoff(h=handle(size=8192, align=64)), fds=1)
    add("ok-release-1", ipc_release(1))
    add("ok-release-max", ipc_release(2**64 - 1))
    # every check of the parser, broken once
    add("bad-empty", b"")
    add("bad-short-header", ipc_release()[:15])
    add("bad-magic", ipc_header(RELEASE, 8, magic=0x12345678) + struct.pack("<Q", 1))
    add("bad-version", ipc_header(RELEASE, 8, version=2) + struct.pack("<Q", 1))
    add("bad-type", ipc_header(9, 8) + struct.pack("<Q", 1))
    add("bad-length-short", ipc_release()[:-1])
    add("bad-length-long", ipc_release() + b"\0")
    add("bad-reserved-header", ipc_header(RELEASE, 8, reserved=b"\0\1\0") + struct.pack("<Q", 1))
    add("bad-fd-count-mismatch", ipc_handoff(), fds=0)
    add("bad-stray-fd-on-release", ipc_release(), fds=1)
    add("bad-release-id-0", ipc_release(0))
    # issue 21: one byte more than the body, the length field saying so
    overlong = ipc_handoff(h=handle(size=0, align=4096), memory=ipc_wire_handle()) + b"\0"
    add("bad-handoff-overlong", overlong[:8] + struct.pack("<I", 217) + overlong[12:])
    add("bad-release-overlong", ipc_header(RELEASE, 9) + struct.pack("<Q", 1) + b"\0")
    add("bad-hello-17-devices", ipc_hello(tuple((t, 1) for t in range(17))))
    add("bad-hello-duplicate-tag", ipc_hello(((CPU, 1), (CPU, 1))))
    add("bad-hello-version-0", ipc_hello(version=0))
    add("bad-handoff-id-0", ipc_handoff(id_=0), fds=1)
    add("bad-handoff-negative-ordinal", ipc_handoff(ordinal=-1), fds=1)
    add("bad-handoff-unknown-flag", ipc_handoff(flags=2), fds=1)
    add("bad-handoff-too-small-object", ipc_handoff(memory=ipc_wire_handle(1, 1, 4096)), fds=1)
    add("ok-handoff-offset-beyond-size", ipc_handoff(memory=ipc_wire_handle(1, 1, 8192, 8193)),
        fds=1)  # accepted here: the consumer checks offset + size against the memfd
    add("bad-handoff-no-memory", ipc_handoff(memory=ipc_wire_handle()), fds=0)
    add("bad-handoff-has-fd-2", ipc_handoff(memory=ipc_wire_handle(1, 2, 8192), fds=2), fds=2)
    add("bad-handoff-event-without-event-mode",
        ipc_handoff(event=ipc_wire_handle(3, 0, 0, 0, b"x")), fds=1)
    add("bad-handoff-event-mode-without-event",
        ipc_handoff(h=handle(size=8192, align=4096, tag=CUDA, sync=EVENT),
                    memory=ipc_wire_handle(2, 0, 8192)))
    add("bad-handoff-none-kind-with-fields", ipc_handoff(
        h=handle(size=0, align=4096), memory=ipc_wire_handle(0, 0, 5)))
    # issue 26: a HANDOFF of a device view (docs/spec/views.md)
    vk = handle(size=8192, align=4096, tag=VULKAN)
    add("ok-handoff-vulkan-view", ipc_handoff(h=vk, memory=ipc_wire_handle(1, 1, 65536),
                                              view_offset=12288), fds=1)
    add("ok-handoff-vulkan-view-last-page", ipc_handoff(
        h=vk, memory=ipc_wire_handle(1, 1, 65536), view_offset=65536 - 8192), fds=1)
    add("bad-handoff-view-beyond-memory", ipc_handoff(
        h=vk, memory=ipc_wire_handle(1, 1, 65536), view_offset=65536 - 4096), fds=1)
    add("bad-handoff-view-offset-wraps", ipc_handoff(
        h=vk, memory=ipc_wire_handle(1, 1, 65536), view_offset=2**64 - 4096), fds=1)
    add("bad-handoff-view-cpu", ipc_handoff(view_offset=4096), fds=1)
    view0 = ipc_handoff(h=vk, memory=ipc_wire_handle(1, 1, 65536), view_offset=1)
    add("bad-handoff-view-offset-0", view0[:-8] + bytes(8), fds=1)
    # issue 26: the device identity of a HANDOFF (docs/spec/identity.md)
    uuid = ipc_identity(1, bytes(range(0xA0, 0xB0)))
    add("ok-handoff-vulkan-identity", ipc_handoff(h=vk, memory=ipc_wire_handle(1, 1, 65536),
                                                  identity=uuid), fds=1)
    add("ok-handoff-vulkan-view-identity", ipc_handoff(
        h=vk, memory=ipc_wire_handle(1, 1, 65536), view_offset=12288, identity=uuid), fds=1)
    cuda = handle(size=8192, align=4096, tag=CUDA)
    add("ok-handoff-cuda-pci-identity", ipc_handoff(
        h=cuda, memory=ipc_wire_handle(1, 0, 8192), identity=ipc_identity(3, b"\0\0\0\0\x65\0\0")))
    add("ok-handoff-cuda-luid-identity", ipc_handoff(
        h=cuda, memory=ipc_wire_handle(1, 0, 8192), identity=ipc_identity(2, b"luid-123")))
    for name, ident in (("kind-0", ipc_identity(0, b"")),
                        ("kind-9", ipc_identity(9, b"\1" * 16)),
                        ("reserved", ipc_identity(1, b"\1" * 16, reserved=1)),
                        ("luid-tail", ipc_identity(2, b"\1" * 9)),
                        ("pci-tail", ipc_identity(3, b"\1" * 8)),
                        ("all-zero", ipc_identity(1, bytes(16)))):
        add("bad-handoff-identity-" + name, ipc_handoff(
            h=cuda, memory=ipc_wire_handle(1, 0, 8192), identity=ident))
    add("bad-handoff-identity-cpu", ipc_handoff(identity=uuid), fds=1)
    # issue 26: DEVICES, the devices' identities after HELLO (docs/spec/ipc.md)
    a, b = bytes(range(0xA0, 0xB0)), b"\x5a" * 16
    add("ok-devices-none", ipc_devices())
    add("ok-devices-cuda-two", ipc_devices(((CUDA, 0, 1, a), (CUDA, 1, 1, b))))
    add("ok-devices-no-identity", ipc_devices(((VULKAN, 0, 0, b""), (CUDA, 0, 3, b"\0\0\0\0\x65"))))
    add("ok-devices-32", ipc_devices(tuple((CUDA, i, 1, bytes([i + 1]) * 16) for i in range(32))))
    add("bad-devices-33", ipc_devices(tuple((CUDA, i, 1, bytes([i + 1]) * 16) for i in range(33))))
    add("bad-devices-count-33-short", ipc_devices(((CUDA, 0, 1, a),), count=33))
    add("bad-devices-truncated", ipc_devices(((CUDA, 0, 1, a),), count=2))
    add("bad-devices-short-body", ipc_header(DEVICES, 2) + b"\0\0")
    add("bad-devices-reserved", ipc_devices()[:18] + b"\1\0")
    add("bad-devices-fd", ipc_devices(), fds=1)
    add("bad-devices-cpu", ipc_devices(((CPU, 0, 1, a),)))
    add("bad-devices-tag-ff", ipc_devices(((0xFF, 0, 1, a),)))
    add("bad-devices-duplicate", ipc_devices(((CUDA, 0, 1, a), (CUDA, 0, 1, b))))
    add("bad-devices-kind-7", ipc_devices(((CUDA, 0, 7, a),)))
    add("bad-devices-none-with-bytes", ipc_devices(((CUDA, 0, 0, a),)))
    add("bad-devices-luid-tail", ipc_devices(((CUDA, 0, 2, b"\1" * 9),)))
    add("bad-devices-all-zero", ipc_devices(((CUDA, 0, 1, bytes(16)),)))
    entry_reserved = bytearray(ipc_devices(((CUDA, 0, 1, a),)))
    entry_reserved[21] = 1
    add("bad-devices-entry-reserved", bytes(entry_reserved))
    # protocol version 3 (issue 35): WINDOW, the flow control after DEVICES
    add("ok-window-default", ipc_window())
    add("ok-window-1-2", ipc_window(1, 2))
    add("ok-window-max", ipc_window(2**32 - 1, 2**32 - 1))
    add("bad-window-0-handoffs", ipc_window(0, 128))
    add("bad-window-1-fd", ipc_window(128, 1))
    add("bad-window-fd", ipc_window(), fds=1)
    add("bad-window-short", ipc_header(WINDOW, 4) + struct.pack("<I", 128))
    add("bad-window-long", ipc_header(WINDOW, 12) + struct.pack("<III", 128, 128, 0))
    # protocol version 4 (issue 35): HANDOFF_MANY and RELEASE_MANY, batches
    empty = handle(size=0, align=4096)
    one = [ipc_handoff(id_=i, h=empty, memory=ipc_wire_handle()) for i in range(1, 4)]
    memfds = [ipc_handoff(id_=i) for i in range(1, 65)]
    add("ok-handoff-many-empty-3", ipc_handoff_many(one))
    add("ok-handoff-many-memfd-2", ipc_handoff_many(memfds[:2]), fds=2)
    add("ok-handoff-many-memfd-64", ipc_handoff_many(memfds), fds=64)
    add("ok-handoff-many-mixed-forms", ipc_handoff_many([
        ipc_handoff(id_=1, h=vk, memory=ipc_wire_handle(1, 1, 65536), view_offset=12288,
                    identity=uuid),
        ipc_handoff(id_=2, h=cuda, memory=ipc_wire_handle(1, 0, 8192),
                    identity=ipc_identity(2, b"luid-123")),
        ipc_handoff(id_=3)]), fds=2)
    add("bad-handoff-many-count-0", ipc_handoff_many([], count=0))
    add("bad-handoff-many-count-65", ipc_handoff_many(one, count=65))
    add("bad-handoff-many-truncated", ipc_handoff_many(one[:2], count=3))
    add("bad-handoff-many-trailing", ipc_handoff_many(one, count=2))
    add("bad-handoff-many-fds-short", ipc_handoff_many(memfds[:3], fds=2), fds=2)
    add("bad-handoff-many-fds-extra", ipc_handoff_many(one, fds=1), fds=1)
    add("bad-handoff-many-duplicate-id", ipc_handoff_many([one[0], one[0]]))
    add("bad-handoff-many-entry-reserved", ipc_handoff_many(one, entry_reserved=1))
    add("bad-handoff-many-entry-id-0", ipc_handoff_many([one[0], ipc_handoff(
        id_=0, h=empty, memory=ipc_wire_handle())]))
    add("bad-handoff-many-reserved", ipc_handoff_many(one)[:18] + b"\1\0" + ipc_handoff_many(one)[20:])
    add("bad-handoff-many-short-body", ipc_header(HANDOFF_MANY, 2) + b"\1\0")
    long_entry = bytearray(ipc_handoff_many(one[:1]))
    long_entry[20:24] = struct.pack("<I", 248)  # a valid form, past the datagram
    add("bad-handoff-many-entry-beyond", bytes(long_entry))
    add("ok-release-many-1", ipc_release_many([1]))
    add("ok-release-many-64", ipc_release_many(list(range(1, 65))))
    add("bad-release-many-0", ipc_release_many([], count=0))
    add("bad-release-many-65", ipc_release_many(list(range(1, 66))))
    add("bad-release-many-count-short", ipc_release_many([1, 2], count=3))
    add("bad-release-many-id-0", ipc_release_many([1, 0]))
    add("bad-release-many-duplicate", ipc_release_many([5, 6, 5]))
    add("bad-release-many-fd", ipc_release_many([1]), fds=1)
    add("bad-release-many-reserved", ipc_header(RELEASE_MANY, 16) + struct.pack("<IIQ", 1, 1, 1))
    # protocol version 5 (issue 35): descriptor slots. WINDOW's 16-byte form
    # adds the sender's slots; a memfd handle's descriptor field is has_fd
    # (byte 0), slot operation (byte 1: 1 install, 2 use) and slot (u16)
    add("ok-window-slots-64", ipc_window_slots(64))
    add("ok-window-slots-0", ipc_window_slots(0))
    add("ok-window-slots-256", ipc_window_slots(256))
    add("bad-window-slots-257", ipc_window_slots(257))
    add("bad-window-slots-reserved", ipc_window_slots(64, reserved=1))
    add("ok-handoff-slot-install", ipc_handoff(memory=ipc_slot_handle(1, 5)), fds=1)
    add("ok-handoff-slot-use", ipc_handoff(memory=ipc_slot_handle(2, 255)), fds=0)
    add("ok-handoff-slot-use-read-only", ipc_handoff(flags=1, memory=ipc_slot_handle(2, 0)))
    add("bad-handoff-slot-op-3", ipc_handoff(memory=ipc_slot_handle(3, 0, has_fd=0)))
    add("bad-handoff-slot-without-op", ipc_handoff(memory=ipc_slot_handle(0, 7, has_fd=1)),
        fds=1)
    add("bad-handoff-slot-install-no-fd", ipc_handoff(memory=ipc_slot_handle(1, 0, has_fd=0)))
    add("bad-handoff-slot-use-with-fd", ipc_handoff(memory=ipc_slot_handle(2, 0, has_fd=1)),
        fds=1)
    add("bad-handoff-slot-not-memfd", ipc_handoff(memory=ipc_slot_handle(1, 0, kind=1)), fds=1)
    add("bad-handoff-slot-event", ipc_handoff(
        h=handle(size=8192, align=4096, sync=EVENT), sync_value=1, memory=ipc_slot_handle(2, 0),
        event=ipc_wire_handle(3, 0, 0, 0, b"e")))
    add("bad-handoff-slot-on-event-handle", ipc_handoff(
        h=handle(size=8192, align=4096, tag=CUDA, sync=EVENT), sync_value=1,
        memory=ipc_wire_handle(2, 0, 8192), event=ipc_slot_handle(2, 0, kind=3)))
    slotted = [ipc_handoff(id_=1, memory=ipc_slot_handle(1, 0)),
               ipc_handoff(id_=2, memory=ipc_slot_handle(2, 0)),
               ipc_handoff(id_=3, flags=1, memory=ipc_slot_handle(1, 1)),
               ipc_handoff(id_=4)]
    add("ok-handoff-many-slots", ipc_handoff_many(slotted), fds=3)
    add("bad-handoff-many-slot-use-with-fd", ipc_handoff_many(
        [slotted[0], ipc_handoff(id_=2, memory=ipc_slot_handle(2, 0, has_fd=1))]), fds=2)
    return seeds


# -------------------------------------------------------- fuzz_dlpack_import
# dlpack (issue 7): layout at the top of fuzz_dlpack_import.cpp.
def fuzz_dlpack_import_seeds():
    def tensor(device=1, dims=((256, 1),), code=2, bits=32, lanes=1, device_id=0,
               data=0x7F0000000000, offset=0, versioned=False, read_only=False,
               null_strides=False, null_shape=False, major2=False, padded=False,
               huge_ndim=False):
        flags = (versioned * 1 | read_only * 2 | null_strides * 4 | null_shape * 8 |
                 major2 * 16 | padded * 32 | huge_ndim * 64)
        out = struct.pack("<BbbBBHiQQ", flags, device, len(dims), code, bits, lanes,
                          device_id, data, offset)
        for shape, stride in dims:
            out += struct.pack("<hh", shape, stride)
        return out

    return {
        "ok-cpu-f32-vector": tensor(),
        "ok-cpu-f32-matrix-row-major": tensor(dims=((16, 0), (16, 0)), null_strides=True),
        "ok-cpu-f32-matrix-strided": tensor(dims=((4, 32), (8, 1))),
        "ok-cpu-reversed": tensor(dims=((64, -1),), data=0x7F0000000000 + 63 * 4),
        "ok-cpu-scalar": tensor(dims=()),
        "ok-cpu-empty-null-data": tensor(dims=((0, 1), (7, 1)), data=0),
        "ok-cpu-byte-offset-aligned": tensor(offset=4096),
        "ok-cpu-versioned-read-only": tensor(versioned=True, read_only=True),
        "bad-cpu-versioned-major-2": tensor(versioned=True, major2=True),
        "ok-cuda-device-id-3": tensor(device=2, device_id=3),
        "ok-cuda-host": tensor(device=3),
        "ok-cuda-managed": tensor(device=13),
        "ok-rocm-host": tensor(device=11),
        "ok-oneapi": tensor(device=14),
        "ok-hexagon": tensor(device=16),
        "ok-opencl-opaque-handle": tensor(device=4, data=0x1003),
        "bad-BP-ZC-NOCOPY-vulkan-opaque-offset": tensor(device=7, offset=64),
        "bad-BP-ZC-NOCOPY-metal-opaque-reversed": tensor(device=8, dims=((8, -1),)),
        "bad-BP-DEV-INVALID-vpi": tensor(device=9),
        "bad-BP-DEV-INVALID-ext-dev": tensor(device=12),
        "bad-BP-DEV-INVALID-maia": tensor(device=17),
        "bad-BP-DEV-INVALID-unknown-negative": tensor(device=-1),
        "bad-BP-ALIGN-MIN-misaligned-16": tensor(data=0x7F0000000010),
        "bad-BP-ALIGN-MIN-misaligned-offset": tensor(offset=4),
        "bad-null-data": tensor(data=0),
        "bad-null-shape": tensor(null_shape=True),
        "bad-negative-ndim": struct.pack("<Bbb", 0, 1, -3),
        "bad-negative-shape": tensor(dims=((-2, 1),)),
        "bad-zero-bits": tensor(bits=0),
        "bad-zero-lanes": tensor(lanes=0),  # issue 23: a survivor without it
        "bad-negative-shape-minus-1": tensor(dims=((-1, 1),)),  # the same
        "bad-sub-byte": tensor(code=1, bits=4),
        # six int16 dimensions cannot overflow 64 bits: accepted, a large span
        "ok-span-large-6-dims": tensor(dims=((32767, 32767),) * 6, bits=128, lanes=65535),
        "bad-address-wrap": tensor(data=0xFFFFFFFFFFFFF000, dims=((8192, 1),)),
        "bad-BP-ALIGN-ADDR-first-byte-at-zero": tensor(data=0x8000, offset=0x8000, dims=((33, -512),)),
        "ok-vector-lanes": tensor(code=2, bits=32, lanes=4),
        "bad-BP-DEV-INVALID-empty-input": b"",
        # issue 22: DLPack 1.1 padded sub-byte types; ndim above the maximum.
        "ok-padded-int4": tensor(versioned=True, padded=True, code=0, bits=4),
        "bad-padded-flag-on-legacy": tensor(padded=True, code=0, bits=4),
        "bad-ndim-above-max": tensor(huge_ndim=True, dims=((1, 1), (1, 1))),
    }


def fuzz_cpu_ipc_import_seeds():
    # kind, byte_size, offset, bytes[0..3], flags, file pages (see the target)
    cmfd = 0x44464D43

    def seed(kind=cmfd, size=8192, offset=0, align=4096, flags=0, pages=2):
        return struct.pack("<IQQIBB", kind, size, offset, align, flags, pages)

    return {
        "ok-two-pages": seed(),
        "ok-offset-one-page": seed(size=4096, offset=4096, pages=2),
        "ok-aligned-64k": seed(align=1 << 16),
        "ok-read-only": seed(flags=1),
        "ok-partial-page-file": seed(size=4196, pages=0x81),
        "bad-kind-1-old-dev-build": seed(kind=1),
        "bad-unsealed": seed(flags=2),
        "bad-no-descriptor": seed(flags=4),
        "bad-memory-class-pinned": seed(flags=1 << 3),
        "bad-file-too-small": seed(size=8192, pages=1),
        "bad-offset-not-page-aligned": seed(offset=100, pages=3),
        "bad-alignment-not-pow2": seed(align=3 * 4096),
        "bad-empty": seed(size=0),
        "bad-huge-size": seed(size=(1 << 64) - 1),
    }


def fuzz_gpu_ipc_parse_seeds():
    # mode, descriptor, kind, byte_size, offset, granularity|at, block, 64 vendor bytes
    cuv1, cum1, hiv1 = 0x31565543, 0x314D5543, 0x31564948
    mib2 = 2 << 20

    def seed(mode=0, fd=1, kind=cuv1, size=4096, offset=0, g=mib2, block=0, vendor=None):
        if vendor is None:
            vendor = struct.pack("<Q", mib2)
        return struct.pack("<BBIQQQQ", mode, fd, kind, size, offset, g, block) + \
            vendor.ljust(64, b"\0")

    return {
        "ok-vmm-start": seed(),
        "ok-vmm-end": seed(size=4096, offset=mib2 - 4096),
        "ok-vmm-whole-dev-null": seed(fd=5, size=mib2),
        "ok-vmm-hip": seed(mode=4, kind=hiv1),
        "ok-memory-handle": seed(mode=1, fd=0, kind=cum1, vendor=b"\x11" * 64),
        "ok-in-block": seed(mode=2, size=4096, offset=4096, g=8192, block=16384),
        "bad-vmm-offset-past": seed(offset=mib2),
        "bad-vmm-size-past": seed(size=8192, offset=mib2 - 4096),
        "bad-vmm-offset-wraps": seed(offset=(1 << 64) - 10),
        "bad-vmm-size-odd": seed(vendor=struct.pack("<Q", mib2 + 4096)),
        "bad-vmm-size-zero": seed(vendor=b""),
        "bad-vmm-granularity-zero": seed(g=0),
        "bad-vmm-garbage": seed(vendor=b"\xa5" * 64),
        "bad-vmm-trailing-bytes": seed(vendor=struct.pack("<Q", mib2) + b"\x01"),
        "bad-vmm-empty": seed(size=0),
        "bad-vmm-no-descriptor": seed(fd=0),
        "bad-vmm-pipe": seed(fd=2),
        "bad-vmm-socket": seed(fd=3),
        "bad-vmm-folder": seed(fd=4),
        "bad-vmm-kind-cum1": seed(kind=cum1),
        "bad-memory-with-descriptor": seed(mode=1, kind=cum1),
        "bad-memory-empty": seed(mode=1, fd=0, kind=cum1, size=0),
        "bad-memory-kind-vmm": seed(mode=1, fd=0),
        "bad-in-block-past": seed(mode=2, size=4096, offset=8192, g=8192, block=16384),
        "bad-in-block-wraps": seed(mode=2, size=4096, offset=(1 << 64) - 4096, g=8192,
                                   block=16384),
    }


TARGETS = {
    "fuzz_handle": fuzz_handle_seeds,
    "fuzz_table_property": fuzz_table_property_seeds,
    "fuzz_inspect_input": fuzz_inspect_input_seeds,
    "fuzz_ipc_message": fuzz_ipc_message_seeds,  # ipc (issue 6)
    "fuzz_dlpack_import": fuzz_dlpack_import_seeds,  # dlpack (issue 7)
    "fuzz_cpu_ipc_import": fuzz_cpu_ipc_import_seeds,  # the CPU backend's IPC import (issue 24)
    "fuzz_gpu_ipc_parse": fuzz_gpu_ipc_parse_seeds,  # the CUDA/HIP import's parsing (issue 33)
}


def write(root):
    for target, make in TARGETS.items():
        d = os.path.join(root, target)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        for name, data in sorted(make().items()):
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)


def listing(root):
    out = {}
    for target in TARGETS:
        d = os.path.join(root, target)
        if os.path.isdir(d):
            for name in os.listdir(d):
                with open(os.path.join(d, name), "rb") as f:
                    out[(target, name)] = f.read()
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(HERE, "corpus"), help="corpus root")
    ap.add_argument("--check", action="store_true",
                    help="compare with the corpus on disk instead of writing it")
    args = ap.parse_args()
    if not args.check:
        write(args.out)
        for target in TARGETS:
            print(f"{target}: {len(os.listdir(os.path.join(args.out, target)))} seeds")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        write(tmp)
        want, have = listing(tmp), listing(args.out)
    if want == have:
        print("corpus is up to date")
        return 0
    for key in sorted(set(want) | set(have)):
        if want.get(key) != have.get(key):
            print("differs: %s/%s" % key, file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
