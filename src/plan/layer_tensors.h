// Internal: a rank's parameter tensors one by one, as a framework that
// gathers each by itself under ZeRO-3 meets them (cost_model.h's
// Framework::zero3Gathering).
#pragma once

#include <vector>

#include "strata/plan/model_desc.h"

namespace strata::plan {

struct WeightTensor {
  double elements = 0;  // on one tp rank
  // What a token multiplies by, of those elements: its FLOPs are 2 x tokens
  // x active a forward. All of a dense matrix; top_k / E of a routed
  // expert's (the tokens spread over the experts); none of an embedding.
  double active = 0;
  bool expert = false;  // a routed expert's: averaged over the experts' own replicas
};

// The weight matrices of one layer on a rank of `tp` and `ep`, in the order
// a forward uses them:
//   GPT:   q, k and v fused (3h^2), the output projection (h^2), the MLP's
//          two (h f each);
//   Llama: q (h^2), k and v (h kv each; whole on every tp rank where
//          model_desc.h's kvReplicated), o (h^2), gate, up and down (h f
//          each);
// an MoE layer's MLP: the router (E h, whole on every tp rank), its E/ep
// routed experts' gate, up and down (h ef each), the shared experts'.
// Norms and biases, vectors of at most 4h values, are left out: a framework
// that gathers by tensor keeps tensors that small whole on every rank
// (DeepSpeed's stage3_param_persistence_threshold: 1e5 elements by default).
std::vector<WeightTensor> layerWeightTensors(const ModelDesc& m, LayerKind kind, int tp, int ep);

// The word embedding on a tp rank (the padded vocabulary's 1/tp) and GPT's
// position table (S x h, whole), as the first stage's forward meets them.
std::vector<WeightTensor> embeddingTensors(const ModelDesc& m, int tp);

// The head's matrix on a tp rank, the word embedding's own when tied.
WeightTensor headTensor(const ModelDesc& m, int tp);

}  // namespace strata::plan
