// The main of a fuzz target in the normal (non-clang) build: calls LLVMFuzzerTestOneInput once on
// every file of the directories (or files) given, so every seed and every past crash of a target
// stays a regression test without libFuzzer (ctest fuzz_replay_<target>). A missing directory
// counts as empty (regressions/<target> has no file until a crash is found). Files whose name
// starts with "." are skipped. Exits 0 when every input returned; a crash fails the test.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::vector<std::filesystem::path> InputsOf(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) {
    for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
      if (entry.is_regular_file() && entry.path().filename().string().front() != '.') {
        files.push_back(entry.path());
      }
    }
  } else if (std::filesystem::is_regular_file(path, error)) {
    files.push_back(path);
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    for (const std::filesystem::path& file : InputsOf(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "cannot read %s\n", file.c_str());
        return 1;
      }
      const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      // A copy of exactly `size` bytes, so a read past the end is caught like under libFuzzer.
      std::vector<uint8_t> data(bytes.begin(), bytes.end());
      std::printf("replay %s (%zu bytes)\n", file.c_str(), data.size());
      std::fflush(stdout);
      LLVMFuzzerTestOneInput(data.data(), data.size());
      ++count;
    }
  }
  std::printf("replayed %zu inputs\n", count);
  return 0;
}
