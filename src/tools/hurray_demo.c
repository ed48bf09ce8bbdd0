/* hurray-demo: a tour of libhurray, written in plain C99 against hurray.h
 * the way a user would. Each step prints what it does and what it got.
 * Exit status 0 when every step behaved as the protocol says. */
#include <hurray.h>
#include <hurray_backend.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

static void print_report(void *user, const hurray_error *report) {
  (void)user;
  printf("    guard: %s\n", report->message);
}

static void expect(int ok, const char *what) {
  printf("  %s %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

static void print_hex(const unsigned char *b, size_t n) {
  size_t i;
  printf("  bytes:");
  for (i = 0; i < n; ++i) printf("%s%02x", i % 16 == 0 && i ? "\n         " : (i % 4 == 0 ? " " : ""), b[i]);
  printf("\n");
}

static void print_all(const unsigned char *bytes, size_t size, const hurray_policy *policy) {
  hurray_error diags[16];
  size_t n_err = 0, n_warn = 0, i, shown;
  hurray_status st = hurray_table_diagnose(bytes, size, policy, diags, 16, &n_err, &n_warn, NULL);
  shown = n_err + n_warn < 16 ? n_err + n_warn : 16;
  for (i = 0; i < shown; ++i)
    printf("    %-7s %s\n", diags[i].severity == HURRAY_SEVERITY_ERROR ? "error" : "warning",
           diags[i].message);
  printf("    => %s, %zu error(s), %zu warning(s)\n", hurray_status_name(st), n_err, n_warn);
}

int main(void) {
  hurray_buffer_handle h, back;
  unsigned char wire[HURRAY_HANDLE_SIZE], table[3 * HURRAY_HANDLE_SIZE];
  hurray_error err;
  hurray_policy *rdma = NULL, *priv = NULL;

  printf("libhurray %s (header %s)\n\n", hurray_version_string(), HURRAY_VERSION_STRING);

  printf("1. Describe 4 KiB of CPU memory aligned to 64 and encode it (BP-LE)\n");
  memset(&h, 0, sizeof h);
  h.byte_size = 4096;
  h.alignment = 64;
  h.device_tag = HURRAY_DEVICE_CPU;
  h.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  h.memory_class = HURRAY_MEMORY_STANDARD;
  expect(hurray_handle_validate(&h, NULL, &err) == HURRAY_OK, "valid in-process");
  expect(hurray_handle_encode(&h, wire, sizeof wire, &err) == HURRAY_OK, "encoded to 16 bytes");
  print_hex(wire, sizeof wire);

  printf("\n2. Decode the 16 bytes again\n");
  expect(hurray_handle_decode(wire, sizeof wire, &back, &err) == HURRAY_OK &&
             memcmp(&h, &back, sizeof h) == 0,
         "decode(encode(h)) == h");
  expect(hurray_handle_decode(wire, 15, &back, &err) == HURRAY_E_SIZE, "15 bytes refused (BP-SIZE)");
  printf("    %s\n", err.message);

  printf("\n3. CUDA managed memory aligned to 256: valid, with a SHOULD warning\n");
  h.device_tag = HURRAY_DEVICE_CUDA;
  h.memory_class = HURRAY_MEMORY_UNIFIED;
  h.alignment = 256;
  h.sync_mode = HURRAY_SYNC_EVENT;
  hurray_handle_encode(&h, wire, sizeof wire, NULL);
  print_all(wire, sizeof wire, NULL);
  expect(hurray_table_validate(wire, sizeof wire, NULL, NULL) == HURRAY_OK, "valid in-process");

  printf("\n4. The same handle sent over RDMA: every fault is listed\n");
  hurray_policy_create(&rdma, NULL);
  hurray_policy_set_transport(rdma, HURRAY_TRANSPORT_RDMA, NULL);
  print_all(wire, sizeof wire, rdma);
  expect(hurray_table_validate(wire, sizeof wire, rdma, &err) == HURRAY_E_ALIGNMENT &&
             strcmp(err.rule_id, "BP-ALIGN-IPC") == 0,
         "first error is BP-ALIGN-IPC at byte 8");

  printf("\n5. A buffer table: data + scales + zero points, one on another device\n");
  h.device_tag = HURRAY_DEVICE_CUDA;
  h.memory_class = HURRAY_MEMORY_STANDARD;
  h.alignment = 4096;
  h.sync_mode = HURRAY_SYNC_PRODUCER_SYNCED;
  hurray_handle_encode(&h, table, 16, NULL);
  h.byte_size = 128;
  hurray_handle_encode(&h, table + 16, 16, NULL);
  h.device_tag = HURRAY_DEVICE_ROCM;
  hurray_handle_encode(&h, table + 32, 16, NULL);
  print_all(table, sizeof table, NULL);
  expect(hurray_table_validate(table, sizeof table, NULL, &err) == HURRAY_E_COLOCATION &&
             err.buffer_index == 2 && err.byte_offset == 44,
         "BP-COLOC names buffer 2, byte 44");

  printf("\n6. A private device tag needs an explicit agreement (BP-DEV-PRIVATE)\n");
  h.device_tag = 0xF3;
  h.memory_class = 0xF1;
  hurray_handle_encode(&h, wire, sizeof wire, NULL);
  expect(hurray_table_validate(wire, sizeof wire, NULL, &err) == HURRAY_E_DEVICE_TAG,
         "refused by default");
  printf("    %s\n", err.message);
  hurray_policy_create(&priv, NULL);
  hurray_policy_allow_private_tag(priv, 0xF3, 1, NULL);
  expect(hurray_table_validate(wire, sizeof wire, priv, &err) == HURRAY_OK,
         "accepted once 0xF3 is agreed");

  printf("\n7. Hand a buffer to two consumers; it is freed after the last release\n");
  {
    hurray_context *ctx = NULL;
    hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
    hurray_buffer *buf = NULL;
    hurray_handoff c1, c2, stale;
    hurray_context_create(&ctx, NULL);
    hurray_context_set_guard(ctx, 1, NULL); /* the protocol sanitizer */
    hurray_context_set_guard_callback(ctx, print_report, NULL, NULL);
    a.byte_size = 1 << 16;
    a.alignment = 4096;
    expect(hurray_buffer_alloc(ctx, &a, &buf, &err) == HURRAY_OK, "allocated 64 KiB, page-aligned");
    expect(hurray_buffer_export(buf, NULL, &c1, &err) == HURRAY_OK &&
               hurray_buffer_export(buf, NULL, &c2, &err) == HURRAY_OK,
           "exported twice: one handoff per consumer");
    hurray_buffer_unref(buf);
    expect(hurray_handoff_check(&c1, NULL, &err) == HURRAY_OK, "consumer 1 checks its handoff");
    stale = c1; /* a copy: the classic double-release mistake */
    expect(hurray_handoff_release(&c1, &err) == HURRAY_OK && c1.release == NULL,
           "consumer 1 releases (release is NULL afterwards)");
    expect(hurray_handoff_release(&stale, &err) == HURRAY_E_ALREADY_RELEASED,
           "releasing a stale copy is refused, never forwarded (BP-REL-ONCE)");
    c2.release(&c2); /* a consumer that does not link libhurray does this */
    expect(c2.release == NULL, "consumer 2 releases through the raw function pointer");
    expect(hurray_context_guard_count(ctx) == 1, "guard mode reported the double release once");
    hurray_context_destroy(ctx);
  }

  printf("\n8. Every device this machine has: allocate, write, hand off with an event, wait, read\n");
  {
    static const uint8_t tags[] = {HURRAY_DEVICE_CPU, HURRAY_DEVICE_CUDA, HURRAY_DEVICE_ROCM,
                                   HURRAY_DEVICE_VULKAN, HURRAY_DEVICE_LEVEL_ZERO,
                                   HURRAY_DEVICE_OPENCL};
    size_t t;
    for (t = 0; t < sizeof tags; ++t) {
      int32_t n = 0;
      hurray_backend_device_info info;
      hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
      hurray_export_desc e = HURRAY_EXPORT_DESC_INIT;
      hurray_buffer *buf = NULL;
      hurray_handoff ho;
      unsigned char in[256], out[256];
      size_t i;
      if (hurray_device_count(NULL, tags[t], &n, &err) != HURRAY_OK) {
        printf("  --   %-10s %s\n", hurray_device_tag_name(tags[t]), err.message);
        continue;
      }
      hurray_device_info(NULL, tags[t], 0, &info, NULL);
      printf("  %s:  %s\n", hurray_device_tag_name(tags[t]), info.name);
      for (i = 0; i < sizeof in; ++i) in[i] = (unsigned char)(i * 7 + t);
      a.byte_size = sizeof in;
      a.alignment = 4096;
      a.device_tag = tags[t];
      expect(hurray_buffer_alloc(NULL, &a, &buf, &err) == HURRAY_OK &&
                 hurray_buffer_copy_from_host(buf, 0, in, sizeof in, &err) == HURRAY_OK,
             "allocated device memory and wrote 256 bytes through the backend");
      if (!buf) continue;
      if (tags[t] != HURRAY_DEVICE_CPU) /* CPU buffers are always PRODUCER_SYNCED */
        expect(hurray_event_record(NULL, tags[t], 0, NULL, &e, &err) == HURRAY_OK,
               "recorded an event after the write");
      expect(hurray_buffer_export(buf, &e, &ho, &err) == HURRAY_OK &&
                 hurray_handoff_acquire(NULL, &ho, NULL, &err) == HURRAY_OK,
             "handed off; the consumer waited as sync_mode says");
      expect(hurray_buffer_copy_to_host(buf, 0, out, sizeof out, &err) == HURRAY_OK &&
                 memcmp(in, out, sizeof in) == 0,
             "read back the same bytes");
      hurray_handoff_release(&ho, NULL);
      hurray_buffer_unref(buf);
    }
  }

  hurray_policy_destroy(rdma);
  hurray_policy_destroy(priv);
  printf("\n%s\n", failures ? "tour FAILED" : "tour complete: every step behaved as the protocol says");
  return failures ? 1 : 0;
}
