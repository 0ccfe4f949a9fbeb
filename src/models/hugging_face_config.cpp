#include "hugging_face_config.h"

#include <sstream>

#include "strata/error.h"
#include "strata/models/hugging_face.h"

namespace strata::models {

bool HuggingFaceConfig::has(const std::string& field) const {
  return json_.contains(field) && !json_.at(field).is_null();
}

void HuggingFaceConfig::invalid(const std::string& field, const std::string& want) const {
  throw ConfigError("'" + source_ + "': " + path_ + field + " must be " + want + ", got " +
                    (has(field) ? json_.at(field).dump() : std::string("nothing")));
}

void HuggingFaceConfig::refuse(const std::string& setting) const {
  throw ConfigError("'" + source_ + "' describes a model with " + setting +
                    ", which Strata's model does not compute: its weights would not give the "
                    "model they were trained as");
}

std::optional<HuggingFaceConfig> HuggingFaceConfig::object(const std::string& field) const {
  if (!has(field)) return std::nullopt;
  if (!json_.at(field).is_object()) invalid(field, "an object");
  return HuggingFaceConfig(json_.at(field), source_, path_ + field + ".");
}

std::optional<int64_t> HuggingFaceConfig::optionalSize(const std::string& field) const {
  if (!has(field)) return std::nullopt;
  const nlohmann::json& value = json_.at(field);
  if (!value.is_number_integer() || value.get<int64_t>() < 1) invalid(field, "an integer >= 1");
  return value.get<int64_t>();
}

int64_t HuggingFaceConfig::size(const std::string& field) const {
  std::optional<int64_t> value = optionalSize(field);
  if (!value) invalid(field, "an integer >= 1");
  return *value;
}

double HuggingFaceConfig::number(const std::string& field, double otherwise) const {
  if (!has(field)) return otherwise;
  if (!json_.at(field).is_number()) invalid(field, "a number");
  return json_.at(field).get<double>();
}

bool HuggingFaceConfig::flag(const std::string& field, bool otherwise) const {
  if (!has(field)) return otherwise;
  if (!json_.at(field).is_boolean()) invalid(field, "true or false");
  return json_.at(field).get<bool>();
}

std::string HuggingFaceConfig::text(const std::string& field, const std::string& otherwise) const {
  if (!has(field)) return otherwise;
  if (!json_.at(field).is_string()) invalid(field, "a string");
  return json_.at(field).get<std::string>();
}

std::string ModelToml::text() const {
  std::ostringstream out;
  auto table = [&](const char* name, const auto& entries) {
    if (entries.empty()) return;
    out << "[" << name << "]\n";
    for (const auto& [key, value] : entries)
      out << key << " = " << util::tomlLiteral(value) << "\n";
  };
  table("model", model);
  table("model.moe", moe);
  table("model.rope_scaling", ropeScaling);
  return out.str();
}

std::string modelTomlOfHuggingFaceConfig(const std::string& configJson, const std::string& source) {
  nlohmann::json json = nlohmann::json::parse(configJson, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    throw ConfigError("'" + source + "' is not a JSON object (a transformers config.json)");
  HuggingFaceConfig config(std::move(json), source);
  std::string type = config.text("model_type", "");
  if (type == "gpt2") return gpt2ModelToml(config).text();
  if (type == "llama" || type == "mixtral") return llamaModelToml(config, type == "mixtral").text();
  throw ConfigError("'" + source + "' is of model_type '" + type +
                    "': Strata reads gpt2, llama and mixtral");
}

}  // namespace strata::models
