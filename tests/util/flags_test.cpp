#include "strata/util/flags.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

struct Options {
  long long count = 4;
  double rate = 0.5;
  std::string name = "x";
  bool verbose = false;
};

FlagSet makeFlags(Options& o) {
  FlagSet flags("strata demo", "A demo command.");
  flags.addInt("count", &o.count, "how many", 1);
  flags.addDouble("rate", &o.rate, "how fast");
  flags.addString("name", &o.name, "what");
  flags.addBool("verbose", &o.verbose, "talk more");
  return flags;
}

TEST(Flags, ParsesBothFormsAndKeepsPositionalAndRest) {
  Options o;
  FlagSet flags = makeFlags(o);
  ParsedArgs parsed =
      flags.parse({"--count", "7", "--rate=0.25", "file", "--verbose", "--", "cmd", "--count"});
  EXPECT_EQ(o.count, 7);
  EXPECT_DOUBLE_EQ(o.rate, 0.25);
  EXPECT_TRUE(o.verbose);
  EXPECT_EQ(parsed.positional, std::vector<std::string>{"file"});
  EXPECT_EQ(parsed.rest, (std::vector<std::string>{"cmd", "--count"}));
  EXPECT_TRUE(flags.wasSet("count"));
  EXPECT_FALSE(flags.wasSet("name"));
}

TEST(Flags, NegatedSwitch) {
  Options o;
  o.verbose = true;
  FlagSet flags = makeFlags(o);
  flags.parse({"--no-verbose"});
  EXPECT_FALSE(o.verbose);
}

TEST(Flags, ErrorsNameTheFlag) {
  Options o;
  FlagSet flags = makeFlags(o);
  auto message = [&](std::vector<std::string> args) {
    try {
      flags.parse(args);
    } catch (const FlagError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({"--bogus"}).find("unknown flag '--bogus'"), std::string::npos);
  EXPECT_NE(message({"--count", "x7"}).find("--count expects an integer, got 'x7'"),
            std::string::npos);
  EXPECT_NE(message({"--count", "0"}).find("--count must be at least 1"), std::string::npos);
  EXPECT_NE(message({"--rate"}).find("--rate needs a value"), std::string::npos);
  EXPECT_NE(message({"-x"}).find("unknown flag '-x'"), std::string::npos);
  EXPECT_NE(message({"--verbose=maybe"}).find("expects true or false"), std::string::npos);
  EXPECT_NE(message({"--count=99999999999999999999"})
                .find("--count expects an integer, got '99999999999999999999'"),
            std::string::npos);
  for (const char* rate : {"1.5x", "nan", "1e999", ""}) {
    EXPECT_NE(
        message({"--rate", rate}).find("--rate expects a number, got '" + std::string(rate) + "'"),
        std::string::npos)
        << rate;
  }
}

TEST(Flags, HelpListsEveryFlagWithDefault) {
  Options o;
  FlagSet flags = makeFlags(o);
  EXPECT_TRUE(flags.parse({"--help"}).helpRequested);
  std::string help = flags.help();
  EXPECT_NE(help.find("--count N"), std::string::npos);
  EXPECT_NE(help.find("(default: 4)"), std::string::npos);
  EXPECT_NE(help.find("--verbose"), std::string::npos);
}

}  // namespace
}  // namespace strata
