#include "layer_tensors.h"

namespace strata::plan {
namespace {

WeightTensor matrix(double elements) { return {elements, elements, false}; }

void addSwiglu(std::vector<WeightTensor>& tensors, double h, double ffn, double tp) {
  for (int i = 0; i < 3; ++i) tensors.push_back(matrix(h * ffn / tp));
}

void addMoeMlp(std::vector<WeightTensor>& tensors, const ModelDesc& m, int tp, int ep) {
  double h = m.hidden, ef = m.moe.expertFfn;
  tensors.push_back(matrix(routerParameters(m)));
  double routed = double(m.moe.topK) / m.moe.experts;
  for (int e = 0; e < m.moe.experts / ep; ++e)
    for (int i = 0; i < 3; ++i) tensors.push_back({h * ef / tp, routed * h * ef / tp, true});
  if (m.moe.sharedExperts > 0) addSwiglu(tensors, h, double(m.moe.sharedExperts) * ef, tp);
}

}  // namespace

std::vector<WeightTensor> layerWeightTensors(const ModelDesc& m, LayerKind kind, int tp, int ep) {
  double h = m.hidden, t = tp;
  std::vector<WeightTensor> tensors;
  if (m.family == Family::kGpt) {
    tensors = {matrix(3 * h * h / t), matrix(h * h / t)};
  } else {
    // Replicated k and v (model_desc.h's kvReplicated) are held whole and
    // computed for one kv head.
    double held = kvReplicated(m, tp) ? m.kvWidth() : m.kvWidth() / t;
    WeightTensor kv{h * held, h * kvColumnsPerRank(m, tp), false};
    tensors = {matrix(h * h / t), kv, kv, matrix(h * h / t)};
  }
  if (kind == LayerKind::kMoe) {
    addMoeMlp(tensors, m, tp, ep);
  } else if (m.family == Family::kGpt) {
    tensors.push_back(matrix(h * m.ffn / t));
    tensors.push_back(matrix(h * m.ffn / t));
  } else {
    addSwiglu(tensors, h, m.ffn, t);
  }
  return tensors;
}

std::vector<WeightTensor> embeddingTensors(const ModelDesc& m, int tp) {
  std::vector<WeightTensor> tensors{{paddedVocab(m, tp) / tp * m.hidden, 0, false}};
  if (m.family == Family::kGpt) tensors.push_back({double(m.seqLen) * m.hidden, 0, false});
  return tensors;
}

WeightTensor headTensor(const ModelDesc& m, int tp) {
  return matrix(paddedVocab(m, tp) / tp * m.hidden);
}

}  // namespace strata::plan
