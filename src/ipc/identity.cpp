// The device identity of a HANDOFF (docs/spec/ipc.md, identity.md): the
// producer names the buffer's device by its stable identity, the consumer
// maps it to its own ordinal of that device (the orders of two processes
// differ: CUDA_VISIBLE_DEVICES, containers), and refuses (BP-IPC-DEVICE-ID)
// when none of its devices has it. NONE on either side: the ordinal as sent.
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
  HURRAY_RETURN_NOT_OK(backend_for(tag, &b, err));
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

}  // namespace hurray::ipc
