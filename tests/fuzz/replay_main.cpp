// A main() for the fuzz targets where libFuzzer is not available (GCC):
// runs LLVMFuzzerTestOneInput once on every file named, or on every file of
// every directory named, e.g. the seed corpus. A broken property aborts.
//
// Each seed's name is also a claim the replay checks against the verdict
// the target reports (fuzz_util.h): ok-* is accepted with no finding,
// warn-RULE-* accepted with a warning of RULE, bad-* refused, and
// bad-RULE-* refused with an error of RULE (RULE: the longest rule ID of
// hurray.h the name starts with, followed by '-' or the end). A target that
// reports a verdict must have every seed named so; a seed named so must come
// from a target that reports one. HURRAY_FUZZ_PRINT_VERDICTS=1 prints every
// verdict (to name new seeds).
#include <hurray.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

size_t g_claims = 0, g_failed = 0;

// The rule a seed's name names after its prefix, or "" (none, or unknown:
// *unknown is set when the name starts with "BP-" but names no rule).
std::string named_rule(const std::string &rest, bool *unknown) {
  static const char *const kIds[] = {
#define HURRAY_XX_(name, num, id, kind) id,
      HURRAY_RULE_MAP(HURRAY_XX_)
#undef HURRAY_XX_
  };
  std::string best;
  for (const char *id : kIds) {
    const std::string r = id;
    if (!r.empty() && rest.compare(0, r.size(), r) == 0 &&
        (rest.size() == r.size() || rest[r.size()] == '-') && r.size() > best.size())
      best = r;
  }
  *unknown = best.empty() && rest.compare(0, 3, "BP-") == 0;
  return best;
}

void claim_failed(const std::string &name, const std::string &why,
                  const hurray_fuzz::Verdict &v) {
  std::fprintf(stderr, "\nSEED VERDICT WRONG: %s: %s\n  the target %s", name.c_str(),
               why.c_str(), !v.reported ? "reported no verdict" : v.accepted ? "accepted it" : "refused it");
  for (const auto &r : v.errors) std::fprintf(stderr, " [error %s]", r.empty() ? "(no rule)" : r.c_str());
  for (const auto &r : v.warnings) std::fprintf(stderr, " [warning %s]", r.c_str());
  std::fprintf(stderr, "\n");
  ++g_failed;
}

bool contains(const std::vector<std::string> &v, const std::string &x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

void check_verdict(const std::string &name, const hurray_fuzz::Verdict &v) {
  if (std::getenv("HURRAY_FUZZ_PRINT_VERDICTS")) {  // to name new seeds
    std::printf("%-48s %s", name.c_str(),
                !v.reported ? "no verdict" : v.accepted ? "accepted" : "refused");
    for (const auto &r : v.errors) std::printf(" [error %s]", r.empty() ? "-" : r.c_str());
    for (const auto &r : v.warnings) std::printf(" [warning %s]", r.c_str());
    std::printf("\n");
  }
  const auto starts = [&](const char *p) { return name.rfind(p, 0) == 0; };
  const bool ok = starts("ok-"), warn = starts("warn-"), bad = starts("bad-");
  if (!ok && !warn && !bad) {
    if (v.reported)
      claim_failed(name, "the target reports verdicts: name the seed ok-*, warn-RULE-* or bad-*",
                   v);
    return;
  }
  ++g_claims;
  if (!v.reported) return claim_failed(name, "its name claims a verdict", v);
  bool unknown = false;
  const std::string rule = named_rule(name.substr(ok ? 3 : warn ? 5 : 4), &unknown);
  if (unknown) return claim_failed(name, "its name starts with BP- but names no rule of hurray.h", v);
  if (ok) {
    if (!v.accepted || !v.warnings.empty())
      claim_failed(name, "ok-* must be accepted with no finding", v);
  } else if (warn) {
    if (rule.empty()) claim_failed(name, "warn-* must name the rule (warn-BP-...)", v);
    else if (!v.accepted || !contains(v.warnings, rule))
      claim_failed(name, "warn-" + rule + "-* must be accepted with a warning of " + rule, v);
  } else if (v.accepted) {
    claim_failed(name, "bad-* must be refused", v);
  } else if (!rule.empty() && !contains(v.errors, rule)) {
    claim_failed(name, "bad-" + rule + "-* must be refused under " + rule, v);
  }
}

void run_file(const std::filesystem::path &p, size_t *count) {
  std::ifstream f(p, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", p.c_str());
    std::exit(2);
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(f)),
                                std::istreambuf_iterator<char>());
  // A copy of exactly the file's size, so reads past it are caught by ASan.
  std::vector<uint8_t> data(bytes.begin(), bytes.end());
  static const uint8_t kEmpty = 0;  // as libFuzzer, never NULL
  hurray_fuzz::verdict() = {};
  LLVMFuzzerTestOneInput(data.empty() ? &kEmpty : data.data(), data.size());
  check_verdict(p.filename().string(), hurray_fuzz::verdict());
  ++*count;
}

}  // namespace

int main(int argc, char **argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path p = argv[i];
    if (std::filesystem::is_directory(p)) {
      std::vector<std::filesystem::path> files;
      for (const auto &e : std::filesystem::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto &f : files) run_file(f, &count);
    } else {
      run_file(p, &count);
    }
  }
  if (g_failed) {
    std::fprintf(stderr, "%s: %zu of %zu inputs got a verdict other than their name says\n",
                 argc > 0 ? argv[0] : "replay", g_failed, count);
    return 1;
  }
  std::printf("%s: %zu inputs, every property held, %zu verdicts as their names say\n",
              argc > 0 ? argv[0] : "replay", count, g_claims);
  return count > 0 ? 0 : 1;
}
