#include "lora_desc.h"

#include <algorithm>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

// Where a target sits and what it maps: in -> out features of the whole
// matrix, and how tp splits it.
enum class Split { kColumn, kRow };

struct TargetShape {
  double in = 0;
  double out = 0;
  Split split = Split::kColumn;
  bool keyValue = false;  // k or v: replicated when tp exceeds the kv heads
};

// `ffn`: the inner width of the SwiGLU an MLP target sits on.
TargetShape shapeOf(const ModelDesc& m, LoraTarget target, double ffn) {
  double h = m.hidden, f = ffn, kv = m.kvWidth();
  switch (target) {
    case LoraTarget::kQ:
      return {h, h, Split::kColumn};
    case LoraTarget::kK:
    case LoraTarget::kV:
      return {h, kv, Split::kColumn, true};
    case LoraTarget::kO:
      return {h, h, Split::kRow};
    case LoraTarget::kGate:
    case LoraTarget::kUp:
      return {h, f, Split::kColumn};
    case LoraTarget::kDown:
      return {f, h, Split::kRow};
  }
  return {};
}

bool isMlpTarget(LoraTarget target) {
  return target == LoraTarget::kGate || target == LoraTarget::kUp || target == LoraTarget::kDown;
}

// A rank's elements of A and B of one target: {A's, B's}, and the B rows
// it multiplies by (one kv head's of a replicated k or v).
struct RankShare {
  double a = 0;
  double b = 0;
  double bUsed = 0;
};

RankShare rankShare(const ModelDesc& m, LoraTarget target, int tp, double ffn) {
  TargetShape shape = shapeOf(m, target, ffn);
  double r = m.lora.rank, t = tp;
  if (shape.keyValue && kvReplicated(m, tp)) return {r * shape.in, r * shape.out, r * m.headDim()};
  if (shape.split == Split::kColumn) return {r * shape.in, r * shape.out / t, r * shape.out / t};
  return {r * shape.in / t, r * shape.out, r * shape.out};
}

// The SwiGLUs that adapters on gate, up and down sit on in a layer of
// `kind`: each's inner width, how many of it a rank holds, and how many of
// it a token runs through. A dense layer's MLP; an MoE layer's routed
// experts (E/ep held, top_k run) and its shared experts' SwiGLU.
struct SwigluGroup {
  double ffn = 0;
  double held = 0;
  double run = 0;
};

std::vector<SwigluGroup> swigluGroups(const ModelDesc& m, LayerKind kind, int ep) {
  if (kind == LayerKind::kDense) return {{double(m.ffn), 1, 1}};
  const MoeDesc& moe = m.moe;
  std::vector<SwigluGroup> groups{
      {double(moe.expertFfn), double(moe.experts) / ep, double(moe.topK)}};
  if (moe.sharedExperts > 0) groups.push_back({double(moe.sharedExperts) * moe.expertFfn, 1, 1});
  return groups;
}

// Sums `per(share, group)` over a layer's adapters: an attention target
// once, an MLP target on every SwiGLU group.
template <typename Per>
double overAdapters(const ModelDesc& m, int tp, LayerKind kind, int ep, Per per) {
  double sum = 0;
  for (LoraTarget target : m.lora.targets) {
    if (!isMlpTarget(target)) {
      sum += per(rankShare(m, target, tp, m.ffn), SwigluGroup{0, 1, 1});
      continue;
    }
    for (const SwigluGroup& group : swigluGroups(m, kind, ep))
      sum += per(rankShare(m, target, tp, group.ffn), group);
  }
  return sum;
}

}  // namespace

bool LoraDesc::adapts(LoraTarget target) const {
  return enabled && std::find(targets.begin(), targets.end(), target) != targets.end();
}

std::vector<std::string> loraTargetNames() { return {"q", "k", "v", "o", "gate", "up", "down"}; }

LoraTarget loraTargetOf(const std::string& name) {
  std::vector<std::string> names = loraTargetNames();
  auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end())
    throw PlanError("'" + name + "' is not a projection LoRA adapts (q, k, v, o, gate, up, down)");
  return static_cast<LoraTarget>(it - names.begin());
}

void validateLora(const ModelDesc& m) {
  const LoraDesc& lora = m.lora;
  if (!lora.enabled) return;
  std::string where = "model '" + m.name + "': LoRA ";
  if (m.family != Family::kLlama)
    throw PlanError(where + "adapts the llama family's projections; a GPT has none");
  if (lora.rank < 1) throw PlanError(where + "rank must be >= 1, got " + std::to_string(lora.rank));
  if (lora.targets.empty()) throw PlanError(where + "has no targets: name the projections");
  if (m.moe.enabled() && lora.dropout &&
      std::any_of(lora.targets.begin(), lora.targets.end(), isMlpTarget))
    throw PlanError(where +
                    "dropout with targets gate, up or down on a mixture-of-experts model: strata "
                    "train refuses it (the experts' rows arrive in routing order)");
}

double loraLayerParameters(const ModelDesc& m, int tp, LayerKind kind, int ep) {
  if (!m.lora.enabled) return 0;
  return overAdapters(m, tp, kind, ep, [](const RankShare& share, const SwigluGroup& group) {
    return group.held * (share.a + share.b);
  });
}

double loraParameters(const ModelDesc& m) {
  int moe = moeLayerCount(m);
  return (m.layers - moe) * loraLayerParameters(m, 1) +
         moe * loraLayerParameters(m, 1, LayerKind::kMoe);
}

double loraLayerForwardFlops(const ModelDesc& m, double sequences, int tp, LayerKind kind) {
  if (!m.lora.enabled) return 0;
  double tokens = sequences * m.seqLen;
  return 2 * tokens *
         overAdapters(m, tp, kind, 1, [](const RankShare& share, const SwigluGroup& group) {
           return group.run * (share.a + share.bUsed);
         });
}

double loraLayerOutputColumns(const ModelDesc& m, int tp, LayerKind kind) {
  if (!m.lora.enabled) return 0;
  double r = m.lora.rank;
  return overAdapters(m, tp, kind, 1, [r](const RankShare& share, const SwigluGroup& group) {
    return group.run * share.bUsed / r;
  });
}

double largestAdapterElements(const ModelDesc& m) {
  double largest = 0;
  if (!m.lora.enabled) return largest;
  for (LoraTarget target : m.lora.targets)
    for (double ffn : {double(m.ffn), double(m.moe.expertFfn)}) {
      TargetShape shape = shapeOf(m, target, ffn);
      largest = std::max(largest, m.lora.rank * std::max(shape.in, shape.out));
    }
  return largest;
}

double tpRankWeightMatmulFlops(const ModelDesc& m, double sequences, int tp, LayerKind kind) {
  double s = m.seqLen;
  double attention = 4 * sequences * s * s * m.hidden / tp;
  return tpRankLayerForwardFlops(m, sequences, tp, kind) - attention;
}

}  // namespace strata::plan
