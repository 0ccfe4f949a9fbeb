// Loading a checkpoint into another layout through its tensor index.
//
// Every tensor this rank restores becomes a list of destinations: a view of
// the live tensor (a parameter, a fresh AdamW moment, or a block of a ZeRO
// chunk) with its place in the global tensor. The index's pieces that
// overlap a destination name the files to read; each file is verified, read
// whole (LibTorch archives have no partial reads) and dropped before the next,
// so a rank holds at most one foreign shard at a time, never the whole model
// (unless one file holds it, a one-process checkpoint). Model buffers (the
// dropout call counters, which the trainer sets before every step) are not
// indexed and keep their values.
#include <torch/torch.h>

#include <map>
#include <optional>

#include "checkpoint/adamw_state.h"
#include "checkpoint/checkpoint_shard.h"
#include "checkpoint/mapped_shard.h"
#include "checkpoint/tensor_box.h"
#include "strata/checkpoint/checkpoint.h"
#include "strata/data_parallel/sharded_state.h"

namespace strata::train {
namespace {

struct Destination {
  std::string tensor;
  std::string kind;
  ShardBox box;
  at::Tensor view;  // box.length-shaped, into the live tensor
  int64_t* step = nullptr;
  int64_t covered = 0;
  bool skipped = false;  // a moment of a checkpoint saved before any step
};

struct AdamWTarget {
  at::Tensor parameter, expAvg, expAvgSq;
  int64_t step = -1;
};

int64_t numel(const std::vector<int64_t>& lengths) {
  int64_t n = 1;
  for (int64_t l : lengths) n *= l;
  return n;
}

at::Tensor narrowTo(at::Tensor t, const std::vector<int64_t>& lengths) {
  for (size_t d = 0; d < lengths.size(); ++d) t = t.narrow(static_cast<int64_t>(d), 0, lengths[d]);
  return t;
}

class Destinations {
 public:
  explicit Destinations(RankState& state) : state_(state) {
    for (const IndexedParameter& p : state.parameters)
      byTensor_[p.tensor.unsafeGetTensorImpl()] = &p;
  }

  void addParameters() {
    for (const IndexedParameter& p : state_.parameters) {
      ShardBox box = shardBox(p, state_.tpRank);
      if (!box.empty()) add(p.name, kParameterKind, box, narrowTo(p.tensor.detach(), box.length));
    }
  }

  void addAdamW(std::vector<AdamWTarget>& targets) {
    if (!state_.optimizer) return;
    torch::optim::AdamW* adamw = indexableAdamW(state_.optimizer);
    if (!adamw)
      throw CheckpointError("only AdamW's state (without AMSGrad) loads into another layout");
    std::vector<at::Tensor> params = optimizerParameters(*adamw);
    targets.reserve(params.size());  // destinations point at their steps
    for (const at::Tensor& param : params) {
      const IndexedParameter& p = indexed(param);
      targets.push_back(
          {param, torch::zeros_like(param.detach()), torch::zeros_like(param.detach())});
      AdamWTarget& t = targets.back();
      ShardBox box = shardBox(p, state_.tpRank);
      if (box.empty()) continue;
      add(p.name, kExpAvgKind, box, narrowTo(t.expAvg, box.length), &t.step);
      add(p.name, kExpAvgSqKind, box, narrowTo(t.expAvgSq, box.length), &t.step);
    }
  }

  // Into the live flat state (saveState() aliases it), zeroed first so padding stays 0.
  void addZero(std::vector<std::vector<data_parallel::NamedTensor>>& states,
               std::vector<int64_t>& steps) {
    states.resize(state_.shardedOptimizers.size());
    steps.assign(state_.shardedOptimizers.size(), -1);
    for (size_t g = 0; g < state_.shardedOptimizers.size(); ++g) {
      const data_parallel::ShardedOptimizerState& zero = *state_.shardedOptimizers[g];
      states[g] = zero.saveState();
      std::map<std::string, at::Tensor> flat;
      for (auto& item : states[g]) flat[item.name] = item.tensor;
      if (!flat.count("step"))
        throw CheckpointError("only AdamW's ZeRO state loads into another layout");
      torch::NoGradGuard noGrad;
      for (auto& [name, tensor] : flat)
        if (name != "step") tensor.zero_();
      for (const data_parallel::FlatStateSlot& slot : zero.stateSlots()) {
        const IndexedParameter& p = indexed(slot.parameter);
        for (const FlatRun& run :
             flatRuns(p, state_.tpRank, slot.slotOffset, slot.chunkOffset, slot.chunkNumel)) {
          for (const char* kind : {kExpAvgKind, kExpAvgSqKind}) {
            at::Tensor block = flat.at(kind + slot.suffix)
                                   .narrow(0, run.flatOffset, numel(run.block))
                                   .view(run.block);
            add(p.name, kind, run.box, narrowTo(block, run.box.length), &steps[g]);
          }
        }
      }
    }
  }

  std::vector<Destination>& all() { return list_; }

 private:
  const IndexedParameter& indexed(const at::Tensor& t) const {
    auto found = byTensor_.find(t.unsafeGetTensorImpl());
    if (found == byTensor_.end())
      throw CheckpointError(
          "a parameter of this run's optimizer is missing from its indexed parameters");
    return *found->second;
  }
  void add(const std::string& tensor, const std::string& kind, const ShardBox& box, at::Tensor view,
           int64_t* step = nullptr) {
    list_.push_back({tensor, kind, box, std::move(view), step});
  }

  RankState& state_;
  std::map<c10::TensorImpl*, const IndexedParameter*> byTensor_;
  std::vector<Destination> list_;
};

// The shard's tensor at a '/'-separated key.
at::Tensor readKey(const MappedShard& shard, const std::string& key) {
  std::optional<at::Tensor> value = shard.tensor(key);
  if (!value)
    throw CheckpointError("checkpoint shard '" + shard.path() + "' lacks '" + key +
                          "', which its tensor index names");
  return *value;
}

// The valid part of a piece as stored.
at::Tensor pieceData(const MappedShard& shard, const TensorPiece& piece) {
  const std::string& origin = shard.path();
  at::Tensor stored = readKey(shard, piece.key);
  at::Tensor block = stored;
  if (piece.flat)
    block = stored.reshape({-1}).narrow(0, piece.keyOffset, numel(piece.block)).view(piece.block);
  if (block.dim() != static_cast<int64_t>(piece.length.size()))
    throw CheckpointError("checkpoint shard '" + origin + "': '" + piece.key + "' has " +
                          std::to_string(block.dim()) + " dimensions, its index entry " +
                          std::to_string(piece.length.size()));
  return narrowTo(block, piece.length);
}

// Copies the overlap of a piece into a destination; returns the elements copied.
int64_t copyOverlap(Destination& dst, const TensorPiece& piece, const at::Tensor& data) {
  at::Tensor to = dst.view, from = data;
  int64_t count = 1;
  for (size_t d = 0; d < piece.offset.size(); ++d) {
    int64_t lo = std::max(dst.box.offset[d], piece.offset[d]);
    int64_t hi = std::min(dst.box.offset[d] + dst.box.length[d], piece.offset[d] + piece.length[d]);
    if (lo >= hi) return 0;
    auto dim = static_cast<int64_t>(d);
    to = to.narrow(dim, lo - dst.box.offset[d], hi - lo);
    from = from.narrow(dim, lo - piece.offset[d], hi - lo);
    count *= hi - lo;
  }
  torch::NoGradGuard noGrad;
  to.copy_(from);
  return count;
}

bool overlaps(const Destination& dst, const TensorPiece& piece) {
  for (size_t d = 0; d < piece.offset.size(); ++d) {
    if (std::max(dst.box.offset[d], piece.offset[d]) >=
        std::min(dst.box.offset[d] + dst.box.length[d], piece.offset[d] + piece.length[d]))
      return false;
  }
  return true;
}

// Pairs every destination with the pieces that overlap it, checking shapes.
std::map<std::string, std::vector<std::pair<Destination*, const TensorPiece*>>> plan(
    std::vector<Destination>& destinations, const CheckpointInfo& info, const RankState& state,
    const std::string& stepDir) {
  std::map<std::pair<std::string, std::string>, std::vector<const TensorPiece*>> byTensor;
  bool hasMoments = false;
  for (const TensorPiece& piece : info.pieces) {
    byTensor[{piece.tensor, piece.kind}].push_back(&piece);
    hasMoments = hasMoments || piece.kind != kParameterKind;
  }
  std::map<std::string, std::vector<const IndexedParameter*>> parameters;
  std::map<std::string, std::vector<std::pair<Destination*, const TensorPiece*>>> byFile;
  for (Destination& dst : destinations) {
    auto found = byTensor.find({dst.tensor, dst.kind});
    if (found == byTensor.end()) {
      dst.skipped = dst.kind != kParameterKind && !hasMoments;
      if (dst.skipped) continue;
      throw CheckpointError("checkpoint '" + stepDir + "' does not hold this model's '" +
                            dst.tensor + "' (" + dst.kind + ")");
    }
    for (const TensorPiece* piece : found->second) {
      for (const IndexedParameter& p : state.parameters) {
        if (p.name == dst.tensor && p.globalShape != piece->shape)
          throw CheckpointError("checkpoint '" + stepDir + "' holds another model: '" + dst.tensor +
                                "' has shape " + shapeText(piece->shape) + " there and " +
                                shapeText(p.globalShape) + " here");
      }
      if (overlaps(dst, *piece)) byFile[piece->file].push_back({&dst, piece});
    }
  }
  return byFile;
}

}  // namespace

void loadResharded(const std::string& stepDir, const CheckpointInfo& info, RankState& state) {
  Destinations destinations(state);
  destinations.addParameters();
  std::vector<AdamWTarget> adamw;
  destinations.addAdamW(adamw);
  std::vector<std::vector<data_parallel::NamedTensor>> zeroStates;
  std::vector<int64_t> zeroSteps;
  destinations.addZero(zeroStates, zeroSteps);

  auto byFile = plan(destinations.all(), info, state, stepDir);
  bool first = true;
  for (auto& [file, pairs] : byFile) {
    auto record = std::find_if(info.shards.begin(), info.shards.end(),
                               [&](const ShardRecord& r) { return r.file == file; });
    if (record == info.shards.end())
      throw CheckpointError("checkpoint '" + stepDir + "': its tensor index names '" + file +
                            "', which it does not list as a shard");
    verifyShard(stepDir, *record);
    std::string path = stepDir + "/" + file;
    // Mapped, not loaded: only the pieces this rank copies are read.
    MappedShard shard(path);
    if (first) readRunState([&](const std::string& key) { return readKey(shard, key); }, state);
    first = false;
    for (auto& [dst, piece] : pairs) {
      dst->covered += copyOverlap(*dst, *piece, pieceData(shard, *piece));
      if (dst->step) *dst->step = piece->step;
    }
  }
  for (const Destination& dst : destinations.all()) {
    int64_t wanted = numel(dst.box.length);
    if (!dst.skipped && dst.covered < wanted)
      throw CheckpointError("checkpoint '" + stepDir + "' holds " + std::to_string(dst.covered) +
                            " of the " + std::to_string(wanted) + " elements of '" + dst.tensor +
                            "' (" + dst.kind + ") this rank needs");
  }
  if (torch::optim::AdamW* optimizer = indexableAdamW(state.optimizer)) {
    optimizer->state().clear();
    for (const AdamWTarget& t : adamw)
      if (t.step >= 0) setAdamWState(*optimizer, t.parameter, t.step, t.expAvg, t.expAvgSq);
  }
  for (size_t g = 0; g < zeroStates.size(); ++g) {
    for (auto& item : zeroStates[g])
      if (item.name == "step")
        item.tensor = torch::tensor(std::max<int64_t>(0, zeroSteps[g]), torch::kLong);
    state.shardedOptimizers[g]->loadState(zeroStates[g]);
  }
}

}  // namespace strata::train
