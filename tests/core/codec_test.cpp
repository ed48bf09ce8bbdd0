// The 16-byte codec: BP-LE (explicit little-endian on every host) and
// BP-SIZE (exactly 16 bytes, never read past the input).
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "../common/table_util.h"

using namespace hurray_test;

TEST_CASE("decode: the issue's example is 4 KiB of CPU memory aligned to 64", "[codec][BP-LE]") {
  const unsigned char b[16] = {0x00, 0x10, 0, 0, 0, 0, 0, 0, 0x40, 0, 0, 0, 0, 0, 0, 0};
  hurray_buffer_handle h;
  REQUIRE(hurray_handle_decode(b, 16, &h, nullptr) == HURRAY_OK);
  CHECK(h.byte_size == 4096);
  CHECK(h.alignment == 64);
  CHECK(h.device_tag == HURRAY_DEVICE_CPU);
  CHECK(h.sync_mode == HURRAY_SYNC_PRODUCER_SYNCED);
  CHECK(h.memory_class == HURRAY_MEMORY_STANDARD);
  CHECK(h.reserved == 0);
}

TEST_CASE("decode: multi-byte fields are little-endian whatever the host (BP-LE)", "[codec][BP-LE]") {
  const unsigned char b[16] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                               0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10};
  hurray_buffer_handle h;
  REQUIRE(hurray_handle_decode(b, 16, &h, nullptr) == HURRAY_OK);
  CHECK(h.byte_size == UINT64_C(0x0807060504030201));
  CHECK(h.alignment == UINT32_C(0x0C0B0A09));
  CHECK(h.device_tag == 0x0D);
  CHECK(h.sync_mode == 0x0E);
  CHECK(h.memory_class == 0x0F);
  CHECK(h.reserved == 0x10);
  // A big-endian writer's alignment 64 (00 00 00 40) reads as 2^30 here.
  const unsigned char be[16] = {0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0x40, 0, 0, 0, 0};
  REQUIRE(hurray_handle_decode(be, 16, &h, nullptr) == HURRAY_OK);
  CHECK(h.alignment == (UINT32_C(1) << 30));
  CHECK(h.byte_size == (UINT64_C(1) << 52));
}

TEST_CASE("encode: writes little-endian bytes", "[codec][BP-LE]") {
  const auto h = make(UINT64_C(0x1122334455667788), 0xAABBCCDD, 0x04, 0x01, 0x02, 0x00);
  unsigned char b[16];
  REQUIRE(hurray_handle_encode(&h, b, sizeof b, nullptr) == HURRAY_OK);
  const unsigned char want[16] = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
                                  0xDD, 0xCC, 0xBB, 0xAA, 0x04, 0x01, 0x02, 0x00};
  CHECK(std::memcmp(b, want, 16) == 0);
}

TEST_CASE("decode then encode gives the input back for any 16 bytes", "[codec][roundtrip]") {
  std::mt19937_64 rng(20261130);
  for (int i = 0; i < 200000; ++i) {
    unsigned char in[16], out[16];
    const uint64_t a = rng(), b = rng();
    std::memcpy(in, &a, 8);
    std::memcpy(in + 8, &b, 8);
    hurray_buffer_handle h;
    REQUIRE(hurray_handle_decode(in, 16, &h, nullptr) == HURRAY_OK);
    REQUIRE(hurray_handle_encode(&h, out, 16, nullptr) == HURRAY_OK);
    REQUIRE(std::memcmp(in, out, 16) == 0);
  }
}

TEST_CASE("encode then decode gives the struct back", "[codec][roundtrip]") {
  const auto h = make(~UINT64_C(0), ~UINT32_C(0), 0xFF, 0xFF, 0xFF, 0xFF);
  unsigned char b[16];
  hurray_buffer_handle back;
  REQUIRE(hurray_handle_encode(&h, b, 16, nullptr) == HURRAY_OK);
  REQUIRE(hurray_handle_decode(b, 16, &back, nullptr) == HURRAY_OK);
  CHECK(std::memcmp(&h, &back, sizeof h) == 0);
}

TEST_CASE("decode: any size other than 16 is BP-SIZE and reads nothing", "[codec][BP-SIZE]") {
  for (size_t n : {size_t(0), size_t(1), size_t(15), size_t(17), size_t(32)}) {
    // exactly n bytes on the heap: ASan catches a read past the end
    std::unique_ptr<unsigned char[]> b(new unsigned char[n ? n : 1]());
    hurray_buffer_handle h = make(7, 7, 7);
    hurray_error err;
    REQUIRE(hurray_handle_decode(b.get(), n, &h, &err) == HURRAY_E_SIZE);
    CHECK(std::string(err.rule_id) == "BP-SIZE");
    CHECK(err.rule == HURRAY_RULE_SIZE);
    CHECK(err.status == HURRAY_E_SIZE);
    CHECK(h.byte_size == 7);  // untouched on failure
  }
}

TEST_CASE("encode: output smaller than 16 bytes is refused and untouched", "[codec][BP-SIZE]") {
  const auto h = make(1, 64, 0);
  unsigned char b[15];
  std::memset(b, 0xEE, sizeof b);
  hurray_error err;
  REQUIRE(hurray_handle_encode(&h, b, sizeof b, &err) == HURRAY_E_SIZE);
  CHECK(std::string(err.rule_id) == "BP-SIZE");
  for (unsigned char c : b) CHECK(c == 0xEE);
  unsigned char big[32];
  CHECK(hurray_handle_encode(&h, big, sizeof big, nullptr) == HURRAY_OK);
}

TEST_CASE("codec: NULL arguments are HURRAY_E_INVALID_ARGUMENT, err optional", "[codec][errors]") {
  unsigned char b[16] = {};
  hurray_buffer_handle h{};
  hurray_error err;
  CHECK(hurray_handle_decode(nullptr, 16, &h, &err) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(err.status == HURRAY_E_INVALID_ARGUMENT);
  CHECK(err.rule == HURRAY_RULE_NONE);
  CHECK(std::string(err.rule_id).empty());
  CHECK(std::string(err.message).find("NULL") != std::string::npos);
  CHECK(hurray_handle_decode(b, 16, nullptr, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_handle_encode(nullptr, b, 16, nullptr) == HURRAY_E_INVALID_ARGUMENT);
  CHECK(hurray_handle_encode(&h, nullptr, 16, nullptr) == HURRAY_E_INVALID_ARGUMENT);
}
