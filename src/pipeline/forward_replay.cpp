#include "forward_replay.h"

#include <ATen/Context.h>
#include <torch/torch.h>

#include <mutex>

namespace strata::pipeline {
namespace {

at::Generator generatorOf(const Stage& stage) {
  return at::globalContext().defaultGenerator(stage.device());
}

at::Tensor generatorState(const Stage& stage) {
  at::Generator generator = generatorOf(stage);
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void setGeneratorState(const Stage& stage, const at::Tensor& state) {
  at::Generator generator = generatorOf(stage);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

std::vector<at::Tensor> copiesOf(const std::vector<at::Tensor>& tensors) {
  std::vector<at::Tensor> copies;
  for (const at::Tensor& t : tensors) copies.push_back(t.detach().clone());
  return copies;
}

// Writes through variable_data(), which shares the storage but not the
// version counter: a graph that saved a buffer (batch norm saves its running
// statistics, which its training-mode backward never reads) must not see the
// restore as an in-place change. Layers update such buffers inside their
// kernels, unseen by autograd too, so this matches what a forward does.
void overwrite(const std::vector<at::Tensor>& targets, const std::vector<at::Tensor>& values) {
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < targets.size(); ++i) targets[i].variable_data().copy_(values[i]);
}

}  // namespace

ForwardReplay::ForwardReplay(const Stage& stage)
    : stage_(&stage), buffers_(copiesOf(stage.buffers())), generatorState_(generatorState(stage)) {}

at::Tensor ForwardReplay::replay(const std::function<at::Tensor()>& recompute) const {
  std::vector<at::Tensor> live = stage_->buffers();
  std::vector<at::Tensor> current = copiesOf(live);
  at::Tensor currentGenerator = generatorState(*stage_);
  overwrite(live, buffers_);
  setGeneratorState(*stage_, generatorState_);
  at::Tensor output = recompute();
  overwrite(live, current);
  setGeneratorState(*stage_, currentGenerator);
  return output;
}

}  // namespace strata::pipeline
