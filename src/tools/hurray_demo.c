/* hurray-demo: a tour of libhurray, written in plain C99 against hurray.h
 * the way a user would. Each step prints what it does and what it got.
 * Exit status 0 when every step behaved as the protocol says. */
#define _POSIX_C_SOURCE 200809L /* fork, socketpair (the IPC step) */
#include <hurray.h>
#include <hurray_backend.h>
#include <hurray_ipc.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* net (issue 9): libhurray-net is dlopen()ed when it is there (built with
 * UCX), so hurray-demo links libhurray alone; hurray_net.h gives the types. */
#include <dlfcn.h>
#include <hurray_net.h>
#include <signal.h>
#include <stdlib.h>

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

/* --help and --version answer and exit 0 before any step runs (no child
 * process, no server); any other argument is a usage error (exit 2). */
static int options(int argc, char **argv) {
  if (argc < 2) return -1;
  if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("Usage: hurray-demo [--help | --version]\n"
           "A tour of libhurray: describes, encodes, validates, exports and imports\n"
           "buffers step by step (CPU, the device backends found, IPC to a child\n"
           "process, the network when libhurray-net is there), printing each result.\n"
           "Exit status: 0 when every step behaved as the protocol says, 1 otherwise,\n"
           "2 on a usage error.\n");
    return 0;
  }
  if (argc == 2 && strcmp(argv[1], "--version") == 0) {
    printf("hurray-demo (libhurray %s)\n", hurray_version_string());
    return 0;
  }
  fprintf(stderr, "hurray-demo: unknown argument '%s' (try --help)\n", argv[1]);
  return 2;
}

int main(int argc, char **argv) {
  hurray_buffer_handle h, back;
  unsigned char wire[HURRAY_HANDLE_SIZE], table[3 * HURRAY_HANDLE_SIZE];
  hurray_error err;
  hurray_policy *rdma = NULL, *priv = NULL;
  const int answered = options(argc, argv);
  if (answered >= 0) return answered;

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

  /* ---- IPC (issue 6): a buffer handed to another process, no copy ---- */
  printf("\nIPC. Hand a buffer to a child process over a Unix socket (no copy)\n");
  {
    int sv[2];
    pid_t pid;
    fflush(stdout); /* the child inherits the stdio buffer */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0 || (pid = fork()) < 0) {
      expect(0, "socketpair and fork");
    } else if (pid == 0) { /* the consumer process */
      hurray_ipc_channel *ch = NULL;
      hurray_handoff ho;
      hurray_buffer_handle hd;
      uint64_t id = 0, i, bad = 0;
      int rc = 1;
      close(sv[0]);
      if (hurray_ipc_channel_from_fd(sv[1], NULL, &ch, &err) == HURRAY_OK &&
          hurray_ipc_receive(ch, 10000, &ho, &id, &err) == HURRAY_OK) {
        const unsigned char *p = (const unsigned char *)ho.data;
        hurray_handle_decode(ho.handle, sizeof ho.handle, &hd, NULL);
        for (i = 0; i < hd.byte_size; ++i) bad += p[i] != 0x5A;
        printf("    child pid %d: buffer %" PRIu64 " mapped, %" PRIu64 " bytes, all 0x5a: %s\n",
               (int)getpid(), id, hd.byte_size, bad ? "NO" : "yes");
        rc = hurray_ipc_release(&ho, &err) == HURRAY_OK && !bad ? 0 : 1;
        printf("    child pid %d: released it; the release message went back\n", (int)getpid());
      } else {
        printf("    child: %s\n", err.message);
      }
      hurray_ipc_close(ch);
      fflush(stdout);
      _exit(rc);
    } else { /* the producer: this process */
      hurray_ipc_channel *ch = NULL;
      hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
      hurray_buffer *buf = NULL, *small = NULL;
      hurray_ipc_stats s;
      uint64_t id = 0;
      int status = 0, tries;
      close(sv[1]);
      expect(hurray_ipc_channel_from_fd(sv[0], NULL, &ch, &err) == HURRAY_OK,
             "channel open, HELLO exchanged with the child");
      a.flags = HURRAY_ALLOC_SHAREABLE;
      a.byte_size = 64;
      a.alignment = 64;
      hurray_buffer_alloc(NULL, &a, &small, NULL);
      expect(hurray_ipc_send(ch, small, NULL, NULL, &err) == HURRAY_E_ALIGNMENT &&
                 strcmp(err.rule_id, "BP-ALIGN-IPC") == 0,
             "a 64-aligned buffer is refused before anything is sent (BP-ALIGN-IPC)");
      hurray_buffer_unref(small);
      a.byte_size = 1 << 20;
      a.alignment = HURRAY_IPC_ALIGNMENT;
      expect(hurray_buffer_alloc(NULL, &a, &buf, &err) == HURRAY_OK,
             "allocated 1 MiB of shareable memory (a memfd)");
      if (buf) memset(hurray_buffer_data(buf), 0x5A, (size_t)a.byte_size);
      expect(buf && hurray_ipc_send(ch, buf, NULL, &id, &err) == HURRAY_OK,
             "sent it: the memfd crossed with SCM_RIGHTS, not the bytes");
      hurray_buffer_unref(buf); /* the channel holds it until the child releases */
      fflush(stdout);
      s.size = sizeof s;
      for (tries = 0; tries < 100; ++tries) {
        hurray_ipc_progress(ch, 100, NULL, NULL);
        hurray_ipc_get_stats(ch, &s, NULL);
        if (s.released + s.reclaimed == s.sent) break;
      }
      expect(s.sent == 1 && s.released == 1 && s.outstanding == 0,
             "the child's release came back; the memory is freed (BP-IPC-RELEASE)");
      expect(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
             "the child read every byte through its own mapping");
      hurray_ipc_close(ch);
    }
  }
  /* ---- end IPC ---- */

  /* ---- net (issue 9): PUT to a server process over UCX (libhurray-net) ---- */
  printf("\nNetwork. PUT a buffer to a server process over UCX (libhurray-net)\n");
  {
    void *net = dlopen("libhurray-net.so.1", RTLD_NOW | RTLD_LOCAL);
    if (net == NULL) { /* next to this program, as in the build tree (and under ASan,
                          whose dlopen does not search this program's RUNPATH) */
      char path[4096];
      ssize_t n = readlink("/proc/self/exe", path, sizeof path - 32);
      char *slash;
      if (n > 0) {
        path[n] = '\0';
        slash = strrchr(path, '/');
        if (slash != NULL) {
          strcpy(slash + 1, "libhurray-net.so.1");
          net = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        }
      }
      if (net == NULL) dlerror(); /* keep the first message below meaningful */
      if (net == NULL) net = dlopen("libhurray-net.so.1", RTLD_NOW | RTLD_LOCAL);
    }
    struct {
      hurray_status (*server_create)(const hurray_net_server_config *, hurray_net_server **,
                                     hurray_error *);
      void (*server_destroy)(hurray_net_server *);
      uint16_t (*server_port)(const hurray_net_server *);
      hurray_status (*server_poll)(hurray_net_server *, int32_t, hurray_net_received *,
                                   hurray_error *);
      hurray_status (*client_connect)(const hurray_net_client_config *, hurray_net_client **,
                                      hurray_error *);
      void (*client_destroy)(hurray_net_client *);
      hurray_status (*client_put_buffer)(hurray_net_client *, hurray_buffer *,
                                         const hurray_net_transfer_desc *, hurray_error *);
    } f;
    static const char *const names[] = {
        "hurray_net_server_create", "hurray_net_server_destroy", "hurray_net_server_port",
        "hurray_net_server_poll", "hurray_net_client_connect", "hurray_net_client_destroy",
        "hurray_net_client_put_buffer"};
    void *syms[7];
    size_t k, found = 0;
    for (k = 0; net != NULL && k < 7; ++k) found += (syms[k] = dlsym(net, names[k])) != NULL;
    if (net == NULL || found != 7) {
      printf("  --   libhurray-net is not here (it is built only where UCX is): %s\n",
             net == NULL ? dlerror() : "symbols missing");
    } else {
      int fds[2];
      pid_t pid;
      /* dlsym gives object pointers; memcpy turns them into function pointers. */
      memcpy(&f.server_create, &syms[0], sizeof(void *));
      memcpy(&f.server_destroy, &syms[1], sizeof(void *));
      memcpy(&f.server_port, &syms[2], sizeof(void *));
      memcpy(&f.server_poll, &syms[3], sizeof(void *));
      memcpy(&f.client_connect, &syms[4], sizeof(void *));
      memcpy(&f.client_destroy, &syms[5], sizeof(void *));
      memcpy(&f.client_put_buffer, &syms[6], sizeof(void *));
      setenv("UCX_TLS", "tcp", 0); /* loopback TCP unless UCX_TLS says otherwise */
      fflush(stdout);
      if (pipe(fds) != 0 || (pid = fork()) < 0) {
        expect(0, "pipe and fork");
      } else if (pid == 0) { /* the client process */
        hurray_net_client_config cc = HURRAY_NET_CLIENT_CONFIG_INIT;
        hurray_net_transfer_desc d = HURRAY_NET_TRANSFER_DESC_INIT;
        hurray_net_client *cli = NULL;
        hurray_alloc_desc a = HURRAY_ALLOC_DESC_INIT;
        hurray_buffer *src = NULL;
        uint16_t port = 0;
        int rc = 1;
        close(fds[1]);
        if (read(fds[0], &port, sizeof port) == (ssize_t)sizeof port) {
          cc.address = "127.0.0.1";
          cc.port = port;
          a.byte_size = 1 << 20;
          a.alignment = 4096;
          if (f.client_connect(&cc, &cli, &err) == HURRAY_OK &&
              hurray_buffer_alloc(NULL, &a, &src, &err) == HURRAY_OK) {
            memset(hurray_buffer_data(src), 0x5A, (size_t)a.byte_size);
            d.device_tag = HURRAY_DEVICE_ROCM; /* a device this demo's server does not offer */
            rc = f.client_put_buffer(cli, src, &d, &err) == HURRAY_E_DEVICE_UNAVAILABLE &&
                         strcmp(err.rule_id, "BP-PUT-DEVICE") == 0
                     ? 0 : 1;
            printf("    client pid %d: PUT to ROCM refused before sending: %s\n",
                   (int)getpid(), err.message);
            d.device_tag = HURRAY_DEVICE_CPU;
            d.buffer_id = 7;
            if (f.client_put_buffer(cli, src, &d, &err) != HURRAY_OK) rc = 1;
            printf("    client pid %d: PUT 1 MiB to CPU: %s\n", (int)getpid(),
                   rc == 0 ? "landed" : err.message);
          } else {
            printf("    client: %s\n", err.message);
          }
        }
        hurray_buffer_unref(src);
        f.client_destroy(cli);
        fflush(stdout);
        _exit(rc);
      } else { /* the server: this process */
        hurray_net_server_config sc = HURRAY_NET_SERVER_CONFIG_INIT;
        hurray_net_server *srv = NULL;
        hurray_net_received got;
        uint8_t cpu_only = HURRAY_DEVICE_CPU;
        uint16_t port = 0;
        int status = 0, tries;
        close(fds[0]);
        sc.address = "127.0.0.1";
        sc.devices = &cpu_only;
        sc.n_devices = 1;
        expect(f.server_create(&sc, &srv, &err) == HURRAY_OK,
               "server listening on 127.0.0.1, offering CPU memory only");
        fflush(stdout);
        if (srv != NULL) port = f.server_port(srv);
        if (write(fds[1], &port, sizeof port) != (ssize_t)sizeof port) port = 0;
        close(fds[1]);
        memset(&got, 0, sizeof got);
        got.size = sizeof got;
        /* Serve (the client waits for the answers) until the client is done. */
        for (tries = 0; tries < 300; ++tries) {
          hurray_net_received r;
          r.size = sizeof r;
          if (srv != NULL && f.server_poll(srv, 100, &r, NULL) == HURRAY_OK && r.buffer != NULL) {
            if (got.buffer == NULL) got = r;
            else hurray_buffer_unref(r.buffer);
          }
          if (waitpid(pid, &status, WNOHANG) == pid) break;
        }
        if (tries == 300) {
          kill(pid, SIGKILL);
          waitpid(pid, &status, 0);
        }
        fflush(stdout);
        expect(tries < 300 && WIFEXITED(status) && WEXITSTATUS(status) == 0,
               "the client's PUT to a device the server lacks was refused (BP-PUT-DEVICE)");
        {
          const unsigned char *p = got.buffer ? (const unsigned char *)hurray_buffer_data(got.buffer)
                                              : NULL;
          uint64_t i, bad = p == NULL;
          for (i = 0; p != NULL && i < got.handle.byte_size; ++i) bad += p[i] != 0x5A;
          expect(got.buffer != NULL && got.buffer_id == 7 && got.handle.byte_size == 1 << 20 &&
                     got.handle.device_tag == HURRAY_DEVICE_CPU && bad == 0,
                 "1 MiB landed in CPU memory the server allocated and owns (BP-NET-OWN)");
        }
        hurray_buffer_unref(got.buffer);
        f.server_destroy(srv);
      }
    }
    if (net != NULL) dlclose(net);
  }
  /* ---- end net ---- */

  hurray_policy_destroy(rdma);
  hurray_policy_destroy(priv);
  printf("\n%s\n", failures ? "tour FAILED" : "tour complete: every step behaved as the protocol says");
  return failures ? 1 : 0;
}
