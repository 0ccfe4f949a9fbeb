// A communicator that only answers rank() and size(): it lets tensor-parallel
// layers be built with the shapes of rank r of p (to read that rank's
// checkpoint shard) in a process that is not part of any job. Every
// operation throws Error.
#pragma once

#include "strata/runtime/communicator.h"

namespace strata {

class ShapeCommunicator : public Communicator {
 public:
  ShapeCommunicator(int rank, int size);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  const std::string& name() const override { return name_; }
  const std::vector<int>& globalRanks() const override { return ranks_; }
  const char* backend() const override { return "none"; }
  const CommOptions& options() const override { return options_; }

  WorkHandle allReduceAsync(at::Tensor&, ReduceOp) override { refuse(); }
  WorkHandle broadcastAsync(at::Tensor&, int) override { refuse(); }
  WorkHandle allGatherAsync(at::Tensor&, const at::Tensor&) override { refuse(); }
  WorkHandle reduceScatterAsync(at::Tensor&, const at::Tensor&, ReduceOp) override { refuse(); }
  WorkHandle sendAsync(const at::Tensor&, int, int) override { refuse(); }
  WorkHandle recvAsync(at::Tensor&, int, int) override { refuse(); }
  void barrier() override { refuse(); }

 private:
  [[noreturn]] void refuse() const;

  int rank_;
  std::vector<int> ranks_;
  std::string name_;
  CommOptions options_;
};

}  // namespace strata
