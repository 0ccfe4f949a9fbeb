#include "plain_gpt_loop.h"

#include <torch/torch.h>

#include <set>

#include "strata/models/gpt.h"
#include "strata/optim/fused_adamw.h"
#include "strata/train/data_source.h"
#include "strata/train/trainer.h"

namespace strata::bench {
namespace {

std::vector<at::Tensor> uniqueParameters(const torch::nn::Module& model) {
  std::vector<at::Tensor> unique;
  std::set<c10::TensorImpl*> seen;
  for (const at::Tensor& p : model.parameters()) {
    if (seen.insert(p.unsafeGetTensorImpl()).second) unique.push_back(p);
  }
  return unique;
}

// Two groups, as every GPT recipe has them: weight decay on matrices
// (dim >= 2), none on biases and layer-norm gains. The optimizer is Strata's
// one-pass AdamW, which a hand-written loop can use as well as the trainer:
// the overhead measured is the trainer's, not an optimizer's.
std::unique_ptr<torch::optim::AdamW> adamW(const std::vector<at::Tensor>& parameters,
                                           const train::OptimConfig& o) {
  std::vector<at::Tensor> matrices, vectors;
  for (const at::Tensor& p : parameters) (p.dim() >= 2 ? matrices : vectors).push_back(p);
  auto options = [&](double decay) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(o.lr).betas({o.beta1, o.beta2}).eps(o.eps).weight_decay(decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(matrices, options(o.weightDecay));
  groups.emplace_back(vectors, options(0.0));
  return std::make_unique<optim::FusedAdamW>(std::move(groups), torch::optim::AdamWOptions(o.lr));
}

}  // namespace

PlainGptLoop::PlainGptLoop(const train::TrainConfig& config, std::shared_ptr<Communicator> single)
    : single_(std::move(single)),
      model_(models::buildGpt(models::gptConfigOf(train::modelSpecOf(config)), single_)),
      parameters_(uniqueParameters(*model_)),
      optimizer_(adamW(parameters_, config.train)),
      gradClip_(config.train.gradClip) {
  train::DataSplit data = train::makeDataSplit(config);
  data_ = std::make_unique<train::BatchReader>(train::makeTrainReader(data, config, 0));
}

double PlainGptLoop::step() {
  train::Batch batch = data_->next();                // [b, s] ids and targets
  at::Tensor logits = model_->forward(batch.input);  // [s, b, vocab]
  at::Tensor loss = models::nextTokenLoss(logits, batch.target, *single_);
  loss.backward();
  if (gradClip_ > 0) torch::nn::utils::clip_grad_norm_(parameters_, gradClip_);
  optimizer_->step();
  // Released, not zeroed, as the trainer does without replicas (and as
  // PyTorch's zero_grad(set_to_none=True)): the overhead measured is the
  // trainer's, not a zeroing pass.
  for (at::Tensor& p : parameters_) p.mutable_grad().reset();
  return loss.item<double>();
}

}  // namespace strata::bench
