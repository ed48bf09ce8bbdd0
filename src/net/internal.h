// What the files of libhurray-net's server and client share (src/net):
// the rendezvous threshold, the placement rules and host staging
// (placement.cpp), the active-message plumbing and the conversions between
// an answer and a hurray_error (messages.cpp). The design they follow: one
// UCX worker per server or client, progressed only by the calling thread
// (hurray_net_server_poll, or the client's blocking calls). No UCX callback
// does real work: the active-message handlers queue what arrived, and the
// requests in flight are checked after each round of progress, so every
// allocation, validation and reply happens outside UCX's callbacks. The
// protocol and its decisions are in docs/spec/network.md; the message
// layouts in wire.h.
#pragma once

#include <hurray_net.h>

#include "net_types.h"
#include "ucx.h"
#include "wire.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <deque>
#include <vector>

namespace hurray::net {

// Rendezvous (the receiver pulls the bytes into the destination it chose)
// from this size on; below it, UCX sends the bytes eagerly.
constexpr size_t kRndvMin = 16 * 1024;

// Can the bytes at `data` be read and written by the CPU? CPU memory (unless
// opaque), mapped Vulkan and OpenCL memory (the plugins hand out an opaque
// handle otherwise), and the host-pinned and unified classes of the GPU
// runtimes. GPU device memory is not: it is staged through host memory
// (Debian's UCX has no GPU support).
inline bool host_addressable(uint8_t tag, uint8_t memory_class, uint32_t flags) {
  if (flags & HURRAY_HANDOFF_OPAQUE_DATA) return false;
  switch (tag) {
    case HURRAY_DEVICE_CPU:
    case HURRAY_DEVICE_VULKAN:
    case HURRAY_DEVICE_OPENCL:
      return true;
    default:
      return memory_class == HURRAY_MEMORY_HOST_PINNED || memory_class == HURRAY_MEMORY_UNIFIED;
  }
}

// A policy for the transport asked for: cross-machine or rdma, nothing else.
hurray_status make_policy(uint32_t transport, hurray_policy **out, hurray_error *err);

// The devices this machine offers: every named tag with at least one device,
// restricted to `only` when it is not empty.
std::vector<Offer> local_offers(hurray_context *ctx, const std::vector<uint8_t> &only);

// BP-PUT-DEVICE: the receiver has exactly this device and memory class.
hurray_status check_offer(const std::vector<Offer> &offers, uint8_t tag, uint8_t memory_class,
                          int32_t ordinal, const char *who, hurray_error *err);

// The allocation that makes the receiver's copy: h's size, alignment,
// device and memory class, on device `ordinal`.
hurray_alloc_desc alloc_desc_for(const hurray_buffer_handle &h, int32_t ordinal) noexcept;

// Allocate the receiver's copy on exactly the declared device.
hurray_status alloc_exact(hurray_context *ctx, const hurray_buffer_handle &h, int32_t ordinal,
                          hurray_buffer **out, hurray_error *err);

// Export a PRODUCER_SYNCED, read-only handoff of `b` (a reference that keeps
// it alive) and tell whether its bytes are host-addressable.
hurray_status hold(hurray_buffer *b, hurray_handoff *out, bool *host, hurray_error *err);

// Memory about to be written whole by the network: ask for huge pages (a
// hint; Linux's transparent huge pages in "madvise" mode), so that receiving
// 1 GiB takes 512 page faults instead of 262144.
void advise_huge(void *p, size_t n);

// Page-aligned host memory for n bytes (hinted as above), NULL when there is
// none; freed with std::free.
void *alloc_staging(size_t n);

// An answer's error as the caller's hurray_error, and a hurray_error as an
// answer.
void copy_error(const Reply &r, hurray_error *err);
void reply_from(const hurray_error &e, Reply *r);

// Give UCX back the data `in` keeps of it (if any).
inline void release_data(ucp_worker_h w, Incoming &in) {
  if (in.ucx_owned && in.data != nullptr) ucp_am_data_release(w, in.data);
  in.ucx_owned = false;
  in.data = nullptr;
}

// What an active-message handler saw, queued on q (UCS_INPROGRESS when UCX's
// data is kept).
ucs_status_t queue_am(std::deque<Incoming> *q, Op op, const void *header, size_t header_length,
                      void *data, size_t length, const ucp_am_recv_param_t *param);

template <class Owner, Op op>
ucs_status_t am_handler(void *arg, const void *header, size_t header_length, void *data,
                        size_t length, const ucp_am_recv_param_t *param) {
  return queue_am(&static_cast<Owner *>(arg)->incoming, op, header, header_length, data, length,
                  param);
}

template <class Owner>
hurray_status set_handler(Owner *o, Op op, ucp_am_recv_callback_t cb, hurray_error *err) {
  ucp_am_handler_param_t p;
  std::memset(&p, 0, sizeof p);
  p.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_FLAGS |
                 UCP_AM_HANDLER_PARAM_FIELD_CB | UCP_AM_HANDLER_PARAM_FIELD_ARG;
  p.id = op;
  p.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
  p.cb = cb;
  p.arg = o;
  const ucs_status_t st = ucp_worker_set_am_recv_handler(o->w.worker, &p);
  if (st != UCS_OK)
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "UCX: ucp_worker_set_am_recv_handler: %s",
                ucs_status_string(st));
  return HURRAY_OK;
}

// Receive a rendezvous message's bytes into dst. With a trace on
// (HURRAY_NET_TRACE), UCX's completion marks 'l' for trace_id.
ucs_status_ptr_t recv_data(ucp_worker_h w, void *desc, void *dst, size_t length,
                           uint64_t trace_id = 0);

}  // namespace hurray::net
