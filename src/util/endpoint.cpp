#include "strata/util/endpoint.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "strata/util/parse_number.h"

namespace strata {

std::optional<std::pair<std::string, int64_t>> parseEndpoint(const std::string& text) {
  size_t colon = text.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  std::optional<int64_t> port = parseInteger(text.substr(colon + 1));
  if (host.empty() || !port || *port < 0 || *port > kMaxPort) return std::nullopt;
  return std::make_pair(host, *port);
}

std::vector<std::string> splitEndpoints(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    item.erase(std::remove_if(item.begin(), item.end(),
                              [](unsigned char c) { return std::isspace(c) != 0; }),
               item.end());
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::optional<std::vector<std::string>> etcdEndpointsIn(const std::string& text) {
  std::vector<std::string> endpoints;
  for (std::string item : splitEndpoints(text)) {
    if (item.rfind("http://", 0) == 0) item = item.substr(7);
    if (item.find("://") != std::string::npos || !parseEndpoint(item)) return std::nullopt;
    endpoints.push_back(item);
  }
  if (endpoints.empty()) return std::nullopt;
  return endpoints;
}

}  // namespace strata
