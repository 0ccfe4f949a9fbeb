// A communicator decorator for benchmarks: forwards every call to an inner
// communicator and adds up the payload bytes and the wall time of each
// collective, from the call that starts it to the end of its wait().
// Blocking and errors are the inner communicator's.
#pragma once

#include <chrono>
#include <memory>

#include "strata/runtime/communicator.h"

namespace strata::bench {

class CountingCommunicator : public Communicator {
 public:
  explicit CountingCommunicator(std::shared_ptr<Communicator> inner);

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  const std::string& name() const override { return inner_->name(); }
  const std::vector<int>& globalRanks() const override { return inner_->globalRanks(); }
  const char* backend() const override { return inner_->backend(); }
  const CommOptions& options() const override { return inner_->options(); }

  WorkHandle allReduceAsync(at::Tensor& tensor, ReduceOp op) override;
  WorkHandle broadcastAsync(at::Tensor& tensor, int root) override;
  WorkHandle allGatherAsync(at::Tensor& output, const at::Tensor& input) override;
  WorkHandle reduceScatterAsync(at::Tensor& output, const at::Tensor& input, ReduceOp op) override;
  WorkHandle sendAsync(const at::Tensor& tensor, int peer, int tag) override;
  WorkHandle recvAsync(at::Tensor& tensor, int peer, int tag) override;
  void barrier() override { inner_->barrier(); }

  int64_t bytes() const { return bytes_; }
  int64_t calls() const { return calls_; }
  double seconds() const { return seconds_; }
  void reset();

 private:
  WorkHandle timed(WorkHandle work, std::chrono::steady_clock::time_point start, int64_t bytes);

  std::shared_ptr<Communicator> inner_;
  int64_t bytes_ = 0;
  int64_t calls_ = 0;
  double seconds_ = 0;
};

}  // namespace strata::bench
