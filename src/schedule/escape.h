// Escaping for text placed inside JSON strings and XML.
#pragma once

#include <string>

namespace strata::schedule {

std::string escapeJson(const std::string& text);
std::string escapeXml(const std::string& text);

}  // namespace strata::schedule
