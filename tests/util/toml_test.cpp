#include "strata/util/toml.h"

#include <gtest/gtest.h>

#include <cmath>

#include "strata/error.h"

namespace strata::util {
namespace {

std::string errorOf(const std::string& text) {
  try {
    readToml(text, "f.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Toml, EntriesComeInDocumentOrderWithTheirLines) {
  std::vector<TomlEntry> entries = readToml(
      "# a comment\n"
      "zeta = 1\n"
      "alpha = 'x'\n"
      "[model]\n"
      "  layers = 12   # trailing comment\n"
      "dropout = -0.5\n"
      "big = 1_000_000\n"
      "on = true\n",
      "t.toml");
  ASSERT_EQ(entries.size(), 6u);
  EXPECT_EQ(entries[0].name(), "zeta");  // toml++ itself would sort alpha first
  EXPECT_EQ(entries[1].name(), "alpha");
  EXPECT_EQ(entries[2].table, "model");
  EXPECT_EQ(entries[2].key, "layers");
  EXPECT_EQ(entries[2].where, "t.toml:5");
  EXPECT_EQ(std::get<int64_t>(entries[2].value), 12);
  EXPECT_DOUBLE_EQ(std::get<double>(entries[3].value), -0.5);
  EXPECT_EQ(std::get<int64_t>(entries[4].value), 1000000);
  EXPECT_TRUE(std::get<bool>(entries[5].value));
}

TEST(Toml, TablesDottedKeysAndInlineTablesFlattenAlike) {
  for (const char* text : {"[model]\nlayers = 8\n", "model.layers = 8\n",
                           "model = { layers = 8 }\n", "[outer]\nmodel = { layers = 8 }\n"}) {
    std::vector<TomlEntry> entries = readToml(text, "t.toml");
    ASSERT_EQ(entries.size(), 1u) << text;
    EXPECT_EQ(entries[0].key, "layers") << text;
    EXPECT_EQ(std::get<int64_t>(entries[0].value), 8) << text;
  }
  EXPECT_EQ(readToml("[outer]\nmodel = { layers = 8 }\n", "t.toml")[0].table, "outer.model");
}

TEST(Toml, ArraysHoldScalarsOfAnyType) {
  std::vector<TomlEntry> entries =
      readToml("files = [\"a.txt\", 'b.txt',\n  \"c\"]\nmixed = [1, 2.5, true]\nnone = []\n", "t");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(std::get<TomlArray>(entries[0].value),
            (TomlArray{std::string("a.txt"), std::string("b.txt"), std::string("c")}));
  EXPECT_EQ(std::get<TomlArray>(entries[1].value), (TomlArray{int64_t{1}, 2.5, true}));
  EXPECT_TRUE(std::get<TomlArray>(entries[2].value).empty());
  EXPECT_EQ(tomlLiteral(entries[1].value), "[1, 2.5, true]");
}

TEST(Toml, EveryStringEscapeReads) {
  std::vector<TomlEntry> entries = readToml(
      "basic = \"q\\\" b\\\\ t\\t n\\n r\\r f\\f e\\u00e9 smile\\U0001F600\"\n"
      "literal = 'C:\\raw \"as is\"'\n"
      "multi = \"\"\"\none\\\n  two\"\"\"\n",
      "t.toml");
  EXPECT_EQ(std::get<std::string>(entries[0].value),
            "q\" b\\ t\t n\n r\r f\f e\xC3\xA9 smile\xF0\x9F\x98\x80");
  EXPECT_EQ(std::get<std::string>(entries[1].value), "C:\\raw \"as is\"");
  EXPECT_EQ(std::get<std::string>(entries[2].value), "onetwo");
}

TEST(Toml, WrittenValuesReadBackExactly) {
  TomlPairs pairs = {
      {"text", std::string("quote \" slash \\ newline \n tab \t bell \x07 \xC3\xA9")},
      {"third", 1.0 / 3.0},
      {"whole", 3.0},
      {"tiny", 1e-300},
      {"nan", std::nan("")},
      {"inf", HUGE_VAL},
      {"minus_inf", -HUGE_VAL},
      {"count", int64_t{-42}},
      {"flag", false},
      {"files", TomlArray{std::string("a \"b\".txt"), std::string("c")}},
  };
  std::string text = tomlTable("", {{"top", int64_t{1}}}) + tomlTable("t", pairs);
  std::vector<TomlEntry> entries = readToml(text, "written");
  ASSERT_EQ(entries.size(), pairs.size() + 1) << text;
  for (size_t i = 0; i < pairs.size(); ++i) {
    const TomlEntry& entry = entries[i + 1];
    EXPECT_EQ(entry.name(), "t." + pairs[i].first);
    EXPECT_EQ(tomlLiteral(entry.value), tomlLiteral(pairs[i].second)) << text;
  }
  EXPECT_EQ(std::get<double>(entries[2].value), 1.0 / 3.0);
  EXPECT_EQ(std::get<double>(entries[3].value), 3.0);
  EXPECT_TRUE(std::isnan(std::get<double>(entries[5].value)));
  EXPECT_EQ(std::get<double>(entries[7].value), -HUGE_VAL);
  EXPECT_EQ(std::get<std::string>(entries[1].value), std::get<std::string>(pairs[0].second));
}

TEST(Toml, LiteralsAreShortAndTyped) {
  EXPECT_EQ(tomlLiteral(0.1), "0.1");
  EXPECT_EQ(tomlLiteral(3.0), "3.0");  // stays a float
  EXPECT_EQ(tomlLiteral(std::nan("")), "nan");
  EXPECT_EQ(tomlLiteral(-HUGE_VAL), "-inf");
  EXPECT_EQ(tomlLiteral(std::string("a\"b")), "\"a\\\"b\"");
  EXPECT_EQ(describeToml(std::string("fast")), "string \"fast\"");
  EXPECT_EQ(describeToml(2.5), "float 2.5");
  EXPECT_EQ(describeToml(TomlArray{int64_t{1}}), "array [1]");
  EXPECT_EQ(tomlTable("t", {{"a", true}}), "[t]\na = true\n");
}

TEST(Toml, SyntaxErrorsNameFileLineAndColumn) {
  EXPECT_EQ(errorOf("[a]\nx = 1\nx = 2\n"),
            "f.toml:3:5: Error while parsing key-value pair: cannot redefine existing integer 'x'");
  EXPECT_EQ(errorOf("x = 1\ny 1\n").substr(0, 11), "f.toml:2:3:");
  EXPECT_NE(errorOf("[a]\n[a]\n").find("f.toml:2:"), std::string::npos);
  EXPECT_NE(errorOf("x = \"open\n").find("f.toml:1:"), std::string::npos);
  EXPECT_NE(errorOf("x = 99999999999999999999\n").find("not representable in 64 bits"),
            std::string::npos);
  EXPECT_NE(errorOf("x = 1e999\n").find("'1e999'"), std::string::npos);
}

TEST(Toml, ValuesNoStrataFileUsesAreNamedErrors) {
  EXPECT_EQ(errorOf("\n[a]\nday = 1979-05-27\n"),
            "f.toml:3: 'a.day' holds a date or time; Strata's files take strings, numbers, "
            "booleans and arrays of them");
  EXPECT_NE(errorOf("grid = [[1], [2]]\n").find("f.toml:1: 'grid' holds an array of arrays"),
            std::string::npos);
  EXPECT_NE(errorOf("[[shard]]\nfile = 'a'\n").find("'shard' holds an array of arrays, tables"),
            std::string::npos);
}

}  // namespace
}  // namespace strata::util
