#include "train/moe_training.h"

#include <torch/torch.h>

#include <limits>
#include <map>

namespace strata::train {

ExpertGroups joinExpertGroups(World& world, const std::shared_ptr<Communicator>& replicas, int ep,
                              const Coord& coord) {
  if (ep <= 1) return {nullptr, replicas};
  const std::vector<int>& members = replicas->globalRanks();
  int me = replicas->rank();
  std::vector<int> epRanks, expertReplicaRanks;
  for (int i = 0; i < replicas->size(); ++i) {
    if (i / ep == me / ep) epRanks.push_back(members[i]);
    if (i % ep == me % ep) expertReplicaRanks.push_back(members[i]);
  }
  std::string place = "pp=" + std::to_string(coord.pp) + ",tp=" + std::to_string(coord.tp);
  ExpertGroups groups;
  groups.ep = world.newGroup("ep[" + place + ",group=" + std::to_string(me / ep) + "]", epRanks);
  groups.expertReplicas =
      world.newGroup("edp[" + place + ",ep=" + std::to_string(me % ep) + "]", expertReplicaRanks);
  return groups;
}

ExpertSplit splitExpertParameters(const std::vector<data_parallel::NamedTensor>& named) {
  ExpertSplit split;
  for (const data_parallel::NamedTensor& item : named)
    (expert_parallel::isExpertParameter(item.name) ? split.experts : split.common).push_back(item);
  return split;
}

void divideExpertGradients(const std::vector<data_parallel::NamedTensor>& experts, int ep) {
  if (ep <= 1) return;
  double scale = 1.0 / ep;
  for (const data_parallel::NamedTensor& item : experts) {
    at::Tensor parameter = item.tensor;
    parameter.register_hook([scale](const at::Tensor& grad) { return grad * scale; });
  }
}

MoeReport gatherMoeReport(expert_parallel::ExpertParallel& experts, Communicator& replicas,
                          Communicator& pp) {
  std::map<int64_t, expert_parallel::MoeLayerStats> layers = experts.takeStats();
  // One all-reduce over the replicas (each stage has the same layers on all
  // of them): every layer's counts, then [dropped, aux, z, passes].
  std::vector<at::Tensor> parts;
  at::Tensor scalars = torch::zeros({4}, torch::kDouble);
  for (const auto& [block, layer] : layers) {
    parts.push_back(layer.tokensPerExpert.to(torch::kDouble));
    scalars += torch::tensor({static_cast<double>(layer.dropped), layer.auxLoss, layer.zLoss,
                              static_cast<double>(layer.passes)},
                             torch::kDouble);
  }
  parts.push_back(scalars);
  at::Tensor summed = torch::cat(parts);
  replicas.allReduce(summed);
  int64_t countNumel = summed.numel() - 4;
  at::Tensor counts = summed.narrow(0, 0, countNumel);
  const double infinity = std::numeric_limits<double>::infinity();
  // Over the stages: [-min, max] of an expert's tokens; [sum, count] of them
  // and the scalars.
  at::Tensor extremes = countNumel > 0 ? torch::stack({-counts.min(), counts.max()})
                                       : torch::full({2}, -infinity, torch::kDouble);
  at::Tensor totals =
      torch::cat({torch::stack({counts.sum(), torch::full({}, countNumel, torch::kDouble)}),
                  summed.narrow(0, countNumel, 4)});
  pp.allReduce(extremes, ReduceOp::kMax);
  pp.allReduce(totals);
  MoeReport report;
  report.exchangeSeconds = experts.takeExchangeSeconds();
  const double* t = totals.data_ptr<double>();  // [sum, count, dropped, aux, z, passes]
  report.present = t[1] > 0;
  if (!report.present) return report;
  report.tokensMin = -extremes[0].item<double>();
  report.tokensMax = extremes[1].item<double>();
  report.tokensMean = t[0] / t[1];
  report.dropped = static_cast<int64_t>(t[2]);
  report.auxLoss = t[5] > 0 ? t[3] / t[5] : 0;
  report.zLoss = t[5] > 0 ? t[4] / t[5] : 0;
  return report;
}

}  // namespace strata::train
