// A hostile server, from the client's side: a process of its own
// (tests/net/raw_server.cpp) admits the client through the bootstrap and
// answers its HELLO with a malformed device identity extension (HNID). The
// client refuses the connection with HURRAY_E_PROTOCOL and nothing of the
// answer is kept; a correct server is served afterwards.
#include "net_support.h"

using namespace nettest;

TEST_CASE("a server whose HELLO answer carries malformed device identities is refused",
          "[process][net][identity]") {
  for (const char *mode : {"bad-kind", "short", "unoffered"}) {
    INFO(mode);
    Child raw({HURRAY_NET_RAW_SERVER, mode});
    hurray_net_client_config cfg = HURRAY_NET_CLIENT_CONFIG_INIT;
    cfg.address = "127.0.0.1";
    cfg.port = listening_port(raw);
    cfg.timeout_ms = 20000;
    hurray_net_client *c = nullptr;
    hurray_error err{};
    const hurray_status st = hurray_net_client_connect(&cfg, &c, &err);
    INFO(err.message);
    CHECK(st == HURRAY_E_PROTOCOL);
    CHECK(c == nullptr);
    CHECK(std::string(err.message).find("malformed device identities") != std::string::npos);
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!raw.exited() && std::chrono::steady_clock::now() < limit) usleep(10000);
    INFO(raw.output);
    CHECK(raw.status == 0);  // it did send its answer
  }
  Server srv;
  good_client_is_served(srv);
}
