// The client's side of the bootstrap (bootwire.h; docs/spec/network.md
// section 2.1): admitted and authenticated over TCP, then a UCX endpoint to
// the server's worker address. The server's side is in bootstrap_server.cpp.
#pragma once

#include <netdb.h>

#include "auth.h"
#include "ucx.h"

namespace hurray::net {

// Connect to host:port, prove the key (when the server asks for one) and
// check the server's proof, exchange worker addresses and create *out, an
// endpoint to the server's worker with peer-failure handling (cb, arg).
// HURRAY_E_IO when the server cannot be reached or stops answering by
// `deadline`; HURRAY_E_PROTOCOL when it refuses (its message: NET-ADMIT,
// NET-AUTH, NET-LIMIT...) or does not speak the bootstrap; the key never
// leaves this process.
hurray_status bootstrap_connect(Worker &w, const char *host, uint16_t port, const Key &key,
                                const Deadline &deadline, ucp_err_handler_cb_t cb, void *arg,
                                ucp_ep_h *out, hurray_error *err) noexcept;

// An endpoint to the worker at `address` (its bytes) with peer-failure
// handling; shared by both sides.
ucs_status_t ep_to_worker(Worker &w, const unsigned char *address, size_t length,
                          ucp_err_handler_cb_t cb, void *arg, ucp_ep_h *out) noexcept;

// The local address this machine reaches host:port from (the route's source
// address, found with a datagram socket that sends nothing), as text into
// out (n bytes). False when host does not resolve or has no route.
bool local_address_for(const char *host, uint16_t port, char *out, size_t n) noexcept;

// getaddrinfo of host:port for a TCP stream (flags: AI_PASSIVE... for a
// listener); *res is the caller's to free. HURRAY_E_IO "cannot resolve";
// shared by both sides.
hurray_status resolve_tcp(const char *host, uint16_t port, int flags, addrinfo **res,
                          hurray_error *err) noexcept;

}  // namespace hurray::net
