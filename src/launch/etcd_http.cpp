#include "etcd_http.h"

#include <curl/curl.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include "strata/error.h"
#include "strata/runtime/timeouts.h"
#include "strata/util/endpoint.h"

namespace strata {
namespace {

// A request's own limits: a dead endpoint costs at most kConnectTimeout
// before the next is tried, and a pass over all of them is followed by a
// pause, so an etcd that is down is not hammered.
constexpr std::chrono::milliseconds kConnectTimeout{1000};
constexpr std::chrono::milliseconds kRequestTimeout{10000};
constexpr std::chrono::milliseconds kPassPause{200};

std::string normalized(std::string endpoint) {
  const std::string scheme = "http://";
  if (endpoint.rfind(scheme, 0) == 0) endpoint = endpoint.substr(scheme.size());
  while (!endpoint.empty() && endpoint.back() == '/') endpoint.pop_back();
  if (endpoint.find("://") != std::string::npos)
    throw ConfigError("etcd endpoint '" + endpoint +
                      "': only plain http:// is supported (etcd's client URL without TLS)");
  if (!parseEndpoint(endpoint))
    throw ConfigError("etcd endpoint '" + endpoint + "' is not HOST:PORT");
  return scheme + endpoint;
}

size_t appendTo(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

std::chrono::milliseconds until(EtcdHttp::Clock::time_point deadline) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - EtcdHttp::Clock::now());
}

}  // namespace

EtcdHttp::EtcdHttp(const std::vector<std::string>& endpoints) {
  if (endpoints.empty()) throw ConfigError("no etcd endpoint given");
  for (const std::string& e : endpoints) endpoints_.push_back(normalized(e));
  curl_ = curl_easy_init();
  if (!curl_) throw Error("libcurl could not start a session");
}

EtcdHttp::~EtcdHttp() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

std::string EtcdHttp::endpointsText() const {
  std::string text;
  for (const std::string& e : endpoints_) text += (text.empty() ? "" : ",") + e.substr(7);
  return text;
}

EtcdHttp::Answer EtcdHttp::attempt(const std::string& url, const std::string& body,
                                   std::chrono::milliseconds timeout) {
  CURL* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);
  Answer answer;
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
  curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, appendTo);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &answer.body);
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(timeout, kConnectTimeout).count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(std::min(timeout, kRequestTimeout).count()));
  CURLcode result = curl_easy_perform(curl);
  curl_slist_free_all(headers);
  if (result != CURLE_OK) {
    answer.body = curl_easy_strerror(result);
    return answer;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &answer.status);
  char* local = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_LOCAL_IP, &local) == CURLE_OK && local)
    localAddress_ = local;
  return answer;
}

nlohmann::json EtcdHttp::post(const std::string& path, const nlohmann::json& body,
                              Clock::time_point deadline) {
  std::string text = body.dump();
  std::string lastError = "no attempt made";
  Clock::time_point start = Clock::now();
  do {
    for (size_t tried = 0; tried < endpoints_.size(); ++tried) {
      std::chrono::milliseconds left = std::max(until(deadline), std::chrono::milliseconds(1));
      const std::string& endpoint = endpoints_[current_];
      Answer answer = attempt(endpoint + path, text, left);
      if (answer.status >= 200 && answer.status < 300) {
        nlohmann::json reply = nlohmann::json::parse(answer.body, nullptr, false);
        if (reply.is_discarded())
          throw ProtocolError("etcd at " + endpoint + " answered " + path +
                              " with non-JSON: " + answer.body.substr(0, 200));
        return reply;
      }
      if (answer.status >= 400 && answer.status < 500) {
        nlohmann::json reply = nlohmann::json::parse(answer.body, nullptr, false);
        std::string message = reply.is_object() && reply.contains("message")
                                  ? reply["message"].get<std::string>()
                                  : answer.body.substr(0, 200);
        throw ProtocolError("etcd at " + endpoint + " refused " + path + " (HTTP " +
                            std::to_string(answer.status) + "): " + message);
      }
      lastError = endpoint + ": " +
                  (answer.status
                       ? "HTTP " + std::to_string(answer.status) + " " + answer.body.substr(0, 200)
                       : answer.body);
      current_ = (current_ + 1) % endpoints_.size();
      if (Clock::now() >= deadline) break;
    }
    std::this_thread::sleep_for(
        std::min(kPassPause, std::max(until(deadline), std::chrono::milliseconds(0))));
  } while (Clock::now() < deadline);
  auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  throw PeerError("cannot reach etcd at " + endpointsText() + " (tried for " +
                  describeDuration(waited) + "; last error " + lastError +
                  "): is etcd running, and is --rdzv-endpoint its client URL?");
}

}  // namespace strata
