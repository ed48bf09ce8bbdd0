/*
 * hurray-net-client: send a buffer to a hurray-net-server, fetch one back.
 *
 *   hurray-net-client HOST PORT [--size BYTES] [--device cpu|vulkan|opencl|...]
 *                     [--class standard|host-pinned|unified] [--id N] [--get ID]
 *                     [--count N] [--window W] [--key-file F]
 *
 * Prints what the server offers (its HELLO); with --get, GETs the buffer the
 * server registered as ID into CPU memory and checks it; then PUTs BYTES
 * bytes (byte i = i % 251; none for 0) to the declared device and class.
 * --count N PUTs it N times (ids N, N+1, ...), keeping up to W PUTs in flight
 * (hurray_net_client_put_buffer_start / hurray_net_client_put_wait; W = 1,
 * the default, waits for each before the next).
 * Exit status 0 when everything behaved, 1 on a refusal or error (printed).
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

static uint8_t class_of(const char *name) {
  if (strcmp(name, "host-pinned") == 0) return HURRAY_MEMORY_HOST_PINNED;
  if (strcmp(name, "unified") == 0) return HURRAY_MEMORY_UNIFIED;
  return HURRAY_MEMORY_STANDARD;
}

int main(int argc, char **argv) {
  hurray_net_client_config cfg = HURRAY_NET_CLIENT_CONFIG_INIT;
  hurray_net_transfer_desc put = HURRAY_NET_TRANSFER_DESC_INIT;
  hurray_net_client *cli = NULL;
  hurray_net_device devs[16];
  hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
  hurray_buffer *src = NULL;
  hurray_error err;
  unsigned long long size = 1 << 20, k;
  uint64_t tickets[64];
  long get_id = -1, count = 1, window = 1, started = 0, waited = 0;
  size_t n = 0, i;
  int status = 0, j;
  if (argc < 3) {
    fprintf(stderr, "usage: %s HOST PORT [--size BYTES] [--device NAME] [--class NAME] "
                    "[--id N] [--get ID] [--count N] [--window W] [--key-file F]\n", argv[0]);
    return 2;
  }
  cfg.address = argv[1];
  cfg.port = (uint16_t)atoi(argv[2]);
  for (j = 3; j + 1 < argc; j += 2) {
    if (strcmp(argv[j], "--size") == 0) size = strtoull(argv[j + 1], NULL, 0);
    else if (strcmp(argv[j], "--device") == 0) put.device_tag = tag_of(argv[j + 1]);
    else if (strcmp(argv[j], "--class") == 0) put.memory_class = class_of(argv[j + 1]);
    else if (strcmp(argv[j], "--id") == 0) put.buffer_id = strtoull(argv[j + 1], NULL, 0);
    else if (strcmp(argv[j], "--get") == 0) get_id = atol(argv[j + 1]);
    else if (strcmp(argv[j], "--count") == 0) count = atol(argv[j + 1]);
    else if (strcmp(argv[j], "--window") == 0) window = atol(argv[j + 1]);
    else if (strcmp(argv[j], "--key-file") == 0) cfg.key_file = argv[j + 1];
  }
  if (count < 1) count = 1;
  if (window < 1) window = 1;
  if (window > (long)(sizeof tickets / sizeof tickets[0]))
    window = (long)(sizeof tickets / sizeof tickets[0]);
  if (hurray_net_client_connect(&cfg, &cli, &err) != HURRAY_OK) {
    fprintf(stderr, "client: %s\n", err.message);
    return 1;
  }
  hurray_net_client_peer_devices(cli, devs, sizeof devs / sizeof devs[0], &n, NULL);
  printf("the server offers:");
  for (i = 0; i < n && i < sizeof devs / sizeof devs[0]; ++i)
    printf(" %s(x%d, classes 0x%x)", hurray_device_tag_name(devs[i].device_tag),
           (int)devs[i].count, (unsigned)devs[i].memory_classes);
  printf("\n");

  if (get_id >= 0) {
    hurray_net_transfer_desc get = HURRAY_NET_TRANSFER_DESC_INIT;
    hurray_buffer *got = NULL;
    get.buffer_id = (uint64_t)get_id;
    if (hurray_net_client_get(cli, &get, &got, &err) == HURRAY_OK) {
      hurray_buffer_handle h;
      const unsigned char *p = (const unsigned char *)hurray_buffer_data(got);
      int same = 1;
      hurray_buffer_get_handle(got, &h, NULL);
      for (k = 0; k < h.byte_size; ++k) same &= p[k] == (unsigned char)(k % 251);
      printf("GET %ld: %llu bytes, %s\n", get_id, (unsigned long long)h.byte_size,
             same ? "content checked" : "CONTENT DIFFERS");
      if (!same) status = 1;
      hurray_buffer_unref(got);
    } else {
      printf("GET refused: %s\n", err.message);
      status = 1;
    }
  }

  /* The source: CPU memory this process owns and keeps (BP-NET-OWN).
   * --size 0: no PUT. */
  a.byte_size = size;
  a.alignment = 4096;
  if (size == 0) {
    /* GET only */
  } else if (hurray_buffer_alloc(NULL, &a, &src, &err) == HURRAY_OK) {
    unsigned char *p = (unsigned char *)hurray_buffer_data(src);
    for (k = 0; k < size; ++k) p[k] = (unsigned char)(k % 251);
    const uint64_t first_id = put.buffer_id;
    /* Up to `window` PUTs in flight; each answered PUT makes room for the
     * next. Tickets are waited for in the order they were started. */
    while (waited < count) {
      if (started < count && started - waited < window) {
        put.buffer_id = first_id + (uint64_t)started;
        if (hurray_net_client_put_buffer_start(cli, src, &put, &tickets[started % window],
                                               &err) != HURRAY_OK) {
          printf("PUT refused: %s (%s)\n", err.message,
                 hurray_status_name((hurray_status)err.status));
          status = 1;
          count = started; /* start no more; wait for those in flight */
          continue;
        }
        ++started;
        continue;
      }
      if (hurray_net_client_put_wait(cli, tickets[waited % window], &err) == HURRAY_OK) {
        printf("PUT %llu bytes to %s/%s: landed\n", size, hurray_device_tag_name(put.device_tag),
               hurray_memory_class_name(put.memory_class));
      } else {
        printf("PUT refused: %s (%s)\n", err.message,
               hurray_status_name((hurray_status)err.status));
        status = 1;
      }
      ++waited;
      fflush(stdout);
    }
    hurray_buffer_unref(src);
  } else {
    fprintf(stderr, "client: %s\n", err.message);
    status = 1;
  }

  hurray_net_client_destroy(cli);
  return status;
}
