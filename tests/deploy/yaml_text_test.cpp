// YAML text of JSON documents: read back, it is the same JSON, and nothing a
// YAML 1.1 reader would take for a number, boolean or null is left plain.
#include "yaml_text.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>
#include <regex>

namespace strata {
namespace {

using nlohmann::ordered_json;

// A plain scalar is read as YAML reads it (integers, true and false are
// all that is written plain besides strings); a quoted or block one is a
// string.
ordered_json fromYaml(const YAML::Node& node) {
  if (node.IsMap()) {
    ordered_json object = ordered_json::object();
    for (const auto& item : node) object[item.first.as<std::string>()] = fromYaml(item.second);
    return object;
  }
  if (node.IsSequence()) {
    ordered_json array = ordered_json::array();
    for (const auto& item : node) array.push_back(fromYaml(item));
    return array;
  }
  if (node.IsNull()) return nullptr;
  std::string text = node.as<std::string>();
  if (node.Tag() != "?") return text;
  if (text == "true" || text == "false") return text == "true";
  if (std::regex_match(text, std::regex("-?[0-9]+"))) return std::stoll(text);
  return text;
}

const std::vector<std::string> kAwkwardStrings = {"yes",
                                                  "no",
                                                  "on",
                                                  "off",
                                                  "y",
                                                  "n",
                                                  "True",
                                                  "NULL",
                                                  "~",
                                                  "",
                                                  "8",
                                                  "-1",
                                                  "1e3",
                                                  "0x1F",
                                                  "0o17",
                                                  "1_000",
                                                  "12:30",
                                                  ".inf",
                                                  "-",
                                                  "---",
                                                  "- a",
                                                  "a: b",
                                                  "#c",
                                                  "a #b",
                                                  " lead",
                                                  "trail ",
                                                  "multi\nline\n",
                                                  "no final newline\nhere",
                                                  "two finals\n\n",
                                                  "\tstarts with a tab\n",
                                                  " indented\nblock\n",
                                                  "quote\"s",
                                                  "back\\slash",
                                                  "caf\xc3\xa9",
                                                  "--flag",
                                                  "/dev/shm",
                                                  "nvidia.com/gpu",
                                                  "@at",
                                                  "`tick",
                                                  "*star",
                                                  "&anchor",
                                                  "!tag",
                                                  "%pct",
                                                  "{x}",
                                                  "[x]",
                                                  ">",
                                                  "|",
                                                  "?",
                                                  ",",
                                                  "carriage\r\nreturn\n",
                                                  "bell\x07",
                                                  "8Gi",
                                                  "strata-0.strata:29500"};

TEST(YamlText, AwkwardStringsReadBackUnchanged) {
  ordered_json document = ordered_json::object();
  ordered_json values = ordered_json::array();
  for (const std::string& text : kAwkwardStrings) {
    values.push_back(text);
    document["key " + text] = text;
  }
  document["list"] = values;
  std::string yaml = yamlDocument(document);
  EXPECT_EQ(fromYaml(YAML::Load(yaml)), document) << yaml;
}

TEST(YamlText, WordsYamlOneOneReadsAsBooleansOrNullAreQuoted) {
  for (const char* word : {"yes", "No", "ON", "off", "y", "N", "true", "False", "null", "~"})
    EXPECT_EQ(yamlDocument({{"v", word}}), "v: \"" + std::string(word) + "\"\n") << word;
}

TEST(YamlText, NamesPathsAndFlagsStayPlain) {
  EXPECT_EQ(yamlDocument({{"name", "gpt-g0"},
                          {"path", "/etc/strata/train.toml"},
                          {"flag", "--nproc-per-node"},
                          {"key", "nvidia.com/gpu"}}),
            "name: gpt-g0\npath: /etc/strata/train.toml\nflag: --nproc-per-node\n"
            "key: nvidia.com/gpu\n");
}

TEST(YamlText, ValuesKeepTheirTypes) {
  ordered_json document = {{"count", 3},
                           {"negative", -2},
                           {"yes", true},
                           {"no", false},
                           {"nothing", nullptr},
                           {"text", "3"},
                           {"empty map", ordered_json::object()},
                           {"empty list", ordered_json::array()}};
  EXPECT_EQ(fromYaml(YAML::Load(yamlDocument(document))), document);
}

TEST(YamlText, AConfigFileBecomesALiteralBlock) {
  std::string yaml = yamlDocument({{"train.toml", "[model]\nlayers = 4\n"}});
  EXPECT_EQ(yaml.rfind("train.toml: |\n  [model]\n  layers = 4\n", 0), 0u) << yaml;
}

TEST(YamlText, StreamOpensEveryDocument) {
  std::string stream = yamlStream({{{"kind", "Secret"}}, {{"kind", "Job"}}});
  EXPECT_EQ(stream, "---\nkind: Secret\n---\nkind: Job\n");
  std::vector<YAML::Node> documents = YAML::LoadAll(stream);
  ASSERT_EQ(documents.size(), 2u);
  EXPECT_EQ(documents[1]["kind"].as<std::string>(), "Job");
}

}  // namespace
}  // namespace strata
