#include "fully_sharded_time.h"

#include <algorithm>

#include "strata/plan/comm.h"
#include "tensor_gather_time.h"

namespace strata::plan {
namespace {

using Collective = double (*)(double, int, const Link&);

// One layer's collective of `bytesPerParam` a parameter over the replicas
// that shard it: the layer's share of the rank's `params` ({over dp x cp,
// the experts' over their own replicas}, one after the other). The rank's
// embedding and head are spread over its layers.
double perLayer(const TrainingJob& job, const Layout& l, const StagePlan& plan, int rank,
                const std::pair<double, double>& params, Collective collective,
                double bytesPerParam) {
  auto [common, experts] = params;
  double layers = rankLayers(plan, rank);
  auto layerShare = [&](double params, int ranks, const Link& link) {
    return collective(params * bytesPerParam / layers, ranks, link);
  };
  double seconds =
      layerShare(common, l.replicas(), groupLink(job.cluster, l.replicaStride(), l.replicas()));
  if (experts > 0 && l.expertReplicas() > 1)
    seconds += layerShare(experts, l.expertReplicas(),
                          groupLink(job.cluster, l.expertReplicaStride(), l.expertReplicas()));
  return seconds;
}

// One pass over the rank's `layers` layers of `compute` seconds each, every
// layer's collectives of `traffic` seconds prefetched behind the layer
// before it: the first layer's wait whole, then each layer's excess.
double pass(int layers, double compute, double traffic) {
  return traffic + layers * std::max(0.0, traffic - compute);
}

}  // namespace

double fullyShardedExposed(const TrainingJob& job, const Layout& l, const StagePlan& plan, int rank,
                           int microBatches) {
  if (job.framework.zero3Gathering == Framework::Zero3Gathering::kByTensor && l.reshardAfterForward)
    return tensorGathersExposed(job, l, plan, rank, microBatches);
  int layers = rankLayers(plan, rank);
  if (layers == 0) return 0;
  auto [perMicroBatch, backward] = rankMicroBatchSeconds(plan, rank);
  double forward = (perMicroBatch - backward) / layers, layerBackward = backward / layers;
  // Every parameter is gathered, a frozen base's too; the trained ones'
  // gradients are reduced.
  double gather = perLayer(job, l, plan, rank, shardedParams(l, plan, rank), allGatherSeconds,
                           job.precision.weightBytes);
  double reduce = perLayer(job, l, plan, rank, replicatedParams(l, plan, rank),
                           reduceScatterSeconds, job.precision.gradBytes);
  // The step's last backward reduce-scatters every layer's gradient; the
  // last one has no compute after it to hide behind.
  if (!l.reshardAfterForward)  // gathered once, in the first forward
    return pass(layers, forward, gather) + pass(layers, layerBackward, reduce);
  double forwards = microBatches * pass(layers, forward, gather);
  double backwards = (microBatches - 1) * pass(layers, layerBackward, gather);
  double last = gather + layers * std::max(0.0, gather + reduce - layerBackward) + reduce;
  return forwards + backwards + last;
}

}  // namespace strata::plan
