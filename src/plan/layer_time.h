// Internal: the time model of one transformer layer on one micro-batch, its
// compute and the tensor-, context- and expert-parallel traffic it carries
// (formulas in cost_model.h). stage_costs.cpp sums layers into stages.
#pragma once

#include "strata/plan/cost_model.h"

namespace strata::plan {

// Seconds of one transformer layer on one micro-batch: its forward and
// backward compute, and the forward's two tensor-parallel all-reduces of b*s*h
// activation values (with sequence parallel: a reduce-scatter and an
// all-gather each, the same volume and so the same alpha-beta cost). Those
// collectives also wait for the tp rank behind (comm.h): the waits of the
// forward's and the backward's collectives, which follow their compute.
// Replicated k and v projections (model_desc.h's kvReplicated) add one more
// collective to the backward: their weights' gradient all-reduce over tp.
// An MoE layer's MLP reduces its experts' rows over tp (top_k a token) and
// its shared experts' output, and trades tokens over ep (withExpertParallel).
struct LayerTime {
  double forward = 0;
  double backward = 0;
  double tpComm = 0;
  double tpWaitForward = 0;
  double tpWaitBackward = 0;
  double tpWeightGradComm = 0;
  // Context parallelism's traffic that each direction leaves exposed, and
  // its waits for the cp group's slowest rank (see withContextParallel).
  double cpForward = 0;
  double cpBackward = 0;
  double cpWaitForward = 0;
  double cpWaitBackward = 0;
  // Expert parallelism's all-to-alls, on the critical path, with their waits
  // for the ep group's slowest rank (see withExpertParallel).
  double epForward = 0;
  double epBackward = 0;
};

// The tokens of each sequence a rank holds: S / cp (checkLayout makes it whole).
double rankTokens(const ModelDesc& m, const Layout& l);

// A layer of `forward` and `backward` compute seconds with its tensor-parallel
// collectives, activations of `valueBytes` a value.
LayerTime withTpCollectives(double forward, double backward, double valueBytes,
                            const TrainingJob& job, const Layout& l,
                            LayerKind kind = LayerKind::kDense);

// Adds context parallelism to a layer whose attention products take
// `attentionForward` of its forward.
LayerTime withContextParallel(LayerTime layer, double attentionForward, double valueBytes,
                              const TrainingJob& job, const Layout& l);

// The share of a layer's forward FLOPs in its attention products.
double attentionShare(const ModelDesc& m);

// A layer from FLOPs: the matmuls at peak x efficiency, the element-wise work
// at memory bandwidth, and its collectives.
LayerTime layerFromFlops(const TrainingJob& job, const Layout& l, LayerKind kind);

}  // namespace strata::plan
