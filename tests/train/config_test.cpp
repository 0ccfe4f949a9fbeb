#include <gtest/gtest.h>

#include "strata/train/config/config_file.h"
#include "strata/train/config/toml.h"
#include "test_util.h"

namespace strata::train {
namespace {

TEST(Toml, ParsesTheSupportedSubset) {
  std::vector<TomlEntry> entries = parseToml(
      "# a comment\n"
      "top = 1\n"
      "[model]\n"
      "  layers = 12   # trailing comment\n"
      "name = \"a \\\"quoted\\\" # not a comment\\n\"\n"
      "path = 'C:\\raw'\n"
      "lr = 3e-4\n"
      "half = -0.5\n"
      "big = 1_000_000\n"
      "on = true\n"
      "off = false\n",
      "t.toml");
  ASSERT_EQ(entries.size(), 9u);
  EXPECT_EQ(entries[0].table, "");
  EXPECT_EQ(std::get<int64_t>(entries[1].value), 12);
  EXPECT_EQ(entries[1].table, "model");
  EXPECT_EQ(entries[1].line, 4);
  EXPECT_EQ(std::get<std::string>(entries[2].value), "a \"quoted\" # not a comment\n");
  EXPECT_EQ(std::get<std::string>(entries[3].value), "C:\\raw");
  EXPECT_DOUBLE_EQ(std::get<double>(entries[4].value), 3e-4);
  EXPECT_DOUBLE_EQ(std::get<double>(entries[5].value), -0.5);
  EXPECT_EQ(std::get<int64_t>(entries[6].value), 1000000);
  EXPECT_TRUE(std::get<bool>(entries[7].value));
  EXPECT_FALSE(std::get<bool>(entries[8].value));
}

TEST(Toml, NumbersTakeASignButNoTrailingText) {
  std::vector<TomlEntry> entries = parseToml("a = +5\nb = -7\nc = +2.5e-3\n", "t.toml");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(std::get<int64_t>(entries[0].value), 5);
  EXPECT_EQ(std::get<int64_t>(entries[1].value), -7);
  EXPECT_DOUBLE_EQ(std::get<double>(entries[2].value), 2.5e-3);
}

TEST(Toml, ErrorsNameFileAndLine) {
  expectErrorNaming([] { parseToml("[a]\nx = \"open\n", "f.toml"); }, {"f.toml:2", "unterminated"});
  expectErrorNaming([] { parseToml("[a]\nx = 1\nx = 2\n", "f.toml"); }, {"f.toml:3", "a.x"});
  expectErrorNaming([] { parseToml("[a]\n[a]\n", "f.toml"); }, {"f.toml:2", "[a]"});
  expectErrorNaming([] { parseToml("x = [1, 2]\n", "f.toml"); }, {"f.toml:1", "arrays"});
  expectErrorNaming([] { parseToml("x = yes\n", "f.toml"); }, {"f.toml:1", "'yes'"});
  expectErrorNaming([] { parseToml("x = 1 2\n", "f.toml"); }, {"f.toml:1", "after the value"});
  expectErrorNaming([] { parseToml("x 1\n", "f.toml"); }, {"f.toml:1", "'='"});
  expectErrorNaming([] { parseToml("[a\n", "f.toml"); }, {"f.toml:1", "']'"});
  expectErrorNaming([] { parseToml("x = 1.\n", "f.toml"); }, {"f.toml:1", "'1.'"});
  expectErrorNaming([] { parseToml("x = 99999999999999999999\n", "f.toml"); },
                    {"f.toml:1", "'99999999999999999999'"});
  expectErrorNaming([] { parseToml("x = 1e999\n", "f.toml"); }, {"f.toml:1", "'1e999'"});
  expectErrorNaming([] { parseToml("x = 1.5x\n", "f.toml"); }, {"f.toml:1", "'1.5x'"});
}

TEST(ConfigFile, SetsNamedOptionsAndKeepsTheRest) {
  TrainConfig config;
  applyConfigToml(
      "[model]\nlayers = 8\n[parallel]\npp = 2\nschedule = \"zb-h1\"\nzero = 2\n"
      "[train]\nlr = 1\n[data]\nfiles = \"a.txt,b.txt\"\n",
      "run.toml", config);
  EXPECT_EQ(config.model.layers, 8);
  EXPECT_EQ(config.parallel.pp, 2);
  EXPECT_EQ(config.parallel.schedule, "zb-h1");
  EXPECT_EQ(config.parallel.zero, 2);
  EXPECT_DOUBLE_EQ(config.train.lr, 1.0);  // an integer where a float is expected
  EXPECT_EQ(config.dataFiles(), (std::vector<std::string>{"a.txt", "b.txt"}));
  EXPECT_EQ(config.model.hidden, TrainConfig{}.model.hidden);
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
                    {"run.toml:2", "train.lr", "\"fast\""});
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
  config.data.files = "a \"b\".txt";
  config.checkpoint.dir = "ckpt";
  TrainConfig back;
  applyConfigToml(configToToml(config), "written", back);
  EXPECT_EQ(configToToml(back), configToToml(config));
  EXPECT_EQ(back.train.minLr, config.train.minLr);  // exact, not approximately
  EXPECT_EQ(back.data.files, config.data.files);
  EXPECT_FALSE(back.model.tiedEmbeddings);
}

}  // namespace
}  // namespace strata::train
