// The per-thread spare block of DLPack exports (blocks.h): its TLS and the
// pthread key that frees it when its thread exits.
#include "blocks.h"

#include <pthread.h>

namespace hurray::detail::dlpack {

constinit thread_local SpareBlock t_spare __attribute__((tls_model("initial-exec")));

namespace {

void free_spare(void *p) {
  auto *s = static_cast<SpareBlock *>(p);
  std::free(s->mem);
  s->mem = nullptr;
  s->registered = false;  // the key's value is NULL now: register again if refilled
}

pthread_key_t g_spare_key;
const bool g_spare_key_ok = pthread_key_create(&g_spare_key, free_spare) == 0;

}  // namespace

bool register_spare(SpareBlock &s) {
  if (!g_spare_key_ok || pthread_setspecific(g_spare_key, &s) != 0) return false;
  s.registered = true;
  return true;
}

}  // namespace hurray::detail::dlpack
