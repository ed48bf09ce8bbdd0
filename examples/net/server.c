/*
 * hurray-net-server: receive buffers over UCX (libhurray-net) and offer one.
 *
 *   hurray-net-server [--address A] [--key-file F | --no-auth] [--allow LIST] [--port P]
 *                     [--devices cpu,vulkan,...] [--count N] [--offer BYTES]
 *
 * Listens on 127.0.0.1 unless --address names another address (0.0.0.0:
 * every address; see docs/spec/network.md section 4). Beyond loopback it
 * needs --key-file F (a shared key of 16 bytes or more that every client
 * gives with its own --key-file) or, on a trusted network only, --no-auth.
 * --allow admits only the peers of a list of addresses and CIDR blocks
 * (e.g. 10.1.0.0/16,127.0.0.1). Port 0: any free port; the first line printed
 * says which. Prints
 * one line per buffer that lands, and exits after N of them (default: never).
 * --offer registers a buffer of BYTES bytes (byte i = i % 251) as id 1 for
 * GETs. UCX reads UCX_TLS, UCX_NET_DEVICES... from the environment.
 */
#include <hurray_net.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t tag_of(const char *name) {
  if (strcmp(name, "cpu") == 0) return HURRAY_DEVICE_CPU;
  if (strcmp(name, "cuda") == 0) return HURRAY_DEVICE_CUDA;
  if (strcmp(name, "rocm") == 0) return HURRAY_DEVICE_ROCM;
  if (strcmp(name, "vulkan") == 0) return HURRAY_DEVICE_VULKAN;
  if (strcmp(name, "level-zero") == 0) return HURRAY_DEVICE_LEVEL_ZERO;
  if (strcmp(name, "opencl") == 0) return HURRAY_DEVICE_OPENCL;
  return HURRAY_DEVICE_INVALID;
}

int main(int argc, char **argv) {
  hurray_net_server_config cfg = HURRAY_NET_SERVER_CONFIG_INIT;
  hurray_net_server *srv = NULL;
  hurray_buffer *offer = NULL;
  hurray_error err;
  uint8_t devices[16];
  long count = -1, landed = 0;
  unsigned long long offer_size = 0;
  int i;
  for (i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--address") == 0 && i + 1 < argc) {
      cfg.address = argv[++i];
    } else if (strcmp(argv[i], "--key-file") == 0 && i + 1 < argc) {
      cfg.key_file = argv[++i];
    } else if (strcmp(argv[i], "--no-auth") == 0) {
      cfg.flags |= HURRAY_NET_SERVER_NO_AUTH;
    } else if (strcmp(argv[i], "--allow") == 0 && i + 1 < argc) {
      cfg.allow = argv[++i];
    } else if (strcmp(argv[i], "--port") == 0 && i + 1 < argc) {
      cfg.port = (uint16_t)atoi(argv[++i]);
    } else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
      count = atol(argv[++i]);
    } else if (strcmp(argv[i], "--offer") == 0 && i + 1 < argc) {
      offer_size = strtoull(argv[++i], NULL, 0);
    } else if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      char list[256], *tok;
      strncpy(list, argv[++i], sizeof list - 1);
      list[sizeof list - 1] = '\0';
      for (tok = strtok(list, ","); tok != NULL && cfg.n_devices < sizeof devices;
           tok = strtok(NULL, ",")) {
        devices[cfg.n_devices++] = tag_of(tok);
      }
      cfg.devices = devices;
    } else {
      fprintf(stderr, "usage: %s [--address A] [--key-file F | --no-auth] [--allow LIST] [--port P] "
                      "[--devices cpu,vulkan,...] [--count N] [--offer BYTES]\n", argv[0]);
      return 2;
    }
  }
  if (hurray_net_server_create(&cfg, &srv, &err) != HURRAY_OK) {
    fprintf(stderr, "server: %s\n", err.message);
    return 1;
  }
  if (offer_size > 0) {
    hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
    unsigned char *p;
    unsigned long long k;
    a.byte_size = offer_size;
    a.alignment = 4096;
    if (hurray_buffer_alloc(NULL, &a, &offer, &err) != HURRAY_OK ||
        hurray_net_server_register(srv, 1, offer, &err) != HURRAY_OK) {
      fprintf(stderr, "server: %s\n", err.message);
      hurray_buffer_unref(offer);
      hurray_net_server_destroy(srv);
      return 1;
    }
    p = (unsigned char *)hurray_buffer_data(offer);
    for (k = 0; k < offer_size; ++k) p[k] = (unsigned char)(k % 251);
  }
  printf("listening on port %u\n", (unsigned)hurray_net_server_port(srv));
  fflush(stdout);
  while (count < 0 || landed < count) {
    hurray_net_received got;
    got.size = sizeof got;
    if (hurray_net_server_poll(srv, 1000, &got, &err) != HURRAY_OK) {
      fprintf(stderr, "server: %s\n", err.message);
      break;
    }
    if (got.buffer == NULL) continue;
    {
      /* The server owns the copy (BP-NET-OWN): read it, then drop it. */
      unsigned char probe[64];
      uint64_t n = got.handle.byte_size < sizeof probe ? got.handle.byte_size : sizeof probe;
      unsigned sum = 0;
      uint64_t k;
      if (n > 0) hurray_buffer_copy_to_host(got.buffer, 0, probe, n, NULL);
      for (k = 0; k < n; ++k) sum += probe[k];
      printf("landed id %llu: %llu bytes on %s/%s device %d (first bytes sum %u)\n",
             (unsigned long long)got.buffer_id, (unsigned long long)got.handle.byte_size,
             hurray_device_tag_name(got.handle.device_tag),
             hurray_memory_class_name(got.handle.memory_class), (int)got.device_ordinal, sum);
      fflush(stdout);
      hurray_buffer_unref(got.buffer);
      ++landed;
    }
  }
  {
    hurray_net_stats st;
    hurray_net_server_stats(srv, &st);
    printf("served: %llu landed, %llu refused, %llu GETs, %llu cut off\n",
           (unsigned long long)st.puts_landed, (unsigned long long)st.puts_refused,
           (unsigned long long)st.gets_served, (unsigned long long)st.transfers_failed);
  }
  hurray_buffer_unref(offer);
  hurray_net_server_destroy(srv);
  return 0;
}
