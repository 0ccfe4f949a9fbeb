#include "local_experts.h"

#include <torch/torch.h>

#include <string>

#include "strata/error.h"
#include "strata/ops/swiglu.h"

namespace strata::expert_parallel::detail {
namespace tp = strata::tensor_parallel;

ExpertImpl::ExpertImpl(int64_t hidden, int64_t ffn, const tp::InitOptions& init,
                       const tp::LoraConfig& lora, std::shared_ptr<Communicator> tpComm) {
  tp::ColumnParallelLinearOptions columns;
  columns.inFeatures = hidden;
  columns.outFeatures = ffn;
  columns.bias = false;
  tp::RowParallelLinearOptions rows;
  rows.inFeatures = ffn;
  rows.outFeatures = hidden;
  rows.bias = false;
  columns.init = tp::deriveInit(init, 0);
  columns.lora = lora.on("gate");
  gate = register_module("gate", tp::ColumnParallelLinear(columns, tpComm));
  columns.init = tp::deriveInit(init, 1);
  columns.lora = lora.on("up");
  up = register_module("up", tp::ColumnParallelLinear(columns, tpComm));
  rows.init = tp::deriveInit(init, 2);
  rows.lora = lora.on("down");
  down = register_module("down", tp::RowParallelLinear(rows, tpComm));
}

at::Tensor ExpertImpl::forward(const at::Tensor& rows) {
  at::Tensor inner =
      ops::swiglu(gate->forwardEntered(rows), up->forwardEntered(rows));  // [n, ffn/tp]
  return down->partialForward(inner);  // [n, hidden], this rank's columns' share
}

LocalExpertsImpl::LocalExpertsImpl(int64_t hidden, int64_t ffn, int64_t first, int64_t count,
                                   const tp::InitOptions& init, const tp::LoraConfig& lora,
                                   std::shared_ptr<Communicator> tpComm) {
  for (int64_t j = first; j < first + count; ++j)
    experts_.push_back(register_module(
        std::to_string(j),
        Expert(hidden, ffn, tp::deriveInit(init, static_cast<uint64_t>(j)), lora, tpComm)));
}

at::Tensor LocalExpertsImpl::forward(const at::Tensor& grouped,
                                     const std::vector<int64_t>& rowsPerExpert) {
  if (rowsPerExpert.size() != experts_.size())
    throw Error("local experts: " + std::to_string(rowsPerExpert.size()) + " row counts for " +
                std::to_string(experts_.size()) + " experts");
  std::vector<at::Tensor> outputs;
  int64_t start = 0;
  for (size_t i = 0; i < experts_.size(); ++i) {
    outputs.push_back(experts_[i]->forward(grouped.narrow(0, start, rowsPerExpert[i])));
    start += rowsPerExpert[i];
  }
  return torch::cat(outputs);
}

}  // namespace strata::expert_parallel::detail
