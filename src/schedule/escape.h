// Escaping for text placed inside XML (SVG); JSON is escaped by nlohmann.
#pragma once

#include <string>

namespace strata::schedule {

std::string escapeXml(const std::string& text);

}  // namespace strata::schedule
