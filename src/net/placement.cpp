// Where a transfer's bytes may go (src/net/internal.h): the transport
// policy, the devices this machine offers, BP-PUT-DEVICE (exactly the
// declared device and memory class, never placed elsewhere), allocation on
// exactly that device, read-only exports that keep a buffer alive, and the
// host staging (with a huge-page hint) for memory the CPU cannot address.
#include <hurray_backend.h>

#include "internal.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace hurray::net {

hurray_status make_policy(uint32_t transport, hurray_policy **out, hurray_error *err) {
  if (transport != HURRAY_TRANSPORT_CROSS_MACHINE && transport != HURRAY_TRANSPORT_RDMA)
    return fail(err, HURRAY_E_INVALID_ARGUMENT, HURRAY_RULE_NONE,
                "hurray-net: transport must be cross-machine (3) or rdma (2), not %u",
                transport);
  if (hurray_status st = hurray_policy_create(out, err)) return st;
  return hurray_policy_set_transport(*out, static_cast<hurray_transport>(transport), err);
}

std::vector<Offer> local_offers(hurray_context *ctx, const std::vector<uint8_t> &only) {
  std::vector<Offer> offers;
  for (unsigned t = HURRAY_DEVICE_CPU; t <= HURRAY_DEVICE_OPENCL; ++t) {
    const auto tag = static_cast<uint8_t>(t);
    if (!only.empty() && std::find(only.begin(), only.end(), tag) == only.end()) continue;
    int32_t n = 0;
    if (hurray_device_count(ctx, tag, &n, nullptr) != HURRAY_OK || n <= 0) continue;
    hurray_backend_device_info info;
    std::memset(&info, 0, sizeof info);
    if (hurray_device_info(ctx, tag, 0, &info, nullptr) != HURRAY_OK) continue;
    offers.push_back({tag, n, info.memory_classes});
  }
  return offers;
}

hurray_status check_offer(const std::vector<Offer> &offers, uint8_t tag, uint8_t memory_class,
                          int32_t ordinal, const char *who, hurray_error *err) {
  for (const Offer &o : offers) {
    if (o.tag != tag) continue;
    if (ordinal < 0 || ordinal >= o.count)
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                  "%s has %d %s device(s); device %d was asked for (never placed elsewhere)",
                  who, o.count, hurray_device_tag_name(tag), ordinal);
    if (memory_class >= 32 || !(o.classes & (1u << memory_class)))
      return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                  "%s's %s device cannot allocate memory class %s (never placed elsewhere)",
                  who, hurray_device_tag_name(tag), hurray_memory_class_name(memory_class));
    return HURRAY_OK;
  }
  return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
              "%s has no %s device (0x%02x); the buffer is refused, never placed elsewhere", who,
              hurray_device_tag_name(tag), static_cast<unsigned>(tag));
}

hurray_alloc_desc alloc_desc_for(const hurray_buffer_handle &h, int32_t ordinal) noexcept {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = h.byte_size;
  a.alignment = h.alignment;
  a.device_tag = h.device_tag;
  a.memory_class = h.memory_class;
  a.device_ordinal = ordinal;
  return a;
}

hurray_status alloc_exact(hurray_context *ctx, const hurray_buffer_handle &h, int32_t ordinal,
                          hurray_buffer **out, hurray_error *err) {
  const hurray_alloc_desc a = alloc_desc_for(h, ordinal);
  hurray_error e;
  const hurray_status st = hurray_buffer_alloc(ctx, &a, out, &e);
  if (st == HURRAY_OK) return st;
  if (st == HURRAY_E_DEVICE_UNAVAILABLE)
    return fail(err, st, HURRAY_RULE_PUT_DEVICE,
                "hurray-net: cannot allocate on %s device %d (%s)",
                hurray_device_tag_name(h.device_tag), ordinal, e.message);
  if (err != nullptr) *err = e;
  return st;
}

hurray_status hold(hurray_buffer *b, hurray_handoff *out, bool *host, hurray_error *err) {
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.flags = HURRAY_HANDOFF_READ_ONLY;
  if (hurray_status st = hurray_buffer_export(b, &e, out, err)) return st;
  hurray_buffer_handle h;
  hurray_handle_decode(out->handle, HURRAY_HANDLE_SIZE, &h, nullptr);
  *host = host_addressable(h.device_tag, h.memory_class, out->flags);
  return HURRAY_OK;
}

void advise_huge(void *p, size_t n) {
  constexpr uintptr_t kHuge = 2u << 20;
  if (p == nullptr || n < 2 * kHuge) return;
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + n) & ~(kHuge - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void *>(begin), end - begin, MADV_HUGEPAGE);
}

void *alloc_staging(size_t n) {
  void *p = std::aligned_alloc(4096, ((n == 0 ? 1 : n) + 4095) & ~static_cast<size_t>(4095));
  advise_huge(p, n);
  return p;
}

}  // namespace hurray::net
