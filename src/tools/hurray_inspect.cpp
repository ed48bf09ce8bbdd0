// hurray-inspect: decode and validate a buffer handle or buffer table and
// print every field, error and warning with its rule ID.
// Uses only the public C API, as any user program would.
#include <hurray.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "inspect_input.h"

namespace {

using hurray::inspect::parse_hex;
using hurray::inspect::read_all;

constexpr int kExitValid = 0, kExitInvalid = 1, kExitUsage = 2;

const char kUsage[] =
    "Usage: hurray-inspect [OPTIONS] (--hex HEX | FILE | -)\n"
    "       hurray-inspect --devices\n"
    "\n"
    "Decode a Hurray buffer handle (16 bytes) or a buffer table (N handles back\n"
    "to back), print each buffer's fields by name, and check every rule of the\n"
    "buffer protocol. Errors and warnings name the rule ID (e.g. BP-ALIGN-MIN).\n"
    "\n"
    "Input (exactly one):\n"
    "  --hex HEX        the bytes as hex digits; whitespace is ignored, so\n"
    "                   \"0010000000000000 40000000 00000000\" works. --hex - reads\n"
    "                   the hex text from standard input.\n"
    "  FILE             raw bytes read from FILE\n"
    "  -                raw bytes read from standard input\n"
    "\n"
    "Options:\n"
    "  --transport T    in-process (default), ipc, rdma or cross-machine: selects\n"
    "                   BP-ALIGN-IPC, BP-SYNC-IPC and BP-SYNC-NET\n"
    "  --allow-private TAG\n"
    "                   agree to private device tag TAG (0xF0-0xFE, hex or\n"
    "                   decimal) out of band (BP-DEV-PRIVATE); repeatable\n"
    "  --ipc-sync TAG=WHAT\n"
    "                   what device TAG exports across processes, WHAT one of\n"
    "                   none, events, streams, events+streams (BP-SYNC-IPC).\n"
    "                   Default: CUDA, ROCM, VULKAN, LEVEL_ZERO export events.\n"
    "  --strict         treat SHOULD rules (warnings) as errors\n"
    "  --json           print one JSON object instead of text:\n"
    "                   {\"valid\", \"transport\", \"size\", \"buffers\": [{index,\n"
    "                   offset, byte_size, alignment, device_tag, device_tag_name,\n"
    "                   sync_mode, sync_mode_name, memory_class, memory_class_name,\n"
    "                   reserved}], \"errors\" and \"warnings\": [{rule, status,\n"
    "                   buffer, offset, message}]}\n"
    "  --devices        list the device backends instead: the plugins found and\n"
    "                   where ($HURRAY_BACKEND_PATH, <libdir>/hurray), the devices\n"
    "                   each sees with their memory classes and IPC capabilities,\n"
    "                   and why a plugin or device is unavailable; exit 0\n"
    "  -h, --help       print this help and exit 0\n"
    "  --version        print the library version and exit 0\n"
    "\n"
    "Exit status: 0 valid (warnings allowed), 1 invalid, 2 usage or I/O error.\n"
    "\n"
    "Example: hurray-inspect --hex 00100000000000004000000000000000\n"
    "         (4 KiB of CPU memory aligned to 64: valid)\n";

[[noreturn]] void usage_error(const char *fmt, const char *arg) {
  std::fprintf(stderr, "hurray-inspect: ");
  std::fprintf(stderr, fmt, arg);
  std::fprintf(stderr, "\nTry 'hurray-inspect --help'.\n");
  std::exit(kExitUsage);
}

bool parse_u8(const char *s, uint8_t *out) {
  errno = 0;
  char *end = nullptr;
  unsigned long v = std::strtoul(s, &end, 0);
  if (errno || end == s || *end != '\0' || v > 0xFF) return false;
  *out = static_cast<uint8_t>(v);
  return true;
}

std::string json_string(const char *s) {
  std::string r = "\"";
  for (const char *p = s; *p; ++p) {
    const unsigned char c = static_cast<unsigned char>(*p);
    if (c == '"' || c == '\\') {
      r += '\\';
      r += static_cast<char>(c);
    } else if (c < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      r += esc;
    } else {
      r += static_cast<char>(c);
    }
  }
  return r + "\"";
}

void print_json(const std::vector<unsigned char> &in, hurray_transport transport,
                hurray_status status, const std::vector<hurray_error> &diags) {
  std::printf("{\"valid\":%s,\"transport\":\"%s\",\"size\":%zu,\"buffers\":[",
              status == HURRAY_OK ? "true" : "false", hurray_transport_name(transport),
              in.size());
  const size_t n = in.size() / HURRAY_HANDLE_SIZE;
  for (size_t i = 0; i < n; ++i) {
    hurray_buffer_handle h;
    (void)hurray_handle_decode(in.data() + i * HURRAY_HANDLE_SIZE, HURRAY_HANDLE_SIZE,
                               &h, nullptr);
    std::printf("%s{\"index\":%zu,\"offset\":%zu,\"byte_size\":%" PRIu64
                ",\"alignment\":%" PRIu32 ",\"device_tag\":%u,\"device_tag_name\":\"%s\""
                ",\"sync_mode\":%u,\"sync_mode_name\":\"%s\",\"memory_class\":%u"
                ",\"memory_class_name\":\"%s\",\"reserved\":%u}",
                i ? "," : "", i, i * HURRAY_HANDLE_SIZE, h.byte_size, h.alignment,
                h.device_tag, hurray_device_tag_name(h.device_tag), h.sync_mode,
                hurray_sync_mode_name(h.sync_mode), h.memory_class,
                hurray_memory_class_name(h.memory_class), h.reserved);
  }
  for (int pass = 0; pass < 2; ++pass) {
    const int sev = pass == 0 ? HURRAY_SEVERITY_ERROR : HURRAY_SEVERITY_WARNING;
    std::printf("],\"%s\":[", pass == 0 ? "errors" : "warnings");
    bool comma = false;
    for (const hurray_error &e : diags) {
      if (e.severity != sev) continue;
      std::printf("%s{\"rule\":%s,\"status\":\"%s\",\"buffer\":%" PRId64
                  ",\"offset\":%" PRId64 ",\"message\":%s}",
                  comma ? "," : "", json_string(e.rule_id).c_str(),
                  hurray_status_name(static_cast<hurray_status>(e.status)),
                  e.buffer_index, e.byte_offset, json_string(e.message).c_str());
      comma = true;
    }
  }
  std::printf("]}\n");
}

std::string human_size(uint64_t v) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double d = static_cast<double>(v);
  int u = 0;
  while (d >= 1024.0 && u < 6) {
    d /= 1024.0;
    ++u;
  }
  char buf[32];
  if (u == 0)
    std::snprintf(buf, sizeof buf, "%" PRIu64 " B", v);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", d, units[u]);
  return buf;
}

void print_text(const std::vector<unsigned char> &in, hurray_transport transport,
                hurray_status status, const std::vector<hurray_error> &diags,
                size_t n_err, size_t n_warn) {
  const size_t n = in.size() / HURRAY_HANDLE_SIZE;
  std::printf("input: %zu bytes, %zu buffer%s, transport %s\n", in.size(), n,
              n == 1 ? "" : "s", hurray_transport_name(transport));
  for (size_t i = 0; i < n; ++i) {
    hurray_buffer_handle h;
    (void)hurray_handle_decode(in.data() + i * HURRAY_HANDLE_SIZE, HURRAY_HANDLE_SIZE,
                               &h, nullptr);
    std::printf("buffer %zu (offset %zu)%s\n", i, i * HURRAY_HANDLE_SIZE,
                i == 0 ? " data" : " quantization parameters");
    std::printf("  byte_size     %" PRIu64 " (%s)%s\n", h.byte_size,
                human_size(h.byte_size).c_str(), h.byte_size ? "" : " empty");
    std::printf("  alignment     %" PRIu32 "\n", h.alignment);
    std::printf("  device_tag    0x%02X %s\n", h.device_tag, hurray_device_tag_name(h.device_tag));
    std::printf("  sync_mode     0x%02X %s\n", h.sync_mode, hurray_sync_mode_name(h.sync_mode));
    std::printf("  memory_class  0x%02X %s\n", h.memory_class,
                hurray_memory_class_name(h.memory_class));
    std::printf("  _reserved     0x%02X\n", h.reserved);
  }
  for (const hurray_error &e : diags)
    std::printf("%-7s %s\n", e.severity == HURRAY_SEVERITY_ERROR ? "error" : "warning",
                e.message);
  std::printf("result: %s (%zu error%s, %zu warning%s)\n",
              status == HURRAY_OK ? "valid" : "INVALID", n_err, n_err == 1 ? "" : "s",
              n_warn, n_warn == 1 ? "" : "s");
}

}  // namespace

int main(int argc, char **argv) {
  hurray_policy *raw_policy = nullptr;
  if (hurray_policy_create(&raw_policy, nullptr) != HURRAY_OK) {
    std::fprintf(stderr, "hurray-inspect: out of memory\n");
    return kExitUsage;
  }
  // usage_error() exits; everything else returns, and the policy goes with it
  const std::unique_ptr<hurray_policy, void (*)(hurray_policy *)> owner(raw_policy,
                                                                        hurray_policy_destroy);
  hurray_policy *const policy = raw_policy;
  hurray_transport transport = HURRAY_TRANSPORT_IN_PROCESS;
  bool json = false;
  const char *hex = nullptr;
  const char *path = nullptr;
  hurray_error err;

  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&](const char *opt) -> const char * {
      if (i + 1 >= argc) usage_error("option %s needs a value", opt);
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return kExitValid;
    } else if (a == "--version") {
      std::printf("hurray-inspect (libhurray %s)\n", hurray_version_string());
      return kExitValid;
    } else if (a == "--devices") {
      std::string r(hurray_backend_report(nullptr, nullptr, 0) + 1, '\0');
      hurray_backend_report(nullptr, r.data(), r.size());
      std::fputs(r.c_str(), stdout);
      return kExitValid;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--strict") {
      (void)hurray_policy_set_warnings_as_errors(policy, 1, nullptr);
    } else if (a == "--transport") {
      std::string_view v = value("--transport");
      if (v == "in-process") transport = HURRAY_TRANSPORT_IN_PROCESS;
      else if (v == "ipc") transport = HURRAY_TRANSPORT_IPC;
      else if (v == "rdma") transport = HURRAY_TRANSPORT_RDMA;
      else if (v == "cross-machine") transport = HURRAY_TRANSPORT_CROSS_MACHINE;
      else usage_error("unknown transport '%s' (in-process, ipc, rdma, cross-machine)", argv[i]);
      (void)hurray_policy_set_transport(policy, transport, nullptr);
    } else if (a == "--allow-private") {
      const char *v = value("--allow-private");
      uint8_t tag;
      if (!parse_u8(v, &tag)) usage_error("--allow-private: '%s' is not a byte value", v);
      if (hurray_policy_allow_private_tag(policy, tag, 1, &err) != HURRAY_OK)
        usage_error("--allow-private: %s", err.message);
    } else if (a == "--ipc-sync") {
      const char *v = value("--ipc-sync");
      std::string s = v;
      const size_t eq = s.find('=');
      uint8_t tag;
      if (eq == std::string::npos || !parse_u8(s.substr(0, eq).c_str(), &tag))
        usage_error("--ipc-sync: expected TAG=WHAT, got '%s'", v);
      const std::string what = s.substr(eq + 1);
      unsigned flags;
      if (what == "none") flags = 0;
      else if (what == "events") flags = HURRAY_IPC_SYNC_EVENTS;
      else if (what == "streams") flags = HURRAY_IPC_SYNC_STREAMS;
      else if (what == "events+streams") flags = HURRAY_IPC_SYNC_EVENTS | HURRAY_IPC_SYNC_STREAMS;
      else usage_error("--ipc-sync: WHAT must be none, events, streams or events+streams: '%s'", v);
      if (hurray_policy_set_ipc_sync(policy, tag, flags, &err) != HURRAY_OK)
        usage_error("--ipc-sync: %s", err.message);
    } else if (a == "--hex") {
      if (hex || path) usage_error("%s", "give exactly one input");
      hex = value("--hex");
    } else if (a.size() > 1 && a[0] == '-' && a != "-") {
      usage_error("unknown option '%s'", argv[i]);
    } else {
      if (hex || path) usage_error("%s", "give exactly one input");
      path = argv[i];
    }
  }
  if (!hex && !path) usage_error("%s", "no input: give --hex HEX, FILE or -");

  std::vector<unsigned char> in;
  if (hex) {
    std::string text = hex;
    if (text == "-") {
      std::vector<unsigned char> raw;
      if (!read_all(stdin, &raw)) usage_error("%s", "cannot read standard input");
      text.assign(raw.begin(), raw.end());
    }
    std::string why;
    if (!parse_hex(text, &in, &why)) usage_error("--hex: %s", why.c_str());
  } else if (std::string_view(path) == "-") {
    if (!read_all(stdin, &in)) usage_error("%s", "cannot read standard input");
  } else {
    FILE *f = std::fopen(path, "rb");
    if (!f) {
      std::fprintf(stderr, "hurray-inspect: cannot open '%s': %s\n", path, std::strerror(errno));
      return kExitUsage;
    }
    const bool ok = read_all(f, &in);
    std::fclose(f);
    if (!ok) {
      std::fprintf(stderr, "hurray-inspect: cannot read '%s'\n", path);
      return kExitUsage;
    }
  }

  size_t n_err = 0, n_warn = 0;
  const unsigned char *data = in.empty() ? nullptr : in.data();
  (void)hurray_table_diagnose(data, in.size(), policy, nullptr, 0, &n_err, &n_warn, nullptr);
  std::vector<hurray_error> diags(n_err + n_warn);
  const hurray_status status = hurray_table_diagnose(
      data, in.size(), policy, diags.data(), diags.size(), &n_err, &n_warn, &err);
  if (status == HURRAY_E_INVALID_ARGUMENT) {
    std::fprintf(stderr, "hurray-inspect: %s\n", err.message);
    return kExitUsage;
  }
  if (json)
    print_json(in, transport, status, diags);
  else
    print_text(in, transport, status, diags, n_err, n_warn);
  return status == HURRAY_OK ? kExitValid : kExitInvalid;
}
