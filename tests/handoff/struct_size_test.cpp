// Size-first structs (src/core/struct_size.h): a `size` below the struct's
// first published size (libhurray 1.0) is refused with
// HURRAY_E_INVALID_ARGUMENT, the message naming the struct and both sizes
// (Linux's copy_struct_from_user convention), for every size-first struct
// of hurray.h, hurray_ipc.h and hurray_dlpack.h (hurray_backend_v1: the
// loader tests; libhurray-net's: tests/net/guard_test.cpp).
#include <catch2/catch.hpp>
#include <hurray_dlpack.h>
#include <hurray_ipc.h>

#include <sys/socket.h>
#include <unistd.h>

#include <cstddef>

#include <string>

#include "../common/ipc_local_pair.h"
#include "../common/handoff_util.h"

using namespace hurray_test;

namespace {

// The message names the struct, the size given and the first size.
void check_refused(const hurray_error &err, const char *name, uint32_t given, uint32_t first) {
  const std::string m = err.message;
  INFO(m);
  CHECK(err.status == HURRAY_E_INVALID_ARGUMENT);
  CHECK(m.find(std::string(name) + ".size is " + std::to_string(given) + ", below " +
               std::to_string(first)) != std::string::npos);
}

}  // namespace

TEST_CASE("hurray_alloc_desc below its first size (4) is refused, not read as older",
          "[handoff][abi][size]") {
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  a.byte_size = 64;
  hurray_buffer *b = nullptr;
  hurray_error err{};
  for (uint32_t size : {0u, 4u, 31u}) {
    a.size = size;
    REQUIRE(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
    check_refused(err, "hurray_alloc_desc", size, 32);
  }
  a.size = sizeof a;
  REQUIRE(hurray_buffer_alloc(nullptr, &a, &b, &err) == HURRAY_OK);
  hurray_buffer_unref(b);
}

TEST_CASE("hurray_buffer_desc below its first size is refused by wrap and handoff_wrap",
          "[handoff][abi][size]") {
  Aligned mem(4096);
  Counter c;
  hurray_buffer_desc d = cpu_desc(mem.p, 64, &c);
  d.size = 40;  // ends before free_fn
  hurray_buffer *b = nullptr;
  hurray_error err{};
  REQUIRE(hurray_buffer_wrap(nullptr, &d, &b, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_buffer_desc", 40, 56);
  hurray_handoff h;
  REQUIRE(hurray_handoff_wrap(nullptr, &d, nullptr, &h, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_buffer_desc", 40, 56);
  CHECK(c.frees == 0);
}

TEST_CASE("hurray_export_desc below its first size is refused by handoff_wrap, export, ipc_send",
          "[handoff][abi][size]") {
  Aligned mem(4096);
  Counter c;
  const hurray_buffer_desc d = cpu_desc(mem.p, 64, &c);
  hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
  e.size = 8;
  hurray_handoff h;
  hurray_error err{};
  REQUIRE(hurray_handoff_wrap(nullptr, &d, &e, &h, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_export_desc", 8, 48);
  hurray_buffer *b = nullptr;
  REQUIRE(hurray_buffer_wrap(nullptr, &d, &b, &err) == HURRAY_OK);
  REQUIRE(hurray_buffer_export(b, &e, &h, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_export_desc", 8, 48);
  hurray_ipc_channel *x = nullptr, *y = nullptr;
  local_pair(&x, &y);
  uint64_t id = 0;
  REQUIRE(hurray_ipc_send(x, b, &e, &id, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_export_desc", 8, 48);
  hurray_ipc_close(x);
  hurray_ipc_close(y);
  hurray_buffer_unref(b);
  CHECK(c.frees == 1);
}

TEST_CASE("hurray_ipc_options below its first size is refused", "[ipc][abi][size]") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  close(sv[1]);
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.size = 8;  // size and flags only
  hurray_ipc_channel *ch = nullptr;
  hurray_error err{};
  REQUIRE(hurray_ipc_channel_from_fd(sv[0], &o, &ch, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_ipc_options", 8, 64);
}

TEST_CASE("hurray_ipc_peer_info and hurray_ipc_stats below their first sizes are refused",
          "[ipc][abi][size]") {
  hurray_ipc_channel *x = nullptr, *y = nullptr;
  local_pair(&x, &y);
  hurray_error err{};
  hurray_ipc_peer_info info{};
  info.size = offsetof(hurray_ipc_peer_info, uid);  // never published
  REQUIRE(hurray_ipc_peer(x, &info, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_ipc_peer_info", info.size, 152);
  info.size = sizeof info;
  CHECK(hurray_ipc_peer(x, &info, &err) == HURRAY_OK);
  hurray_ipc_stats stats{};
  stats.size = 16;
  REQUIRE(hurray_ipc_get_stats(x, &stats, &err) == HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_ipc_stats", 16, 80);
  hurray_ipc_close(x);
  hurray_ipc_close(y);
}

TEST_CASE("hurray_dlpack_import_options below its first size is refused", "[dlpack][abi][size]") {
  hurray_dlpack_import_options o = HURRAY_DLPACK_IMPORT_OPTIONS_INIT;
  o.size = 8;
  alignas(64) static unsigned char data[64];
  int64_t shape[1] = {64};
  hurray_dl_managed_tensor_versioned v{};
  v.version = {HURRAY_DLPACK_MAJOR_VERSION, 0};
  v.dl_tensor.data = data;
  v.dl_tensor.device = {HURRAY_DL_CPU, 0};
  v.dl_tensor.ndim = 1;
  v.dl_tensor.dtype = {1, 8, 1};  // uint8
  v.dl_tensor.shape = shape;
  hurray_handoff h;
  hurray_error err{};
  REQUIRE(hurray_dlpack_import_versioned_opts(nullptr, &v, &o, &h, &err) ==
          HURRAY_E_INVALID_ARGUMENT);
  check_refused(err, "hurray_dlpack_import_options", 8, 24);
}
