// strata generate: the model reassembled from a pp 2 x tp 2 checkpoint is the
// model that was trained, and sampling from it behaves.
#include "strata/train/generate.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "strata/train/checkpoint.h"
#include "strata/train/data_source.h"
#include "strata/train/trainer.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

TrainConfig checkpointedConfig(const std::string& dir) {
  TrainConfig c = tinyConfig();
  c.parallel.pp = 2;
  c.parallel.tp = 2;
  c.model.vocab = 257;  // padded to 258 under tp 2; the reassembled model drops the padding
  c.checkpoint.dir = dir + "/ckpt";
  return c;
}

// Mean next-token loss of `model` (tp = 1) on the first validation batch.
double validationLoss(torch::nn::Sequential& model, const TrainConfig& c) {
  TrainConfig one = c;
  one.parallel = ParallelConfig{};
  DataSplit data = makeDataSplit(one);
  Batch batch = makeValidationReader(data, one, 0).next();
  torch::NoGradGuard noGrad;
  at::Tensor logits = model->forward(batch.input);  // [s, b, V]
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(2)}),
                                              batch.target.t().reshape({-1}))
      .item<double>();
}

TEST(Generate, ReassembledModelIsTheTrainedOne) {
  std::string dir = sharedDir("generate");
  strata::testing::runInProcesses(
      4,
      [&](const strata::testing::RankContext& ctx) {
        TrainConfig c = checkpointedConfig(dir);
        c.train.evalBatches = 1;
        Trainer trainer(c, World::init());
        trainSteps(trainer, 3);
        trainer.saveCheckpoint();
        double loss = trainer.evaluate(1);
        if (ctx.rank == 0) writeValues(dir, "val", 0, {loss});
      },
      sharedDirOptions(dir));
  TrainConfig config;
  torch::nn::Sequential model = loadFullModel(dir + "/ckpt", &config);
  EXPECT_EQ(config.parallel.pp, 2);
  EXPECT_NEAR(validationLoss(model, config), readValues(dir, "val", 0)[0], 1e-4);

  GenerateOptions greedy;
  greedy.checkpoint = dir + "/ckpt";
  greedy.prompt = "the ";
  greedy.tokens = 24;
  std::string text = generateText(greedy);
  EXPECT_EQ(text.size(), greedy.prompt.size() + 24);
  EXPECT_EQ(text.rfind("the ", 0), 0u);
  EXPECT_EQ(generateText(greedy), text);  // greedy is deterministic

  GenerateOptions sampled = greedy;
  sampled.temperature = 0.8;
  sampled.topK = 5;
  sampled.seed = 3;
  EXPECT_EQ(generateText(sampled), generateText(sampled));  // seeded
  EXPECT_EQ(generateText(sampled).size(), text.size());
  removeSharedDir(dir);
}

TEST(Generate, MissingCheckpointIsAClearError) {
  GenerateOptions o;
  o.checkpoint = "/nonexistent/strata-checkpoints";
  try {
    generateText(o);
    ADD_FAILURE() << "generated from nothing";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("no complete checkpoint under"), std::string::npos);
  }
}

}  // namespace
}  // namespace strata::train::testing
