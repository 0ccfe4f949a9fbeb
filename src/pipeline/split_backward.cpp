#include "split_backward.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/function_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <unordered_map>

namespace strata::pipeline {
namespace {

using torch::autograd::Edge;
using torch::autograd::Node;
using torch::autograd::variable_list;

// Whether a node leads to the input's accumulator, to a weight's, or both.
struct Reach {
  bool input = false;
  bool weight = false;
};

class ReachMap {
 public:
  ReachMap(Node* inputAccumulator, std::vector<Node*> weightAccumulators)
      : input_(inputAccumulator), weights_(std::move(weightAccumulators)) {}

  // Depth-first over next edges, each node once.
  Reach of(Node* node) {
    auto found = memo_.find(node);
    if (found != memo_.end()) return found->second;
    Reach reach;
    reach.input = node == input_;
    for (Node* weight : weights_) reach.weight = reach.weight || node == weight;
    for (const Edge& edge : node->next_edges()) {
      if (!edge.is_valid()) continue;
      Reach next = of(edge.function.get());
      reach.input = reach.input || next.input;
      reach.weight = reach.weight || next.weight;
    }
    return memo_[node] = reach;
  }
  const std::unordered_map<Node*, Reach>& all() const { return memo_; }

 private:
  Node* input_;
  std::vector<Node*> weights_;
  std::unordered_map<Node*, Reach> memo_;
};

}  // namespace

// A node of I's walk where weight gradients branch off, and what entered it.
struct SplitBackward::Captured {
  std::shared_ptr<Node> node;
  std::vector<size_t> towardsInput;  // its edges that I's walk follows
  variable_list grads;
};

namespace {

// Keeps the gradients entering a node; passes them on unchanged.
struct CaptureGrads : torch::autograd::FunctionPreHook {
  explicit CaptureGrads(std::weak_ptr<void> owner, variable_list* into)
      : owner(std::move(owner)), into(into) {}
  variable_list operator()(const variable_list& grads) override {
    if (!owner.expired()) *into = grads;
    return grads;
  }
  std::weak_ptr<void> owner;  // the Captured entry; the graph may outlive it
  variable_list* into;
};

}  // namespace

SplitBackward::SplitBackward(const at::Tensor& output, const at::Tensor& input,
                             const std::vector<at::Tensor>& weights)
    : output_(output), input_(input) {
  findBranches(input, weights);
}

SplitBackward::~SplitBackward() = default;

void SplitBackward::findBranches(const at::Tensor& input, const std::vector<at::Tensor>& weights) {
  std::shared_ptr<Node> root = output_.grad_fn();
  if (!root) return;
  std::vector<Node*> weightAccumulators;
  for (const at::Tensor& weight : weights) {
    std::shared_ptr<Node> accumulator = torch::autograd::impl::try_get_grad_accumulator(weight);
    if (accumulator) weightAccumulators.push_back(accumulator.get());
  }
  std::shared_ptr<Node> inputAccumulator = torch::autograd::impl::grad_accumulator(input);
  ReachMap reach(inputAccumulator.get(), std::move(weightAccumulators));
  rootOnInputPath_ = reach.of(root.get()).input;
  if (!rootOnInputPath_) return;
  // Every node of I's walk was reached from the root; those with an edge to a
  // node that leads to weights but not to the input are where W starts.
  std::vector<std::shared_ptr<Node>> pending{root};
  std::unordered_map<Node*, bool> seen{{root.get(), true}};
  while (!pending.empty()) {
    std::shared_ptr<Node> node = pending.back();
    pending.pop_back();
    bool branches = false;
    std::vector<size_t> towardsInput;
    for (size_t i = 0; i < node->num_outputs(); ++i) {
      const Edge& edge = node->next_edge(i);
      if (!edge.is_valid()) continue;
      Reach next = reach.of(edge.function.get());
      if (next.input) {
        towardsInput.push_back(i);
        if (!seen[edge.function.get()]) {
          seen[edge.function.get()] = true;
          pending.push_back(edge.function);
        }
      } else if (next.weight) {
        branches = true;
      }
    }
    if (!branches) continue;
    auto captured = std::make_shared<Captured>();
    captured->node = node;
    captured->towardsInput = std::move(towardsInput);
    node->add_pre_hook(std::make_unique<CaptureGrads>(captured, &captured->grads));
    branches_.push_back(std::move(captured));
  }
}

at::Tensor SplitBackward::inputGradient(const at::Tensor& outputGrad) {
  if (!rootOnInputPath_) {
    outputGrad_ = outputGrad;
    return at::Tensor();
  }
  auto& engine = torch::autograd::Engine::get_default_engine();
  variable_list grads =
      engine.execute({torch::autograd::impl::gradient_edge(output_)}, {outputGrad},
                     /*keep_graph=*/true, /*create_graph=*/false,
                     /*accumulate_grad=*/false, {torch::autograd::impl::gradient_edge(input_)});
  return grads.at(0);
}

void SplitBackward::weightGradients() {
  auto& engine = torch::autograd::Engine::get_default_engine();
  if (!rootOnInputPath_) {
    // Nothing of the weights' gradients lies on I's walk: one plain backward.
    if (output_.grad_fn() && outputGrad_.defined()) {
      engine.execute({torch::autograd::impl::gradient_edge(output_)}, {outputGrad_}, false, false,
                     true);
    }
    return;
  }
  torch::autograd::edge_list roots;
  variable_list grads;
  for (const std::shared_ptr<Captured>& branch : branches_) {
    Node& node = *branch->node;
    // Cut the way back towards the input: the node computes only what leads
    // to weights, and nothing of I's walk runs again.
    // (The edge list itself: set_next_edge would recompute the node's
    // topological number, which autograd forbids once it has a parent; an
    // empty edge needs no number.)
    for (size_t i : branch->towardsInput) node.next_edges()[i] = Edge();
    for (size_t i = 0; i < branch->grads.size(); ++i) {
      if (!branch->grads[i].defined()) continue;
      roots.emplace_back(branch->node, static_cast<uint32_t>(i));
      grads.push_back(branch->grads[i]);
    }
  }
  if (!roots.empty()) engine.execute(roots, grads, /*keep_graph=*/false, false, true);
  branches_.clear();
}

}  // namespace strata::pipeline
