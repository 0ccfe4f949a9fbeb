// parseInteger, parseInt and parseReal: the whole text or nothing, in range or
// nothing, and the same answer whatever the C locale says.
#include "strata/util/parse_number.h"

#include <gtest/gtest.h>

#include <clocale>
#include <cstdlib>
#include <string>

namespace strata {
namespace {

TEST(ParseNumber, IntegersWithSigns) {
  EXPECT_EQ(parseInteger("42"), 42);
  EXPECT_EQ(parseInteger("0"), 0);
  EXPECT_EQ(parseInteger("-3"), -3);
  EXPECT_EQ(parseInteger("+7"), 7);  // TOML and strtoll accept a '+'
  EXPECT_EQ(parseInteger("007"), 7);
}

TEST(ParseNumber, IntegerMustBeTheWholeText) {
  for (const char* text : {"", " 1", "1 ", "1x", "x1", "1.0", "1e3", "0x10", "1_000", "+", "-",
                           "+-5", "++5", "--5", "- 5"}) {
    EXPECT_EQ(parseInteger(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(ParseNumber, IntegerOutOfRangeIsAnErrorNotAClamp) {
  EXPECT_EQ(parseInteger("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(parseInteger("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(parseInteger("9223372036854775808"), std::nullopt);
  EXPECT_EQ(parseInteger("-9223372036854775809"), std::nullopt);
  EXPECT_EQ(parseInteger("99999999999999999999999"), std::nullopt);
}

TEST(ParseNumber, IntStopsAtIntsRange) {
  EXPECT_EQ(parseInt("2147483647"), 2147483647);
  EXPECT_EQ(parseInt("-2147483648"), -2147483647 - 1);
  EXPECT_EQ(parseInt("2147483648"), std::nullopt);
  EXPECT_EQ(parseInt("-2147483649"), std::nullopt);
  EXPECT_EQ(parseInt("12abc"), std::nullopt);
}

TEST(ParseNumber, HexadecimalWithoutPrefix) {
  EXPECT_EQ(parseInteger("ff", 16), 255);
  EXPECT_EQ(parseInteger("7F", 16), 127);
  EXPECT_EQ(parseInteger("00", 16), 0);
  EXPECT_EQ(parseInteger("fg", 16), std::nullopt);
  EXPECT_EQ(parseInteger("0xff", 16), std::nullopt);
  EXPECT_EQ(parseInteger("", 16), std::nullopt);
}

TEST(ParseNumber, RealsInTheFormsUsersWrite) {
  EXPECT_EQ(parseReal("3"), 3.0);
  EXPECT_EQ(parseReal("-2"), -2.0);
  EXPECT_EQ(parseReal("0.5"), 0.5);
  EXPECT_EQ(parseReal(".5"), 0.5);
  EXPECT_EQ(parseReal("5."), 5.0);
  EXPECT_EQ(parseReal("1e-3"), 1e-3);
  EXPECT_EQ(parseReal("2.5E+4"), 2.5e4);
  EXPECT_EQ(parseReal("+1e-3"), 1e-3);
  EXPECT_EQ(parseReal("6e-5"), 6e-5);
  EXPECT_EQ(parseReal("0.1"), 0.1);  // correctly rounded, as strtod is
}

TEST(ParseNumber, RealMustBeTheWholeText) {
  for (const char* text : {"", "abc", "1.5x", " 1", "1 ", "1,5", "1e", "1e+", ".", "-", "+", "+-1",
                           "--1", "1..2", "1e3.5", "0x1p3", "1f"}) {
    EXPECT_EQ(parseReal(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(ParseNumber, RealRefusesNanAndInfinity) {
  for (const char* text : {"nan", "NaN", "-nan", "inf", "-inf", "+inf", "infinity", "Infinity"}) {
    EXPECT_EQ(parseReal(text), std::nullopt) << "'" << text << "'";
  }
}

TEST(ParseNumber, RealOutOfRangeIsAnErrorNotInfinity) {
  EXPECT_EQ(parseReal("1e308"), 1e308);
  EXPECT_EQ(parseReal("1e309"), std::nullopt);
  EXPECT_EQ(parseReal("-1e999"), std::nullopt);
}

// Sets LC_NUMERIC for one test and puts the old one back.
class NumericLocale {
 public:
  explicit NumericLocale(const char* name) : old_(std::setlocale(LC_NUMERIC, nullptr)) {
    active_ = std::setlocale(LC_NUMERIC, name) != nullptr;
  }
  ~NumericLocale() { std::setlocale(LC_NUMERIC, old_.c_str()); }
  bool active() const { return active_; }

 private:
  std::string old_;
  bool active_ = false;
};

TEST(ParseNumber, CommaDecimalLocaleChangesNothing) {
  NumericLocale german("de_DE.UTF-8");
  if (!german.active()) GTEST_SKIP() << "locale de_DE.UTF-8 is not installed";
  // The locale really does use a comma: strtod now stops at the '.'.
  ASSERT_EQ(std::strtod("0.5", nullptr), 0.0);
  EXPECT_EQ(parseReal("0.5"), 0.5);
  EXPECT_EQ(parseReal("1e-3"), 1e-3);
  EXPECT_EQ(parseReal("0,5"), std::nullopt);
  EXPECT_EQ(parseInteger("1000"), 1000);
}

}  // namespace
}  // namespace strata
