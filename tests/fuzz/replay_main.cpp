// A main() for the fuzz targets where libFuzzer is not available (GCC):
// runs LLVMFuzzerTestOneInput once on every file named, or on every file of
// every directory named, e.g. the seed corpus. A broken property aborts.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

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
  LLVMFuzzerTestOneInput(data.empty() ? &kEmpty : data.data(), data.size());
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
  std::printf("%s: %zu inputs, every property held\n", argc > 0 ? argv[0] : "replay", count);
  return count > 0 ? 0 : 1;
}
