// Weights handed to a reference model by name: each taken once, and what is
// left over after loading is an error, so a reference never silently skips
// a Strata parameter or invents one.
#pragma once

#include <torch/torch.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>

namespace strata::testing {

class WeightSource {
 public:
  WeightSource(const std::map<std::string, torch::Tensor>& weights, std::string model)
      : weights_(weights), model_(std::move(model)) {}

  torch::Tensor take(const std::string& name) {
    auto it = weights_.find(name);
    if (it == weights_.end()) throw std::runtime_error(model_ + ": no weight named " + name);
    taken_.insert(name);
    return it->second;
  }
  void expectAllTaken() const {
    for (const auto& [name, tensor] : weights_)
      if (!taken_.count(name)) throw std::runtime_error(model_ + ": unexpected weight " + name);
  }

 private:
  const std::map<std::string, torch::Tensor>& weights_;
  std::string model_;
  std::set<std::string> taken_;
};

// A leaf copy the reference trains.
inline torch::Tensor trainableCopy(const torch::Tensor& t) {
  return t.detach().clone().set_requires_grad(true);
}

}  // namespace strata::testing
