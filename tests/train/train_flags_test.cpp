// `strata train`'s flags: one per option of configOptions(), read over the
// --config file whatever their order on the command line.
#include "strata/config/train_flags.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <regex>
#include <sstream>

#include "strata/util/command_line.h"
#include "test_util.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

// `strata train ARGS`, parsed as the binary parses it.
TrainConfig parseTrain(std::vector<std::string> args) {
  CLI::App strata("", "strata");
  TrainFlags flags(*strata.add_subcommand("train"));
  args.insert(args.begin(), "train");
  parseCommandLine(strata, args);
  return flags.config();
}

std::string writeConfig(const std::string& text) {
  fs::path path = fs::temp_directory_path() / ("strata_cfg_" + std::to_string(getpid()) + ".toml");
  std::ofstream(path) << text;
  return path.string();
}

TEST(TrainFlags, FlagsOverrideTheFile) {
  std::string path = writeConfig("[parallel]\npp = 4\ntp = 2\n[train]\nlr = 0.01\nsteps = 9\n");
  // The file after the flags still loses to them: the order does not matter.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--config", path, "--tp", "1", "--lr=3e-4", "--no-shuffle"},
        {"--tp", "1", "--lr=3e-4", "--no-shuffle", "--config", path}}) {
    TrainConfig config = parseTrain(args);
    EXPECT_EQ(config.parallel.pp, 4);  // from the file
    EXPECT_EQ(config.parallel.tp, 1);  // flag beats file
    EXPECT_DOUBLE_EQ(config.train.lr, 3e-4);
    EXPECT_EQ(config.train.steps, 9);
    EXPECT_FALSE(config.data.shuffle);
  }
  fs::remove(path);
}

// What --init-from's config.json may fill: the options neither the file nor
// a flag set.
TEST(TrainFlags, OptionsSetAreTheFilesAndTheFlagsGiven) {
  std::string path = writeConfig("[model]\nhidden = 64\n[model.moe]\nexperts = 4\n");
  CLI::App strata("", "strata");
  TrainFlags flags(*strata.add_subcommand("train"));
  parseCommandLine(strata,
                   {"train", "--config", path, "--layers", "2", "--rope-scaling", "llama3"});
  EXPECT_EQ(flags.optionsSet(), (std::set<std::string>{"model.hidden", "model.moe.experts",
                                                       "model.layers", "model.rope_scaling.type"}));
  fs::remove(path);
}

TEST(TrainFlags, ArchitectureFlagGivesItsTiedDefault) {
  EXPECT_FALSE(parseTrain({"--architecture", "llama"}).model.tiedEmbeddings);
  EXPECT_TRUE(parseTrain({"--architecture", "llama", "--tied-embeddings"}).model.tiedEmbeddings);
  EXPECT_TRUE(parseTrain({"--layers", "2"}).model.tiedEmbeddings);
  EXPECT_EQ(parseTrain({"--architecture", "llama", "--kv-heads", "2"}).model.kvHeads, 2);
}

TEST(TrainFlags, DataFilesFlagTakesACommaSeparatedList) {
  std::string path = writeConfig("[data]\nfiles = [\"from-file.txt\"]\n");
  EXPECT_EQ(parseTrain({"--config", path}).data.files, (std::vector<std::string>{"from-file.txt"}));
  EXPECT_EQ(parseTrain({"--config", path, "--data-files", "a.txt,,b.txt"}).data.files,
            (std::vector<std::string>{"a.txt", "b.txt"}));
  fs::remove(path);
}

// A value unlike the default of `option`'s field, as flag text, and a check
// that `config` holds it.
struct NewValue {
  std::vector<std::string> args;
  std::function<bool(TrainConfig&)> holds;
};

NewValue newValueFor(const ConfigOption& option) {
  std::string flag = std::string("--") + option.flag;
  TrainConfig defaults;
  if (auto* integer = std::get_if<int64_t& (*)(TrainConfig&)>(&option.field)) {
    int64_t value = (*integer)(defaults) + 3;
    return {{flag, std::to_string(value)}, [=](TrainConfig& c) { return (*integer)(c) == value; }};
  }
  if (auto* real = std::get_if<double& (*)(TrainConfig&)>(&option.field)) {
    double value = (*real)(defaults) + 0.25;
    std::ostringstream text;
    text << std::setprecision(17) << value;
    return {{flag, text.str()}, [=](TrainConfig& c) { return (*real)(c) == value; }};
  }
  if (auto* boolean = std::get_if<bool& (*)(TrainConfig&)>(&option.field)) {
    bool value = !(*boolean)(defaults);
    return {{flag + "=" + (value ? "true" : "false")},
            [=](TrainConfig& c) { return (*boolean)(c) == value; }};
  }
  if (auto* list = std::get_if<std::vector<std::string>& (*)(TrainConfig&)>(&option.field)) {
    std::vector<std::string> value{"x.txt", "y.txt"};
    return {{flag, "x.txt,y.txt"}, [=](TrainConfig& c) { return (*list)(c) == value; }};
  }
  if (auto* integers = std::get_if<std::vector<int64_t>& (*)(TrainConfig&)>(&option.field)) {
    std::vector<int64_t> value{2, 5};
    return {{flag, "2,5"}, [=](TrainConfig& c) { return (*integers)(c) == value; }};
  }
  auto text = std::get<std::string& (*)(TrainConfig&)>(option.field);
  return {{flag, "other-value"}, [=](TrainConfig& c) { return text(c) == "other-value"; }};
}

// A new entry in configOptions() gets its flag without any code here.
TEST(TrainFlags, EveryOptionHasAFlagThatSetsIt) {
  for (const ConfigOption& option : configOptions()) {
    NewValue value = newValueFor(option);
    TrainConfig config = parseTrain(value.args);
    EXPECT_TRUE(value.holds(config)) << option.flag;
  }
}

TEST(TrainFlags, BadFlagsAreNamed) {
  expectErrorNaming<FlagError>(
      [] {
        parseTrain({"--ppp", "2"});
      },
      {"strata train: unknown flag '--ppp'"});
  expectErrorNaming<FlagError>(
      [] {
        parseTrain({"--pp", "two"});
      },
      {"--pp expects an integer, got 'two'"});
  expectErrorNaming<FlagError>(
      [] {
        parseTrain({"--lr", "3e-4x"});
      },
      {"--lr expects a number, got '3e-4x'"});
  expectErrorNaming<FlagError>(
      [] {
        parseTrain({"--stage-layers", "3,x"});
      },
      {"--stage-layers expects comma-separated integers, like 3,3, got '3,x'"});
  expectErrorNaming<FlagError>([] { parseTrain({"extra"}); }, {"'extra'"});
  expectErrorNaming(
      [] {
        parseTrain({"--config", "/nonexistent/x.toml"});
      },
      {"/nonexistent/x.toml"});
}

TEST(TrainFlags, HelpListsEveryOptionWithItsDefault) {
  CLI::App strata("", "strata");
  CLI::App* command = strata.add_subcommand("train");
  TrainFlags flags(*command);
  std::string help = command->help();
  for (const ConfigOption& option : configOptions()) {
    std::regex flag("\\s--" + std::string(option.flag) + "[ ,]");
    EXPECT_TRUE(std::regex_search(help, flag)) << option.flag << " not in\n" << help;
    EXPECT_NE(help.find("[" + std::string(option.table) + "] " + option.key), std::string::npos)
        << option.key;
  }
  EXPECT_NE(help.find("--config"), std::string::npos);
  EXPECT_NE(help.find("(default: 1f1b)"), std::string::npos);
  EXPECT_NE(help.find("(default: 0.001)"), std::string::npos);
}

}  // namespace
}  // namespace strata::train
