// AdamW's state by parameter, as checkpoints store it from format 2 on: one
// tensor per moment and a step count per parameter, addressable by key, so
// the tensor index can point at them and a run of another layout can take
// them apart. LibTorch's own optimizer serialisation keys its state by the
// address of each parameter's TensorImpl, which no other process can map.
//
// Nothing blocks. Reading throws CheckpointError naming the shard `origin`
// when an entry is missing or has another shape.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace strata::train {

// AdamW without AMSGrad (its extra moment is not indexed): the optimizers
// whose state checkpoints store by parameter.
torch::optim::AdamW* indexableAdamW(torch::optim::Optimizer* optimizer);

// The optimizer's parameters in param_groups order, the order the keys count.
std::vector<at::Tensor> optimizerParameters(const torch::optim::Optimizer& optimizer);

std::string expAvgKey(size_t parameter);
std::string expAvgSqKey(size_t parameter);

// "exp_avg_<i>", "exp_avg_sq_<i>" and "step_<i>" for every parameter with
// state; each moment as `keep` returns it (the live tensor, or a copy).
using KeepTensor = std::function<at::Tensor(const at::Tensor&)>;
void writeAdamWState(const torch::optim::AdamW& optimizer, torch::serialize::OutputArchive& archive,
                     const KeepTensor& keep);
void readAdamWState(torch::serialize::InputArchive& archive, torch::optim::AdamW& optimizer,
                    const std::string& origin);

// The state of `parameter`, or nullptr before its first step.
const torch::optim::AdamWParamState* adamWStateOf(const torch::optim::AdamW& optimizer,
                                                  const at::Tensor& parameter);
// Replaces the state of `parameter` (moments moved to its device).
void setAdamWState(torch::optim::AdamW& optimizer, const at::Tensor& parameter, int64_t step,
                   const at::Tensor& expAvg, const at::Tensor& expAvgSq);

}  // namespace strata::train
