/* hurray_net.h compiles on its own as strict C99 (-Wpedantic -Werror), its
 * initialisers included. */
#include <hurray_net.h>

int hurray_net_header_c99(void);
int hurray_net_header_c99(void) {
  hurray_net_server_config s = HURRAY_NET_SERVER_CONFIG_INIT;
  hurray_net_client_config c = HURRAY_NET_CLIENT_CONFIG_INIT;
  hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
  hurray_net_received r;
  hurray_net_stats st;
  hurray_net_device dev;
  r.size = sizeof r;
  (void)st;
  (void)dev;
  return (int)(s.size + c.size + d.size + r.size);
}
