// strata eval (strata/inference/evaluate_text.h): the loss of a checkpoint
// on a text file is the mean next-token cross-entropy over the windows the
// file cuts into, computed here from the file's bytes and the reassembled
// model's logits; the CLI prints it as one JSON line; bad options are
// refused by name.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "strata/data/prepare.h"
#include "strata/error.h"
#include "strata/inference/evaluate_text.h"
#include "strata/inference/generate.h"
#include "strata/train/trainer.h"
#include "strata_command.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

constexpr int64_t kSeqLen = 12;

// A tiny GPT trained 3 steps and saved, and a text file of 200 bytes it did
// not train on: 16 windows of 12, the last 7 bytes too few for another.
struct Fixture {
  std::string dir, checkpoint, text;
};

Fixture trainedCheckpoint(const std::string& name) {
  Fixture f;
  f.dir = sharedDir(name);
  TrainConfig c = tinyConfig();
  c.checkpoint.dir = f.checkpoint = f.dir + "/ckpt";
  {
    Trainer trainer(c, singleProcessWorld());
    trainSteps(trainer, 3);
    trainer.saveCheckpoint();
  }
  f.text = f.dir + "/held-out.txt";
  std::string bytes;
  for (int i = 0; bytes.size() < 200; ++i) bytes += "the cat " + std::to_string(i * 7) + ". ";
  std::ofstream(f.text) << bytes.substr(0, 200);
  return f;
}

// The file's bytes as the byte tokenizer's ids, cut by hand: window i is
// bytes [i S, i S + S], the last S predicted from those before.
double meanCrossEntropyByHand(const Fixture& f, int64_t windows) {
  std::ifstream in(f.text);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  TrainConfig config;
  torch::nn::Sequential model = loadFullModel(f.checkpoint, &config);
  torch::NoGradGuard noGrad;
  double summed = 0;
  for (int64_t w = 0; w < windows; ++w) {
    std::vector<int64_t> ids;
    for (int64_t t = w * kSeqLen; t <= (w + 1) * kSeqLen; ++t)
      ids.push_back(static_cast<unsigned char>(bytes[static_cast<size_t>(t)]));
    torch::Tensor all = torch::tensor(ids, torch::kLong);
    torch::Tensor logits = model->forward(all.narrow(0, 0, kSeqLen).unsqueeze(0)).squeeze(1);
    torch::Tensor logProbabilities = torch::log_softmax(logits, -1);  // [S, V]
    torch::Tensor targets = all.narrow(0, 1, kSeqLen);
    summed -= logProbabilities.gather(1, targets.unsqueeze(1)).sum().item<double>();
  }
  return summed / static_cast<double>(windows * kSeqLen);
}

TEST(EvalText, LossIsTheMeanCrossEntropyOfEveryWindow) {
  Fixture f = trainedCheckpoint("eval-loss");
  EvalOptions o;
  o.checkpoint = f.checkpoint;
  o.files = {f.text};
  o.seqLen = kSeqLen;
  o.batchSize = 3;  // the last batch holds one window
  int64_t reported = 0;
  EvalResult r = evaluateText(o, [&](int64_t done, int64_t all) {
    EXPECT_EQ(all, 16);
    reported = done;
  });
  EXPECT_EQ(reported, 16);
  EXPECT_EQ(r.windows, 16);  // (200 - 1) / 12
  EXPECT_EQ(r.tokens, 16 * kSeqLen);
  EXPECT_NEAR(r.loss, meanCrossEntropyByHand(f, 16), 1e-5);
  EXPECT_NEAR(r.perplexity, std::exp(r.loss), 1e-9 * r.perplexity);

  o.maxWindows = 2;
  EvalResult first = evaluateText(o);
  EXPECT_EQ(first.windows, 2);
  EXPECT_NEAR(first.loss, meanCrossEntropyByHand(f, 2), 1e-5);

  // A prepared dataset of the same file (one document, the byte tokenizer
  // adds no end-of-text): the same windows, the same loss.
  PrepareOptions prepare;
  prepare.inputs = {f.text};
  prepare.output = f.dir + "/held-out";
  prepareData(prepare);
  EvalOptions prepared = o;
  prepared.files.clear();
  prepared.prepared = prepare.output;
  prepared.maxWindows = 0;
  EvalResult fromPrepared = evaluateText(prepared);
  EXPECT_EQ(fromPrepared.windows, r.windows);
  EXPECT_DOUBLE_EQ(fromPrepared.loss, r.loss);

  // The run's seq_len by default: tinyConfig's 16, 12 windows of 200 bytes.
  o.seqLen = 0;
  o.maxWindows = 0;
  EXPECT_EQ(evaluateText(o).seqLen, 16);
  removeSharedDir(f.dir);
}

TEST(EvalText, BadOptionsAreRefusedByName) {
  Fixture f = trainedCheckpoint("eval-refused");
  auto expectRefused = [](const EvalOptions& o, const std::string& words) {
    try {
      evaluateText(o);
      ADD_FAILURE() << "accepted: expected '" << words << "'";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  };
  EvalOptions o;
  o.checkpoint = f.checkpoint;
  expectRefused(o, "give one of --data-files (UTF-8 text) and --data-prepared");
  o.files = {f.text};
  o.prepared = f.dir + "/tokens";
  expectRefused(o, "give one of --data-files");
  o.prepared.clear();
  o.seqLen = 17;
  expectRefused(o, "--seq-len 17 is beyond the model's context of 16");
  o.seqLen = 0;
  o.batchSize = 0;
  expectRefused(o, "--batch-size must be at least 1, got 0");
  o.batchSize = 1;
  std::ofstream(f.dir + "/short.txt") << "too short";
  o.files = {f.dir + "/short.txt"};
  expectRefused(o, "the evaluation text");
  removeSharedDir(f.dir);
}

TEST(EvalCli, PrintsOneJsonLineOfTheLoss) {
  Fixture f = trainedCheckpoint("eval-cli");
  auto [status, output] =
      strata("eval --checkpoint " + f.checkpoint + " --data-files " + f.text + " --seq-len 12");
  ASSERT_EQ(status, 0) << output;
  // Progress and a summary on stderr, the JSON line alone on stdout.
  size_t json = output.find("{\"eval\"");
  ASSERT_NE(json, std::string::npos) << output;
  nlohmann::json line = nlohmann::json::parse(output.substr(json, output.find('\n', json) - json));
  EXPECT_EQ(line["eval"], f.checkpoint);
  EXPECT_EQ(line["windows"], 16);
  EXPECT_NEAR(line["loss"].get<double>(), meanCrossEntropyByHand(f, 16), 1e-5);
  auto [badStatus, badOutput] =
      strata("eval --checkpoint " + f.checkpoint + " --data-files " + f.text + " --batch-size 0");
  EXPECT_EQ(badStatus, 2) << badOutput;
  EXPECT_NE(badOutput.find("--batch-size"), std::string::npos) << badOutput;
  removeSharedDir(f.dir);
}

}  // namespace
}  // namespace strata::train::testing
