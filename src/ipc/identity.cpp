// The device identity of a HANDOFF (docs/spec/ipc.md, identity.md): the
// producer names the buffer's device by its stable identity, the consumer
// maps it to its own ordinal of that device (the orders of two processes
// differ: CUDA_VISIBLE_DEVICES, containers), and refuses (BP-IPC-DEVICE-ID)
// when none of its devices has it. NONE on either side: the ordinal as sent.
// And the DEVICES message (protocol version 2, after HELLO): each side lists
// its devices' identities, so that a producer refuses before sending a
// HANDOFF of a device its consumer does not have (the same rule).
#include <cstring>

#include "../runtime/identity.h"
#include "internal.h"

namespace hurray::ipc {

using namespace hurray::detail;

void describe_identity(uint8_t tag, int32_t ordinal, Message *m) noexcept {
  m->id_kind = HURRAY_BACKEND_ID_NONE;
  std::memset(m->id_bytes, 0, sizeof m->id_bytes);
  if (tag == HURRAY_DEVICE_CPU) return;  // the one host device: no identity
  Backend b;
  hurray_error ignored;
  hurray_backend_device_identity id;
  if (backend_device(tag, ordinal, &b, &ignored) != HURRAY_OK ||
      dispatch::device_identity(b, ordinal, &id, &ignored) != HURRAY_OK)
    return;  // no identity known: the ordinal alone, as a version-1 peer sends
  m->id_kind = id.kind;
  std::memcpy(m->id_bytes, id.bytes, sizeof m->id_bytes);
}

hurray_status map_identity(Message *m, hurray_error *err) noexcept {
  if (m->id_kind == HURRAY_BACKEND_ID_NONE) return HURRAY_OK;  // the sender knows none
  const uint8_t tag = m->handle[12];
  Backend b;
  if (const hurray_status st = backend_for(tag, &b, err)) return st;
  hurray_backend_device_identity id{};
  id.kind = m->id_kind;
  std::memcpy(id.bytes, m->id_bytes, sizeof id.bytes);
  int32_t local = -1;
  const int found = find_identity(b, id, &local);
  if (found == 1) {
    m->device_ordinal = local;
    return HURRAY_OK;
  }
  if (found < 0) return HURRAY_OK;  // no local device has an identity: the ordinal
  char text[64];
  return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_NONE,
              "BP-IPC-DEVICE-ID: the peer's %s buffer is on the device %s (its ordinal %d), "
              "which no device of this process has",
              hurray_device_tag_name(tag), identity_text(id, text, sizeof text),
              m->device_ordinal);
}

void describe_devices(const Options &o, Message *m) noexcept {
  std::memset(m, 0, sizeof *m);
  m->type = Type::Devices;
  for (const DeviceCaps &dc : o.devices) {
    if (dc.tag == HURRAY_DEVICE_CPU) continue;  // the one host device: no identity
    Backend b;
    hurray_error ignored;
    if (backend_for(dc.tag, &b, &ignored) != HURRAY_OK) continue;
    const int32_t n = dispatch::device_count(b);
    if (n <= 0 || static_cast<size_t>(n) > kMaxDeviceIds - m->id_count)
      continue;  // all of a tag's devices or none: none lists nothing (the ordinal)
    for (int32_t i = 0; i < n; ++i) {
      DeviceId &e = m->ids[m->id_count++];
      e.tag = dc.tag;
      e.ordinal = static_cast<uint16_t>(i);
      hurray_backend_device_identity id;
      if (dispatch::device_identity(b, i, &id, &ignored) != HURRAY_OK) continue;  // NONE
      e.kind = id.kind;
      std::memcpy(e.bytes, id.bytes, sizeof e.bytes);
    }
  }
}

hurray_status check_peer_identity(const hurray_ipc_channel *ch, const Message &m,
                                  hurray_error *err) noexcept {
  if (m.id_kind == HURRAY_BACKEND_ID_NONE || !ch->got_devices) return HURRAY_OK;
  const uint8_t tag = m.handle[12];
  const Message &peer = ch->peer_devices;
  bool any = false;  // the peer has a device of the tag with an identity
  for (uint16_t i = 0; i < peer.id_count; ++i) {
    const DeviceId &e = peer.ids[i];
    if (e.tag != tag || e.kind == HURRAY_BACKEND_ID_NONE) continue;
    any = true;
    if (e.kind == m.id_kind && std::memcmp(e.bytes, m.id_bytes, sizeof e.bytes) == 0)
      return HURRAY_OK;
  }
  if (!any) return HURRAY_OK;  // it would import by the ordinal (find_identity's -1)
  hurray_backend_device_identity id{};
  id.kind = m.id_kind;
  std::memcpy(id.bytes, m.id_bytes, sizeof id.bytes);
  char text[64];
  return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_NONE,
              "BP-IPC-DEVICE-ID: the %s buffer is on the device %s (ordinal %d), which the peer "
              "(pid %d) did not announce in its DEVICES; nothing was sent",
              hurray_device_tag_name(tag), identity_text(id, text, sizeof text),
              m.device_ordinal, ch->peer_pid);
}

}  // namespace hurray::ipc
