#include <hurray.h>
#include <stdio.h>

int main(void) {
  /* Describe 1 MiB of CUDA device memory, page-aligned, already synchronised. */
  hurray_buffer_handle h = {1u << 20, 4096, HURRAY_DEVICE_CUDA,
                            HURRAY_SYNC_PRODUCER_SYNCED, HURRAY_MEMORY_STANDARD, 0};
  unsigned char wire[HURRAY_HANDLE_SIZE];
  hurray_policy *ipc = NULL;
  hurray_error err;

  hurray_handle_encode(&h, wire, sizeof wire, NULL);   /* 16 little-endian bytes */

  /* A consumer in another process checks the bytes under the IPC rules. */
  hurray_policy_create(&ipc, NULL);
  hurray_policy_set_transport(ipc, HURRAY_TRANSPORT_IPC, NULL);
  if (hurray_table_validate(wire, sizeof wire, ipc, &err) != HURRAY_OK) {
    fprintf(stderr, "rejected: %s\n", err.message);    /* e.g. "BP-ALIGN-IPC: ..." */
    hurray_policy_destroy(ipc);
    return 1;
  }
  printf("valid %s buffer of %llu bytes\n", hurray_device_tag_name(h.device_tag),
         (unsigned long long)h.byte_size);
  hurray_policy_destroy(ipc);
  return 0;
}
