#include "deadline_store.h"

#include <future>
#include <thread>
#include <type_traits>

#include "strata/error.h"
#include "strata/runtime/timeouts.h"

namespace strata {

DeadlineStore::DeadlineStore(c10::intrusive_ptr<c10d::Store> inner, std::string name)
    : Store(inner->getTimeout()), inner_(std::move(inner)), name_(std::move(name)) {}

std::chrono::milliseconds DeadlineStore::limit() const { return inner_->getTimeout() + kGrace; }

template <typename Call>
auto DeadlineStore::bounded(const char* what, std::chrono::milliseconds limit, Call call)
    -> decltype(call()) {
  using Result = decltype(call());
  if (lost_->load())
    throw PeerError(name_ + " missed an earlier deadline and is not used again (" + what + ")");
  auto promise = std::make_shared<std::promise<Result>>();
  std::future<Result> result = promise->get_future();
  // The thread owns what the call reads (the call's copies, the inner store),
  // so it may outlive this call.
  std::thread([promise, call = std::move(call)]() mutable {
    try {
      if constexpr (std::is_void_v<Result>) {
        call();
        promise->set_value();
      } else {
        promise->set_value(call());
      }
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  }).detach();
  if (result.wait_for(limit) != std::future_status::ready) {
    lost_->store(true);
    throw PeerError(name_ + " did not answer a " + what + " within " + describeDuration(limit) +
                    " (its host unreachable?)");
  }
  return result.get();
}

c10::intrusive_ptr<c10d::Store> DeadlineStore::clone() {
  auto copy = c10::make_intrusive<DeadlineStore>(inner_->clone(), name_);
  copy->lost_ = lost_;
  return copy;
}

void DeadlineStore::set(const std::string& key, const std::vector<uint8_t>& value) {
  bounded("set", limit(), [inner = inner_, key, value] { inner->set(key, value); });
}

std::vector<uint8_t> DeadlineStore::compareSet(const std::string& key,
                                               const std::vector<uint8_t>& expected,
                                               const std::vector<uint8_t>& desired) {
  return bounded("compare-and-set", limit(), [inner = inner_, key, expected, desired] {
    return inner->compareSet(key, expected, desired);
  });
}

std::vector<uint8_t> DeadlineStore::get(const std::string& key) {
  return bounded("get", limit(), [inner = inner_, key] { return inner->get(key); });
}

int64_t DeadlineStore::add(const std::string& key, int64_t value) {
  return bounded("add", limit(), [inner = inner_, key, value] { return inner->add(key, value); });
}

bool DeadlineStore::deleteKey(const std::string& key) {
  return bounded("delete", limit(), [inner = inner_, key] { return inner->deleteKey(key); });
}

bool DeadlineStore::check(const std::vector<std::string>& keys) {
  return bounded("check", limit(), [inner = inner_, keys] { return inner->check(keys); });
}

int64_t DeadlineStore::getNumKeys() {
  return bounded("key count", limit(), [inner = inner_] { return inner->getNumKeys(); });
}

void DeadlineStore::wait(const std::vector<std::string>& keys) {
  bounded("wait", limit(), [inner = inner_, keys] { inner->wait(keys); });
}

void DeadlineStore::wait(const std::vector<std::string>& keys,
                         const std::chrono::milliseconds& timeout) {
  bounded("wait", timeout + kGrace,
          [inner = inner_, keys, timeout] { inner->wait(keys, timeout); });
}

const std::chrono::milliseconds& DeadlineStore::getTimeout() const noexcept {
  return inner_->getTimeout();
}

void DeadlineStore::setTimeout(const std::chrono::milliseconds& timeout) {
  inner_->setTimeout(timeout);
}

}  // namespace strata
