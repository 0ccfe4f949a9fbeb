#include "strata/util/json.h"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace strata {
namespace {

using Json = nlohmann::ordered_json;

TEST(Json, NonFiniteNumbersAreNull) {
  EXPECT_TRUE(jsonNumber(std::numeric_limits<double>::quiet_NaN()).is_null());
  EXPECT_TRUE(jsonNumber(std::numeric_limits<double>::infinity()).is_null());
  EXPECT_TRUE(jsonNumber(-std::numeric_limits<double>::infinity()).is_null());
  EXPECT_EQ(jsonNumber(-0.25), Json(-0.25));
}

TEST(Json, NumbersAreTheShortestTextThatReadsBack) {
  EXPECT_EQ(dumpJson(Json::array({jsonNumber(0.1), jsonNumber(1.0 / 3), jsonNumber(2.5e-8)})),
            "[0.1,0.3333333333333333,2.5e-08]");
}

TEST(Json, StringsAreEscapedAndFieldsKeepTheirOrder) {
  Json object = {{"z", "quote \" backslash \\ newline \n bell \x07"}, {"a", 1}};
  EXPECT_EQ(dumpJson(object), R"({"z":"quote \" backslash \\ newline \n bell \u0007","a":1})");
}

TEST(Json, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  EXPECT_EQ(dumpJson(Json("a\xff z")), "\"a\xef\xbf\xbd z\"");
}

}  // namespace
}  // namespace strata
