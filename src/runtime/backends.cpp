// The backend registry and plugin loader (the public device functions are in
// devices.cpp), and hurray_backend_report. The loader reads a plugin's
// table only through the dispatch layer (dispatch.h), which checks and
// probes it (tests/layering/check_dispatch.sh).
#include "backends.h"

#include <dirent.h>
#include <dlfcn.h>

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "../core/internal.h"
#include "../core/log.h"
#include "dispatch.h"
#include "hurray_known_plugins.h"
#include "identity_text.h"

namespace hurray::detail {

constinit std::atomic<const Backend *> g_ready_backends[256] = {};
constinit int32_t g_ready_devices[256] = {};

namespace {

// Plugins named after the devices this project ships backends for (the
// list CMake generates from HURRAY_PLUGINS, hurray_known_plugins.h); a file
// with another name may serve any tag (a private one, typically) and is
// opened only when no conventionally named plugin serves the tag asked for.
struct KnownName {
  const char *name;
  uint8_t tag;
};
constexpr KnownName kKnownNames[] = {HURRAY_KNOWN_PLUGINS};

int known_tag(const std::string &name) {
  for (const auto &k : kKnownNames)
    if (name == k.name) return k.tag;
  return -1;
}

struct Plugin {
  std::string path, name;
  bool opened = false;  // dlopen attempted
  void *dl = nullptr;
  const hurray_backend_v1 *table = nullptr;
  std::string why;  // why it cannot be used (open/ABI failure)
};

struct TagState {
  bool resolved = false;  // probe attempted (or no plugin found)
  Backend backend{};
  std::string why;        // reason when unavailable
  Plugin *plugin = nullptr;
  std::deque<DeviceRef> refs;  // stable addresses
};

class Registry {
 public:
  hurray_status get(uint8_t tag, Backend *out, hurray_error *err) {
    // Once a tag's backend is ready it never changes: read it without the lock.
    if (const Backend *ready = g_ready_backends[tag].load(std::memory_order_acquire)) {
      *out = *ready;
      return HURRAY_OK;
    }
    std::lock_guard<std::mutex> lock(mu_);
    TagState &t = tags_[tag];
    if (!t.resolved) resolve(tag, t);
    if (t.backend.table) {
      if (!g_ready_backends[tag].load(std::memory_order_relaxed)) {  // written once
        g_ready_devices[tag] = dispatch::device_count(t.backend);
        g_ready_backends[tag].store(&t.backend, std::memory_order_release);
      }
      *out = t.backend;
      return HURRAY_OK;
    }
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_NONE,
                "device_tag 0x%02X %s is unavailable: %s", tag, hurray_device_tag_name(tag),
                t.why.c_str());
  }

  const DeviceRef *ref(const Backend &b, int32_t device) {
    std::lock_guard<std::mutex> lock(mu_);
    TagState &t = tags_[dispatch::device_tag(b)];
    for (const DeviceRef &r : t.refs)
      if (r.device == device) return &r;
    t.refs.push_back(DeviceRef{b, device});
    return &t.refs.back();
  }

  std::string report() {
    std::lock_guard<std::mutex> lock(mu_);
    scan();
    std::string r = "search path: " + search_desc_ + "\n";
    if (const char *only = std::getenv("HURRAY_BACKENDS"))
      r += std::string("HURRAY_BACKENDS=") + only + "\n";
    for (auto &p : plugins_) open(*p);
    // every named tag, then every other tag a plugin serves
    bool listed[256] = {};
    for (unsigned tag = 0; tag <= HURRAY_DEVICE_OPENCL; ++tag) listed[tag] = true;
    for (auto &p : plugins_)
      if (p->table) listed[dispatch::device_tag(*p->table)] = true;
    for (unsigned tag = 0; tag < 256; ++tag) {
      if (!listed[tag]) continue;
      TagState &t = tags_[tag];
      if (!t.resolved) resolve(static_cast<uint8_t>(tag), t);
      char head[160];
      std::snprintf(head, sizeof head, "device_tag 0x%02X %-10s ", tag,
                    hurray_device_tag_name(static_cast<uint8_t>(tag)));
      r += head;
      if (!t.backend.table) {
        r += "unavailable: " + t.why + "\n";
        continue;
      }
      const int32_t n = dispatch::device_count(t.backend);
      r += std::string(dispatch::name(t.backend)) + " (" + (t.plugin ? t.plugin->path : "built in") + "), " +
           std::to_string(n) + (n == 1 ? " device\n" : " devices\n");
      for (int32_t d = 0; d < n; ++d) r += describe_device(t.backend, d);
    }
    for (auto &p : plugins_)
      if (!p->table) r += "plugin " + p->path + " not used: " + p->why + "\n";
    return r;
  }

 private:
  static std::string describe_device(const Backend &b, int32_t d) {
    hurray_backend_device_info info{};
    hurray_error e;
    char line[1024];
    if (dispatch::device_info(b, d, &info, &e) != HURRAY_OK) {
      std::snprintf(line, sizeof line, "  device %d: %s\n", d, e.message);
      return line;
    }
    std::string classes;
    for (unsigned c = 0; c < 4; ++c)
      if (info.memory_classes & (1u << c))
        classes += std::string(classes.empty() ? "" : ",") + hurray_memory_class_name(uint8_t(c));
    std::string ipc;
    if (info.ipc & HURRAY_BACKEND_IPC_MEMORY) ipc += " memory";
    if (info.ipc & HURRAY_BACKEND_IPC_EVENTS) ipc += " events";
    if (info.ipc & HURRAY_BACKEND_IPC_STREAMS) ipc += " streams";
    std::snprintf(line, sizeof line, "  device %d: %s\n    memory classes: %s\n    ipc:%s\n", d,
                  info.name, classes.empty() ? "none" : classes.c_str(),
                  ipc.empty() ? " none" : ipc.c_str());
    std::string out = line;
    hurray_backend_device_identity id;  // docs/spec/identity.md
    char text[64] = "none";
    if (dispatch::device_identity(b, d, &id, &e) == HURRAY_OK) identity_text(id, text, sizeof text);
    out += std::string("    identity: ") + text + "\n";
    if (info.detail[0]) out += std::string("    ") + info.detail + "\n";
    return out;
  }

  static bool allowed(const std::string &name) {
    const char *only = std::getenv("HURRAY_BACKENDS");
    if (!only || !*only) return true;
    std::string list = std::string(",") + only + ",";
    return list.find("," + name + ",") != std::string::npos;
  }

  // Find the candidate files once: $HURRAY_BACKEND_PATH, then <libdir>/hurray.
  void scan() {
    if (scanned_) return;
    scanned_ = true;
    std::vector<std::string> dirs;
    if (const char *env = std::getenv("HURRAY_BACKEND_PATH")) {
      std::string s = env;
      size_t start = 0;
      while (start <= s.size()) {
        const size_t end = s.find(':', start);
        const std::string d = s.substr(start, end == std::string::npos ? std::string::npos : end - start);
        if (!d.empty()) dirs.push_back(d);
        if (end == std::string::npos) break;
        start = end + 1;
      }
    }
    Dl_info self;
    if (dladdr(reinterpret_cast<void *>(&hurray_version), &self) && self.dli_fname) {
      std::string lib = self.dli_fname;
      const size_t slash = lib.rfind('/');
      dirs.push_back((slash == std::string::npos ? std::string(".") : lib.substr(0, slash)) +
                     "/hurray");
    }
    for (const std::string &d : dirs) {
      search_desc_ += (search_desc_.empty() ? "" : ":") + d;
      DIR *dir = opendir(d.c_str());
      if (!dir) {
        log_debug("backend folder %s: %s", d.c_str(), std::strerror(errno));
        continue;
      }
      std::vector<std::string> names;
      while (dirent *e = readdir(dir)) {
        const std::string f = e->d_name;
        if (f.size() > 13 && f.rfind("libhurray-", 0) == 0 && f.compare(f.size() - 3, 3, ".so") == 0)
          names.push_back(f);
      }
      closedir(dir);
      std::sort(names.begin(), names.end());
      for (const std::string &f : names) {
        const std::string name = f.substr(10, f.size() - 13);
        bool dup = false;
        for (auto &p : plugins_) dup = dup || p->name == name;
        if (dup) {
          log_debug("plugin %s/%s skipped: a plugin named %s was found earlier", d.c_str(),
                    f.c_str(), name.c_str());
          continue;
        }
        auto p = std::make_unique<Plugin>();
        p->path = d + "/" + f;
        p->name = name;
        log_debug("found plugin %s (%s)", name.c_str(), p->path.c_str());
        plugins_.push_back(std::move(p));
      }
    }
  }

  // dlopen a candidate and check its table. Never probes.
  void open(Plugin &p) {
    if (p.opened) return;
    p.opened = true;
    if (!allowed(p.name)) {
      p.why = "not listed in HURRAY_BACKENDS";
      log_debug("plugin %s skipped: %s", p.name.c_str(), p.why.c_str());
      return;
    }
    p.dl = dlopen(p.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!p.dl) {
      const char *e = dlerror();
      p.why = std::string("dlopen failed: ") + (e ? e : "unknown error");
      log_debug("plugin %s skipped: %s", p.name.c_str(), p.why.c_str());
      return;
    }
    auto entry = reinterpret_cast<hurray_backend_entry_fn>(dlsym(p.dl, HURRAY_BACKEND_ENTRY_SYMBOL));
    const hurray_backend_v1 *t = entry ? entry() : nullptr;
    char why[200] = "";
    if (!entry)
      std::snprintf(why, sizeof why, "no %s symbol", HURRAY_BACKEND_ENTRY_SYMBOL);
    else if (!t)
      std::snprintf(why, sizeof why, "%s returned NULL", HURRAY_BACKEND_ENTRY_SYMBOL);
    else
      dispatch::refuse_table(t, why, sizeof why);
    if (why[0]) {
      p.why = why;
      log_debug("plugin %s skipped: %s", p.name.c_str(), why);
      dlclose(p.dl);
      p.dl = nullptr;
      return;
    }
    const int known = known_tag(p.name);
    if (known >= 0 && known != dispatch::device_tag(*t)) {
      p.why = "named " + p.name + " but serves device_tag " +
              std::to_string(dispatch::device_tag(*t));
      log_debug("plugin %s skipped: %s", p.name.c_str(), p.why.c_str());
      dlclose(p.dl);
      p.dl = nullptr;
      return;
    }
    p.table = t;
    log_debug("plugin %s loaded: %s serves device_tag 0x%02X", p.name.c_str(), dispatch::name(*t),
              dispatch::device_tag(*t));
  }

  void resolve(uint8_t tag, TagState &t) {
    t.resolved = true;
    if (tag == HURRAY_DEVICE_CPU) {
      t.backend = Backend{cpu_backend(), nullptr};
      return;
    }
    scan();
    Plugin *chosen = nullptr;
    // conventionally named plugins first, then any other candidate
    for (int pass = 0; pass < 2 && !chosen; ++pass)
      for (auto &p : plugins_) {
        const int known = known_tag(p->name);
        if ((pass == 0) != (known == tag)) continue;
        if (pass == 1 && known >= 0) continue;
        open(*p);
        if (p->table && dispatch::device_tag(*p->table) == tag) {
          chosen = p.get();
          break;
        }
      }
    if (!chosen) {
      t.why = "no backend plugin for it in " + (search_desc_.empty() ? "(no folder)" : search_desc_);
      std::string skipped;
      for (auto &p : plugins_) {
        if (known_tag(p->name) == tag && !p->why.empty())
          t.why = "plugin " + p->path + " not used: " + p->why;
        else if (known_tag(p->name) < 0 && !p->table && !p->why.empty())
          skipped += "; " + p->name + " skipped (" + p->why + ")";  // it might have served it
      }
      t.why += skipped;
      log_debug("device_tag 0x%02X: %s", tag, t.why.c_str());
      return;
    }
    t.plugin = chosen;
    Backend probed{};
    hurray_error e;
    const hurray_status st = dispatch::probe(chosen->table, &probed, &e);
    if (st != HURRAY_OK) {
      // The plugin's message, prefixed with its name unless it is (a vendor
      // message is not): docs/errors.md.
      const std::string plugin = std::string(dispatch::name(probed)) + ": ";
      const std::string said = e.message[0] ? e.message : hurray_status_message(st);
      t.why = said.rfind(plugin, 0) == 0 ? said : plugin + said;
      log_debug("device_tag 0x%02X: plugin %s probe failed: %s", tag, chosen->name.c_str(),
                t.why.c_str());
      return;
    }
    t.backend = probed;
    log_debug("device_tag 0x%02X: plugin %s ready, %d device(s)", tag, chosen->name.c_str(),
              dispatch::device_count(t.backend));
  }

  std::mutex mu_;
  bool scanned_ = false;
  std::string search_desc_;
  std::vector<std::unique_ptr<Plugin>> plugins_;
  TagState tags_[256];
};

Registry &registry() {
  static auto *r = new Registry;  // never destroyed: plugins stay loaded to exit
  return *r;
}

}  // namespace

void log_debug(const char *fmt, ...) noexcept {
  if (!debug_logging()) return;
  va_list ap;
  va_start(ap, fmt);
  vlog_debug("hurray", fmt, ap);
  va_end(ap);
}

// The registry is the only part of the core that allocates with throwing
// containers: its two ways in (backend_for, device_ref) and the report are
// where the core's public entry points meet the barrier.
hurray_status backend_for(uint8_t tag, Backend *out, hurray_error *err) noexcept {
  return guarded(err, "backend registry", [&] { return registry().get(tag, out, err); });
}

hurray_status backend_device_slow(uint8_t tag, int32_t ordinal, Backend *out,
                                  hurray_error *err) noexcept {
  if (const hurray_status st = backend_for(tag, out, err)) return st;
  const int32_t n = dispatch::device_count(*out);
  if (ordinal < 0 || ordinal >= n)
    return fail(err, HURRAY_E_DEVICE_UNAVAILABLE, HURRAY_RULE_PUT_DEVICE,
                "device_tag 0x%02X %s has %d device(s); device %d does not exist", tag,
                hurray_device_tag_name(tag), n, ordinal);
  return HURRAY_OK;
}

const DeviceRef *device_ref(const Backend &b, int32_t device) noexcept {
  return barrier([&] { return registry().ref(b, device); },
                 []() -> const DeviceRef * { return nullptr; });
}

namespace {
// Copies text into out (cap bytes, NUL-terminated when cap > 0); returns
// its full length, as snprintf does.
size_t copy_report(const char *text, size_t n, char *out, size_t cap) noexcept {
  if (cap) {
    const size_t k = n < cap - 1 ? n : cap - 1;
    std::memcpy(out, text, k);
    out[k] = '\0';
  }
  return n;
}
}  // namespace

}  // namespace hurray::detail

using namespace hurray::detail;

extern "C" {

HURRAY_API size_t hurray_backend_report(hurray_context *ctx, char *out, size_t cap) {
  (void)ctx;
  return barrier(
      [&] {
        const std::string r = registry().report();
        return copy_report(r.data(), r.size(), out, cap);
      },
      [&] {
        static constexpr char kNoMemory[] = "backend report: out of memory\n";
        return copy_report(kNoMemory, sizeof kNoMemory - 1, out, cap);
      });
}

}  // extern "C"
