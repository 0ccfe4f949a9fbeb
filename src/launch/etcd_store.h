// EtcdStore: a c10d::Store whose keys live in an etcd cluster, so the
// launchers of a job rendezvous through etcd instead of through a store one
// of them serves, and the job survives the loss of any node (node 0 too).
//
// It speaks etcd v3's HTTP/JSON gateway (etcd 3.4 and later: /v3/kv/range,
// put, txn, deleterange; /v3/lease/grant and keepalive) through libcurl. Keys
// sit under "strata/RUN-ID/" (--rdzv-id), keys and values base64-encoded as
// the gateway wants them. Every key is attached to one lease of the job: the
// first launcher grants it, the others adopt it, and each keeps it alive from
// a thread of its own, so the job's keys outlive any launcher but vanish
// `kLeaseTtl` after the last one is gone. add() and compareSet() are etcd
// transactions (compare the key's revision or value, then write), so
// launchers racing on one key each get a consistent answer.
//
// Blocking: every request tries the endpoints in turn, retrying while etcd is
// unreachable or answers 5xx, for at most the store's timeout; then it
// throws PeerError naming the endpoints and the last error. wait() and get()
// poll until the keys exist, at most their timeout, then throw TimeoutError.
// A request etcd refuses (HTTP 4xx) throws ProtocolError with etcd's message.
// Once the job's lease has expired (no launcher reached etcd for kLeaseTtl),
// every call throws PeerError saying so.
#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

namespace strata {

class EtcdHttp;

class EtcdStore : public c10d::Store {
 public:
  // How long the job's keys outlive its last launcher.
  static constexpr std::chrono::seconds kLeaseTtl{30};

  // `endpoints`: "HOST:PORT" or "http://HOST:PORT" each. Connects, grants or
  // adopts the job's lease and starts keeping it alive. Blocks and throws as
  // the requests above do.
  EtcdStore(const std::vector<std::string>& endpoints, const std::string& runId,
            std::chrono::milliseconds timeout);
  ~EtcdStore() override;
  EtcdStore(const EtcdStore&) = delete;
  EtcdStore& operator=(const EtcdStore&) = delete;

  void set(const std::string& key, const std::vector<uint8_t>& value) override;
  // An empty `expected` means "only if the key does not exist". Returns the
  // key's value afterwards: `desired` when the swap happened, else the value
  // found, or `expected` when the key is absent (as c10d's TCPStore does).
  std::vector<uint8_t> compareSet(const std::string& key, const std::vector<uint8_t>& expected,
                                  const std::vector<uint8_t>& desired) override;
  std::vector<uint8_t> get(const std::string& key) override;
  int64_t add(const std::string& key, int64_t value) override;
  bool deleteKey(const std::string& key) override;
  bool check(const std::vector<std::string>& keys) override;
  int64_t getNumKeys() override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override;
  // A store of its own on the same job's keys (a new connection that adopts
  // the job's lease), for c10d to use from another thread. Blocks and throws
  // as the constructor.
  c10::intrusive_ptr<c10d::Store> clone() override;

  // The address of this host's end of its connection to etcd: the address
  // the other nodes can reach it at, as good a default as a host has.
  std::string localAddress() const;
  // "127.0.0.1:2379,127.0.0.2:2379", for messages.
  std::string endpointsText() const;

 private:
  // The key's value and mod_revision; nullopt when absent.
  struct Found {
    std::string value;
    int64_t modRevision = 0;
  };
  std::optional<Found> find(const std::string& key);
  nlohmann::json request(const std::string& path, const nlohmann::json& body);
  void adoptLease();
  void keepLeaseAlive();

  std::vector<std::string> endpoints_;
  std::string runId_;
  std::string prefix_;
  std::unique_ptr<EtcdHttp> http_;
  std::mutex httpMutex_;  // one request at a time on the connection
  std::string lease_;     // the job lease's ID, as the gateway spells int64s
  std::thread keepAlive_;
  std::mutex stopMutex_;
  std::condition_variable stopSignal_;
  bool stopping_ = false;
  bool leaseLost_ = false;  // guarded by httpMutex_
};

}  // namespace strata
