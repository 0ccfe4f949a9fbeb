// A whole JSON file, parsed: what the readers of Hugging Face's JSON files
// (tokenizer.json, tokenizer_config.json) start from.
//
// Throws ConfigError naming the file: one that cannot be opened (saying
// whether it exists), cannot be read, or is not valid JSON (with the
// parser's message, which gives the byte offset). Blocks on the read.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace strata::formats {

// `what` names the file's kind in the messages ("cannot open tokenizer.json").
nlohmann::json readJsonFile(const std::string& path, const char* what);

}  // namespace strata::formats
