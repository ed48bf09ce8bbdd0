// Record storage of the handoff layer: the process-lifetime pools of buffer
// records and handoff records, the per-thread caches of free records in
// front of them (declared, with their inline pop and push, in internal.h),
// and the pthread key that flushes a thread's cache back to the pools when
// the thread exits. Nothing here allocates once the pools are warm.
#include "internal.h"

namespace hurray::detail::handoff {

constinit Pool<hurray_buffer> g_buffers;
constinit Pool<Slot> g_slots;

constinit thread_local ThreadCache t_cache __attribute__((tls_model("initial-exec")));

namespace {

void flush_cache(void *p) {
  auto *c = static_cast<ThreadCache *>(p);
  while (c->nslots) slots().push(c->slots[--c->nslots]);
  while (c->nbuffers) buffers().push(c->buffers[--c->nbuffers]);
}

}  // namespace

pthread_key_t g_cache_key;
const bool g_cache_key_ok = pthread_key_create(&g_cache_key, flush_cache) == 0;

}  // namespace hurray::detail::handoff
