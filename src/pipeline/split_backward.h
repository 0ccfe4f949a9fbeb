// The zero-bubble schedules split a stage's backward in two: I, the input
// gradient the previous stage is waiting for, and W, the weight gradients,
// run later to fill a bubble. The split must not cost a second backward.
//
// I walks the graph from the stage's output to its input only. At every node
// where a weight's gradient branches off that walk (a linear's backward:
// its input gradient is I's, its weight gradient W's) it keeps the gradients
// that entered the node. W runs just those nodes again from the kept
// gradients, for their weight outputs only (their edges back towards the
// input are cut first), and whatever lies between them and the weights: each
// weight-gradient product once, no activation gradient computed twice.
// Weights receive their gradients through autograd's own accumulation, so
// accumulation hooks (data parallelism's) run as in a plain backward.
//
// Nothing here communicates or blocks; errors are autograd's own.
#pragma once

#include <ATen/core/Tensor.h>

#include <map>
#include <memory>
#include <vector>

namespace torch::autograd {
struct Node;
}

namespace strata::pipeline {

class SplitBackward {
 public:
  // `output` the stage's output y (or its loss), `input` the stage's input x,
  // a leaf requiring grad, `weights` the stage's parameters.
  SplitBackward(const at::Tensor& output, const at::Tensor& input,
                const std::vector<at::Tensor>& weights);
  ~SplitBackward();
  SplitBackward(const SplitBackward&) = delete;
  SplitBackward& operator=(const SplitBackward&) = delete;

  // I: dL/dx from dL/dy (undefined when x does not reach y), keeping the graph
  // and the gradients W needs. Call once.
  at::Tensor inputGradient(const at::Tensor& outputGrad);
  // W: adds dL/dw to every weight's .grad and frees the graph. Call once, after
  // inputGradient().
  void weightGradients();

 private:
  struct Captured;
  void findBranches(const at::Tensor& input, const std::vector<at::Tensor>& weights);

  at::Tensor output_;
  at::Tensor input_;
  at::Tensor outputGrad_;  // kept when no weight branches off I's walk at the root
  bool rootOnInputPath_ = false;
  // Nodes of I's walk with an edge to a node that leads only to weights, each
  // with the gradients I saw enter it.
  std::vector<std::shared_ptr<Captured>> branches_;
};

}  // namespace strata::pipeline
