// Descriptor slots (protocol version 5, docs/spec/ipc.md "Slots"): two
// correct peers exchange many buffers through the consumer's 64 slots
// (reuse, eviction, read-only and writable mixed) with the right bytes; a
// hostile producer in a real process (hurray_ipc_batch_peer, batch_peer.cpp)
// breaks each slot rule and is refused with BP-IPC-SLOT, no descriptor kept;
// the slots' descriptors go with the channel.
#include <hurray_ipc.h>

#include <sys/socket.h>

#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <catch2/catch.hpp>

#include "../../src/ipc/wire.h"
#include "../common/ipc_local_pair.h"
#include "../common/open_fds.h"
#include "batch_common.h"
#include "../common/peer_process.h"

namespace {

using hurray_test::open_fds;

hurray_buffer *shareable() { return batch_common::shareable(0); }
using batch_common::stats;

// The byte buffer i holds in round r.
unsigned char pattern(size_t i, int r) { return static_cast<unsigned char>(i * 7 + r * 13 + 1); }

}  // namespace

TEST_CASE("slots: two correct peers exchange 1500 buffers through 64 slots with the right bytes") {
  const int before = open_fds();
  {
    hurray_ipc_channel *a = nullptr, *c = nullptr;
    hurray_test::local_pair(&a, &c);  // both of version 5 (batch_test checks it)
    // 100 buffers > 64 slots: the producer evicts; each is sent read-only
    // in some rounds and writable in others (two slots' worth of keys)
    std::vector<hurray_buffer *> bufs;
    for (size_t i = 0; i < 100; ++i) bufs.push_back(shareable());
    const int base = open_fds();  // the channels and the buffers' memfds
    hurray_export_desc ro = HURRAY_EXPORT_DESC_INIT;
    ro.flags = HURRAY_HANDOFF_READ_ONLY;
    size_t exchanged = 0;
    for (int r = 0; r < 30; ++r) {
      // this round's bytes, written while no handoff of them is out
      for (size_t i = 0; i < bufs.size(); ++i)
        std::memset(hurray_buffer_data(bufs[i]), pattern(i, r), 4096);
      // a different subset and order each round: 50 of them, stride 3 or 7
      std::vector<size_t> order;
      const size_t stride = r % 2 ? 3 : 7;
      for (size_t k = 0; k < 50; ++k) order.push_back((k * stride + static_cast<size_t>(r)) % 100);
      for (size_t at = 0; at < order.size(); at += 25) {
        const bool read_only = (r + static_cast<int>(at)) % 3 == 0;
        std::vector<hurray_buffer *> batch;
        for (size_t k = at; k < at + 25; ++k) batch.push_back(bufs[order[k]]);
        if (r % 4 == 0) {  // one at a time
          for (hurray_buffer *b : batch)
            REQUIRE(hurray_ipc_send(a, b, read_only ? &ro : nullptr, nullptr, nullptr) ==
                    HURRAY_OK);
        } else {
          size_t sent = 0;
          REQUIRE(hurray_ipc_send_many(a, batch.data(), batch.size(), read_only ? &ro : nullptr,
                                       nullptr, &sent, nullptr) == HURRAY_OK);
          REQUIRE(sent == batch.size());
        }
        std::vector<hurray_handoff> got(batch.size());
        for (size_t k = 0; k < batch.size(); ++k) {
          hurray_error err{};
          const hurray_status st = hurray_ipc_receive(c, 10000, &got[k], nullptr, &err);
          INFO(err.message);
          REQUIRE(st == HURRAY_OK);
          const auto *p = static_cast<const unsigned char *>(got[k].data);
          const unsigned char want = pattern(order[at + k], r);
          CHECK((p[0] == want && p[4095] == want));
          // the access granted, not the one the slot's memory had before
          CHECK(((got[k].flags & HURRAY_HANDOFF_READ_ONLY) != 0) == read_only);
        }
        REQUIRE(hurray_ipc_release_many(got.data(), got.size(), nullptr) == HURRAY_OK);
        exchanged += batch.size();
        for (int i = 0; i < 1000 && stats(a).outstanding; ++i)
          REQUIRE(hurray_ipc_progress(a, 10, nullptr, nullptr) == HURRAY_OK);
        REQUIRE(stats(a).outstanding == 0);
      }
    }
    CHECK(exchanged == 1500);
    CHECK(stats(a).closed == 0);
    CHECK(stats(c).closed == 0);
    CHECK(stats(c).messages_rejected == 0);
    // the consumer holds at most its 64 slots (its mapping cache's mappings
    // hold no descriptor)
    CHECK(open_fds() > base);
    CHECK(open_fds() <= base + 64);
    hurray_ipc_close(a);
    hurray_ipc_close(c);
    for (hurray_buffer *b : bufs) hurray_buffer_unref(b);
  }
  CHECK(open_fds() == before);  // the slots' descriptors went with the channel
}

TEST_CASE("slots: a producer in another process hands memory over without its descriptor") {
  const int before = open_fds();
  {
    hurray_test::PeerProcess p(HURRAY_IPC_BATCH_PEER, {"slot-good", "{fd}"}, nullptr);
    hurray_buffer *first = shareable();  // the peer starts once it has one
    REQUIRE(hurray_ipc_send(p.ch, first, nullptr, nullptr, nullptr) == HURRAY_OK);
    hurray_buffer_unref(first);
    const unsigned char want[6] = {0xA5, 0xA5, 0xA5, 0xA5, 0x5A, 0x5A};
    std::vector<hurray_handoff> got(6);
    for (int k = 0; k < 6; ++k) {
      hurray_error err{};
      uint64_t id = 0;
      const hurray_status st = hurray_ipc_receive(p.ch, 10000, &got[k], &id, &err);
      INFO(err.message);
      REQUIRE(st == HURRAY_OK);
      CHECK(id == static_cast<uint64_t>(k + 1));
      const auto *b = static_cast<const unsigned char *>(got[k].data);
      CHECK((b[0] == want[k] && b[4095] == want[k]));
    }
    REQUIRE(hurray_ipc_release_many(got.data(), got.size(), nullptr) == HURRAY_OK);
    CHECK(stats(p.ch).messages_rejected == 0);
    hurray_ipc_close(p.ch);
    p.ch = nullptr;
    CHECK(p.wait_exit() == 0);
  }
  CHECK(open_fds() == before);
}

TEST_CASE("slots: a producer that breaks a slot rule is refused with BP-IPC-SLOT and nothing is kept") {
  batch_common::all_refused({
      {"slot-range", "BP-IPC-SLOT: slot 64 of the 64 this side announced"},
      {"slot-empty", "BP-IPC-SLOT: a HANDOFF uses slot 3, which holds nothing"},
      {"slot-install-nofd", "BP-IPC-SLOT: memory installs slot 0 without a descriptor"},
      {"slot-use-fd", "BP-IPC-SLOT: memory uses slot 0 but a descriptor is attached"},
      {"slot-mode", "BP-IPC-SLOT: a read-only HANDOFF uses slot 0, which a writable one "
                    "installed"},
      {"slot-many-empty", "BP-IPC-SLOT: a HANDOFF uses slot 1, which holds nothing"},
      {"slot-unannounced", "BP-IPC-SLOT: a HANDOFF installs slot 0, but this side announced "
                           "no slots (the peer's protocol version 4)"},
  });
}

TEST_CASE("slots: a refusal points at the slot field, in a HANDOFF_MANY at its entry's") {
  // slot-many-empty: entry 2 of a HANDOFF_MANY (entries of 216 bytes) uses
  // slot 1: its memory handle's slot field is at 16 + 4 + 2 * (8 + 216) + 8
  // + 46 (the field's offset in a HANDOFF body, 62, less the header's 16)
  hurray_test::PeerProcess p(HURRAY_IPC_BATCH_PEER, {"slot-many-empty", "{fd}"}, nullptr);
  batch_common::Buffers bufs(2);
  REQUIRE(hurray_ipc_send_many(p.ch, bufs.b.data(), 2, nullptr, nullptr, nullptr, nullptr) ==
          HURRAY_OK);
  hurray_error err{};
  CHECK(batch_common::progress_until_refused(p.ch, &err) == HURRAY_E_PROTOCOL);
  INFO(err.message);
  CHECK(err.byte_offset == 16 + 4 + 2 * (8 + 216) + 8 + 46);
  hurray_ipc_close(p.ch);
  p.ch = nullptr;
  CHECK(p.wait_exit() == 0);
}

TEST_CASE("slots: a channel beyond the descriptor budget's half announces none and still works") {
  // 100 descriptors: 64 slots would pass its half (50)
  REQUIRE(hurray_ipc_set_fd_budget(100, nullptr, nullptr) == HURRAY_OK);
  {
    hurray_ipc_channel *a = nullptr, *c = nullptr;
    hurray_test::local_pair(&a, &c);
    hurray_buffer *b = shareable();
    std::memset(hurray_buffer_data(b), 0x42, 4096);
    const int held = open_fds();
    for (int r = 0; r < 3; ++r) {  // the same memory again: its descriptor each time
      REQUIRE(hurray_ipc_send(a, b, nullptr, nullptr, nullptr) == HURRAY_OK);
      hurray_handoff h;
      REQUIRE(hurray_ipc_receive(c, 10000, &h, nullptr, nullptr) == HURRAY_OK);
      CHECK(static_cast<const unsigned char *>(h.data)[0] == 0x42);
      REQUIRE(hurray_ipc_release(&h, nullptr) == HURRAY_OK);
    }
    CHECK(stats(c).closed == 0);
    CHECK(open_fds() == held);  // no slot keeps the memory's descriptor
    hurray_ipc_close(a);
    hurray_ipc_close(c);
    hurray_buffer_unref(b);
  }
  REQUIRE(hurray_ipc_set_fd_budget(0, nullptr, nullptr) == HURRAY_OK);
}

TEST_CASE("slots: a peer of version 5 whose WINDOW is the 8-byte form is refused") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  namespace wire = hurray::ipc;
  std::thread peer([fd = sv[1]] {
    wire::Message h{}, d{}, w{};
    h.type = wire::Type::Hello;
    h.protocol_version = 5;
    h.device_count = 1;
    h.devices[0] = {HURRAY_DEVICE_CPU, 1u << HURRAY_MEMORY_STANDARD};
    d.type = wire::Type::Devices;
    w.type = wire::Type::Window;
    w.window_handoffs = w.window_fds = 128;  // 8 bytes: no slots field
    for (const wire::Message *m : {&h, &d, &w}) {
      uint8_t buf[wire::kMaxMessage];
      const size_t n = wire::encode(*m, buf, sizeof buf);
      (void)!send(fd, buf, n, MSG_NOSIGNAL);
    }
  });
  hurray_ipc_channel *c = nullptr;
  hurray_ipc_options o = HURRAY_IPC_OPTIONS_INIT;
  o.hello_timeout_ms = 5000;
  hurray_error err{};
  const hurray_status st = hurray_ipc_channel_from_fd(sv[0], &o, &c, &err);
  peer.join();
  close(sv[1]);
  INFO(err.message);
  CHECK(st == HURRAY_E_PROTOCOL);
  CHECK(std::strstr(err.message, "an 8-byte WINDOW (version 5 sends 16 bytes)") != nullptr);
  if (c) hurray_ipc_close(c);
}
