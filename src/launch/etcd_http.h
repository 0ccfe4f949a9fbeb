// EtcdHttp: JSON requests to etcd's v3 HTTP gateway, over libcurl, with the
// retries a cluster needs: every request goes to the endpoint that answered
// last, and on a connection failure or a 5xx answer to the next, pass after
// pass, until its deadline.
//
// Not thread-safe: one request at a time (EtcdStore holds a lock around it).
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace strata {

class EtcdHttp {
 public:
  using Clock = std::chrono::steady_clock;

  // `endpoints`: "HOST:PORT" or "http://HOST:PORT" each; throws ConfigError
  // for an empty list, another scheme (https: not supported) or a malformed
  // entry.
  explicit EtcdHttp(const std::vector<std::string>& endpoints);
  ~EtcdHttp();
  EtcdHttp(const EtcdHttp&) = delete;
  EtcdHttp& operator=(const EtcdHttp&) = delete;

  // POSTs `body` to `path` ("/v3/kv/put") and returns etcd's answer. Blocks
  // until `deadline` at most; throws PeerError when no endpoint answered by
  // then (naming them and the last error), ProtocolError when etcd refuses
  // the request (4xx, with its message) or answers with something not JSON.
  nlohmann::json post(const std::string& path, const nlohmann::json& body,
                      Clock::time_point deadline);

  // This host's address on its last connection to etcd ("" before one).
  const std::string& localAddress() const { return localAddress_; }
  std::string endpointsText() const;

 private:
  struct Answer {
    long status = 0;   // HTTP status; 0 when the request never got one
    std::string body;  // the answer, or curl's error when status is 0
  };
  Answer attempt(const std::string& url, const std::string& body,
                 std::chrono::milliseconds timeout);

  std::vector<std::string> endpoints_;  // "http://HOST:PORT"
  size_t current_ = 0;
  void* curl_ = nullptr;  // CURL*, kept for its connection cache
  std::string localAddress_;
};

}  // namespace strata
