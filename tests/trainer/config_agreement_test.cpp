// Ranks started with different configurations stop before training, every
// rank with the same error naming the ranks and the options that differ.
#include <gtest/gtest.h>

#include "strata/error.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

void expectRefusedNaming(const std::function<void(int rank, TrainConfig&)>& perRank,
                         const std::vector<std::string>& named) {
  strata::testing::MultiProcessOptions options;
  options.timeout = std::chrono::seconds(120);
  options.commTimeoutSeconds = 60;
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext& ctx) {
        TrainConfig config = tinyConfig();
        config.parallel.pp = 2;
        config.parallel.tp = 2;
        perRank(ctx.rank, config);
        try {
          Trainer trainer(config, World::init());
          ADD_FAILURE() << "rank " << ctx.rank << " built a trainer";
        } catch (const ConfigError& e) {
          std::string message = e.what();
          for (const std::string& part : named)
            EXPECT_NE(message.find(part), std::string::npos) << message;
        }
      },
      options);
}

TEST(ConfigAgreement, ARankWithAnotherHiddenSizeIsNamed) {
  expectRefusedNaming(
      [](int rank, TrainConfig& c) {
        if (rank == 3) c.model.hidden = 64;
      },
      {"different configurations", "rank(s) 3 differ from rank 0",
       "model.hidden = 64 on rank 3, 32 on rank 0"});
}

TEST(ConfigAgreement, EveryDifferingRankAndOptionIsNamed) {
  expectRefusedNaming(
      [](int rank, TrainConfig& c) {
        if (rank >= 2) c.train.lr = 0.5;
        if (rank == 2) c.parallel.schedule = "gpipe";
      },
      {"rank(s) 2, 3 differ from rank 0", "train.lr = 0.5 on rank 2",
       "parallel.schedule = \"gpipe\" on rank 2, \"1f1b\" on rank 0"});
}

}  // namespace
}  // namespace strata::train::testing
