/*
 * hurray_net.hpp - a header-only C++17 layer over hurray_net.h (link
 * libhurray-net and libhurray), in the style of hurray.hpp (which it
 * includes). It adds no export.
 *
 *  - hurray::net::server and hurray::net::client are move-only and destroy
 *    what they own exactly once, in the destructor.
 *  - received: a landed PUT, owning its buffer (a hurray::buffer).
 *  - The server's allocator (hurray_net_server_config.alloc) may be any
 *    callable returning a hurray::buffer. It runs inside the C library: a
 *    hurray::error it throws refuses that PUT with the error's status, rule
 *    and message; any other exception refuses it (HURRAY_E_INTERNAL) and is
 *    rethrown by the throwing poll() that ran it. Nothing crosses the C
 *    library.
 *  - Errors as in hurray.hpp: hurray::error, or the std::nothrow overloads
 *    (the only ones declared under -fno-exceptions).
 *
 * Thread safety is hurray_net.h's: a client or a server is used from one
 * thread at a time.
 */
#ifndef HURRAY_NET_HPP
#define HURRAY_NET_HPP

#include "hurray.hpp"
#include "hurray_backend.h"
#include "hurray_net.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace hurray {
namespace net {

/** A buffer that landed on the server through a PUT; owns it (BP-NET-OWN). */
struct received {
  std::uint64_t buffer_id = 0;
  buffer buf;                      /**< empty when nothing landed in time */
  hurray_buffer_handle handle{};   /**< the landed buffer's handle */
  std::int32_t device_ordinal = 0;
  explicit operator bool() const noexcept { return static_cast<bool>(buf); }
};

/** Where a transferred buffer goes (hurray_net_transfer_desc). */
inline hurray_net_transfer_desc transfer(std::uint64_t buffer_id,
                                         std::uint8_t device_tag = HURRAY_DEVICE_CPU,
                                         std::uint8_t memory_class = HURRAY_MEMORY_STANDARD,
                                         std::int32_t device_ordinal = 0) noexcept {
  hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
  d.buffer_id = buffer_id;
  d.device_tag = device_tag;
  d.memory_class = memory_class;
  d.device_ordinal = device_ordinal;
  return d;
}

// ------------------------------------------------------------------ server --

/** A listening server (hurray_net_server); destroyed by the destructor,
 *  which frees every buffer it still holds. Move-only. */
class server {
 public:
  /** Allocates one PUT's destination: a buffer of exactly desc's size,
   *  device, ordinal and memory class (BP-PUT-DEVICE). */
  using alloc_fn = std::function<buffer(std::uint64_t buffer_id, const hurray_alloc_desc &desc)>;

  server() noexcept = default;

  /** hurray_net_server_create. With `alloc`, it replaces config.alloc and
   *  config.alloc_user (see the file comment for its exceptions). */
  static hurray_status create(std::nothrow_t, const hurray_net_server_config &config,
                              server &out, alloc_fn alloc = nullptr,
                              hurray_error *err = nullptr) noexcept {
    std::unique_ptr<state> st;
    hurray_net_server_config c = config;
    if (alloc) {
      st.reset(new (std::nothrow) state);
      if (!st) return HURRAY_E_OUT_OF_MEMORY;
      st->fn = std::move(alloc);
      c.alloc = &server::trampoline;
      c.alloc_user = st.get();
    }
    hurray_net_server *s = nullptr;
    const hurray_status status = hurray_net_server_create(&c, &s, err);
    if (status == HURRAY_OK) {
      server made;
      made.state_ = std::move(st);
      made.s_.reset(s);
      out = std::move(made);
    }
    return status;
  }
  /** Drive the network up to timeout_ms and take the next landed PUT
   *  (out.buf empty when none landed in time). */
  hurray_status poll(std::nothrow_t, std::int32_t timeout_ms, received &out,
                     hurray_error *err = nullptr) noexcept {
    hurray_net_received r;
    std::memset(&r, 0, sizeof r);
    r.size = sizeof r;
    const hurray_status s = hurray_net_server_poll(s_.get(), timeout_ms, &r, err);
    out = received();
    if (s == HURRAY_OK && r.buffer != nullptr) {
      out.buffer_id = r.buffer_id;
      out.buf = buffer(r.buffer);
      out.handle = r.handle;
      out.device_ordinal = r.device_ordinal;
    } else if (r.buffer != nullptr) {
      hurray_buffer_unref(r.buffer);  // not expected on an error; never leaked
    }
    return s;
  }
  /** Offer `b` to GETs under `buffer_id` (the server takes a reference of
   *  its own); `peers` (NULL: any admitted client) as
   *  hurray_net_server_register_for. */
  hurray_status register_buffer(std::nothrow_t, std::uint64_t buffer_id, const buffer &b,
                                const char *peers = nullptr,
                                hurray_error *err = nullptr) noexcept {
    return peers == nullptr ? hurray_net_server_register(s_.get(), buffer_id, b.get(), err)
                            : hurray_net_server_register_for(s_.get(), buffer_id, b.get(),
                                                             peers, err);
  }
  hurray_status unregister(std::nothrow_t, std::uint64_t buffer_id,
                           hurray_error *err = nullptr) noexcept {
    return hurray_net_server_unregister(s_.get(), buffer_id, err);
  }
#if HURRAY_HPP_EXCEPTIONS
  static server create(const hurray_net_server_config &config, alloc_fn alloc = nullptr) {
    server out;
    hurray_error e = no_error();
    hurray::detail::check(create(std::nothrow, config, out, std::move(alloc), &e), e);
    return out;
  }
  /** A server on 127.0.0.1, any free port, default limits, no key. */
  static server create_local() {
    hurray_net_server_config c = HURRAY_NET_SERVER_CONFIG_INIT;
    return create(c);
  }
  received poll(std::int32_t timeout_ms) {
    received out;
    hurray_error e = no_error();
    const hurray_status s = poll(std::nothrow, timeout_ms, out, &e);
    rethrow_alloc_exception();
    hurray::detail::check(s, e);
    return out;
  }
  void register_buffer(std::uint64_t buffer_id, const buffer &b, const char *peers = nullptr) {
    hurray_error e = no_error();
    hurray::detail::check(register_buffer(std::nothrow, buffer_id, b, peers, &e), e);
  }
  void unregister(std::uint64_t buffer_id) {
    hurray_error e = no_error();
    hurray::detail::check(unregister(std::nothrow, buffer_id, &e), e);
  }
  /** The exception the allocator threw (not a hurray::error) and no poll()
   *  has rethrown yet. */
  std::exception_ptr take_alloc_exception() noexcept {
    return state_ ? std::exchange(state_->pending, nullptr) : nullptr;
  }
#endif
  std::uint16_t port() const noexcept { return hurray_net_server_port(s_.get()); }
  hurray_net_stats stats() const noexcept {
    hurray_net_stats st;
    std::memset(&st, 0, sizeof st);
    hurray_net_server_stats(s_.get(), &st);
    return st;
  }
  hurray_net_server *get() const noexcept { return s_.get(); }
  explicit operator bool() const noexcept { return s_ != nullptr; }

 private:
  // Used by the polling thread only (a server is one thread's at a time).
  struct state {
    alloc_fn fn;
#if HURRAY_HPP_EXCEPTIONS
    std::exception_ptr pending;
#endif
  };
  static hurray_status trampoline(void *user, std::uint64_t id, const hurray_alloc_desc *desc,
                                  hurray_buffer **out, hurray_error *err) noexcept {
    auto *st = static_cast<state *>(user);
#if HURRAY_HPP_EXCEPTIONS
    try {
      buffer b = st->fn(id, *desc);
      *out = b.into_raw();
      return *out != nullptr ? HURRAY_OK : HURRAY_E_OUT_OF_MEMORY;
    } catch (const error &ex) {
      if (err != nullptr) *err = ex.detail();
      return ex.status();
    } catch (...) {
      if (!st->pending) st->pending = std::current_exception();
      if (err != nullptr) {
        *err = no_error();
        err->status = HURRAY_E_INTERNAL;
        std::strncpy(err->message, "the server's allocator threw an exception",
                     sizeof err->message - 1);
      }
      return HURRAY_E_INTERNAL;
    }
#else
    (void)err;
    buffer b = st->fn(id, *desc);
    *out = b.into_raw();
    return *out != nullptr ? HURRAY_OK : HURRAY_E_OUT_OF_MEMORY;
#endif
  }
#if HURRAY_HPP_EXCEPTIONS
  void rethrow_alloc_exception() {
    if (std::exception_ptr p = take_alloc_exception()) std::rethrow_exception(p);
  }
#endif
  struct deleter {
    void operator()(hurray_net_server *s) const noexcept { hurray_net_server_destroy(s); }
  };
  // Declared first, destroyed last: the server goes before its allocator.
  std::unique_ptr<state> state_;
  std::unique_ptr<hurray_net_server, deleter> s_;
};

// ------------------------------------------------------------------ client --

/** A client connected to one server (hurray_net_client); closed by the
 *  destructor. Move-only. */
class client {
 public:
  client() noexcept = default;
  static hurray_status connect(std::nothrow_t, const hurray_net_client_config &config,
                               client &out, hurray_error *err = nullptr) noexcept {
    hurray_net_client *c = nullptr;
    const hurray_status s = hurray_net_client_connect(&config, &c, err);
    if (s == HURRAY_OK) out.c_.reset(c);
    return s;
  }
  /** The devices the server offered (up to `capacity` into out, *n the total). */
  hurray_status peer_devices(std::nothrow_t, hurray_net_device *out, std::size_t capacity,
                             std::size_t &n, hurray_error *err = nullptr) const noexcept {
    return hurray_net_client_peer_devices(c_.get(), out, capacity, &n, err);
  }
  hurray_status peer_device_identity(std::nothrow_t, std::uint8_t device_tag,
                                     std::int32_t ordinal, hurray_backend_device_identity &out,
                                     hurray_error *err = nullptr) const noexcept {
    return hurray_net_client_peer_device_identity(c_.get(), device_tag, ordinal, &out, err);
  }
  hurray_status peer_device_find(std::nothrow_t, std::uint8_t device_tag,
                                 const hurray_backend_device_identity &identity,
                                 std::int32_t &ordinal, hurray_error *err = nullptr) const noexcept {
    return hurray_net_client_peer_device_find(c_.get(), device_tag, &identity, &ordinal, err);
  }
  /** PUT a handoff's bytes (host-addressable); the handoff stays the
   *  caller's (BP-NET-OWN). */
  hurray_status put(std::nothrow_t, const handoff &source, const hurray_net_transfer_desc &desc,
                    hurray_error *err = nullptr) noexcept {
    return hurray_net_client_put(c_.get(), &source.raw(), &desc, err);
  }
  /** PUT a buffer of any device (staged through host memory if needed). */
  hurray_status put(std::nothrow_t, const buffer &source, const hurray_net_transfer_desc &desc,
                    hurray_error *err = nullptr) noexcept {
    return hurray_net_client_put_buffer(c_.get(), source.get(), &desc, err);
  }
  /** Start a PUT of a buffer; *ticket names it for put_wait (0 on error).
   *  Do not write to the buffer before the PUT is done. */
  hurray_status put_start(std::nothrow_t, const buffer &source,
                          const hurray_net_transfer_desc &desc, std::uint64_t &ticket,
                          hurray_error *err = nullptr) noexcept {
    return hurray_net_client_put_buffer_start(c_.get(), source.get(), &desc, &ticket, err);
  }
  hurray_status put_test(std::nothrow_t, std::uint64_t ticket, bool &done,
                         hurray_error *err = nullptr) noexcept {
    std::int32_t d = 0;
    const hurray_status s = hurray_net_client_put_test(c_.get(), ticket, &d, err);
    done = d != 0;
    return s;
  }
  /** The PUT's own result; retires the ticket. */
  hurray_status put_wait(std::nothrow_t, std::uint64_t ticket,
                         hurray_error *err = nullptr) noexcept {
    return hurray_net_client_put_wait(c_.get(), ticket, err);
  }
  /** GET the buffer the server registered as desc.buffer_id into a new
   *  buffer of desc's device (owned by `out`, BP-NET-OWN). */
  hurray_status get(std::nothrow_t, const hurray_net_transfer_desc &desc, buffer &out,
                    hurray_error *err = nullptr) noexcept {
    hurray_buffer *b = nullptr;
    const hurray_status s = hurray_net_client_get(c_.get(), &desc, &b, err);
    if (s == HURRAY_OK) out = buffer(b);
    return s;
  }
#if HURRAY_HPP_EXCEPTIONS
  static client connect(const hurray_net_client_config &config) {
    client out;
    hurray_error e = no_error();
    hurray::detail::check(connect(std::nothrow, config, out, &e), e);
    return out;
  }
  /** Connect to address:port with the default settings (no key). */
  static client connect(const char *address, std::uint16_t port) {
    hurray_net_client_config c = HURRAY_NET_CLIENT_CONFIG_INIT;
    c.address = address;
    c.port = port;
    return connect(c);
  }
  std::vector<hurray_net_device> peer_devices() const {
    std::size_t n = 0;
    hurray_error e = no_error();
    hurray::detail::check(peer_devices(std::nothrow, nullptr, 0, n, &e), e);
    std::vector<hurray_net_device> out(n);
    hurray::detail::check(peer_devices(std::nothrow, out.data(), out.size(), n, &e), e);
    out.resize(n < out.size() ? n : out.size());
    return out;
  }
  hurray_backend_device_identity peer_device_identity(std::uint8_t device_tag,
                                                      std::int32_t ordinal) const {
    hurray_backend_device_identity out;
    std::memset(&out, 0, sizeof out);
    hurray_error e = no_error();
    hurray::detail::check(peer_device_identity(std::nothrow, device_tag, ordinal, out, &e), e);
    return out;
  }
  std::int32_t peer_device_find(std::uint8_t device_tag,
                                const hurray_backend_device_identity &identity) const {
    std::int32_t ordinal = -1;
    hurray_error e = no_error();
    hurray::detail::check(peer_device_find(std::nothrow, device_tag, identity, ordinal, &e), e);
    return ordinal;
  }
  void put(const handoff &source, const hurray_net_transfer_desc &desc) {
    hurray_error e = no_error();
    hurray::detail::check(put(std::nothrow, source, desc, &e), e);
  }
  void put(const buffer &source, const hurray_net_transfer_desc &desc) {
    hurray_error e = no_error();
    hurray::detail::check(put(std::nothrow, source, desc, &e), e);
  }
  std::uint64_t put_start(const buffer &source, const hurray_net_transfer_desc &desc) {
    std::uint64_t ticket = 0;
    hurray_error e = no_error();
    hurray::detail::check(put_start(std::nothrow, source, desc, ticket, &e), e);
    return ticket;
  }
  bool put_test(std::uint64_t ticket) {
    bool done = false;
    hurray_error e = no_error();
    hurray::detail::check(put_test(std::nothrow, ticket, done, &e), e);
    return done;
  }
  void put_wait(std::uint64_t ticket) {
    hurray_error e = no_error();
    hurray::detail::check(put_wait(std::nothrow, ticket, &e), e);
  }
  buffer get(const hurray_net_transfer_desc &desc) {
    buffer out;
    hurray_error e = no_error();
    hurray::detail::check(get(std::nothrow, desc, out, &e), e);
    return out;
  }
#endif
  hurray_net_client *get() const noexcept { return c_.get(); }
  explicit operator bool() const noexcept { return c_ != nullptr; }

 private:
  struct deleter {
    void operator()(hurray_net_client *c) const noexcept { hurray_net_client_destroy(c); }
  };
  std::unique_ptr<hurray_net_client, deleter> c_;
};

}  // namespace net
}  // namespace hurray

#endif /* HURRAY_NET_HPP */
