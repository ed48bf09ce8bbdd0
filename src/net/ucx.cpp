// UCX plumbing shared by the server and the client (see ucx.h).
#include "ucx.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "../core/log.h"
#include "../core/message.h"

namespace hurray::net {

hurray_status fail(hurray_error *err, hurray_status status, hurray_rule rule, const char *fmt,
                   ...) noexcept {
  if (err == nullptr) return status;
  std::memset(err, 0, sizeof *err);
  err->status = status;
  err->rule = static_cast<uint32_t>(rule);
  err->severity = HURRAY_SEVERITY_ERROR;
  err->buffer_index = -1;
  err->byte_offset = -1;
  std::snprintf(err->rule_id, sizeof err->rule_id, "%s", hurray_rule_id(rule));
  va_list ap;
  va_start(ap, fmt);
  ::hurray::detail::write_message(err->message, err->rule_id, nullptr, fmt, ap);
  va_end(ap);
  return status;
}

void log_debug(const char *fmt, ...) noexcept {
  if (!hurray::detail::debug_logging()) return;
  va_list ap;
  va_start(ap, fmt);
  hurray::detail::vlog_debug("hurray-net", fmt, ap);
  va_end(ap);
}

namespace trace {
namespace {
struct Event {
  int64_t ns;
  uint64_t id;
  char what;
};
constexpr size_t kCapacity = size_t{1} << 20;
struct State {
  std::string path;                 // PREFIX.<pid>
  std::unique_ptr<Event[]> events;  // kCapacity of them
  std::atomic<size_t> count{0};     // slots claimed (may pass kCapacity)
  std::mutex flushing;
  size_t written = 0;               // events already in the file
  bool told_full = false;           // the file says events were not kept
};

// The trace, or NULL when it is off: decided once, then one load per call.
State *state() noexcept {
  static State *const trace = []() -> State * {
    const char *prefix = std::getenv("HURRAY_NET_TRACE");
    if (prefix == nullptr || *prefix == '\0') return nullptr;
    static State s;
    try {  // kept: no memory for the trace turns it off, nothing else
      s.path = std::string(prefix) + "." + std::to_string(static_cast<long>(getpid()));
    } catch (...) {
      return nullptr;
    }
    s.events.reset(new (std::nothrow) Event[kCapacity]);
    if (s.events == nullptr) log_debug("HURRAY_NET_TRACE: no memory for the trace; it is off");
    return s.events != nullptr ? &s : nullptr;
  }();
  return trace;
}
}  // namespace

bool on() noexcept { return state() != nullptr; }

void mark(char event, uint64_t id) noexcept {
  State *s = state();
  if (s == nullptr) return;
  const size_t i = s->count.fetch_add(1, std::memory_order_relaxed);
  if (i >= kCapacity) return;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  s->events[i] = Event{static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec, id, event};
}

void flush() noexcept {
  State *s = state();
  if (s == nullptr) return;
  std::lock_guard<std::mutex> lock(s->flushing);
  const size_t claimed = s->count.load(std::memory_order_acquire);
  const size_t n = claimed < kCapacity ? claimed : kCapacity;
  const bool tell_full = claimed > kCapacity && !s->told_full;
  if (n == s->written && !tell_full) return;
  FILE *f = std::fopen(s->path.c_str(), "a");
  if (f == nullptr) {
    log_debug("HURRAY_NET_TRACE: cannot write %s", s->path.c_str());
    return;
  }
  for (size_t i = s->written; i < n; ++i)
    std::fprintf(f, "%lld %c %llu\n", static_cast<long long>(s->events[i].ns), s->events[i].what,
                 static_cast<unsigned long long>(s->events[i].id));
  if (tell_full)
    std::fprintf(f, "# the trace is full (%zu events): later ones are not kept\n", kCapacity);
  std::fclose(f);
  s->written = n;
  s->told_full = s->told_full || tell_full;
}

void sent_cb(void *, ucs_status_t status, void *id) noexcept {
  if (status == UCS_OK) mark('S', static_cast<uint64_t>(reinterpret_cast<uintptr_t>(id)));
}
void landed_cb(void *, ucs_status_t status, size_t, void *id) noexcept {
  if (status == UCS_OK) mark('l', static_cast<uint64_t>(reinterpret_cast<uintptr_t>(id)));
}
}  // namespace trace

int Deadline::left_ms(int cap) const noexcept {
  if (infinite) return cap;
  const auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(at - Clock::now()).count();
  if (left <= 0) return 0;
  return left < cap ? static_cast<int>(left) : cap;
}

namespace {
// Endpoints made by worker address (the bootstrap, N16) make UCX 1.13's TCP transport move
// a rendezvous in TX_SEG_SIZE pieces (8 KiB by default): about 14 sendmsg calls per 64 KiB
// and 0.7 of the throughput of large writes. 256 KiB segments give that throughput back.
// ucp_config_modify keeps a name the ucp table does not know and applies it to every
// transport's configuration that has it: the TCP transport's fields are "TX_SEG_SIZE" and
// "RX_SEG_SIZE" (without the "TCP_" of their environment variables, which a modify of
// "TCP_TX_SEG_SIZE" does not reach). A user who sets either variable keeps both as UCX
// reads them (RX must stay >= TX).
constexpr const char *kTcpSegment = "256K";

void tcp_segments(ucp_config_t *config) noexcept {
  if (std::getenv("UCX_TCP_TX_SEG_SIZE") != nullptr ||
      std::getenv("UCX_TCP_RX_SEG_SIZE") != nullptr)
    return;
  // Best effort: a UCX without these names keeps its defaults, which are correct, only slower.
  (void)ucp_config_modify(config, "RX_SEG_SIZE", kTcpSegment);
  (void)ucp_config_modify(config, "TX_SEG_SIZE", kTcpSegment);
}
// UCX's TCP transport listens on every interface it uses, and uses them all by default:
// a server whose bootstrap listens on 127.0.0.1 had UCX listening on the machine's
// external address too. Unless UCX_NET_DEVICES says otherwise, a server's context uses
// only the interface that has its bootstrap address (a wildcard address: all of them).
void bind_devices(ucp_config_t *config, const char *address) noexcept {
  if (address == nullptr || std::getenv("UCX_NET_DEVICES") != nullptr) return;
  unsigned char want[16];
  int family = AF_INET;
  if (inet_pton(AF_INET, address, want) != 1) {
    family = AF_INET6;
    if (inet_pton(AF_INET6, address, want) != 1) return;  // a name: UCX's own choice
  }
  ifaddrs *all = nullptr;
  if (getifaddrs(&all) != 0) return;
  for (const ifaddrs *i = all; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != family) continue;
    const void *have = family == AF_INET
        ? static_cast<const void *>(&reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr)
        : static_cast<const void *>(&reinterpret_cast<const sockaddr_in6 *>(i->ifa_addr)->sin6_addr);
    if (std::memcmp(have, want, family == AF_INET ? 4 : 16) == 0) {
      (void)ucp_config_modify(config, "NET_DEVICES", i->ifa_name);
      break;
    }
  }
  freeifaddrs(all);
}
}  // namespace

hurray_status Worker::init(hurray_error *err, const char *bind_address) noexcept {
  ucp_config_t *config = nullptr;
  ucs_status_t st = ucp_config_read(nullptr, nullptr, &config);
  if (st != UCS_OK)
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "UCX: ucp_config_read: %s",
                ucs_status_string(st));
  tcp_segments(config);
  bind_devices(config, bind_address);
  ucp_params_t params;
  std::memset(&params, 0, sizeof params);
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_NAME;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_WAKEUP;
  params.name = "hurray-net";
  st = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (st != UCS_OK) {
    context = nullptr;
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "UCX: ucp_init: %s", ucs_status_string(st));
  }
  ucp_worker_params_t wp;
  std::memset(&wp, 0, sizeof wp);
  wp.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  wp.thread_mode = UCS_THREAD_MODE_SINGLE;
  st = ucp_worker_create(context, &wp, &worker);
  if (st != UCS_OK) {
    worker = nullptr;
    fini();
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "UCX: ucp_worker_create: %s",
                ucs_status_string(st));
  }
  // How long wait() polls before it sleeps (HURRAY_NET_SPIN_US, default 200).
  if (const char *spin = std::getenv("HURRAY_NET_SPIN_US"); spin != nullptr && *spin != '\0') {
    char *end = nullptr;
    const unsigned long v = std::strtoul(spin, &end, 10);
    if (*end == '\0' && v <= 1000000) spin_us = static_cast<uint32_t>(v);
  }
  st = ucp_worker_get_efd(worker, &efd);
  if (st != UCS_OK) {
    efd = -1;
    fini();
    return fail(err, HURRAY_E_IO, HURRAY_RULE_NONE, "UCX: ucp_worker_get_efd: %s",
                ucs_status_string(st));
  }
  return HURRAY_OK;
}

void Worker::fini() noexcept {
  if (worker != nullptr) ucp_worker_destroy(worker);
  if (context != nullptr) ucp_cleanup(context);
  worker = nullptr;
  context = nullptr;
  efd = -1;
}

bool Worker::wait(int ms) noexcept {
  if (ucp_worker_progress(worker) != 0) return true;
  if (ms <= 0) return false;
  // Poll a little before sleeping: while a transfer is under way the next
  // event is microseconds away, and every sleep on the event fd costs a
  // wake-up (measured: 1 MiB PUTs at a third of ucx_perftest's rate without
  // this on an idle machine; bench/run.py).
  if (spin_us > 0) {
    using clock = std::chrono::steady_clock;
    const auto until = clock::now() + std::chrono::microseconds(spin_us);
    do {
      if (ucp_worker_progress(worker) != 0) return true;
    } while (clock::now() < until);
  }
  const ucs_status_t st = ucp_worker_arm(worker);
  if (st == UCS_ERR_BUSY) return false;  // events are pending: progress again
  if (st != UCS_OK) return false;
  if (extra != nullptr && n_extra > 0) {
    (void)::poll(extra, n_extra, ms);
    return false;
  }
  pollfd p{efd, POLLIN, 0};
  (void)::poll(&p, 1, ms);
  return false;
}

ucs_status_t Worker::wait_request(ucs_status_ptr_t request, const Deadline &deadline) noexcept {
  if (request == nullptr) return UCS_OK;
  if (UCS_PTR_IS_ERR(request)) return UCS_PTR_STATUS(request);
  ucs_status_t st;
  while ((st = ucp_request_check_status(request)) == UCS_INPROGRESS) {
    if (deadline.passed()) {
      ucp_request_cancel(worker, request);
      while ((st = ucp_request_check_status(request)) == UCS_INPROGRESS)
        ucp_worker_progress(worker);
      ucp_request_free(request);
      return UCS_ERR_TIMED_OUT;
    }
    wait(deadline.left_ms(50));
  }
  ucp_request_free(request);
  return st;
}

void close_ep(Worker &w, ucp_ep_h ep, bool graceful, int ms) noexcept {
  if (ep == nullptr) return;
  ucp_request_param_t p;
  std::memset(&p, 0, sizeof p);
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  p.flags = graceful ? 0u : static_cast<uint32_t>(UCP_EP_CLOSE_FLAG_FORCE);
  ucs_status_ptr_t req = ucp_ep_close_nbx(ep, &p);
  if (req == nullptr || UCS_PTR_IS_ERR(req)) return;
  const Deadline d = Deadline::in(ms);
  while (ucp_request_check_status(req) == UCS_INPROGRESS) {
    if (d.passed()) {
      // A close that cannot finish in time: UCX completes it in the
      // background, or when the worker is destroyed.
      ucp_request_free(req);
      return;
    }
    w.wait(d.left_ms(20));
  }
  ucp_request_free(req);
}

ucs_status_ptr_t am_send(ucp_ep_h ep, unsigned id, const void *header, size_t header_length,
                         const void *data, size_t length, uint32_t flags,
                         ucp_send_nbx_callback_t cb, void *user) noexcept {
  ucp_request_param_t p;
  std::memset(&p, 0, sizeof p);
  p.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FIELD_DATATYPE;
  p.flags = flags;
  p.datatype = ucp_dt_make_contig(1);
  if (cb != nullptr) {
    p.op_attr_mask |= UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    p.cb.send = cb;
    p.user_data = user;
  }
  return ucp_am_send_nbx(ep, id, header, header_length, data, length, &p);
}

}  // namespace hurray::net
