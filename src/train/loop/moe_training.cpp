#include "train/loop/moe_training.h"

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
  // [dropped, aux sum, z sum, layer passes] summed over replicas and stages;
  // the losses then averaged over the replicas.
  at::Tensor sums = torch::zeros({4}, torch::kDouble);
  // [-min, max] of an expert's tokens, [sum, count] for the mean.
  at::Tensor extremes = torch::full({2}, -std::numeric_limits<double>::infinity(), torch::kDouble);
  at::Tensor totals = torch::zeros({2}, torch::kDouble);
  for (auto& [block, layer] : layers) {
    at::Tensor counts = layer.tokensPerExpert.to(torch::kDouble);
    replicas.allReduce(counts);  // every layer's on every rank of this stage alike
    extremes[0] = std::max(extremes[0].item<double>(), -counts.min().item<double>());
    extremes[1] = std::max(extremes[1].item<double>(), counts.max().item<double>());
    totals[0] += counts.sum();
    totals[1] += counts.numel();
    sums[0] += static_cast<double>(layer.dropped);
    sums[1] += layer.auxLoss;
    sums[2] += layer.zLoss;
    sums[3] += static_cast<double>(layer.passes);
  }
  replicas.allReduce(sums);
  pp.allReduce(sums);
  pp.allReduce(extremes, ReduceOp::kMax);
  pp.allReduce(totals);
  MoeReport report;
  report.exchangeSeconds = experts.takeExchangeSeconds();
  report.present = totals[1].item<double>() > 0;
  if (!report.present) return report;
  double passes = sums[3].item<double>();
  report.tokensMin = -extremes[0].item<double>();
  report.tokensMax = extremes[1].item<double>();
  report.tokensMean = totals[0].item<double>() / totals[1].item<double>();
  report.dropped = static_cast<int64_t>(sums[0].item<double>());
  report.auxLoss = passes > 0 ? sums[1].item<double>() / passes : 0;
  report.zLoss = passes > 0 ? sums[2].item<double>() / passes : 0;
  return report;
}

}  // namespace strata::train
