// A Zig consumer of the installed libhurray: @cImport of hurray.h and
// hurray_dlpack.h (so both headers are proven to pass Zig's C translation),
// linked with -lhurray. Built and run by tests/consumers/run_consumer.sh
// (mode zig) with Zig 0.11.0 from scripts/zig.sh:
//   zig build-exe main.zig -I <include> -L <libdir> -lhurray -lc
const std = @import("std");
const c = @cImport({
    @cInclude("hurray.h");
    @cInclude("hurray_dlpack.h");
});

var frees: u32 = 0;

fn onFree(user: ?*anyopaque, data: ?*anyopaque) callconv(.C) void {
    _ = user;
    _ = data;
    frees += 1;
}

fn expect(ok: bool, what: []const u8) void {
    if (!ok) {
        std.debug.print("zig consumer: FAILED: {s}\n", .{what});
        std.process.exit(1);
    }
}

pub fn main() void {
    std.debug.print("zig consumer: libhurray {s}\n", .{c.hurray_version_string()});
    expect(c.hurray_version() == c.HURRAY_VERSION_NUMBER, "header and library versions agree");

    // A handle with a reserved device tag: refused, naming the rule.
    const h = c.hurray_buffer_handle{
        .byte_size = 4096,
        .alignment = 64,
        .device_tag = 0x42,
        .sync_mode = c.HURRAY_SYNC_PRODUCER_SYNCED,
        .memory_class = c.HURRAY_MEMORY_STANDARD,
        .reserved = 0,
    };
    var wire: [c.HURRAY_HANDLE_SIZE]u8 = undefined;
    var err: c.hurray_error = undefined;
    expect(c.hurray_handle_encode(&h, &wire, wire.len, &err) == c.HURRAY_OK, "encode");
    expect(c.hurray_table_validate(&wire, wire.len, null, &err) == c.HURRAY_E_DEVICE_TAG, "reserved tag refused");
    const rule = std.mem.sliceTo(&err.rule_id, 0);
    expect(std.mem.eql(u8, rule, "BP-DEV-RESERVED"), "the refusal names BP-DEV-RESERVED");
    std.debug.print("zig consumer: {s}\n", .{std.mem.sliceTo(&err.message, 0)});

    // Zig-owned memory handed over, then as a legacy DLPack tensor.
    var mem: [64]u64 align(64) = undefined;
    for (&mem, 0..) |*x, i| x.* = i;
    var desc: c.hurray_buffer_desc = std.mem.zeroes(c.hurray_buffer_desc);
    desc.size = @sizeOf(c.hurray_buffer_desc);
    desc.handle.byte_size = @sizeOf(@TypeOf(mem));
    desc.handle.alignment = 64;
    desc.data = &mem;
    desc.free_fn = onFree;
    var ho: c.hurray_handoff = undefined;
    expect(c.hurray_handoff_wrap(null, &desc, null, &ho, &err) == c.HURRAY_OK, "wrap");
    expect(c.hurray_handoff_check(&ho, null, &err) == c.HURRAY_OK, "check");

    const shape = [_]i64{ 8, 8 };
    var t: ?*c.hurray_dl_managed_tensor = null;
    const u64_type = c.hurray_dl_data_type{ .code = c.HURRAY_DL_UINT, .bits = 64, .lanes = 1 };
    expect(c.hurray_dlpack_export_legacy(&ho, u64_type, 2, &shape, null, 0, &t, &err) == c.HURRAY_OK, "DLPack export");
    expect(ho.release == null, "the handoff moved into the tensor");
    const tensor = t.?.dl_tensor;
    expect(tensor.device.device_type == c.HURRAY_DL_CPU, "kDLCPU");
    const data: [*]const u64 = @ptrCast(@alignCast(tensor.data.?));
    var sum: u64 = 0;
    for (0..64) |i| sum += data[i];
    expect(sum == 2016, "the consumer reads the producer's words");
    expect(frees == 0, "nothing freed before the deleter");
    t.?.deleter.?(t);
    expect(frees == 1, "the deleter released the buffer once");

    var dl: i32 = 0;
    expect(c.hurray_dlpack_device_to_dl(c.HURRAY_DEVICE_LEVEL_ZERO, c.HURRAY_MEMORY_UNIFIED, &dl, &err) == c.HURRAY_OK, "mapping");
    expect(dl == c.HURRAY_DL_ONEAPI, "(LEVEL_ZERO, UNIFIED) is kDLOneAPI");
    expect(c.hurray_dlpack_device_to_dl(0xF0, 0, &dl, &err) == c.HURRAY_E_DEVICE_TAG, "private tag refused");
    std.debug.print("zig consumer: OK (sum {d}, {d} free)\n", .{ sum, frees });
}
