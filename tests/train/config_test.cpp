#include <gtest/gtest.h>

#include <cmath>

#include "strata/config/config_file.h"
#include "test_util.h"

namespace strata::train {
namespace {

TEST(ConfigFile, SetsNamedOptionsAndKeepsTheRest) {
  TrainConfig config;
  applyConfigToml(
      "[model]\nlayers = 8\n[parallel]\npp = 2\nschedule = \"zb-h1\"\nzero = 2\n"
      "[train]\nlr = 1\n[data]\nfiles = [\"a.txt\", \"b.txt\"]\n",
      "run.toml", config);
  EXPECT_EQ(config.model.layers, 8);
  EXPECT_EQ(config.parallel.pp, 2);
  EXPECT_EQ(config.parallel.schedule, "zb-h1");
  EXPECT_EQ(config.parallel.zero, 2);
  EXPECT_DOUBLE_EQ(config.train.lr, 1.0);  // an integer where a float is expected
  EXPECT_EQ(config.data.files, (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_EQ(config.model.hidden, TrainConfig{}.model.hidden);
}

// tied_embeddings defaults to the architecture's: a llama file that does
// not set it gets an untied head; one that sets it keeps what it says.
TEST(ConfigFile, NamingAnArchitectureGivesItsTiedDefault) {
  TrainConfig untied;
  applyConfigToml("[model]\narchitecture = \"llama\"\nkv_heads = 2\nrope_theta = 500000\n",
                  "llama.toml", untied);
  EXPECT_FALSE(untied.model.tiedEmbeddings);
  EXPECT_EQ(untied.model.kvHeads, 2);
  EXPECT_DOUBLE_EQ(untied.model.ropeTheta, 500000.0);
  TrainConfig tied;
  applyConfigToml("[model]\ntied_embeddings = true\narchitecture = \"llama\"\n", "llama.toml",
                  tied);
  EXPECT_TRUE(tied.model.tiedEmbeddings);
  TrainConfig gpt;
  applyConfigToml("[model]\nlayers = 2\n", "gpt.toml", gpt);
  EXPECT_TRUE(gpt.model.tiedEmbeddings);
}

TEST(ConfigFile, UnknownKeysAndBadTypesAreNamed) {
  TrainConfig config;
  expectErrorNaming([&] { applyConfigToml("[model]\n\nlayer = 8\n", "run.toml", config); },
                    {"run.toml:3", "unknown key 'layer'", "[model]", "layers"});
  expectErrorNaming([&] { applyConfigToml("[modle]\nlayers = 8\n", "run.toml", config); },
                    {"run.toml:2", "unknown key 'layers'", "[modle]", "unknown table"});
  expectErrorNaming([&] { applyConfigToml("layers = 8\n", "run.toml", config); },
                    {"run.toml:1", "outside any table"});
  expectErrorNaming([&] { applyConfigToml("[model]\nlayers = 2.5\n", "run.toml", config); },
                    {"run.toml:2", "model.layers", "integer", "2.5"});
  expectErrorNaming([&] { applyConfigToml("[train]\nlr = \"fast\"\n", "run.toml", config); },
                    {"run.toml:2: 'train.lr' expects a number, got string \"fast\""});
  expectErrorNaming([&] { applyConfigToml("[parallel]\nzero = true\n", "run.toml", config); },
                    {"run.toml:2", "parallel.zero", "integer"});
}

TEST(ConfigFile, RoundTripsEveryOption) {
  TrainConfig config;
  config.model.layers = 6;
  config.model.dropout = 0.125;
  config.model.tiedEmbeddings = false;
  config.parallel.schedule = "interleaved-1f1b";
  config.train.lr = 3e-4;
  config.train.minLr = 1.0 / 3.0;
  config.train.gradClip = HUGE_VAL;  // inf: valid TOML, and a valid "never clip"
  config.model.dropout = std::nan("");
  config.data.files = {"a \"b\".txt", "c\\d\u00e9\t.txt"};
  config.parallel.stageLayers = {3, 5};
  config.checkpoint.dir = "ckpt";
  config.model.moe.experts = 8;
  config.model.moe.capacityFactor = 1.25;
  config.model.moe.normalizeTopK = false;
  config.parallel.ep = 4;
  TrainConfig back;
  applyConfigToml(configToToml(config), "written", back);
  EXPECT_EQ(configToToml(back), configToToml(config));
  EXPECT_EQ(back.train.minLr, config.train.minLr);  // exact, not approximately
  EXPECT_EQ(back.train.gradClip, HUGE_VAL);
  EXPECT_TRUE(std::isnan(back.model.dropout));
  EXPECT_EQ(back.data.files, config.data.files);
  EXPECT_EQ(back.parallel.stageLayers, config.parallel.stageLayers);
  EXPECT_FALSE(back.model.tiedEmbeddings);
  EXPECT_EQ(back.model.moe.experts, 8);
  EXPECT_EQ(back.model.moe.capacityFactor, 1.25);
  EXPECT_FALSE(back.model.moe.normalizeTopK);
  EXPECT_EQ(back.parallel.ep, 4);
}

TEST(ConfigFile, DottedKeysAndInlineTablesNameOptionsToo) {
  TrainConfig config;
  applyConfigToml(
      "model = { layers = 6, hidden = 96 }\n"
      "train.lr = 0.5\n"
      "[data]\n"
      "files = [\n  \"a.txt\",  # the first\n  'b.txt',\n]\n",
      "run.toml", config);
  EXPECT_EQ(config.model.layers, 6);
  EXPECT_EQ(config.model.hidden, 96);
  EXPECT_DOUBLE_EQ(config.train.lr, 0.5);
  EXPECT_EQ(config.data.files, (std::vector<std::string>{"a.txt", "b.txt"}));
  expectErrorNaming([&] { applyConfigToml("model = { layerz = 6 }\n", "run.toml", config); },
                    {"run.toml:1", "unknown key 'layerz' in [model]", "known keys: layers"});
}

TEST(ConfigFile, TheMoeTableNamesItsKeys) {
  TrainConfig config;
  applyConfigToml("[model.moe]\nexperts = 8\ntop_k = 1\nexpert_ffn = 96\n[parallel]\nep = 2\n",
                  "moe.toml", config);
  EXPECT_EQ(config.model.moe.experts, 8);
  EXPECT_EQ(config.model.moe.topK, 1);
  EXPECT_EQ(config.model.moe.expertFfn, 96);
  EXPECT_EQ(config.parallel.ep, 2);
  expectErrorNaming(
      [&] { applyConfigToml("[model.moe]\nexpertz = 8\n", "moe.toml", config); },
      {"moe.toml:2", "unknown key 'expertz' in [model.moe]", "known keys: experts, top_k"});
}

TEST(ConfigFile, DataFilesMustBeAnArrayOfStrings) {
  TrainConfig config;
  expectErrorNaming(
      [&] { applyConfigToml("[data]\nfiles = \"a.txt,b.txt\"\n", "run.toml", config); },
      {"run.toml:2: 'data.files' expects an array of strings, like [\"a.txt\", \"b.txt\"], got "
       "string \"a.txt,b.txt\""});
  expectErrorNaming([&] { applyConfigToml("[data]\nfiles = [\"a\", 2]\n", "run.toml", config); },
                    {"run.toml:2", "'data.files' expects an array of strings", "array [\"a\", 2]"});
  expectErrorNaming([&] { applyConfigToml("[model]\nlayers = [4]\n", "run.toml", config); },
                    {"run.toml:2", "'model.layers' expects an integer, got array [4]"});
}

TEST(ConfigFile, StageLayersAreAnArrayOfIntegers) {
  TrainConfig config;
  applyConfigToml("[parallel]\npartition = \"balanced\"\nstage_layers = [2, 4]\n", "run.toml",
                  config);
  EXPECT_EQ(config.parallel.partition, "balanced");
  EXPECT_EQ(config.parallel.stageLayers, (std::vector<int64_t>{2, 4}));
  expectErrorNaming(
      [&] { applyConfigToml("[parallel]\nstage_layers = \"2,4\"\n", "run.toml", config); },
      {"run.toml:2: 'parallel.stage_layers' expects an array of integers, like [3, 3], got "
       "string \"2,4\""});
  expectErrorNaming(
      [&] { applyConfigToml("[parallel]\nstage_layers = [2, 4.5]\n", "run.toml", config); },
      {"run.toml:2", "'parallel.stage_layers' expects an array of integers"});
}

TEST(ConfigFile, SyntaxErrorsNameTheLineAndColumn) {
  TrainConfig config;
  expectErrorNaming([&] { applyConfigToml("[model]\nlayers = 4 4\n", "run.toml", config); },
                    {"run.toml:2:12: "});
  expectErrorNaming(
      [&] { applyConfigToml("[model]\nlayers = 4\nlayers = 5\n", "run.toml", config); },
      {"run.toml:3:", "layers"});
}

}  // namespace
}  // namespace strata::train
