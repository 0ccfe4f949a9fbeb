// What a save indexes (tensor_index.h): one copy of every piece this rank
// holds. Parameters and plain AdamW moments are recorded by data-parallel
// rank 0 only, ZeRO's flat moments by every data-parallel rank (each holds
// other chunks), in both cases by the primary copy among tp replicas and
// tied weights only.
#include <torch/torch.h>

#include <map>

#include "checkpoint/adamw_state.h"
#include "checkpoint/tensor_box.h"
#include "strata/checkpoint/checkpoint.h"
#include "strata/data_parallel/sharded_state.h"
#include "strata/expert_parallel/expert_parallel.h"

namespace strata::train {
namespace {

std::string dtypeName(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return "float32";
    case at::kDouble:
      return "float64";
    case at::kHalf:
      return "float16";
    case at::kBFloat16:
      return "bfloat16";
    default:
      return c10::toString(type);
  }
}

// "block0.attn.qkv.weight" -> "model/block0/attn/qkv/weight", the path
// Module::save gives it.
std::string modelKey(const std::string& name) {
  std::string key = "model/" + name;
  for (size_t i = 6; i < key.size(); ++i)
    if (key[i] == '.') key[i] = '/';
  return key;
}

TensorPiece pieceOf(const IndexedParameter& p, const char* kind, const std::string& file,
                    const std::string& key) {
  TensorPiece piece;
  piece.tensor = p.name;
  piece.kind = kind;
  piece.shape = p.globalShape;
  piece.dtype = dtypeName(p.tensor.scalar_type());
  piece.file = file;
  piece.key = key;
  return piece;
}

// A whole stored tensor: this rank's shard of the parameter, less padding.
void addWhole(std::vector<TensorPiece>& out, const IndexedParameter& p, const char* kind,
              const std::string& file, const std::string& key, int tpRank, int64_t step) {
  ShardBox box = shardBox(p, tpRank);
  if (box.empty()) return;  // all padding
  TensorPiece piece = pieceOf(p, kind, file, key);
  piece.offset = box.offset;
  piece.length = box.length;
  piece.step = step;
  out.push_back(std::move(piece));
}

// Whether this rank writes parameter `name` whole (and its AdamW state):
// replica 0 of the ranks holding it.
bool indexesWhole(const RankState& state, const std::string& name) {
  return (expert_parallel::isExpertParameter(name) ? state.expertDpRank : state.dpRank) == 0;
}

void indexAdamW(std::vector<TensorPiece>& out, const RankState& state,
                const std::map<c10::TensorImpl*, const IndexedParameter*>& byTensor,
                const std::string& file) {
  torch::optim::AdamW* adamw = indexableAdamW(state.optimizer);
  if (!adamw) return;
  std::vector<at::Tensor> params = optimizerParameters(*adamw);
  for (size_t i = 0; i < params.size(); ++i) {
    auto found = byTensor.find(params[i].unsafeGetTensorImpl());
    const torch::optim::AdamWParamState* s = adamWStateOf(*adamw, params[i]);
    if (found == byTensor.end() || !s || !indexesWhole(state, found->second->name)) continue;
    addWhole(out, *found->second, kExpAvgKind, file, "adamw/" + expAvgKey(i), state.tpRank,
             s->step());
    addWhole(out, *found->second, kExpAvgSqKind, file, "adamw/" + expAvgSqKey(i), state.tpRank,
             s->step());
  }
}

// This rank's flat state (ZeRO's chunk of each bucket, ZeRO-3's pieces of
// each unit's shard), cut back into the parameters it covers.
void indexZero(std::vector<TensorPiece>& out, const RankState& state,
               const std::map<c10::TensorImpl*, const IndexedParameter*>& byTensor,
               const std::string& file) {
  for (size_t g = 0; g < state.shardedOptimizers.size(); ++g) {
    const data_parallel::ShardedOptimizerState& zero = *state.shardedOptimizers[g];
    int64_t step = -1;
    for (const auto& item : zero.saveState())
      if (item.name == "step") step = item.tensor.item<int64_t>();
    if (step < 0) continue;  // not AdamW: not indexed
    for (const data_parallel::FlatStateSlot& slot : zero.stateSlots()) {
      auto found = byTensor.find(slot.parameter.unsafeGetTensorImpl());
      if (found == byTensor.end()) continue;
      std::string prefix = "sharded_optimizer_" + std::to_string(g) + "/";
      for (const FlatRun& run : flatRuns(*found->second, state.tpRank, slot.slotOffset,
                                         slot.chunkOffset, slot.chunkNumel)) {
        for (const char* kind : {kExpAvgKind, kExpAvgSqKind}) {
          TensorPiece piece = pieceOf(*found->second, kind, file, prefix + kind + slot.suffix);
          piece.offset = run.box.offset;
          piece.length = run.box.length;
          piece.flat = true;
          piece.keyOffset = run.flatOffset;
          piece.block = run.block;
          piece.step = step;
          out.push_back(std::move(piece));
        }
      }
    }
  }
}

}  // namespace

std::vector<TensorPiece> indexShard(const RankState& state, const std::string& file) {
  std::vector<TensorPiece> pieces;
  std::map<c10::TensorImpl*, const IndexedParameter*> byTensor;
  for (const IndexedParameter& p : state.parameters) {
    if (!p.primary) continue;
    byTensor[p.tensor.unsafeGetTensorImpl()] = &p;
    if (indexesWhole(state, p.name))
      addWhole(pieces, p, kParameterKind, file, modelKey(p.name), state.tpRank, 0);
  }
  indexAdamW(pieces, state, byTensor, file);
  indexZero(pieces, state, byTensor, file);
  return pieces;
}

}  // namespace strata::train
