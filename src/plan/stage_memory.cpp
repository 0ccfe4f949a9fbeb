#include "stage_memory.h"

#include <algorithm>

#include "strata/plan/memory.h"

namespace strata::plan {
namespace {

// The trainer's fused head takes its tokens' logits this many at a time
// (tensor_parallel/vocab_parallel_linear_cross_entropy.h's groupTokens).
constexpr double kHeadGroupTokens = 1024;

// Sizes a stage's tensors are made of, a micro-batch.
struct Sizes {
  double tokens = 0;     // b * S/cp, the rank's
  double value = 0;      // bytes of an activation value
  double hidden = 0;     // a [tokens, h] activation, whole: what the head works on
  double handOff = 0;    // a stage's input or output (1/t of `hidden` under sequence parallel)
  double vocabRows = 0;  // bytes of the embedding's or head's weight on a tp rank, [V_p/t, h]
};

Sizes sizesOf(const TrainingJob& job, const Layout& l) {
  const ModelDesc& m = job.model;
  Sizes z;
  z.value = job.precision.activationBytes;
  z.tokens = l.microBatch * double(m.seqLen) / l.cp;
  z.hidden = z.tokens * m.hidden * z.value;
  z.handOff = handOffBytes(job, l);
  z.vocabRows = paddedVocab(m, l.tp) / l.tp * m.hidden * z.value;
  return z;
}

double layerBytes(const TrainingJob& job, const Layout& l, LayerKind kind) {
  return workingActivationBytes(job.model, l.microBatch, l.tp, l.sequenceParallel, l.cp,
                                l.cpAlgorithm, kind, job.precision.activationBytes);
}

// The embedding's: its output (the first layer's input), the token ids'
// int64 copy and bool mask the vocabulary-parallel lookup keeps, and a
// GPT's dropout mask (drawn whole under sequence parallel). Under LoRA
// nothing: the frozen embedding makes no graph, and the first layer's
// frozen norm keeps nothing of an input that takes no gradient.
double embeddingKept(const TrainingJob& job, const Layout& l, const Sizes& z) {
  if (job.model.lora.enabled) return 0;
  double kept = z.handOff + 9 * z.tokens;
  if (job.model.family == Family::kGpt && job.model.dropout) kept += z.hidden;
  return kept;
}

// The final norm's (LayerNorm's fp32 statistics; RMSNorm's x/rms and
// 1/rms, its input being the last layer's sum) on the residual stream's
// rows, and the head's: the fused head
// computes its gradients in the forward and keeps them for the backward,
// the hidden states' (whole) and the weight's; the unfused one (ZeRO-3)
// keeps the norm's output, whole, for the weight's gradient and the
// softmax over its logits with the targets' int64 and bool masks. A frozen
// head (LoRA's) has no weight's gradient, and its frozen norm keeps no
// x/rms.
double headKept(const TrainingJob& job, const Layout& l, const Sizes& z) {
  const ModelDesc& m = job.model;
  bool frozen = m.lora.enabled;
  double rows = z.tokens / (l.sequenceParallel ? l.tp : 1);
  double normValues = frozen ? 0 : 1;
  double norm =
      m.family == Family::kLlama ? rows * (normValues * m.hidden * z.value + 4) : rows * 8;
  if (l.zeroStage < 3) return norm + z.hidden + (frozen ? 0 : z.vocabRows);
  double logits = z.tokens * paddedVocab(m, l.tp) / l.tp * z.value;
  return norm + z.hidden + logits + 9 * z.tokens;
}

// At the end of the head's forward: the fused head's group of logits and
// its hidden states' gradient, with the norm's output it reads; the
// unfused head's logits beside the softmax made of them.
double headForwardWork(const TrainingJob& job, const Layout& l, const Sizes& z) {
  const ModelDesc& m = job.model;
  double vocab = paddedVocab(m, l.tp) / l.tp;
  if (l.zeroStage >= 3) return z.tokens * vocab * z.value;
  double group = std::min(z.tokens, kHeadGroupTokens);
  return group * (vocab + m.hidden) * z.value + z.hidden;
}

// The first products of a stage's backward, through its last layer's MLP:
// the gradient of its inner activation and of its output weight, before it
// accumulates (none for a frozen one).
double mlpBackwardWork(const TrainingJob& job, const Layout& l, LayerKind kind, const Sizes& z) {
  const ModelDesc& m = job.model;
  double inner = kind == LayerKind::kMoe ? double(m.moe.expertFfn) / l.tp : double(m.ffn) / l.tp;
  double rowsPerToken = kind == LayerKind::kMoe ? m.moe.topK : 1;
  double weight = m.lora.enabled ? 0 : m.hidden;
  return (z.tokens * rowsPerToken + weight) * inner * z.value;
}

// The kind of a stage's last layer, given the layers before it.
LayerKind lastLayerKind(const ModelDesc& m, int first, const StageLayers& layers) {
  int count = layers.dense + layers.moe;
  return m.moe.isMoeLayer(first + count - 1) ? LayerKind::kMoe : LayerKind::kDense;
}

// A SwiGLU's backward in tensor operations (ops/swiglu.cpp's, a GPU's and
// a CPU's without AVX-512) holds six [tokens, ffn/t] tensors at its peak:
// the incoming gradient, sigmoid(gate), up's gradient, the gradient times
// up, the derivative's last factor and gate's gradient. One kernel
// (DeviceSpec::fusedSwigluBackward) holds the incoming gradient and the two
// it makes. A frozen base (LoRA) makes this the rank's peak where a trained
// one peaks at its forward's end, holding its head's weight gradient.
double swigluBackwardBytes(const TrainingJob& job, const Layout& l, const Sizes& z) {
  if (job.model.family != Family::kLlama) return 0;
  double tensors = job.cluster.device.fusedSwigluBackward ? 3 : 6;
  return tensors * z.tokens * job.model.ffn / l.tp * z.value;
}

// At the start of the stage's backward: on the last stage the head's
// gradients (its hidden states' and its weight's, before it accumulates),
// then the final norm's and the last layer's; elsewhere the gradient that
// arrives and the last layer's. A weight tied within one stage (pp = 1)
// holds the head's part of its gradient until the embedding's part arrives,
// at the backward's end.
double backwardWork(const TrainingJob& job, const Layout& l, const StagePlan& plan, int s,
                    int first, const Sizes& z) {
  const StageLayers& layers = plan.stageLayers[s];
  bool last = s + 1 == static_cast<int>(plan.stageLayers.size());
  double mlp = layers.dense + layers.moe > 0
                   ? mlpBackwardWork(job, l, lastLayerKind(job.model, first, layers), z)
                   : 0;
  if (!last) return z.handOff + mlp;
  double vocab = paddedVocab(job.model, l.tp) / l.tp;
  double weightGradient = job.model.lora.enabled ? 0 : z.vocabRows;
  double headWeight =
      l.zeroStage >= 3 ? z.tokens * vocab * z.value + weightGradient : weightGradient;
  bool tiedHere = s == 0 && job.model.tiedEmbeddings;
  return std::max(z.hidden + headWeight, z.hidden + mlp + (tiedHere ? weightGradient : 0));
}

// The gradients I keeps for W, a token: those entering each node where a
// weight's gradient branches off I's walk to the input (split_backward.h):
// a GPT layer's two LayerNorms' outputs' and its four linears' outputs', a
// llama layer's two RMSNorms' and its q, k, v, o, gate, up and down
// projections' (the last one's is the stage's output gradient, which W
// needs anyway). The last stage adds its final norm's; the first stage's I
// keeps only its output gradient, its W running the whole backward; under
// ZeRO-3, whose I keeps the graph for W to walk again (pipeline.h's
// weightPassFromKeptGradients), the output gradient too.
double weightPassKept(const TrainingJob& job, const Layout& l, const StageLayers& layers,
                      bool first, bool last, const Sizes& z) {
  if (first || l.zeroStage >= 3) return z.handOff;
  const ModelDesc& m = job.model;
  double h = m.hidden, t = l.tp, f = m.ffn;
  double perLayer = m.family == Family::kLlama
                        ? 4 * h + h / t + 2 * kvColumnsPerRank(m, l.tp) + 2 * f / t
                        : 4 * h + (3 * h + f) / t;
  // Under LoRA only the adapters branch off: each keeps its output's
  // gradient (for B's) and its x A^T's (for A's).
  double count = layers.dense + layers.moe;
  double all = count * perLayer;
  if (m.lora.enabled) {
    double r = double(m.lora.rank) * m.lora.targets.size();
    all = layers.dense * (loraLayerOutputColumns(m, l.tp) + r) +
          layers.moe * (loraLayerOutputColumns(m, l.tp, LayerKind::kMoe) + r);
  }
  return z.tokens * (all + (last ? h : 0)) * z.value;
}

StageMemory oneStage(const TrainingJob& job, const Layout& l, const StagePlan& plan, int s,
                     int first, const Sizes& z) {
  const StageLayers& layers = plan.stageLayers[s];
  bool last = s + 1 == static_cast<int>(plan.stageLayers.size());
  double layerStash = layers.dense * layerBytes(job, l, LayerKind::kDense) +
                      (layers.moe > 0 ? layers.moe * layerBytes(job, l, LayerKind::kMoe) : 0.0);
  StageMemory stage;
  stage.input = s == 0 ? 0 : z.handOff;
  stage.headKept = last ? headKept(job, l, z) : 0;
  double ends = (s == 0 ? embeddingKept(job, l, z) : stage.input) + stage.headKept;
  double whole = ends + layerStash;
  stage.forwardWork = last ? headForwardWork(job, l, z) : 0;
  stage.backwardWork = backwardWork(job, l, plan, s, first, z);
  stage.layerWork = z.handOff + std::max(transientAttentionBytes(job.model, l.microBatch, l.tp,
                                                                 l.cp, l.cpAlgorithm),
                                         swigluBackwardBytes(job, l, z));
  stage.weightPassKept = weightPassKept(job, l, layers, s == 0, last, z);
  // W's products: on the last stage the fused head's gradients, both made
  // again from its kept ones; elsewhere a weight's gradient before it
  // accumulates.
  double ffnWeight = double(job.model.ffn) / l.tp * job.model.hidden * z.value;
  stage.weightPassWork = last ? z.vocabRows + z.hidden : ffnWeight;
  if (job.model.lora.enabled)  // an adapter's gradient; the frozen head makes none
    stage.weightPassWork = last ? z.hidden : largestAdapterElements(job.model) * z.value;
  if (!l.recompute) {
    stage.kept = whole;
  } else if (job.framework.layerRecompute) {
    // Every layer's input kept; one layer rebuilt at a time.
    int count = layers.dense + layers.moe;
    stage.kept = ends + count * z.handOff;
    LayerKind heaviest = layers.moe > 0 ? LayerKind::kMoe : LayerKind::kDense;
    stage.rebuilt = count > 0 ? layerBytes(job, l, heaviest) : 0;
  } else {
    stage.kept = stage.input;
    stage.rebuilt = whole - stage.kept;
    stage.checkpointed = true;
  }
  return stage;
}

}  // namespace

double handOffBytes(const TrainingJob& job, const Layout& l) {
  return layerInputBytes(job.model, l.microBatch, l.tp, l.sequenceParallel, l.cp,
                         job.precision.activationBytes);
}

std::vector<StageMemory> stageMemory(const TrainingJob& job, const Layout& l,
                                     const StagePlan& plan) {
  Sizes z = sizesOf(job, l);
  std::vector<StageMemory> stages;
  int first = 0;
  for (size_t s = 0; s < plan.stageLayers.size(); ++s) {
    stages.push_back(oneStage(job, l, plan, static_cast<int>(s), first, z));
    first += plan.stageLayers[s].dense + plan.stageLayers[s].moe;
  }
  return stages;
}

double largestTensorElements(const TrainingJob& job, const Layout& l, const StagePlan& plan,
                             int rank) {
  const ModelDesc& m = job.model;
  if (m.lora.enabled) return largestAdapterElements(m);  // the frozen base takes no step
  double h = m.hidden, t = l.tp;
  // GPT's fused q, k, v weight and its MLP's; llama's square projections
  // and its MLP's; an expert's.
  double largest = m.family == Family::kGpt ? std::max(3 * h * h, m.ffn * h) / t
                                            : std::max(h * h, m.ffn * h) / t;
  if (m.moe.enabled()) largest = std::max(largest, m.moe.expertFfn * h / t);
  int last = static_cast<int>(plan.stageRank.size()) - 1;
  if (plan.stageRank[0] == rank || plan.stageRank[last] == rank)
    largest = std::max(largest, paddedVocab(m, l.tp) / t * h);
  return largest;
}

}  // namespace strata::plan
