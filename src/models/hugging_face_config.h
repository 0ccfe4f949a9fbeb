// Reading a transformers config.json into Strata's [model] keys: the field
// accessors each family's reader uses (gpt/gpt2_hugging_face_config.cpp,
// llama/llama_hugging_face_config.cpp) and the TOML they write. Text only: nothing
// blocks; every accessor throws ConfigError naming the file and the field.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strata/util/toml.h"

namespace strata::models {

class HuggingFaceConfig {
 public:
  HuggingFaceConfig(nlohmann::json json, std::string source, std::string path = "")
      : json_(std::move(json)), source_(std::move(source)), path_(std::move(path)) {}

  // A field the model cannot do without: an integer >= 1.
  int64_t size(const std::string& field) const;
  // An integer >= 1 when the field is there and not null.
  std::optional<int64_t> optionalSize(const std::string& field) const;
  // A number, `otherwise` when the field is absent or null.
  double number(const std::string& field, double otherwise) const;
  bool flag(const std::string& field, bool otherwise) const;
  // The field's text, `otherwise` when absent or null.
  std::string text(const std::string& field, const std::string& otherwise) const;
  // Whether the field is there with a value other than null.
  bool has(const std::string& field) const;
  // The JSON object at `field` (absent or null: none), read as a config of
  // its own whose messages name the field.
  std::optional<HuggingFaceConfig> object(const std::string& field) const;
  // Throws ConfigError: the file's `setting` is one Strata's model does not
  // compute, so its weights would not give the model they were trained as.
  [[noreturn]] void refuse(const std::string& setting) const;

 private:
  [[noreturn]] void invalid(const std::string& field, const std::string& want) const;
  nlohmann::json json_;
  std::string source_;  // the file
  std::string path_;    // where json_ is in it: "" or "rope_scaling."
};

// [model] and, when given, [model.moe] and [model.rope_scaling] entries as
// TOML text.
struct ModelToml {
  std::vector<std::pair<std::string, util::TomlValue>> model, moe, ropeScaling;
  std::string text() const;
};

ModelToml gpt2ModelToml(const HuggingFaceConfig& config);
ModelToml llamaModelToml(const HuggingFaceConfig& config, bool mixtral);

}  // namespace strata::models
