#include "strata/util/openblas_core.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

// Debian 12's OpenBLAS names a CPU it does not know Prescott and runs SSE3
// kernels on it; the widest kernels the CPU runs replace them.
TEST(OpenBlasCore, AnOldCoreOnANewerCpuIsReplacedByTheWidestItRuns) {
  EXPECT_EQ(betterOpenBlasCore("Prescott", true, true), "SkylakeX");
  EXPECT_EQ(betterOpenBlasCore("Haswell", true, true), "SkylakeX");
  EXPECT_EQ(betterOpenBlasCore("Prescott", false, true), "Haswell");
  EXPECT_EQ(betterOpenBlasCore("Nehalem", false, true), "Haswell");
}

TEST(OpenBlasCore, ACoreThatUsesWhatTheCpuHasIsKept) {
  EXPECT_EQ(betterOpenBlasCore("SkylakeX", true, true), std::nullopt);
  EXPECT_EQ(betterOpenBlasCore("Cooperlake", true, true), std::nullopt);
  EXPECT_EQ(betterOpenBlasCore("Haswell", false, true), std::nullopt);
  EXPECT_EQ(betterOpenBlasCore("Zen", false, true), std::nullopt);
  EXPECT_EQ(betterOpenBlasCore("Prescott", false, false), std::nullopt);
}

}  // namespace
}  // namespace strata
