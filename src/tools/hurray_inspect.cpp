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
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "inspect_input.h"

namespace {

using hurray::inspect::looks_like_hex_text;
using hurray::inspect::parse_hex;
using hurray::inspect::parse_size;
using hurray::inspect::printable;
using hurray::inspect::read_capped;
using hurray::inspect::ReadResult;

constexpr int kExitValid = 0, kExitInvalid = 1, kExitUsage = 2;
// Input is refused past this many bytes (--max-input raises it): every
// handle costs a few diagnostics, and a stream (/dev/zero) never ends.
constexpr size_t kDefaultMaxInput = size_t{1} << 20;
// At most this many diagnostics are kept and printed (--max-diagnostics);
// the totals are always counted.
constexpr size_t kDefaultMaxDiagnostics = 1000;

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
    "  --max-input N    refuse input of more than N bytes (default 1M; K, M, G\n"
    "                   suffixes; hex text may be 4 x N + 4K characters): exit 2\n"
    "  --max-diagnostics N\n"
    "                   keep and print at most N errors and warnings (default\n"
    "                   1000); the totals count them all\n"
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

// Control bytes in an argument are escaped (printable()).
[[noreturn]] void usage_error(const char *fmt, const char *arg) {
  std::fprintf(stderr, "hurray-inspect: ");
  std::fprintf(stderr, fmt, printable(arg).c_str());
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
                hurray_status status, const std::vector<hurray_error> &diags, size_t n_err,
                size_t n_warn) {
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
  std::printf("],\"errors_total\":%zu,\"warnings_total\":%zu,\"truncated\":%s}\n", n_err,
              n_warn, diags.size() < n_err + n_warn ? "true" : "false");
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
                printable(e.message).c_str());
  if (diags.size() < n_err + n_warn)
    std::printf("... %zu more not shown (--max-diagnostics N shows more)\n",
                n_err + n_warn - diags.size());
  std::printf("result: %s (%zu error%s, %zu warning%s)\n",
              status == HURRAY_OK ? "valid" : "INVALID", n_err, n_err == 1 ? "" : "s",
              n_warn, n_warn == 1 ? "" : "s");
}

}  // namespace

int run(int argc, char **argv) {
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
  size_t max_input = kDefaultMaxInput, max_diagnostics = kDefaultMaxDiagnostics;
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
    } else if (a == "--max-input") {
      const char *v = value("--max-input");
      if (!parse_size(v, &max_input)) usage_error("--max-input: '%s' is not a size", v);
    } else if (a == "--max-diagnostics") {
      const char *v = value("--max-diagnostics");
      if (!parse_size(v, &max_diagnostics))
        usage_error("--max-diagnostics: '%s' is not a count", v);
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
  auto too_big = [&](const char *what) {
    std::fprintf(stderr,
                 "hurray-inspect: %s is larger than the input limit of %zu bytes "
                 "(--max-input N raises it)\n",
                 what, max_input);
    return kExitUsage;
  };
  // Hex text: two digits a byte, and room for whitespace between them.
  size_t text_limit = SIZE_MAX;
  if (max_input <= (SIZE_MAX - 4096) / 4) text_limit = 4 * max_input + 4096;
  if (hex) {
    std::string text = hex;
    if (text == "-") {
      std::vector<unsigned char> raw;
      const ReadResult r = read_capped(stdin, text_limit, &raw);
      if (r == ReadResult::kTooBig) return too_big("the hex text on standard input");
      if (r == ReadResult::kError) usage_error("%s", "cannot read standard input");
      text.assign(raw.begin(), raw.end());
    } else if (text.size() > text_limit) {
      return too_big("the --hex text");
    }
    std::string why;
    if (!parse_hex(text, &in, &why)) usage_error("--hex: %s", why.c_str());
    if (in.size() > max_input) return too_big("the --hex input");
  } else {
    const bool from_stdin = std::string_view(path) == "-";
    FILE *f = from_stdin ? stdin : std::fopen(path, "rb");
    if (!f) {
      std::fprintf(stderr, "hurray-inspect: cannot open '%s': %s\n", printable(path).c_str(),
                   std::strerror(errno));
      return kExitUsage;
    }
    errno = 0;
    const ReadResult r = read_capped(f, max_input, &in);
    const int read_errno = errno;  // fclose may change it
    if (!from_stdin) std::fclose(f);
    const std::string name = from_stdin ? std::string("standard input")
                                        : "'" + printable(path) + "'";
    if (r == ReadResult::kTooBig) return too_big(name.c_str());
    if (r == ReadResult::kError) {
      // A directory opens, and its first read fails: EISDIR.
      std::fprintf(stderr, "hurray-inspect: cannot read %s: %s\n", name.c_str(),
                   read_errno ? std::strerror(read_errno) : "read error");
      return kExitUsage;
    }
    // FILE and - are raw bytes. Text of hex digits is never a valid raw
    // table (a handle's reserved byte 15 is 0x00, never text), so it is most
    // likely hex meant for --hex -: say so, and still read it as raw bytes
    // (guessing would make raw input mean two things).
    if (looks_like_hex_text(in))
      std::fprintf(stderr,
                   "hurray-inspect: note: %s holds only hex digits and whitespace; it is read "
                   "as raw bytes. For hex text: hurray-inspect --hex - < FILE\n",
                   name.c_str());
  }

  size_t n_err = 0, n_warn = 0;
  const unsigned char *data = in.empty() ? nullptr : in.data();
  (void)hurray_table_diagnose(data, in.size(), policy, nullptr, 0, &n_err, &n_warn, nullptr);
  std::vector<hurray_error> diags(n_err + n_warn < max_diagnostics ? n_err + n_warn
                                                                    : max_diagnostics);
  const hurray_status status = hurray_table_diagnose(
      data, in.size(), policy, diags.data(), diags.size(), &n_err, &n_warn, &err);
  if (status == HURRAY_E_INVALID_ARGUMENT) {
    std::fprintf(stderr, "hurray-inspect: %s\n", printable(err.message).c_str());
    return kExitUsage;
  }
  if (json)
    print_json(in, transport, status, diags, n_err, n_warn);
  else
    print_text(in, transport, status, diags, n_err, n_warn);
  return status == HURRAY_OK ? kExitValid : kExitInvalid;
}

// Never std::terminate (an abort, exit 134) on bad_alloc or another
// exception: exit 2 with a message.
// The tool's barrier: every exception of run() stops here.
int main(int argc, char **argv) {
  try {
    return run(argc, argv);
  } catch (const std::bad_alloc &) {
    std::fputs("hurray-inspect: out of memory (a smaller --max-input needs less)\n", stderr);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "hurray-inspect: %s\n", printable(e.what()).c_str());
  }
  return kExitUsage;
}
