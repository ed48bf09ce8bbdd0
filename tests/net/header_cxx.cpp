// hurray_net.h compiles on its own as C++11 (-Wpedantic -Werror).
#include <hurray_net.h>

int hurray_net_header_cxx();
int hurray_net_header_cxx() {
  hurray_net_server_config s = HURRAY_NET_SERVER_CONFIG_INIT;
  hurray_net_client_config c = HURRAY_NET_CLIENT_CONFIG_INIT;
  hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
  return static_cast<int>(s.size + c.size + d.size);
}
