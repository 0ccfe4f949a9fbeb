#include "checkpoint/adamw_state.h"

#include "strata/checkpoint/checkpoint.h"
#include "strata/optim/optimizer_state_key.h"

namespace strata::train {
namespace {

at::Tensor readEntry(torch::serialize::InputArchive& archive, const std::string& key,
                     const std::string& origin) {
  at::Tensor value;
  if (!archive.try_read(key, value))
    throw CheckpointError("checkpoint shard '" + origin + "' lacks AdamW's '" + key + "'");
  return value;
}

}  // namespace

torch::optim::AdamW* indexableAdamW(torch::optim::Optimizer* optimizer) {
  auto* adamw = dynamic_cast<torch::optim::AdamW*>(optimizer);
  if (!adamw) return nullptr;
  for (const auto& group : adamw->param_groups()) {
    if (static_cast<const torch::optim::AdamWOptions&>(group.options()).amsgrad()) return nullptr;
  }
  return adamw;
}

std::vector<at::Tensor> optimizerParameters(const torch::optim::Optimizer& optimizer) {
  std::vector<at::Tensor> params;
  for (const auto& group : optimizer.param_groups())
    params.insert(params.end(), group.params().begin(), group.params().end());
  return params;
}

std::string expAvgKey(size_t parameter) { return "exp_avg_" + std::to_string(parameter); }
std::string expAvgSqKey(size_t parameter) { return "exp_avg_sq_" + std::to_string(parameter); }

void writeAdamWState(const torch::optim::AdamW& optimizer, torch::serialize::OutputArchive& archive,
                     const KeepTensor& keep) {
  std::vector<at::Tensor> params = optimizerParameters(optimizer);
  for (size_t i = 0; i < params.size(); ++i) {
    const torch::optim::AdamWParamState* state = adamWStateOf(optimizer, params[i]);
    if (!state) continue;
    archive.write("step_" + std::to_string(i), torch::tensor(state->step(), torch::kLong));
    archive.write(expAvgKey(i), keep(state->exp_avg()));
    archive.write(expAvgSqKey(i), keep(state->exp_avg_sq()));
  }
}

void readAdamWState(torch::serialize::InputArchive& archive, torch::optim::AdamW& optimizer,
                    const std::string& origin) {
  std::vector<at::Tensor> params = optimizerParameters(optimizer);
  optimizer.state().clear();
  for (size_t i = 0; i < params.size(); ++i) {
    at::Tensor step;
    if (!archive.try_read("step_" + std::to_string(i), step)) continue;  // never stepped
    at::Tensor expAvg = readEntry(archive, expAvgKey(i), origin);
    at::Tensor expAvgSq = readEntry(archive, expAvgSqKey(i), origin);
    if (expAvg.sizes() != params[i].sizes() || expAvgSq.sizes() != params[i].sizes())
      throw CheckpointError("checkpoint shard '" + origin + "' does not fit this optimizer: '" +
                            expAvgKey(i) + "' has another shape than its parameter");
    setAdamWState(optimizer, params[i], step.item<int64_t>(), expAvg, expAvgSq);
  }
}

const torch::optim::AdamWParamState* adamWStateOf(const torch::optim::AdamW& optimizer,
                                                  const at::Tensor& parameter) {
  const auto& state = optimizer.state();
  auto found = state.find(optim::optimizerStateKey(state, parameter));
  if (found == state.end()) return nullptr;
  return dynamic_cast<const torch::optim::AdamWParamState*>(found->second.get());
}

void setAdamWState(torch::optim::AdamW& optimizer, const at::Tensor& parameter, int64_t step,
                   const at::Tensor& expAvg, const at::Tensor& expAvgSq) {
  auto state = std::make_unique<torch::optim::AdamWParamState>();
  state->step(step);
  state->exp_avg(expAvg.to(parameter.device()).contiguous());
  state->exp_avg_sq(expAvgSq.to(parameter.device()).contiguous());
  optimizer.state()[optim::optimizerStateKey(optimizer.state(), parameter)] = std::move(state);
}

}  // namespace strata::train
