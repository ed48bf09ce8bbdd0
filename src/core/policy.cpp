// hurray_policy: which rules apply when validating.
#include <new>

#include "internal.h"

using namespace hurray::detail;

extern "C" {

HURRAY_API hurray_status hurray_policy_create(hurray_policy **out, hurray_error *err) {
  return create_object(out, "hurray_policy_create", err);
}

HURRAY_API void hurray_policy_destroy(hurray_policy *policy) { delete policy; }

HURRAY_API hurray_status hurray_policy_set_transport(hurray_policy *policy,
                                                     hurray_transport transport,
                                                     hurray_error *err) {
  if (!policy) return null_argument(err, "hurray_policy_set_transport", "policy");
  switch (transport) {
    case HURRAY_TRANSPORT_IN_PROCESS:
    case HURRAY_TRANSPORT_IPC:
    case HURRAY_TRANSPORT_RDMA:
    case HURRAY_TRANSPORT_CROSS_MACHINE:
      policy->transport = transport;
      return HURRAY_OK;
    default:
      break;
  }
  return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
              "hurray_policy_set_transport: unknown transport %d",
              static_cast<int>(transport));
}

HURRAY_API hurray_status hurray_policy_allow_private_tag(hurray_policy *policy,
                                                         uint8_t tag, int allow,
                                                         hurray_error *err) {
  if (!policy) return null_argument(err, "hurray_policy_allow_private_tag", "policy");
  if (tag_kind(tag) != TagKind::Private)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_DEV_PRIVATE,
                "BP-DEV-PRIVATE: device_tag 0x%02X is not private (0xF0-0xFE); "
                "only private tags can be agreed",
                tag);
  const uint16_t bit = static_cast<uint16_t>(1u << (tag - HURRAY_DEVICE_PRIVATE_FIRST));
  policy->private_allowed =
      static_cast<uint16_t>(allow ? (policy->private_allowed | bit)
                                  : (policy->private_allowed & ~bit));
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_policy_set_ipc_sync(hurray_policy *policy,
                                                    uint8_t tag, unsigned flags,
                                                    hurray_error *err) {
  if (!policy) return null_argument(err, "hurray_policy_set_ipc_sync", "policy");
  constexpr unsigned known = HURRAY_IPC_SYNC_EVENTS | HURRAY_IPC_SYNC_STREAMS;
  if (flags & ~known)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_policy_set_ipc_sync: unknown flags 0x%X", flags & ~known);
  if (!device_info(tag))
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray_policy_set_ipc_sync: device_tag 0x%02X is %s", tag,
                hurray_device_tag_name(tag));
  if (tag == HURRAY_DEVICE_CPU && flags != 0)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_SYNC_CPU,
                "BP-SYNC-CPU: CPU handles are always PRODUCER_SYNCED; "
                "CPU cannot export IPC events or streams");
  policy->ipc_sync[tag] = static_cast<uint8_t>(flags);
  return HURRAY_OK;
}

HURRAY_API hurray_status hurray_policy_set_warnings_as_errors(hurray_policy *policy,
                                                              int enable,
                                                              hurray_error *err) {
  if (!policy) return null_argument(err, "hurray_policy_set_warnings_as_errors", "policy");
  policy->warnings_as_errors = enable != 0;
  return HURRAY_OK;
}

}  // extern "C"
