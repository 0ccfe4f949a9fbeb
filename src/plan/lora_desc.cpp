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

TargetShape shapeOf(const ModelDesc& m, LoraTarget target) {
  double h = m.hidden, f = m.ffn, kv = m.kvWidth();
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

RankShare rankShare(const ModelDesc& m, LoraTarget target, int tp) {
  TargetShape shape = shapeOf(m, target);
  double r = m.lora.rank, t = tp;
  if (shape.keyValue && kvReplicated(m, tp)) return {r * shape.in, r * shape.out, r * m.headDim()};
  if (shape.split == Split::kColumn) return {r * shape.in, r * shape.out / t, r * shape.out / t};
  return {r * shape.in / t, r * shape.out, r * shape.out};
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
  if (m.moe.enabled() && std::any_of(lora.targets.begin(), lora.targets.end(), isMlpTarget))
    throw PlanError(where +
                    "targets gate, up or down on a mixture-of-experts model: adapters on the "
                    "experts are not implemented");
}

double loraLayerParameters(const ModelDesc& m, int tp) {
  if (!m.lora.enabled) return 0;
  double params = 0;
  for (LoraTarget target : m.lora.targets) {
    RankShare share = rankShare(m, target, tp);
    params += share.a + share.b;
  }
  return params;
}

double loraLayerForwardFlops(const ModelDesc& m, double sequences, int tp) {
  if (!m.lora.enabled) return 0;
  double tokens = sequences * m.seqLen, elements = 0;
  for (LoraTarget target : m.lora.targets) {
    RankShare share = rankShare(m, target, tp);
    elements += share.a + share.bUsed;
  }
  return 2 * tokens * elements;
}

double loraLayerOutputColumns(const ModelDesc& m, int tp) {
  if (!m.lora.enabled) return 0;
  double columns = 0;
  for (LoraTarget target : m.lora.targets) columns += rankShare(m, target, tp).bUsed / m.lora.rank;
  return columns;
}

double largestAdapterElements(const ModelDesc& m) {
  double largest = 0;
  if (!m.lora.enabled) return largest;
  for (LoraTarget target : m.lora.targets) {
    TargetShape shape = shapeOf(m, target);
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
