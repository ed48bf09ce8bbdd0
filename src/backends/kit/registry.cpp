// See registry.h.
#include "registry.h"

namespace hurray::kit {

bool Registry::add(Allocation *a) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    by_data_[a->data] = a;
    return true;
  } catch (...) {
    return false;
  }
}

void Registry::remove(const Allocation *a) noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_data_.find(a->data);
  if (it != by_data_.end() && it->second == a) by_data_.erase(it);
}

bool Registry::find(uintptr_t p, Allocation *out) const noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = by_data_.upper_bound(p);
  if (it == by_data_.begin()) return false;
  --it;
  const Allocation *a = it->second;
  // An empty range holds nothing; a 1-byte range holds its first byte.
  if (p - a->data >= a->byte_size) return false;
  *out = *a;
  return true;
}

Allocation *Registry::take_any() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (by_data_.empty()) return nullptr;
  auto it = by_data_.begin();
  Allocation *a = it->second;
  by_data_.erase(it);
  return a;
}

}  // namespace hurray::kit
