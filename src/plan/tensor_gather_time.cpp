#include "tensor_gather_time.h"

#include <algorithm>

#include "layer_tensors.h"
#include "strata/plan/comm.h"

namespace strata::plan {
namespace {

// One use of a tensor in a pass: its gather, the compute that needs it, and
// after that compute, where it is the tensor's last in the backward, its
// gradient's reduce-scatter.
struct TensorUse {
  double gather = 0;   // seconds on the link
  double compute = 0;  // seconds on the device
  double reduce = 0;   // seconds on the link once the compute ends; 0: none
};

// One pass, a micro-batch's forward or its backward, on one device and one
// link that runs its collectives one at a time in the order they are
// issued. A tensor's gather is issued when the compute before it starts:
// one tensor prefetched (DeepSpeed's prefetch bucket, 5e7 elements by
// default, is smaller than these models' weight matrices, so it takes the
// next one only). A gradient's reduce-scatter is issued when the compute
// that makes it ends.
double passSeconds(const std::vector<TensorUse>& uses) {
  if (uses.empty()) return 0;
  std::vector<double> gathered(uses.size());
  double link = 0, device = 0;
  size_t issued = 0;
  auto issueThrough = [&](size_t last, double now) {
    for (; issued <= std::min(last, uses.size() - 1); ++issued) {
      link = std::max(link, now) + uses[issued].gather;
      gathered[issued] = link;
    }
  };
  issueThrough(0, 0);
  for (size_t i = 0; i < uses.size(); ++i) {
    double start = std::max(device, gathered[i]);
    issueThrough(i + 1, start);
    device = start + uses[i].compute;
    if (uses[i].reduce > 0) link = std::max(link, device) + uses[i].reduce;
  }
  return std::max(device, link);
}

// The tensors a rank's stages use in a forward, in order: the embedding's
// on the first stage, each layer's (a stage's dense layers, then its MoE
// ones), the head's on the last.
struct RankTensors {
  std::vector<WeightTensor> embedding;
  std::vector<std::vector<WeightTensor>> layers;
  std::vector<WeightTensor> head;
  // A tied head on the embedding's rank is the same tensor: its one
  // gradient is reduced after the embedding's backward.
  bool headIsEmbedding = false;

  double layerActiveElements() const {
    double sum = 0;
    for (const auto& layer : layers)
      for (const WeightTensor& t : layer) sum += t.active;
    return sum;
  }
  double activeElements() const {
    double sum = layerActiveElements();
    for (const WeightTensor& t : head) sum += t.active;
    return sum;
  }
};

RankTensors rankTensors(const TrainingJob& job, const Layout& l, const StagePlan& plan, int rank) {
  const ModelDesc& m = job.model;
  RankTensors tensors;
  int last = static_cast<int>(plan.stageRank.size()) - 1;
  for (int s : stagesOn(plan, rank)) {
    if (s == 0) tensors.embedding = embeddingTensors(m, l.tp);
    for (int i = 0; i < plan.stageLayers[s].dense; ++i)
      tensors.layers.push_back(layerWeightTensors(m, LayerKind::kDense, l.tp, l.ep));
    for (int i = 0; i < plan.stageLayers[s].moe; ++i)
      tensors.layers.push_back(layerWeightTensors(m, LayerKind::kMoe, l.tp, l.ep));
    if (s == last) tensors.head = {headTensor(m, l.tp)};
  }
  tensors.headIsEmbedding = m.tiedEmbeddings && !tensors.embedding.empty() && !tensors.head.empty();
  return tensors;
}

// Prices a tensor's collectives over the replicas that shard it: the
// experts' own under ep > 1, else dp x cp's.
class Collectives {
 public:
  Collectives(const TrainingJob& job, const Layout& l) : job_(job), l_(l) {}
  double gather(const WeightTensor& t) const {
    return over(t, allGatherSeconds, t.elements * job_.precision.weightBytes);
  }
  double reduce(const WeightTensor& t) const {
    return over(t, reduceScatterSeconds, t.elements * job_.precision.gradBytes);
  }

 private:
  double over(const WeightTensor& t, double (*collective)(double, int, const Link&),
              double bytes) const {
    bool own = t.expert && l_.ep > 1;
    int ranks = own ? l_.expertReplicas() : l_.replicas();
    int stride = own ? l_.expertReplicaStride() : l_.replicaStride();
    if (ranks == 1) return 0;
    return collective(bytes, ranks, groupLink(job_.cluster, stride, ranks));
  }
  const TrainingJob& job_;
  const Layout& l_;
};

// A micro-batch's compute on the rank, spread over its tensors by the
// elements each token multiplies by.
struct ComputeShares {
  double forward = 0;   // a forward's seconds per active element
  double redo = 0;      // recompute's, per active element of the layers
  double backward = 0;  // the backward's own, per active element
};

std::vector<TensorUse> forwardUses(const RankTensors& r, const Collectives& c,
                                   const ComputeShares& per) {
  std::vector<TensorUse> uses;
  auto use = [&](const WeightTensor& t) {
    uses.push_back({c.gather(t), per.forward * t.active, 0});
  };
  for (const WeightTensor& t : r.embedding) use(t);
  for (const auto& layer : r.layers)
    for (const WeightTensor& t : layer) use(t);
  for (const WeightTensor& t : r.head) use(t);
  return uses;
}

// The backward visits the tensors in reverse. With recompute a layer first
// runs its forward again, which gathers its tensors again (a by-tensor
// framework lets each go after every forward, the recompute's too), then
// its backward gathers them once more.
std::vector<TensorUse> backwardUses(const RankTensors& r, const Collectives& c,
                                    const ComputeShares& per) {
  std::vector<TensorUse> uses;
  auto backward = [&](const WeightTensor& t, bool reduced) {
    uses.push_back({c.gather(t), per.backward * t.active, reduced ? c.reduce(t) : 0});
  };
  for (const WeightTensor& t : r.head) backward(t, !r.headIsEmbedding);
  for (auto layer = r.layers.rbegin(); layer != r.layers.rend(); ++layer) {
    if (per.redo > 0)
      for (const WeightTensor& t : *layer) uses.push_back({c.gather(t), per.redo * t.active, 0});
    for (auto t = layer->rbegin(); t != layer->rend(); ++t) backward(*t, true);
  }
  for (auto t = r.embedding.rbegin(); t != r.embedding.rend(); ++t) backward(*t, true);
  return uses;
}

}  // namespace

double tensorGathersExposed(const TrainingJob& job, const Layout& l, const StagePlan& plan,
                            int rank, int microBatches) {
  RankTensors tensors = rankTensors(job, l, plan, rank);
  double active = tensors.activeElements();
  if (active == 0) return 0;
  auto [both, backward] = rankMicroBatchSeconds(plan, rank);
  double redo = 0;
  for (int s : stagesOn(plan, rank)) redo += plan.stages[s].recompute;
  double layerActive = tensors.layerActiveElements();
  ComputeShares per{(both - backward) / active, layerActive > 0 ? redo / layerActive : 0,
                    (backward - redo) / active};
  Collectives collectives(job, l);
  // Every micro-batch's backward reduce-scatters its gradients (the
  // framework accumulates into the shards).
  double pass = passSeconds(forwardUses(tensors, collectives, per)) +
                passSeconds(backwardUses(tensors, collectives, per));
  return microBatches * std::max(0.0, pass - both);
}

}  // namespace strata::plan
