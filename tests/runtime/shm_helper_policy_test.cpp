// When a worker thread helps with in-place reductions: the environment's
// override, and the default's spare-core rule.
#include "runtime/shm/shm_helper_policy.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <thread>

#include "strata/error.h"

namespace strata {
namespace {

TEST(ShmHelperPolicy, EnvironmentChoosesThePolicyAndBadValuesAreNamed) {
  unsetenv("STRATA_SHM_HELPER");
  EXPECT_EQ(shmHelperPolicyFromEnvironment(), ShmHelperPolicy::kAuto);
  setenv("STRATA_SHM_HELPER", "always", 1);
  EXPECT_EQ(shmHelperPolicyFromEnvironment(), ShmHelperPolicy::kAlways);
  setenv("STRATA_SHM_HELPER", "never", 1);
  EXPECT_EQ(shmHelperPolicyFromEnvironment(), ShmHelperPolicy::kNever);
  setenv("STRATA_SHM_HELPER", "sometimes", 1);
  try {
    shmHelperPolicyFromEnvironment();
    ADD_FAILURE() << "a bad STRATA_SHM_HELPER was accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("STRATA_SHM_HELPER is 'sometimes'"), std::string::npos)
        << e.what();
  }
  unsetenv("STRATA_SHM_HELPER");
}

TEST(ShmHelperPolicy, AutoHelpsOnlyWithACoreToSpare) {
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  int previous = at::get_num_threads();
  at::set_num_threads(1);
  EXPECT_TRUE(workerShouldHelp(ShmHelperPolicy::kAuto, cores - 1));
  EXPECT_FALSE(workerShouldHelp(ShmHelperPolicy::kAuto, cores));
  EXPECT_TRUE(workerShouldHelp(ShmHelperPolicy::kAlways, cores));
  EXPECT_FALSE(workerShouldHelp(ShmHelperPolicy::kNever, 1));
  at::set_num_threads(previous);
}

}  // namespace
}  // namespace strata
