// A channel's options (hurray_ipc_options, read as far as its `size` goes)
// and what this side announces in HELLO: the CPU, and the devices listed
// whose backends export and import memory (their plugins are loaded here).
#include <hurray_backend.h>

#include <cstring>

#include "../core/internal.h"
#include "../runtime/backends.h"
#include "../runtime/dispatch.h"
#include "internal.h"
#include "../core/struct_size.h"

using namespace hurray::detail;

namespace hurray::ipc {

hurray_status read_options(const hurray_ipc_options *in, Options *o, hurray_error *err) {
  hurray_ipc_options opts = HURRAY_IPC_OPTIONS_INIT;
  if (in) {
    SizeRefusal small;
    if (below_first_size<hurray_ipc_options>(nullptr, in->size, &small))
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE, "%s", small.text);
    std::memcpy(&opts, in, in->size < sizeof opts ? in->size : sizeof opts);
    // bytes of a later version of the struct: this library knows none
    for (size_t i = sizeof opts; i < in->size; ++i)
      if (reinterpret_cast<const uint8_t *>(in)[i])
        return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                    "hurray_ipc_options: byte %zu is not zero (a field this library does not "
                    "know)",
                    i);
    opts.size = sizeof opts;
  }
  constexpr uint32_t known = HURRAY_IPC_SEND_ONLY | HURRAY_IPC_ANY_PEER | HURRAY_IPC_COPY_PER_SEND;
  if (opts.flags & ~known)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_options.flags: unknown bits 0x%X", opts.flags & ~known);
  if (opts.reserved0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_options.reserved0 is not zero");
  if (opts.device_count && !opts.device_tags)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_options: device_count %u but device_tags is NULL", opts.device_count);
  if ((opts.allowed_uid_count && !opts.allowed_uids) ||
      (opts.allowed_gid_count && !opts.allowed_gids))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_options: an allowed_*_count without its list");
  if ((opts.flags & HURRAY_IPC_SEND_ONLY) && opts.device_count)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_ipc_options: a send-only channel announces no devices (device_count %u)",
                opts.device_count);
  o->flags = opts.flags;
  o->hello_timeout_ms = opts.hello_timeout_ms == 0 ? 10000 : opts.hello_timeout_ms;
  o->io_timeout_ms = opts.io_timeout_ms == 0 ? 10000 : opts.io_timeout_ms;
  o->max_queued = opts.max_queued ? opts.max_queued : 128;
  o->max_queued_fds = opts.max_queued_fds ? opts.max_queued_fds : 128;
  o->allowed_uids.clear();
  o->allowed_gids.clear();
  if (opts.allowed_uid_count)
    o->allowed_uids.assign(opts.allowed_uids, opts.allowed_uids + opts.allowed_uid_count);
  if (opts.allowed_gid_count)
    o->allowed_gids.assign(opts.allowed_gids, opts.allowed_gids + opts.allowed_gid_count);
  o->devices.clear();
  if (opts.flags & HURRAY_IPC_SEND_ONLY) return HURRAY_OK;  // announces nothing
  o->devices.push_back({HURRAY_DEVICE_CPU, 1u << HURRAY_MEMORY_STANDARD});
  for (uint32_t i = 0; i < opts.device_count; ++i) {
    const uint8_t tag = opts.device_tags[i];
    bool dup = false;
    for (const auto &dc : o->devices) dup |= dc.tag == tag;
    if (dup) continue;
    if (o->devices.size() == kMaxDevices)
      return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                  "hurray_ipc_options: more than %d devices", HURRAY_IPC_MAX_DEVICES);
    hurray_backend_device_info info;
    std::memset(&info, 0, sizeof info);
    if (const hurray_status st = hurray_device_info(nullptr, tag, 0, &info, err)) return st;
    Backend be;
    if (const hurray_status st = backend_for(tag, &be, err)) return st;
    if (!(info.ipc & HURRAY_BACKEND_IPC_MEMORY) || !dispatch::has_memory_ipc(be))
      return fail(err, HURRAY_E_UNSUPPORTED, HURRAY_RULE_NONE,
                  "hurray_ipc: %s memory cannot cross processes (its backend exports none)",
                  hurray_device_tag_name(tag));
    o->devices.push_back({tag, info.memory_classes});
  }
  return HURRAY_OK;
}

}  // namespace hurray::ipc
