#include "etcd_store.h"

#include <openssl/evp.h>

#include <iostream>

#include "etcd_http.h"
#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kFirstPoll{20}, kLongestPoll{200};
constexpr int kLeaseAdoptTries = 5;

// The gateway carries keys and values as base64 (proto3's JSON for bytes).
std::string encode(const std::string& bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(bytes.data()),
                          static_cast<int>(bytes.size()));
  out.resize(n);
  return out;
}

std::string decode(const std::string& text) {
  std::string out(3 * (text.size() / 4) + 3, '\0');
  int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                          reinterpret_cast<const unsigned char*>(text.data()),
                          static_cast<int>(text.size()));
  if (n < 0 || text.size() % 4 != 0)
    throw ProtocolError("etcd sent a value that is not base64: '" + text.substr(0, 80) + "'");
  size_t padding = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i) ++padding;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

std::string textOf(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }
std::vector<uint8_t> bytesOf(const std::string& text) { return {text.begin(), text.end()}; }

// proto3 JSON: int64 fields are strings, and fields at their default are left out.
int64_t int64Field(const json& object, const char* name) {
  if (!object.contains(name)) return 0;
  const json& field = object.at(name);
  return field.is_string() ? std::stoll(field.get<std::string>()) : field.get<int64_t>();
}

json absentCompare(const std::string& key) {
  return {
      {"key", encode(key)}, {"target", "CREATE"}, {"result", "EQUAL"}, {"create_revision", "0"}};
}

// The first key-value of a range answer (or a txn's range response).
std::optional<json> firstKv(const json& range) {
  if (!range.contains("kvs") || range.at("kvs").empty()) return std::nullopt;
  return range.at("kvs").at(0);
}

std::optional<json> failedRange(const json& txn) {
  if (!txn.contains("responses") || txn.at("responses").empty()) return std::nullopt;
  return firstKv(txn.at("responses").at(0).value("response_range", json::object()));
}

}  // namespace

EtcdStore::EtcdStore(const std::vector<std::string>& endpoints, const std::string& runId,
                     std::chrono::milliseconds timeout)
    : c10d::Store(timeout),
      endpoints_(endpoints),
      runId_(runId),
      prefix_("strata/" + runId + "/keys/"),
      http_(std::make_unique<EtcdHttp>(endpoints)) {
  adoptLease();
  keepAlive_ = std::thread([this] { keepLeaseAlive(); });
}

EtcdStore::~EtcdStore() {
  {
    std::lock_guard<std::mutex> lock(stopMutex_);
    stopping_ = true;
  }
  stopSignal_.notify_all();
  keepAlive_.join();
}

c10::intrusive_ptr<c10d::Store> EtcdStore::clone() {
  return c10::make_intrusive<EtcdStore>(endpoints_, runId_, timeout_);
}

json EtcdStore::request(const std::string& path, const json& body) {
  std::lock_guard<std::mutex> lock(httpMutex_);
  if (leaseLost_)
    throw PeerError("the job's keys in etcd at " + http_->endpointsText() +
                    " expired: its lease lapsed (no launcher reached etcd for " +
                    describeDuration(kLeaseTtl) + ")");
  return http_->post(path, body, Clock::now() + timeout_);
}

// The first launcher grants the job's lease and records it under the run's
// own lease key (attached to the lease, so the record goes when the lease
// does); the others find the record and adopt that lease.
void EtcdStore::adoptLease() {
  std::string leaseKey = prefix_.substr(0, prefix_.size() - std::string("keys/").size()) + "lease";
  for (int tries = 0; tries < kLeaseAdoptTries; ++tries) {
    std::string mine = std::to_string(
        int64Field(request("/v3/lease/grant", {{"TTL", std::to_string(kLeaseTtl.count())}}), "ID"));
    json put = {{"key", encode(leaseKey)}, {"value", encode(mine)}, {"lease", mine}};
    json txn =
        request("/v3/kv/txn", {{"compare", {absentCompare(leaseKey)}},
                               {"success", {{{"request_put", put}}}},
                               {"failure", {{{"request_range", {{"key", encode(leaseKey)}}}}}}});
    if (txn.value("succeeded", false)) {
      lease_ = mine;
      return;
    }
    request("/v3/lease/revoke", {{"ID", mine}});
    std::optional<json> record = failedRange(txn);
    if (!record) continue;  // the record expired in between: try again
    lease_ = decode(record->value("value", ""));
    json alive = request("/v3/lease/keepalive", {{"ID", lease_}});
    if (int64Field(alive.value("result", json::object()), "TTL") > 0) return;
  }
  throw PeerError("could not grant or adopt the job's lease in etcd at " + http_->endpointsText() +
                  " in " + std::to_string(kLeaseAdoptTries) + " tries");
}

void EtcdStore::keepLeaseAlive() {
  const auto interval = kLeaseTtl / 6;
  bool reported = false;
  std::unique_lock<std::mutex> stop(stopMutex_);
  while (!stopSignal_.wait_for(stop, interval, [this] { return stopping_; })) {
    stop.unlock();
    try {
      std::lock_guard<std::mutex> lock(httpMutex_);
      json alive = http_->post("/v3/lease/keepalive", {{"ID", lease_}}, Clock::now() + interval);
      if (int64Field(alive.value("result", json::object()), "TTL") <= 0) leaseLost_ = true;
      reported = false;
    } catch (const Error& e) {
      if (!reported)
        std::cerr << "strata launch: could not renew the job's etcd lease (retrying): " << e.what()
                  << std::endl;
      reported = true;
    }
    stop.lock();
  }
}

std::optional<EtcdStore::Found> EtcdStore::find(const std::string& key) {
  std::optional<json> kv = firstKv(request("/v3/kv/range", {{"key", encode(prefix_ + key)}}));
  if (!kv) return std::nullopt;
  return Found{decode(kv->value("value", "")), int64Field(*kv, "mod_revision")};
}

void EtcdStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  request("/v3/kv/put",
          {{"key", encode(prefix_ + key)}, {"value", encode(textOf(value))}, {"lease", lease_}});
}

std::vector<uint8_t> EtcdStore::compareSet(const std::string& key,
                                           const std::vector<uint8_t>& expected,
                                           const std::vector<uint8_t>& desired) {
  std::string full = prefix_ + key;
  json compare = expected.empty() ? absentCompare(full)
                                  : json{{"key", encode(full)},
                                         {"target", "VALUE"},
                                         {"result", "EQUAL"},
                                         {"value", encode(textOf(expected))}};
  json put = {{"key", encode(full)}, {"value", encode(textOf(desired))}, {"lease", lease_}};
  json txn = request("/v3/kv/txn", {{"compare", {compare}},
                                    {"success", {{{"request_put", put}}}},
                                    {"failure", {{{"request_range", {{"key", encode(full)}}}}}}});
  if (txn.value("succeeded", false)) return desired;
  std::optional<json> found = failedRange(txn);
  return found ? bytesOf(decode(found->value("value", ""))) : expected;
}

std::vector<uint8_t> EtcdStore::get(const std::string& key) {
  wait({key}, timeout_);
  std::optional<Found> found = find(key);
  if (!found) throw ProtocolError("etcd key '" + key + "' vanished between wait and get");
  return bytesOf(found->value);
}

// A transaction on the key's revision: it writes only if nobody wrote in
// between, else it reads again and retries, until the store's timeout.
int64_t EtcdStore::add(const std::string& key, int64_t value) {
  std::string full = prefix_ + key;
  Clock::time_point deadline = Clock::now() + timeout_;
  for (;;) {
    std::optional<Found> found = find(key);
    int64_t next = (found ? std::stoll(found->value) : 0) + value;
    json compare = found ? json{{"key", encode(full)},
                                {"target", "MOD"},
                                {"result", "EQUAL"},
                                {"mod_revision", std::to_string(found->modRevision)}}
                         : absentCompare(full);
    json put = {{"key", encode(full)}, {"value", encode(std::to_string(next))}, {"lease", lease_}};
    json txn =
        request("/v3/kv/txn", {{"compare", {compare}}, {"success", {{{"request_put", put}}}}});
    if (txn.value("succeeded", false)) return next;
    if (Clock::now() >= deadline)
      throw TimeoutError("etcd: could not add to key '" + key + "' within " +
                         describeDuration(timeout_) + " (others kept writing it)");
  }
}

bool EtcdStore::deleteKey(const std::string& key) {
  return int64Field(request("/v3/kv/deleterange", {{"key", encode(prefix_ + key)}}), "deleted") > 0;
}

bool EtcdStore::check(const std::vector<std::string>& keys) {
  for (const std::string& key : keys) {
    if (!find(key)) return false;
  }
  return true;
}

int64_t EtcdStore::getNumKeys() {
  std::string end = prefix_;
  end.back() = static_cast<char>(end.back() + 1);  // the range [prefix_, end): every key under it
  return int64Field(
      request("/v3/kv/range",
              {{"key", encode(prefix_)}, {"range_end", encode(end)}, {"count_only", true}}),
      "count");
}

void EtcdStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void EtcdStore::wait(const std::vector<std::string>& keys,
                     const std::chrono::milliseconds& timeout) {
  Clock::time_point deadline = Clock::now() + timeout;
  std::chrono::milliseconds pause = kFirstPoll;
  for (const std::string& key : keys) {
    while (!find(key)) {
      if (Clock::now() >= deadline)
        throw TimeoutError("etcd: key '" + key + "' did not appear within " +
                           describeDuration(timeout));
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, kLongestPoll);
    }
  }
}

std::string EtcdStore::localAddress() const { return http_->localAddress(); }

std::string EtcdStore::endpointsText() const { return http_->endpointsText(); }

}  // namespace strata
