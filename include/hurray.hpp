/*
 * hurray.hpp - a header-only C++17 layer over libhurray's C API (hurray.h,
 * hurray_ipc.h). It adds no export: every function here is inline and calls
 * the C functions, so a program links libhurray as a C program does.
 *
 *  - Owning types are move-only and free what they own exactly once, in the
 *    destructor: hurray::context, hurray::policy, hurray::buffer (the owner's
 *    reference), hurray::handoff (release, BP-REL-ONCE: a handoff that leaves
 *    a scope by an exception is still released), hurray::ipc::listener and
 *    hurray::ipc::channel.
 *  - Errors: the throwing functions throw hurray::error, which carries the
 *    status, the rule ID (RULES.md) and the library's message. Every one has
 *    a non-throwing overload taking std::nothrow first that returns the
 *    hurray_status and fills a hurray_error; built without exceptions
 *    (-fno-exceptions) only those are declared.
 *  - host_span<T>: a pointer/size pair (C++17 has no std::span) for memory
 *    the host can address; empty where it cannot.
 *  - No exception crosses a C callback: the IPC release callback's
 *    trampoline catches what the user's function throws and hands it to the
 *    channel call that ran the callback (see ipc::channel::on_release).
 *
 * Thread safety is the C API's: a context and an IPC channel may be used
 * from any thread; a policy may be read from many threads but not changed
 * while another reads it; a buffer's export and view are thread-safe; one
 * handoff is one consumer's and is released from any thread.
 */
#ifndef HURRAY_HPP
#define HURRAY_HPP

#include "hurray.h"
#include "hurray_ipc.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <utility>

#if defined(__cpp_exceptions) || defined(__EXCEPTIONS)
#define HURRAY_HPP_EXCEPTIONS 1
#include <exception>
#include <stdexcept>
#else
#define HURRAY_HPP_EXCEPTIONS 0
#endif

namespace hurray {

/** A hurray_error initialised to "no error" (status HURRAY_OK). */
inline hurray_error no_error() noexcept {
  hurray_error e;
  std::memset(&e, 0, sizeof e);
  e.buffer_index = -1;
  e.byte_offset = -1;
  return e;
}

/** Contiguous memory the host can address: data() and size() in elements. */
template <class T>
class host_span {
 public:
  constexpr host_span() noexcept = default;
  constexpr host_span(T *data, std::size_t size) noexcept : data_(data), size_(size) {}
  constexpr T *data() const noexcept { return data_; }
  constexpr std::size_t size() const noexcept { return size_; }
  constexpr std::size_t size_bytes() const noexcept { return size_ * sizeof(T); }
  constexpr bool empty() const noexcept { return size_ == 0; }
  constexpr T *begin() const noexcept { return data_; }
  constexpr T *end() const noexcept { return data_ + size_; }
  constexpr T &operator[](std::size_t i) const noexcept { return data_[i]; }

 private:
  T *data_ = nullptr;
  std::size_t size_ = 0;
};

#if HURRAY_HPP_EXCEPTIONS
/** A failed libhurray call: status, rule ID ("" when no protocol rule
 *  applies) and the library's message (which names the rule). */
class error : public std::runtime_error {
 public:
  explicit error(const hurray_error &e)
      : std::runtime_error(e.message[0] != '\0'
                               ? std::string(e.message)
                               : std::string(hurray_status_message(
                                     static_cast<hurray_status>(e.status)))),
        detail_(e) {}
  hurray_status status() const noexcept { return static_cast<hurray_status>(detail_.status); }
  /** e.g. "BP-ALIGN-MIN"; "" when no rule applies. */
  const char *rule_id() const noexcept { return detail_.rule_id; }
  hurray_rule rule() const noexcept { return static_cast<hurray_rule>(detail_.rule); }
  const hurray_error &detail() const noexcept { return detail_; }

 private:
  hurray_error detail_;
};

namespace detail {
inline void check(hurray_status s, const hurray_error &e) {
  if (s == HURRAY_OK) return;
  hurray_error copy = e;
  if (copy.status == HURRAY_OK) copy.status = s;  // a call that left err untouched
  throw error(copy);
}
}  // namespace detail
#endif

// ---------------------------------------------------------------- handles --

/** Decode 16 wire bytes (BP-LE, BP-SIZE). */
inline hurray_status decode(std::nothrow_t, const void *bytes, std::size_t size,
                            hurray_buffer_handle &out, hurray_error *err = nullptr) noexcept {
  return hurray_handle_decode(bytes, size, &out, err);
}
/** Encode a handle as 16 wire bytes into out[0..15]. */
inline hurray_status encode(std::nothrow_t, const hurray_buffer_handle &h, void *out,
                            std::size_t out_size, hurray_error *err = nullptr) noexcept {
  return hurray_handle_encode(&h, out, out_size, err);
}

// ----------------------------------------------------------------- policy --

/** A validation policy (hurray_policy): transport, agreed private tags. */
class policy {
 public:
  policy() noexcept = default;
  explicit policy(hurray_policy *owned) noexcept : p_(owned) {}
  static hurray_status create(std::nothrow_t, policy &out, hurray_error *err = nullptr) noexcept {
    hurray_policy *p = nullptr;
    hurray_status s = hurray_policy_create(&p, err);
    if (s == HURRAY_OK) out = policy(p);
    return s;
  }
  hurray_status set_transport(std::nothrow_t, hurray_transport t,
                              hurray_error *err = nullptr) noexcept {
    return hurray_policy_set_transport(p_.get(), t, err);
  }
  hurray_status allow_private_tag(std::nothrow_t, std::uint8_t tag, bool allow,
                                  hurray_error *err = nullptr) noexcept {
    return hurray_policy_allow_private_tag(p_.get(), tag, allow ? 1 : 0, err);
  }
  /** Check a decoded handle under this policy. */
  hurray_status validate(std::nothrow_t, const hurray_buffer_handle &h,
                         hurray_error *err = nullptr) const noexcept {
    return hurray_handle_validate(&h, p_.get(), err);
  }
#if HURRAY_HPP_EXCEPTIONS
  static policy create() {
    policy out;
    hurray_error e = no_error();
    detail::check(create(std::nothrow, out, &e), e);
    return out;
  }
  policy &set_transport(hurray_transport t) {
    hurray_error e = no_error();
    detail::check(set_transport(std::nothrow, t, &e), e);
    return *this;
  }
  policy &allow_private_tag(std::uint8_t tag, bool allow = true) {
    hurray_error e = no_error();
    detail::check(allow_private_tag(std::nothrow, tag, allow, &e), e);
    return *this;
  }
  void validate(const hurray_buffer_handle &h) const {
    hurray_error e = no_error();
    detail::check(validate(std::nothrow, h, &e), e);
  }
#endif
  hurray_policy *get() const noexcept { return p_.get(); }
  explicit operator bool() const noexcept { return p_ != nullptr; }

 private:
  struct deleter {
    void operator()(hurray_policy *p) const noexcept { hurray_policy_destroy(p); }
  };
  std::unique_ptr<hurray_policy, deleter> p_;
};

// ---------------------------------------------------------------- context --

/** A context (hurray_context): guard mode, the device registry. A default
 *  constructed one is the process's default context (NULL in the C API).
 *  Thread-safe (hurray.h: "A context is thread-safe"). */
class context {
 public:
  context() noexcept = default;
  static hurray_status create(std::nothrow_t, context &out, hurray_error *err = nullptr) noexcept {
    hurray_context *c = nullptr;
    hurray_status s = hurray_context_create(&c, err);
    if (s == HURRAY_OK) out.c_.reset(c);
    return s;
  }
  hurray_status set_guard(std::nothrow_t, bool on, hurray_error *err = nullptr) noexcept {
    return hurray_context_set_guard(c_.get(), on ? 1 : 0, err);
  }
#if HURRAY_HPP_EXCEPTIONS
  static context create() {
    context out;
    hurray_error e = no_error();
    detail::check(create(std::nothrow, out, &e), e);
    return out;
  }
  context &set_guard(bool on) {
    hurray_error e = no_error();
    detail::check(set_guard(std::nothrow, on, &e), e);
    return *this;
  }
#endif
  std::uint64_t guard_count() const noexcept { return hurray_context_guard_count(c_.get()); }
  /** The C context; NULL for the default context. */
  hurray_context *get() const noexcept { return c_.get(); }

 private:
  struct deleter {
    void operator()(hurray_context *c) const noexcept { hurray_context_destroy(c); }
  };
  std::unique_ptr<hurray_context, deleter> c_;
};

namespace detail {
inline bool host_addressable(const hurray_buffer_handle &h, std::uint32_t flags) noexcept {
  if ((flags & HURRAY_HANDOFF_OPAQUE_DATA) != 0) return false;
  return h.device_tag == HURRAY_DEVICE_CPU || h.memory_class == HURRAY_MEMORY_HOST_PINNED ||
         h.memory_class == HURRAY_MEMORY_UNIFIED;
}
}  // namespace detail

// ---------------------------------------------------------------- handoff --

/** One buffer handed to one consumer: released exactly once (BP-REL-ONCE),
 *  by release(), release_after() or the destructor. Move-only; a moved-from
 *  handoff holds nothing. */
class handoff {
 public:
  handoff() noexcept { std::memset(&h_, 0, sizeof h_); }
  /** Take ownership of *raw: it is moved in (raw's release becomes NULL,
   *  as hurray_handoff_move does). */
  static handoff adopt(hurray_handoff &raw) noexcept {
    handoff out;
    out.h_ = raw;
    raw.release = nullptr;
    raw.release_event = nullptr;
    return out;
  }
  handoff(handoff &&o) noexcept : h_(o.h_) { o.clear(); }
  handoff &operator=(handoff &&o) noexcept {
    if (this != &o) {
      reset();
      h_ = o.h_;
      o.clear();
    }
    return *this;
  }
  handoff(const handoff &) = delete;
  handoff &operator=(const handoff &) = delete;
  ~handoff() { reset(); }

  /** Give the C struct away (to a C consumer, or a DLPack export): this
   *  handoff holds nothing afterwards and the receiver releases it. */
  hurray_handoff into_raw() noexcept {
    hurray_handoff out = h_;
    clear();
    return out;
  }

  /** Release now, exactly once; returns the status (a second call, or a call
   *  on an empty handoff, is HURRAY_E_ALREADY_RELEASED; an IPC handoff whose
   *  release message did not reach the producer, HURRAY_E_IO: the memory is
   *  unmapped in any case). An EVENT handoff's event is released first if
   *  acquire() has not. */
  hurray_status release(hurray_error *err = nullptr) noexcept {
    if (h_.release == nullptr) {
      if (err != nullptr) {
        *err = no_error();
        err->status = HURRAY_E_ALREADY_RELEASED;
      }
      return HURRAY_E_ALREADY_RELEASED;
    }
    if (h_.release_event != nullptr) (void)hurray_handoff_release_event(&h_, nullptr);
    // hurray_handoff_release, plus (for a handoff from ipc::channel::receive)
    // HURRAY_E_IO when the release message did not reach the producer.
    return hurray_ipc_release(&h_, err);
  }
  hurray_status release_after(std::nothrow_t, const context &ctx, void *stream, void *event,
                              std::uint64_t event_value, hurray_error *err = nullptr) noexcept {
    return hurray_handoff_release_after(ctx.get(), &h_, stream, event, event_value, err);
  }
  /** Release once (event, event_value) completes, handing the event over
   *  (hurray_handoff_release_after_event): event_free_fn(event_user, event)
   *  runs once, after the release. On success this handoff holds nothing and
   *  the library owns the event; on error both are still the caller's. */
  hurray_status release_after_event(std::nothrow_t, const context &ctx, void *event,
                                    std::uint64_t event_value,
                                    void (*event_free_fn)(void *user, void *event),
                                    void *event_user, hurray_error *err = nullptr) noexcept {
    return hurray_handoff_release_after_event(ctx.get(), &h_, event, event_value, event_free_fn,
                                              event_user, err);
  }
  hurray_status check(std::nothrow_t, const policy &p, hurray_error *err = nullptr) const noexcept {
    return hurray_handoff_check(&h_, p.get(), err);
  }
  hurray_status acquire(std::nothrow_t, const context &ctx, void *consumer_stream = nullptr,
                        hurray_error *err = nullptr) noexcept {
    return hurray_handoff_acquire(ctx.get(), &h_, consumer_stream, err);
  }
#if HURRAY_HPP_EXCEPTIONS
  /** Release once device work on `stream` (or the event) completes; on
   *  success this handoff holds nothing, on error it still owns the buffer. */
  void release_after(const context &ctx, void *stream = nullptr, void *event = nullptr,
                     std::uint64_t event_value = 0) {
    hurray_error e = no_error();
    detail::check(release_after(std::nothrow, ctx, stream, event, event_value, &e), e);
  }
  void release_after_event(const context &ctx, void *event, std::uint64_t event_value,
                           void (*event_free_fn)(void *user, void *event), void *event_user) {
    hurray_error e = no_error();
    detail::check(
        release_after_event(std::nothrow, ctx, event, event_value, event_free_fn, event_user, &e),
        e);
  }
  /** hurray_handoff_check under `p` (a default-constructed policy: in-process). */
  void check(const policy &p = policy()) const {
    hurray_error e = no_error();
    detail::check(check(std::nothrow, p, &e), e);
  }
  void acquire(const context &ctx = context(), void *consumer_stream = nullptr) {
    hurray_error e = no_error();
    detail::check(acquire(std::nothrow, ctx, consumer_stream, &e), e);
  }
#endif
  /** The decoded handle (all zero if the bytes are malformed). */
  hurray_buffer_handle handle() const noexcept {
    hurray_buffer_handle out;
    std::memset(&out, 0, sizeof out);
    (void)hurray_handle_decode(h_.handle, sizeof h_.handle, &out, nullptr);
    return out;
  }
  std::uint64_t size() const noexcept { return handle().byte_size; }
  void *data() const noexcept { return h_.data; }
  /** The bytes, where the host can address them (CPU, pinned or unified
   *  memory, not OPAQUE_DATA); empty otherwise or once released. */
  host_span<std::byte> bytes() const noexcept {
    hurray_buffer_handle h = handle();
    if (!live() || h_.data == nullptr || !detail::host_addressable(h, h_.flags)) return {};
    return {static_cast<std::byte *>(h_.data), static_cast<std::size_t>(h.byte_size)};
  }
  bool live() const noexcept { return h_.release != nullptr; }
  explicit operator bool() const noexcept { return live(); }
  const hurray_handoff &raw() const noexcept { return h_; }
  hurray_handoff &raw() noexcept { return h_; }

 private:
  void clear() noexcept { std::memset(&h_, 0, sizeof h_); }
  void reset() noexcept {
    if (h_.release != nullptr) (void)release();
    clear();
  }
  hurray_handoff h_;
};

// ----------------------------------------------------------------- buffer --

/** A producer's buffer (hurray_buffer), holding the owner's reference: the
 *  memory is freed when this and every handoff of it are gone (BP-REFCOUNT).
 *  Move-only. export_handoff() and view() are thread-safe. */
class buffer {
 public:
  buffer() noexcept = default;
  /** Take over the owner's reference `owned`. */
  explicit buffer(hurray_buffer *owned) noexcept : b_(owned) {}

  static hurray_status alloc(std::nothrow_t, const hurray_alloc_desc &desc, buffer &out,
                             hurray_error *err = nullptr, const context &ctx = context()) noexcept {
    hurray_buffer *b = nullptr;
    hurray_status s = hurray_buffer_alloc(ctx.get(), &desc, &b, err);
    if (s == HURRAY_OK) out.b_.reset(b);
    return s;
  }
  /** Wrap memory the caller owns; desc.free_fn is called exactly once. */
  static hurray_status wrap(std::nothrow_t, const hurray_buffer_desc &desc, buffer &out,
                            hurray_error *err = nullptr, const context &ctx = context()) noexcept {
    hurray_buffer *b = nullptr;
    hurray_status s = hurray_buffer_wrap(ctx.get(), &desc, &b, err);
    if (s == HURRAY_OK) out.b_.reset(b);
    return s;
  }
  /** A handoff of its own for one more consumer (desc NULL: producer-synced). */
  hurray_status export_handoff(std::nothrow_t, handoff &out, const hurray_export_desc *desc = nullptr,
                               hurray_error *err = nullptr) const noexcept {
    hurray_handoff raw;
    std::memset(&raw, 0, sizeof raw);
    hurray_status s = hurray_buffer_export(b_.get(), desc, &raw, err);
    if (s == HURRAY_OK) out = handoff::adopt(raw);
    return s;
  }
  hurray_status view(std::nothrow_t, std::uint64_t offset, std::uint64_t length, buffer &out,
                     hurray_error *err = nullptr) const noexcept {
    hurray_buffer *v = nullptr;
    hurray_status s = hurray_buffer_view(b_.get(), offset, length, &v, err);
    if (s == HURRAY_OK) out.b_.reset(v);
    return s;
  }
#if HURRAY_HPP_EXCEPTIONS
  static buffer alloc(const hurray_alloc_desc &desc, const context &ctx = context()) {
    buffer out;
    hurray_error e = no_error();
    detail::check(alloc(std::nothrow, desc, out, &e, ctx), e);
    return out;
  }
  /** `size` bytes of CPU memory, `alignment`-aligned (0: 64); shareable
   *  (a memfd) so that it can be sent over IPC. */
  static buffer alloc_host(std::uint64_t size, std::uint32_t alignment = 0,
                           bool shareable = false, const context &ctx = context()) {
    hurray_alloc_desc d = HURRAY_ALLOC_DESC_INIT;
    d.byte_size = size;
    d.alignment = alignment;
    d.flags = shareable ? HURRAY_ALLOC_SHAREABLE : 0u;
    return alloc(d, ctx);
  }
  static buffer wrap(const hurray_buffer_desc &desc, const context &ctx = context()) {
    buffer out;
    hurray_error e = no_error();
    detail::check(wrap(std::nothrow, desc, out, &e, ctx), e);
    return out;
  }
  handoff export_handoff(const hurray_export_desc *desc = nullptr) const {
    handoff out;
    hurray_error e = no_error();
    detail::check(export_handoff(std::nothrow, out, desc, &e), e);
    return out;
  }
  buffer view(std::uint64_t offset, std::uint64_t length) const {
    buffer out;
    hurray_error e = no_error();
    detail::check(view(std::nothrow, offset, length, out, &e), e);
    return out;
  }
#endif
  hurray_buffer_handle handle() const noexcept {
    hurray_buffer_handle out;
    std::memset(&out, 0, sizeof out);
    (void)hurray_buffer_get_handle(b_.get(), &out, nullptr);
    return out;
  }
  std::uint64_t size() const noexcept { return b_ ? handle().byte_size : 0; }
  void *data() const noexcept { return hurray_buffer_data(b_.get()); }
  /** The bytes where the host can address them; empty otherwise. */
  host_span<std::byte> bytes() const noexcept {
    if (!b_) return {};
    hurray_buffer_handle h = handle();
    void *p = data();
    if (p == nullptr || !detail::host_addressable(h, 0)) return {};
    return {static_cast<std::byte *>(p), static_cast<std::size_t>(h.byte_size)};
  }
  /** The memfd of a shareable CPU allocation (owned by the buffer), else -1. */
  int fd() const noexcept { return hurray_buffer_fd(b_.get()); }
  hurray_buffer *get() const noexcept { return b_.get(); }
  /** Give the owner's reference away (the caller unrefs it). */
  hurray_buffer *into_raw() noexcept { return b_.release(); }
  explicit operator bool() const noexcept { return b_ != nullptr; }

 private:
  struct deleter {
    void operator()(hurray_buffer *b) const noexcept { hurray_buffer_unref(b); }
  };
  std::unique_ptr<hurray_buffer, deleter> b_;
};

// -------------------------------------------------------------------- ipc --

namespace ipc {

/** A connected IPC channel (hurray_ipc.h); closed by the destructor, which
 *  takes back every buffer still out (reason HURRAY_IPC_CLOSED). Every
 *  function may be called from any thread (hurray_ipc.h, "Thread safety"). */
class channel {
 public:
  using release_fn = std::function<void(std::uint64_t id, hurray_ipc_release_reason reason)>;

  channel() noexcept = default;
  explicit channel(hurray_ipc_channel *owned) noexcept : c_(owned) {}
  channel(channel &&) noexcept = default;
  channel &operator=(channel &&o) noexcept {
    if (this != &o) {
      c_.reset();  // close first: the callback may still run and needs state_
      c_ = std::move(o.c_);
      state_ = std::move(o.state_);
    }
    return *this;
  }
  ~channel() { c_.reset(); }

  static hurray_status connect(std::nothrow_t, const char *path, channel &out,
                               const hurray_ipc_options *opts = nullptr,
                               hurray_error *err = nullptr) noexcept {
    hurray_ipc_channel *c = nullptr;
    hurray_status s = hurray_ipc_connect(path, opts, &c, err);
    if (s == HURRAY_OK) out = channel(c);
    return s;
  }
  /** A channel of one end of a connected SOCK_SEQPACKET socket (owned from
   *  this call on, also on failure). */
  static hurray_status from_fd(std::nothrow_t, int fd, channel &out,
                               const hurray_ipc_options *opts = nullptr,
                               hurray_error *err = nullptr) noexcept {
    hurray_ipc_channel *c = nullptr;
    hurray_status s = hurray_ipc_channel_from_fd(fd, opts, &c, err);
    if (s == HURRAY_OK) out = channel(c);
    return s;
  }
  hurray_status send(std::nothrow_t, const buffer &b, std::uint64_t *id = nullptr,
                     const hurray_export_desc *desc = nullptr,
                     hurray_error *err = nullptr) noexcept {
    return hurray_ipc_send(c_.get(), b.get(), desc, id, err);
  }
  hurray_status receive(std::nothrow_t, handoff &out, std::int32_t timeout_ms,
                        std::uint64_t *id = nullptr, hurray_error *err = nullptr) noexcept {
    hurray_handoff raw;
    std::memset(&raw, 0, sizeof raw);
    hurray_status s = hurray_ipc_receive(c_.get(), timeout_ms, &raw, id, err);
    if (s == HURRAY_OK) out = handoff::adopt(raw);
    return s;
  }
  hurray_status progress(std::nothrow_t, std::int32_t timeout_ms, std::uint32_t *count = nullptr,
                         hurray_error *err = nullptr) noexcept {
    return hurray_ipc_progress(c_.get(), timeout_ms, count, err);
  }
  /** Call `fn(id, reason)` once for each sent buffer when it comes back.
   *  `fn` runs on the thread that read the release, without a lock held. If
   *  it throws, the trampoline catches it (nothing crosses the C library)
   *  and the throwing send(), receive() or progress() that ran it rethrows
   *  it; take_callback_exception() fetches one raised elsewhere (a
   *  release, the destructor). An empty `fn` removes the callback. */
  hurray_status on_release(std::nothrow_t, release_fn fn, hurray_error *err = nullptr) noexcept {
    if (!fn) return hurray_ipc_set_release_callback(c_.get(), nullptr, nullptr, err);
    if (!state_) {
      state_.reset(new (std::nothrow) state);
      if (!state_) return HURRAY_E_OUT_OF_MEMORY;
    }
    std::shared_ptr<const release_fn> shared(new (std::nothrow) release_fn(std::move(fn)));
    if (!shared) return HURRAY_E_OUT_OF_MEMORY;
    {
      std::lock_guard<std::mutex> lock(state_->mutex);
      state_->fn = std::move(shared);
    }
    return hurray_ipc_set_release_callback(c_.get(), &channel::trampoline, state_.get(), err);
  }
#if HURRAY_HPP_EXCEPTIONS
  static channel connect(const std::string &path, const hurray_ipc_options *opts = nullptr) {
    channel out;
    hurray_error e = no_error();
    detail::check(connect(std::nothrow, path.c_str(), out, opts, &e), e);
    return out;
  }
  static channel from_fd(int fd, const hurray_ipc_options *opts = nullptr) {
    channel out;
    hurray_error e = no_error();
    detail::check(from_fd(std::nothrow, fd, out, opts, &e), e);
    return out;
  }
  /** Send `b` without copying it (it must be shareable memory); returns the
   *  ID the release callback names it by. */
  std::uint64_t send(const buffer &b, const hurray_export_desc *desc = nullptr) {
    std::uint64_t id = 0;
    hurray_error e = no_error();
    hurray_status s = send(std::nothrow, b, &id, desc, &e);
    rethrow_callback_exception();
    detail::check(s, e);
    return id;
  }
  handoff receive(std::int32_t timeout_ms, std::uint64_t *id = nullptr) {
    handoff out;
    hurray_error e = no_error();
    hurray_status s = receive(std::nothrow, out, timeout_ms, id, &e);
    rethrow_callback_exception();
    detail::check(s, e);
    return out;
  }
  std::uint32_t progress(std::int32_t timeout_ms) {
    std::uint32_t n = 0;
    hurray_error e = no_error();
    hurray_status s = progress(std::nothrow, timeout_ms, &n, &e);
    rethrow_callback_exception();
    detail::check(s, e);
    return n;
  }
  void on_release(release_fn fn) {
    hurray_error e = no_error();
    detail::check(on_release(std::nothrow, std::move(fn), &e), e);
  }
  /** The exception a release callback threw and no call has rethrown yet. */
  std::exception_ptr take_callback_exception() noexcept {
    if (!state_) return nullptr;
    std::lock_guard<std::mutex> lock(state_->mutex);
    return std::exchange(state_->pending, nullptr);
  }
#endif
  hurray_ipc_stats stats() const noexcept {
    hurray_ipc_stats s;
    std::memset(&s, 0, sizeof s);
    s.size = sizeof s;
    (void)hurray_ipc_get_stats(c_.get(), &s, nullptr);
    return s;
  }
  int fd() const noexcept { return hurray_ipc_fd(c_.get()); }
  hurray_ipc_channel *get() const noexcept { return c_.get(); }
  explicit operator bool() const noexcept { return c_ != nullptr; }

 private:
  struct state {
    std::mutex mutex;
    std::shared_ptr<const release_fn> fn;
#if HURRAY_HPP_EXCEPTIONS
    std::exception_ptr pending;
#endif
  };
  static void trampoline(void *user, std::uint64_t id, hurray_ipc_release_reason reason) noexcept {
    auto *st = static_cast<state *>(user);
    std::shared_ptr<const release_fn> fn;  // copied under the lock, called without it
    {
      std::lock_guard<std::mutex> lock(st->mutex);
      fn = st->fn;
    }
    if (!fn) return;
#if HURRAY_HPP_EXCEPTIONS
    try {
      (*fn)(id, reason);
    } catch (...) {
      std::lock_guard<std::mutex> lock(st->mutex);
      if (!st->pending) st->pending = std::current_exception();
    }
#else
    (*fn)(id, reason);
#endif
  }
#if HURRAY_HPP_EXCEPTIONS
  void rethrow_callback_exception() {
    if (std::exception_ptr p = take_callback_exception()) std::rethrow_exception(p);
  }
#endif
  struct deleter {
    void operator()(hurray_ipc_channel *c) const noexcept { hurray_ipc_close(c); }
  };
  // Declared first, destroyed last: the channel closes before the state goes.
  std::unique_ptr<state> state_;
  std::unique_ptr<hurray_ipc_channel, deleter> c_;
};

/** A listening socket (hurray_ipc_listen); the destructor removes it. */
class listener {
 public:
  listener() noexcept = default;
  static hurray_status listen(std::nothrow_t, const char *path, listener &out,
                              const hurray_ipc_options *opts = nullptr,
                              hurray_error *err = nullptr) noexcept {
    hurray_ipc_listener *l = nullptr;
    hurray_status s = hurray_ipc_listen(path, opts, &l, err);
    if (s == HURRAY_OK) out.l_.reset(l);
    return s;
  }
  /** Wait up to timeout_ms (negative: forever) for a peer; a timeout is
   *  HURRAY_E_IO. */
  hurray_status accept(std::nothrow_t, channel &out, std::int32_t timeout_ms,
                       hurray_error *err = nullptr) noexcept {
    hurray_ipc_channel *c = nullptr;
    hurray_status s = hurray_ipc_accept(l_.get(), timeout_ms, &c, err);
    if (s == HURRAY_OK) out = channel(c);
    return s;
  }
#if HURRAY_HPP_EXCEPTIONS
  static listener listen(const std::string &path, const hurray_ipc_options *opts = nullptr) {
    listener out;
    hurray_error e = no_error();
    detail::check(listen(std::nothrow, path.c_str(), out, opts, &e), e);
    return out;
  }
  channel accept(std::int32_t timeout_ms) {
    channel out;
    hurray_error e = no_error();
    detail::check(accept(std::nothrow, out, timeout_ms, &e), e);
    return out;
  }
#endif
  int fd() const noexcept { return hurray_ipc_listener_fd(l_.get()); }
  hurray_ipc_listener *get() const noexcept { return l_.get(); }

 private:
  struct deleter {
    void operator()(hurray_ipc_listener *l) const noexcept { hurray_ipc_listener_destroy(l); }
  };
  std::unique_ptr<hurray_ipc_listener, deleter> l_;
};

}  // namespace ipc

#if HURRAY_HPP_EXCEPTIONS
/** Decode 16 wire bytes; throws hurray::error (BP-SIZE) on a wrong size. */
inline hurray_buffer_handle decode(const void *bytes, std::size_t size) {
  hurray_buffer_handle out;
  std::memset(&out, 0, sizeof out);
  hurray_error e = no_error();
  detail::check(decode(std::nothrow, bytes, size, out, &e), e);
  return out;
}
#endif

}  // namespace hurray

#endif /* HURRAY_HPP */
