#include "strata/report/peak_flops.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "formats/atomic_file.h"
#include "runtime/sha256.h"
#include "strata/runtime/threads.h"
#include "strata/util/log.h"
#include "strata/util/openblas_core.h"
#include "strata/util/toml.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

// The kernels that multiply: OpenBLAS's choice changes the peak several
// times over on one CPU (strata/util/openblas_core.h).
std::string blasKernels() { return loadedOpenBlasCore().value_or("none"); }

std::string cacheTable(const std::string& cpu, int threads) {
  // Table names must be bare keys, so the (cpu, threads, kernels) key is hashed.
  return "peak-" + sha256Hex(cpu + "|threads=" + std::to_string(threads) + "|blas=" + blasKernels())
                       .substr(0, 16);
}

std::string readCache(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  return text.str();
}

// The cached peak for `table`, or 0 when absent or unreadable.
double lookup(const std::string& text, const std::string& path, const std::string& table) {
  try {
    for (const util::TomlEntry& entry : util::readToml(text, path))
      if (entry.table == table && entry.key == "flops" &&
          std::holds_alternative<double>(entry.value))
        return std::get<double>(entry.value);
  } catch (const std::exception& error) {
    logWarning("the peak FLOP/s cache '" + path + "' is corrupt (" + error.what() +
               "): measuring afresh and replacing it");
  }
  return 0;
}

void store(const std::string& path, std::string text, const std::string& table,
           const std::string& cpu, const PeakFlopsOptions& options, double flops) {
  try {
    util::readToml(text, path);
  } catch (const std::exception&) {
    text.clear();  // replace a corrupt cache rather than append to it
  }
  text +=
      (text.empty() ? "" : "\n") + util::tomlTable(table, {{"cpu", cpu},
                                                           {"threads", int64_t{options.threads}},
                                                           {"blas", blasKernels()},
                                                           {"matmul_size", int64_t{options.size}},
                                                           {"flops", flops}});
  try {
    fs::create_directories(fs::path(path).parent_path());
    formats::writeFileAtomically(path, text);
  } catch (const std::exception& error) {
    // The cache only saves time: the measured value is still returned, and
    // the warning says why every run measures again.
    logWarning("cannot cache the peak FLOP/s in '" + path + "' (" + error.what() +
               "): the next run measures again");
  }
}

}  // namespace

std::string cpuModelName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    size_t start = line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? "unknown-cpu" : line.substr(start);
  }
  return "unknown-cpu";
}

std::string defaultPeakFlopsCachePath() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  fs::path base = xdg && *xdg ? fs::path(xdg) : fs::path(home && *home ? home : ".") / ".cache";
  return (base / "strata" / "peak-flops.toml").string();
}

double measureMatmulFlops(int size, int repeats, int threads) {
  int previousThreads = setIntraOpThreads(threads);
  // A generator of its own: reseeding the global one here, on rank 0 only
  // and only when the cache misses, changed what a run drew afterwards.
  at::Generator generator = at::detail::createCPUGenerator(0);
  torch::Tensor a = at::randn({size, size}, generator), b = at::randn({size, size}, generator);
  torch::Tensor c = torch::matmul(a, b);  // warm-up: page in, pick kernels
  double best = 0;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    torch::matmul_out(c, a, b);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * size * size * static_cast<double>(size) / seconds);
  }
  setIntraOpThreads(previousThreads);
  return best;
}

double cachedPeakFlops(const PeakFlopsOptions& options, const std::function<double()>& measure) {
  std::string path = options.cachePath.empty() ? defaultPeakFlopsCachePath() : options.cachePath;
  std::string cpu = cpuModelName();
  std::string table = cacheTable(cpu, options.threads);
  std::string text = readCache(path);
  if (double cached = lookup(text, path, table); cached > 0) return cached;
  double flops =
      measure ? measure() : measureMatmulFlops(options.size, options.repeats, options.threads);
  store(path, text, table, cpu, options, flops);
  return flops;
}

}  // namespace strata::train
