// strata generate: the model reassembled from a pp 2 x tp 2, an ep 2 or a
// ZeRO-3 checkpoint is the model that was trained, sampling keeps to its
// promises (top-k, top-p, greedy at temperature 0), and bad flags are refused by
// name.
#include "strata/inference/generate.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "child_process.h"
#include "strata/checkpoint/checkpoint.h"
#include "strata/error.h"
#include "strata/train/data_source.h"
#include "strata/train/trainer.h"
#include "strata_command.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

TrainConfig checkpointedConfig(const std::string& dir, const std::string& schedule) {
  TrainConfig c = tinyConfig();
  c.parallel.pp = 2;
  c.parallel.tp = 2;
  c.parallel.schedule = schedule;
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

// Trains `c` on `ranks` processes, saves, and checks that the model
// reassembled from the checkpoint has the trained model's validation loss.
void expectReassembledModelIsTheTrainedOne(const std::string& dir, const TrainConfig& c,
                                           int ranks) {
  strata::testing::runInProcesses(
      ranks,
      [&](const strata::testing::RankContext& ctx) {
        TrainConfig mine = c;
        mine.train.evalBatches = 1;
        Trainer trainer(mine, World::init());
        trainSteps(trainer, 3);
        trainer.saveCheckpoint();
        double loss = trainer.evaluate(1);
        if (ctx.rank == 0) writeValues(dir, "val", 0, {loss});
      },
      sharedDirOptions(dir));
  TrainConfig config;
  torch::nn::Sequential model = loadFullModel(dir + "/ckpt", &config);
  EXPECT_EQ(config.parallel.pp, c.parallel.pp);
  EXPECT_NEAR(validationLoss(model, config), readValues(dir, "val", 0)[0], 1e-4);
}

// pp 2 x tp 2 under `schedule`.
void expectReassembledModelIsTheTrainedOne(const std::string& dir, const std::string& schedule) {
  expectReassembledModelIsTheTrainedOne(dir, checkpointedConfig(dir, schedule), 4);
}

TEST(Generate, ReassembledModelIsTheTrainedOne) {
  std::string dir = sharedDir("generate");
  expectReassembledModelIsTheTrainedOne(dir, "1f1b");

  GenerateOptions greedy;
  greedy.checkpoint = dir + "/ckpt";
  greedy.prompt = "the ";
  greedy.tokens = 24;
  std::string text = generateText(greedy);
  EXPECT_EQ(text.size(), greedy.prompt.size() + 24);
  EXPECT_EQ(text.rfind("the ", 0), 0u);
  EXPECT_EQ(generateText(greedy), text);  // greedy is deterministic
  // The KV cache changes no text, also once the 28 tokens outgrow the
  // context of 16 and the window moves.
  GenerateOptions uncached = greedy;
  uncached.kvCache = false;
  EXPECT_EQ(generateText(uncached), text);

  GenerateOptions sampled = greedy;
  sampled.sampling.temperature = 0.8;
  sampled.sampling.topK = 5;
  sampled.sampling.topP = 0.9;
  sampled.seed = 3;
  EXPECT_EQ(generateText(sampled), generateText(sampled));  // seeded
  GenerateOptions sampledUncached = sampled;
  sampledUncached.kvCache = false;
  EXPECT_EQ(generateText(sampledUncached), generateText(sampled));

  // Streamed: the prompt first, then piece by piece, the pieces the text.
  std::vector<std::string> pieces;
  std::string streamed = generateText(sampled, [&](const std::string& p) { pieces.push_back(p); });
  ASSERT_GT(pieces.size(), 2u);
  EXPECT_EQ(pieces.front(), "the ");
  EXPECT_EQ(std::accumulate(pieces.begin(), pieces.end(), std::string()), streamed);
  EXPECT_EQ(streamed, generateText(sampled));
  EXPECT_EQ(generateText(sampled).size(), text.size());
  removeSharedDir(dir);
}

// In a V rank 0 trained the first and the last stage, rank 1 the middle.
TEST(Generate, ReassembledFromAZbVCheckpoint) {
  std::string dir = sharedDir("generate_zbv");
  expectReassembledModelIsTheTrainedOne(dir, "zb-v");
  removeSharedDir(dir);
}

// Rank 0 of ep 2 saved experts 0 and 1 of each MoE layer, rank 1 the others.
TEST(Generate, ReassembledFromAnExpertParallelCheckpoint) {
  std::string dir = sharedDir("generate_ep");
  TrainConfig c = tinyMoeConfig();
  c.parallel.dp = 2;
  c.parallel.ep = 2;
  c.checkpoint.dir = dir + "/ckpt";
  expectReassembledModelIsTheTrainedOne(dir, c, 2);
  removeSharedDir(dir);
}

// Each ZeRO-3 replica saved its flat chunk of every layer's parameters.
TEST(Generate, ReassembledFromAZeroThreeCheckpoint) {
  std::string dir = sharedDir("generate_zero3");
  TrainConfig c = tinyConfig();
  c.parallel.dp = 2;
  c.parallel.zero = 3;
  c.checkpoint.dir = dir + "/ckpt";
  expectReassembledModelIsTheTrainedOne(dir, c, 2);
  removeSharedDir(dir);
}

// The export of a checkpoint, sampled as Hugging Face weights, writes what
// the checkpoint writes: the same model from config.json, the same values.
TEST(Generate, FromHuggingFaceWeightsAsFromTheirCheckpoint) {
  std::string dir = sharedDir("generate_weights");
  std::string weights = trainAndExportTo(dir, tinyLlamaConfig(2));
  GenerateOptions fromCheckpoint;
  fromCheckpoint.checkpoint = dir + "/ckpt";
  fromCheckpoint.prompt = "the ";
  fromCheckpoint.tokens = 24;
  GenerateOptions fromWeights = fromCheckpoint;
  fromWeights.checkpoint.clear();
  fromWeights.weights = dir + "/hf";
  fromWeights.tokenizer = "byte";
  EXPECT_EQ(generateText(fromWeights), generateText(fromCheckpoint));
  fromCheckpoint.sampling.temperature = fromWeights.sampling.temperature = 0.8;
  fromCheckpoint.seed = fromWeights.seed = 5;
  EXPECT_EQ(generateText(fromWeights), generateText(fromCheckpoint));
  // The byte tokenizer has no file to copy beside the weights; none given:
  // refused by name.
  fromWeights.tokenizer.clear();
  try {
    generateText(fromWeights);
    ADD_FAILURE() << "sampled without a tokenizer";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "has no tokenizer beside it (tokenizer.json, tokenizer.model, or vocab.json and "
                  "merges.txt): give --tokenizer"),
              std::string::npos)
        << e.what();
  }
  // Without config.json nothing says what model the weights are.
  std::filesystem::remove(dir + "/hf/config.json");
  fromWeights.tokenizer = "byte";
  try {
    generateText(fromWeights);
    ADD_FAILURE() << "sampled without a config.json";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("config.json beside them to say what model they are"),
              std::string::npos)
        << e.what();
  }
  removeSharedDir(dir);
}

// Export copies the run's tokenizer (here a SentencePiece model trained for
// the test) beside the weights, where sampling them finds it.
TEST(Generate, ExportCarriesTheRunsTokenizer) {
  std::string dir = sharedDir("generate_tokenizer");
  if (!strata::testing::inRankProcess()) {
    std::ofstream corpus(dir + "/corpus.txt");
    const std::vector<std::string> words = {"the", "old", "dog", "ran", "to",    "a",  "house",
                                            "and", "cat", "sat", "by",  "river", "in", "light"};
    uint32_t state = 7;
    for (int line = 0; line < 400; ++line) {
      for (int word = 0; word < 8; ++word) {
        state = state * 1664525u + 1013904223u;
        corpus << words[(state >> 16) % words.size()] << (word == 7 ? "\n" : " ");
      }
    }
    corpus.close();
    auto [status, output] = strata("data tokenizer --train --vocab-size 40 --input " + dir +
                                   "/corpus.txt --output " + dir + "/tok");
    ASSERT_EQ(status, 0) << output;
  }
  TrainConfig config = tinyLlamaConfig(2);
  config.data.tokenizer = dir + "/tok.model";
  trainAndExportTo(dir, config);
  EXPECT_TRUE(std::filesystem::exists(dir + "/hf/tokenizer.model"));
  GenerateOptions fromCheckpoint;
  fromCheckpoint.checkpoint = dir + "/ckpt";
  fromCheckpoint.prompt = "the old dog";
  fromCheckpoint.tokens = 12;
  GenerateOptions fromWeights = fromCheckpoint;
  fromWeights.checkpoint.clear();
  fromWeights.weights = dir + "/hf/model.safetensors";
  EXPECT_EQ(generateText(fromWeights), generateText(fromCheckpoint));
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

// Distinct logits in a shuffled order, so "the k likeliest" is not "the first k".
at::Tensor knownLogits() {
  return torch::tensor({0.3f, 2.0f, -1.0f, 1.5f, 0.9f, 2.2f, -0.4f, 1.1f});
}

// The indices of the k largest values, by sorting: independent of topk().
std::set<int64_t> likeliest(const at::Tensor& logits, int64_t k) {
  std::vector<int64_t> order(static_cast<size_t>(logits.size(0)));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return logits[a].item<float>() > logits[b].item<float>();
  });
  return std::set<int64_t>(order.begin(), order.begin() + k);
}

std::set<int64_t> drawn(const at::Tensor& logits, double temperature, int64_t topK, int draws,
                        double topP = 1) {
  at::Generator generator = at::detail::createCPUGenerator(7);
  std::set<int64_t> seen;
  for (int i = 0; i < draws; ++i) {
    seen.insert(train::sampleNextToken(logits, {temperature, topK, topP}, generator));
  }
  return seen;
}

TEST(Sampling, TopKOnlyEverPicksAmongTheKLikeliest) {
  at::Tensor logits = knownLogits();
  for (int64_t k : {1, 3, 5}) {
    for (double temperature : {0.5, 1.0, 20.0}) {
      std::set<int64_t> seen = drawn(logits, temperature, k, 2000);
      std::set<int64_t> allowed = likeliest(logits, k);
      for (int64_t token : seen) {
        EXPECT_TRUE(allowed.count(token)) << "token " << token << " is outside the top " << k
                                          << " at temperature " << temperature;
      }
      // At a high temperature the k are near-uniform: each shows up in 2000 draws.
      if (temperature == 20.0) {
        EXPECT_EQ(seen, allowed) << "k " << k;
      }
    }
  }
}

TEST(Sampling, TopKCountsTiesAtTheKthValueOnce) {
  // The 2nd-likeliest value is shared by three tokens: top-2 may use only one of them.
  at::Tensor logits = torch::tensor({1.0f, 3.0f, 2.0f, 2.0f, 2.0f, 0.0f});
  std::set<int64_t> seen = drawn(logits, 1.0, 2, 2000);
  EXPECT_LE(seen.size(), 2u);
  EXPECT_TRUE(seen.count(1));
}

// Probabilities 0.5, 0.3, 0.15 and 0.05 at temperature 1: top-p keeps the
// likeliest tokens until they reach p, and top-k cuts (and renormalises)
// before it.
TEST(Sampling, TopPKeepsTheFewestLikeliestThatReachP) {
  at::Tensor logits = torch::tensor({0.15f, 0.05f, 0.5f, 0.3f}).log();
  auto expectDrawn = [&](int64_t k, double p, std::set<int64_t> expected) {
    EXPECT_EQ(drawn(logits, 1.0, k, 2000, p), expected) << "top-k " << k << ", top-p " << p;
  };
  expectDrawn(0, 1.0, {0, 1, 2, 3});
  expectDrawn(0, 0.97, {0, 1, 2, 3});
  expectDrawn(0, 0.9, {0, 2, 3});
  expectDrawn(0, 0.79, {2, 3});
  expectDrawn(0, 0.45, {2});
  expectDrawn(2, 0.9, {2, 3});  // of 0.625 and 0.375, both are needed
  expectDrawn(3, 0.5, {2});     // 0.5 / 0.95 alone reaches 0.5
}

// A character's first bytes wait for the rest; stray or invalid bytes do not.
TEST(Streaming, IncompleteCharactersAtTheEndAreHeldBack) {
  EXPECT_EQ(settledLength("plain"), 5u);
  EXPECT_EQ(settledLength("a\xE2\x80"), 1u);       // 2 of the 3 bytes of U+2019
  EXPECT_EQ(settledLength("a\xE2\x80\x99"), 4u);   // all 3
  EXPECT_EQ(settledLength("a\xF0\x9F"), 1u);       // 2 of 4
  EXPECT_EQ(settledLength("ab\xC3"), 2u);          // 1 of 2
  EXPECT_EQ(settledLength("ab\xEF\xBF\xBD"), 2u);  // U+FFFD: a character not yet decoded
  EXPECT_EQ(settledLength("a\x80"), 2u);           // a stray continuation byte is text
  EXPECT_EQ(settledLength("\x80\x80\x80\x80"), 4u);
  EXPECT_EQ(settledLength(""), 0u);
}

TEST(Sampling, TemperatureZeroIsTheArgmax) {
  at::Generator generator = at::detail::createCPUGenerator(11);
  for (int trial = 0; trial < 20; ++trial) {
    at::Tensor logits = torch::randn({257}, generator);
    std::vector<float> values(logits.data_ptr<float>(), logits.data_ptr<float>() + 257);
    int64_t argmax = std::max_element(values.begin(), values.end()) - values.begin();
    for (int64_t k : {0, 1, 5}) {
      EXPECT_EQ(train::sampleNextToken(logits, {0.0, k, 0.5}, generator), argmax);
    }
  }
}

TEST(Sampling, BadOptionsNameTheFlag) {
  at::Generator generator = at::detail::createCPUGenerator(0);
  struct Case {
    double temperature;
    int64_t topK;
    double topP;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {-0.5, 0, 1, "--temperature must be a finite number >= 0 (0 is greedy), got -0.5"},
           {std::nan(""), 0, 1, "--temperature must be a finite number >= 0"},
           {INFINITY, 0, 1, "--temperature must be a finite number >= 0"},
           {1.0, -2, 1, "--top-k must be at least 1 (or unset: all tokens), got -2"},
           {1.0, 0, 0, "--top-p must be a probability in (0, 1] (1: no cut), got 0"},
           {1.0, 0, 1.5, "--top-p must be a probability in (0, 1] (1: no cut), got 1.5"},
           {1.0, 0, std::nan(""), "--top-p must be a probability in (0, 1]"},
       }) {
    try {
      train::sampleNextToken(knownLogits(), {c.temperature, c.topK, c.topP}, generator);
      ADD_FAILURE() << "accepted " << c.message;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

// Flags are checked before the checkpoint is read: every case names a
// checkpoint that does not exist, so only the flag's own error can appear.
TEST(GenerateCli, BadFlagsAreClearErrors) {
  const std::string missing = "/nonexistent/strata-generate-test";
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  for (const Case& c : std::vector<Case>{
           {{"--checkpoint", missing, "--top-k", "0"}, "--top-k must be at least 1, got 0"},
           {{"--checkpoint", missing, "--top-k", "-3"}, "--top-k must be at least 1, got -3"},
           {{"--checkpoint", missing, "--top-k", "many"}, "--top-k expects an integer, got 'many'"},
           {{"--checkpoint", missing, "--top-p", "1.5"},
            "--top-p must be a probability in (0, 1] (1: no cut), got 1.5"},
           {{"--checkpoint", missing, "--temperature", "-0.5"},
            "--temperature must be a finite number >= 0 (0 is greedy), got -0.5"},
           // The flag parser refuses nan itself: no flag takes one.
           {{"--checkpoint", missing, "--temperature", "nan"},
            "--temperature expects a number, got 'nan'"},
           {{"--checkpoint", missing, "--temperature", "warm"},
            "--temperature expects a number, got 'warm'"},
           {{"--checkpoint", missing, "--tokens", "-1"}, "--tokens must be at least 0, got -1"},
           {{"--checkpoint", missing, "--seed"}, "--seed needs a value"},
           {{"--checkpoint", missing, "--frobnicate", "1"}, "unknown flag '--frobnicate'"},
           {{"--prompt", "the "}, "give one of --checkpoint (a training checkpoint) and --weights"},
           {{"--checkpoint", missing, "--weights", missing}, "give one of --checkpoint"},
           {{"--checkpoint", missing, "--tokenizer", "byte"}, "--tokenizer is for --weights"},
           {{"--weights", missing},
            "Hugging Face weights '/nonexistent/strata-generate-test' do not exist"},
       }) {
    std::vector<std::string> argv = {STRATA_BINARY, "generate"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    std::string output;
    // The binary only parses and exits; 30 s covers loading LibTorch on a loaded machine.
    std::optional<ExitStatus> status =
        strata::testing::runToEnd(argv, strata::testing::after(std::chrono::seconds(30)), &output);
    ASSERT_TRUE(status) << output;
    EXPECT_EQ(status->code, 2) << output;
    EXPECT_NE(output.find(c.message), std::string::npos) << output;
  }
}

}  // namespace
}  // namespace strata::train::testing
