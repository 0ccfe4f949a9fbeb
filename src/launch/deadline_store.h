// DeadlineStore: a c10d::Store that bounds every call on another one.
//
// LibTorch 2.x's TCPStore client waits on its socket without a limit for
// check, set, add and the like (only get and wait honour the store's
// timeout): a launcher whose link to node 0 is cut would wait there forever,
// and never reap its own failed workers. DeadlineStore runs each call on a
// thread of its own and gives it up after the limit: the inner store's
// timeout plus kGrace (wait with a timeout: that timeout plus kGrace).
//
// Blocking: each method blocks as the inner store's does, at most the limit;
// then it throws PeerError naming the store and the call, the call's thread
// is left to the inner store (it ends when the store answers or the process
// exits), and every later call throws the same at once: a store that missed
// a deadline is not trusted again. The inner store's own errors pass through.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

namespace strata {

class DeadlineStore : public c10d::Store {
 public:
  // How long past its own timeout a call may take before it is given up.
  static constexpr std::chrono::seconds kGrace{5};

  // `name` says what the store is in errors ("the job's rendezvous store at
  // node0:29400 (node 0's launcher)").
  DeadlineStore(c10::intrusive_ptr<c10d::Store> inner, std::string name);

  c10::intrusive_ptr<c10d::Store> clone() override;
  void set(const std::string& key, const std::vector<uint8_t>& value) override;
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
  const std::chrono::milliseconds& getTimeout() const noexcept override;
  void setTimeout(const std::chrono::milliseconds& timeout) override;

 private:
  // Runs `call` on a thread of its own, waits at most `limit` for it.
  template <typename Call>
  auto bounded(const char* what, std::chrono::milliseconds limit, Call call) -> decltype(call());
  std::chrono::milliseconds limit() const;

  c10::intrusive_ptr<c10d::Store> inner_;
  std::string name_;
  // Shared with clones: one missed deadline condemns the connection.
  std::shared_ptr<std::atomic<bool>> lost_ = std::make_shared<std::atomic<bool>>(false);
};

}  // namespace strata
