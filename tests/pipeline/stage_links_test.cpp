// What a rank holds of the hand-offs it sends: those still in flight, not
// every one of the step.
#include "stage_links.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "strata/schedule/generators.h"

namespace strata::pipeline {
namespace {

// Rank 0 of two. Sends are delivered when the test says so (deliverAll);
// nothing else is ever used.
class DeliveryCommunicator : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  const std::string& name() const override { return name_; }
  const std::vector<int>& globalRanks() const override { return ranks_; }
  const char* backend() const override { return "test"; }
  const CommOptions& options() const override { return options_; }

  WorkHandle allReduceAsync(at::Tensor&, ReduceOp) override { refuse(); }
  WorkHandle broadcastAsync(at::Tensor&, int) override { refuse(); }
  WorkHandle allGatherAsync(at::Tensor&, const at::Tensor&) override { refuse(); }
  WorkHandle reduceScatterAsync(at::Tensor&, const at::Tensor&, ReduceOp) override { refuse(); }
  WorkHandle recvAsync(at::Tensor&, int, int) override { refuse(); }
  void barrier() override { refuse(); }
  WorkHandle sendAsync(const at::Tensor&, int, int) override {
    ++posted_;
    return std::make_unique<Send>(*delivered_, posted_);
  }

  // Every send posted so far has reached the peer.
  void deliverAll() { *delivered_ = posted_; }

 private:
  // Complete once the sends up to its own have been delivered.
  struct Send : Work {
    Send(const int& delivered, int number) : delivered(delivered), number(number) {}
    void wait() override {
      if (!isCompleted()) throw std::logic_error("the test waited for an undelivered send");
    }
    bool isCompleted() override { return delivered >= number; }
    const int& delivered;
    int number;
  };
  [[noreturn]] static void refuse() { throw std::logic_error("not used by these tests"); }

  std::string name_ = "pp-test";
  std::vector<int> ranks_{0, 1};
  CommOptions options_;
  int posted_ = 0;
  std::shared_ptr<int> delivered_ = std::make_shared<int>(0);
};

// Tensors (ours included) that share `t`'s memory.
long holders(const at::Tensor& t) { return t.storage().use_count(); }

TEST(StageLinks, LetsGoOfDeliveredSendsWhenItSendsAgain) {
  schedule::Schedule pipeline = schedule::oneFOneB(2, 4);
  auto comm = std::make_shared<DeliveryCommunicator>();
  StageLinks links(pipeline, /*rank=*/0, comm);
  std::vector<at::Tensor> outputs;
  for (int m = 0; m < 4; ++m) outputs.push_back(torch::full({8}, float(m)));

  links.send(outputs[0], 0, 0, Flow::kActivation);
  links.send(outputs[1], 0, 1, Flow::kActivation);
  EXPECT_EQ(holders(outputs[0]), 2) << "an undelivered send must keep its buffer";
  EXPECT_EQ(holders(outputs[1]), 2);

  comm->deliverAll();
  links.send(outputs[2], 0, 2, Flow::kActivation);
  EXPECT_EQ(holders(outputs[0]), 1) << "a delivered send still holds its buffer";
  EXPECT_EQ(holders(outputs[1]), 1);
  EXPECT_EQ(holders(outputs[2]), 2);

  links.send(outputs[3], 0, 3, Flow::kActivation);
  EXPECT_EQ(holders(outputs[2]), 2) << "let go of a send before it was delivered";
  comm->deliverAll();
  links.flush();
  EXPECT_EQ(holders(outputs[2]), 1);
  EXPECT_EQ(holders(outputs[3]), 1);
}

}  // namespace
}  // namespace strata::pipeline
