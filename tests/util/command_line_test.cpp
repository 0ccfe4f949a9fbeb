// The command line of every `strata` command: values read through
// parse_number.h, errors that name the command, the flag and the text, and
// words CLI11 could not place reported in Strata's words.
#include "strata/util/command_line.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "strata/util/cli_flags.h"

namespace strata {
namespace {

struct Options {
  int64_t count = 4;
  double rate = 0.5;
  std::string name = "x";
  bool verbose = false;
  std::optional<int64_t> size;
};

// A program `strata` with two commands: `demo`, with one flag of each kind,
// and `other`, with none.
class Demo {
 public:
  Demo() {
    CLI::App* command = program.add_subcommand("demo", "a demo command");
    addIntFlag(*command, "--count,--count_alias", &options.count, "how many", 1, 100);
    addRealFlag(*command, "--rate", &options.rate, "how fast");
    addTextFlag(*command, "--name", &options.name, "what");
    addSwitch(*command, "verbose", &options.verbose, "talk more");
    addOptionalIntFlag(*command, "--size", &options.size, "how big", "the preset's", 1, 10);
    subcommands.push_back({command, [this] {
                             ++runs;
                             return 7;
                           }});
    subcommands.push_back({program.add_subcommand("other", "another command"), [] { return 0; }});
  }

  void parse(std::vector<std::string> args) {
    args.insert(args.begin(), "demo");
    parseCommandLine(program, args);
  }

  std::string error(const std::vector<std::string>& args) {
    try {
      parse(args);
    } catch (const FlagError& e) {
      return e.what();
    }
    return "no error";
  }

  CLI::App program{"A demo program.", "strata"};
  Options options;
  std::vector<Subcommand> subcommands;
  int runs = 0;
};

struct Outcome {
  int code;
  std::string out, err;
};

Outcome run(Demo& demo, const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = runCommandLine(demo.program, demo.subcommands, args, out, err);
  return {code, out.str(), err.str()};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CommandLine, ReadsEveryKindOfFlagAndTheLastValueWins) {
  Demo demo;
  demo.parse({"--count", "7", "--rate=0.25", "--verbose", "--name", "y", "--count=9"});
  EXPECT_EQ(demo.options.count, 9);
  EXPECT_DOUBLE_EQ(demo.options.rate, 0.25);
  EXPECT_TRUE(demo.options.verbose);
  EXPECT_EQ(demo.options.name, "y");
}

TEST(CommandLine, AnOptionalFlagIsUnsetUntilGiven) {
  Demo unset;
  unset.parse({"--count", "7"});
  EXPECT_FALSE(unset.options.size.has_value());
  Demo given;
  given.parse({"--size", "3", "--size=4"});
  EXPECT_EQ(given.options.size, 4);
  EXPECT_TRUE(contains(given.error({"--size", "0"}), "--size must be at least 1, got 0"));
  EXPECT_TRUE(contains(given.error({"--size", "x"}), "--size expects an integer, got 'x'"));
}

TEST(CommandLine, AnAliasSetsTheSameFlag) {
  Demo demo;
  demo.parse({"--count_alias", "5"});
  EXPECT_EQ(demo.options.count, 5);
}

TEST(CommandLine, SwitchesTurnOffByNegationOrValue) {
  for (const std::vector<std::string>& off : {std::vector<std::string>{"--no-verbose"},
                                              {"--verbose=false"},
                                              {"--verbose", "--no-verbose"},
                                              {"--verbose=0"},
                                              {"--no-verbose=yes"}}) {
    Demo demo;
    demo.options.verbose = true;
    demo.parse(off);
    EXPECT_FALSE(demo.options.verbose) << off.back();
  }
  Demo demo;
  demo.parse({"--no-verbose", "--verbose"});
  EXPECT_TRUE(demo.options.verbose);
}

TEST(CommandLine, BadValuesNameTheCommandTheFlagAndTheText) {
  Demo demo;
  EXPECT_EQ(demo.error({"--count", "x7"}),
            "strata demo: --count expects an integer, got 'x7' (see 'strata demo --help')");
  EXPECT_TRUE(contains(demo.error({"--count", "0"}), "--count must be at least 1, got 0"));
  EXPECT_TRUE(contains(demo.error({"--count", "101"}), "--count must be at most 100, got 101"));
  EXPECT_TRUE(contains(demo.error({"--count=99999999999999999999"}),
                       "--count expects an integer, got '99999999999999999999'"));
  EXPECT_TRUE(contains(demo.error({"--verbose=maybe"}), "--verbose expects true or false"));
  EXPECT_TRUE(contains(demo.error({"--rate"}), "strata demo: --rate"));
  for (const char* rate : {"1.5x", "nan", "1e999", ""}) {
    EXPECT_TRUE(contains(demo.error({"--rate", rate}),
                         "--rate expects a number, got '" + std::string(rate) + "'"))
        << rate;
  }
}

TEST(CommandLine, WordsThatFitNowhereAreNamed) {
  Demo demo;
  EXPECT_EQ(demo.error({"--bogus", "1"}),
            "strata demo: unknown flag '--bogus' (see 'strata demo --help')");
  EXPECT_TRUE(contains(demo.error({"--bogus=1"}), "unknown flag '--bogus'"));
  EXPECT_TRUE(contains(demo.error({"-x"}), "unknown flag '-x'"));
  EXPECT_TRUE(contains(demo.error({"extra"}), "strata demo: unexpected argument 'extra'"));
  EXPECT_TRUE(contains(demo.error({"--", "extra"}), "strata demo: unexpected argument 'extra'"));
  EXPECT_TRUE(contains(demo.error({"other"}), "strata demo: unexpected argument 'other'"));
  Demo top;
  try {
    parseCommandLine(top.program, {"frobnicate"});
    ADD_FAILURE() << "no error";
  } catch (const FlagError& e) {
    EXPECT_TRUE(contains(e.what(), "strata: unknown command 'frobnicate'")) << e.what();
  }
}

TEST(CommandLine, AFlagWithoutItsValueSaysSo) {
  Demo demo;
  EXPECT_EQ(demo.error({"--count"}),
            "strata demo: --count needs a value (see 'strata demo --help')");
  EXPECT_EQ(demo.error({"--name"}), "strata demo: --name needs a value (see 'strata demo --help')");
}

TEST(CommandLine, HelpListsEveryFlagWithItsDefault) {
  Demo demo;
  EXPECT_THROW(demo.parse({"--help"}), CLI::CallForHelp);
  std::string help = demo.program.help();  // the help of the command parsed
  EXPECT_TRUE(contains(help, "strata demo")) << help;
  EXPECT_TRUE(contains(help, "--count,--count_alias N")) << help;
  EXPECT_TRUE(contains(help, "how many (default: 4)")) << help;
  EXPECT_TRUE(contains(help, "--rate X")) << help;
  EXPECT_TRUE(contains(help, "--verbose,--no-verbose")) << help;
  EXPECT_TRUE(contains(help, "talk more (default: false)")) << help;
  EXPECT_TRUE(contains(help, "how big (default: the preset's)")) << help;
}

TEST(CommandLine, RunsTheCommandNamedAndReturnsItsExitCode) {
  Demo demo;
  Outcome outcome = run(demo, {"demo", "--count", "3"});
  EXPECT_EQ(outcome.code, 7);
  EXPECT_EQ(demo.runs, 1);
  EXPECT_EQ(demo.options.count, 3);
}

TEST(CommandLine, HelpAndVersionPrintAndSucceed) {
  Demo demo;
  demo.program.set_version_flag("--version", "demo 1.0");
  Outcome version = run(demo, {"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out, "demo 1.0\n");
  Demo helped;
  Outcome help = run(helped, {"demo", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_TRUE(contains(help.out, "--count")) << help.out;
  EXPECT_EQ(helped.runs, 0);
}

TEST(CommandLine, BadCommandLinesExitTwoAndNameTheProblem) {
  Demo demo;
  Outcome flag = run(demo, {"demo", "--count", "many"});
  EXPECT_EQ(flag.code, 2);
  EXPECT_TRUE(contains(flag.err, "--count expects an integer, got 'many'")) << flag.err;
  EXPECT_EQ(demo.runs, 0);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"frobnicate"}, {}}) {
    Demo commandless;
    Outcome outcome = run(commandless, args);
    EXPECT_EQ(outcome.code, 2);
    EXPECT_TRUE(contains(outcome.err, "\n  demo ")) << "the commands are listed:\n" << outcome.err;
  }
}

TEST(CommandLine, ErrorsOfTheRunAreNamedByTheirCommand) {
  Demo demo;
  demo.subcommands[0].run = []() -> int { throw ConfigError("bad setting"); };
  Outcome config = run(demo, {"demo"});
  EXPECT_EQ(config.code, 2);
  EXPECT_EQ(config.err, "strata demo: bad setting\n");
  Demo failing;
  failing.subcommands[0].run = []() -> int { throw std::runtime_error("disk full"); };
  Outcome failure = run(failing, {"demo"});
  EXPECT_EQ(failure.code, 1);
  EXPECT_EQ(failure.err, "strata demo: disk full\n");
}

}  // namespace
}  // namespace strata
