// JSON documents as YAML text, for people and for kubectl.
//
// Every string that a YAML 1.1 reader (kubectl's) could take for something
// else — a number, a boolean such as "yes" or "on", null, a flag such as
// "-1" — is double-quoted; a multi-line text that survives a literal block
// unchanged is written as one (`|`), so a config in a ConfigMap stays
// readable. Reading the YAML back gives the same JSON. Nothing throws or
// blocks.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata {

// One YAML document, without the "---" line.
std::string yamlDocument(const nlohmann::ordered_json& document);

// The documents, each opened by "---".
std::string yamlStream(const std::vector<nlohmann::ordered_json>& documents);

}  // namespace strata
