#include "strata/util/openblas_core.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>

#include "strata/util/subprocess.h"

namespace strata {
namespace {

// OpenBLAS 0.3.21's x86-64 cores, by the widest vectors their float32
// kernels use.
const char* const kAvx512Cores[] = {"SkylakeX", "Cooperlake", "SapphireRapids"};
const char* const kAvx2Cores[] = {"Haswell", "Zen", "SkylakeX", "Cooperlake", "SapphireRapids"};

template <size_t N>
bool among(const std::string& core, const char* const (&cores)[N]) {
  return std::any_of(std::begin(cores), std::end(cores),
                     [&](const char* name) { return core == name; });
}

}  // namespace

std::optional<std::string> betterOpenBlasCore(const std::string& loadedCore, bool hasAvx512,
                                              bool hasAvx2) {
  if (hasAvx512 && !among(loadedCore, kAvx512Cores)) return "SkylakeX";
  if (hasAvx2 && !among(loadedCore, kAvx2Cores)) return "Haswell";
  return std::nullopt;
}

std::optional<std::string> loadedOpenBlasCore() {
  using CoreName = const char* (*)();
  auto coreName = reinterpret_cast<CoreName>(dlsym(RTLD_DEFAULT, "openblas_get_corename"));
  if (!coreName) return std::nullopt;
  return std::string(coreName());
}

std::optional<std::string> openBlasCoreToForce() {
  if (std::getenv("OPENBLAS_CORETYPE")) return std::nullopt;
  std::optional<std::string> loaded = loadedOpenBlasCore();
  if (!loaded) return std::nullopt;
  __builtin_cpu_init();
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
  bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return betterOpenBlasCore(*loaded, avx512, avx2);
}

std::optional<std::string> openBlasCoreWarning() {
  std::optional<std::string> better = openBlasCoreToForce();
  if (!better) return std::nullopt;
  return "OpenBLAS runs its " + loadedOpenBlasCore().value_or("") +
         " kernels on a CPU that runs its " + *better + " ones; start this program with " +
         "OPENBLAS_CORETYPE=" + *better +
         " for faster matrix products (it is read when OpenBLAS "
         "loads; the strata command sets it itself)";
}

void reexecWithBetterOpenBlasCore(char** argv) {
  std::optional<std::string> core = openBlasCoreToForce();
  if (!core) return;
  setenv("OPENBLAS_CORETYPE", core->c_str(), 1);
  std::string self = currentExecutable();
  execv(self.c_str(), argv);
}

}  // namespace strata
