// A tensor-parallel group that moves no data: rank 0 of `size`, every
// collective completes at once and leaves its tensors as they are. Layers
// built over it have the shapes of one shard of the real group, so timing
// them on one process gives a shard's compute alone, without the waits and
// transfers of its all-reduces (which the planner models separately).
// Numerically meaningless; for timing only. Point-to-point throws.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "strata/runtime/communicator.h"

namespace strata::bench {

class SilentCommunicator : public Communicator {
 public:
  explicit SilentCommunicator(int size) : ranks_(size) {
    for (int r = 0; r < size; ++r) ranks_[r] = r;
  }

  int rank() const override { return 0; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  const std::string& name() const override { return name_; }
  const std::vector<int>& globalRanks() const override { return ranks_; }
  const char* backend() const override { return "silent"; }
  const CommOptions& options() const override { return options_; }

  WorkHandle allReduceAsync(at::Tensor&, ReduceOp) override { return done(); }
  WorkHandle broadcastAsync(at::Tensor&, int) override { return done(); }
  WorkHandle allGatherAsync(at::Tensor&, const at::Tensor&) override { return done(); }
  WorkHandle reduceScatterAsync(at::Tensor&, const at::Tensor&, ReduceOp) override {
    return done();
  }
  WorkHandle sendAsync(const at::Tensor&, int, int) override { refuse("send"); }
  WorkHandle recvAsync(at::Tensor&, int, int) override { refuse("recv"); }
  void barrier() override {}

 private:
  struct Done : Work {
    void wait() override {}
    bool isCompleted() override { return true; }
  };
  static WorkHandle done() { return std::make_unique<Done>(); }
  [[noreturn]] static void refuse(const char* op) {
    throw std::logic_error(std::string("SilentCommunicator does not ") + op);
  }

  std::vector<int> ranks_;
  std::string name_ = "silent-tp";
  CommOptions options_;
};

}  // namespace strata::bench
