#include "checkpoint/same_model.h"

#include "checkpoint/parameter_index.h"
#include "strata/config/config_file.h"

namespace strata::train {

namespace {

TrainConfig savedConfig(const CheckpointInfo& saved, const std::string& stepDir) {
  TrainConfig theirs;
  applyConfigToml(saved.configToml, stepDir + "/metadata.toml", theirs);
  return theirs;
}

}  // namespace

void checkSameModel(const TrainConfig& mine, const CheckpointInfo& saved,
                    const std::string& stepDir) {
  TrainConfig theirs = savedConfig(saved, stepDir);
  const ModelConfig& a = theirs.model;
  const ModelConfig& b = mine.model;
  std::string differences;
  auto compare = [&](const char* name, int64_t there, int64_t here) {
    if (there == here) return;
    differences += std::string(differences.empty() ? "" : ", ") + name + " " +
                   std::to_string(there) + " there, " + std::to_string(here) + " here";
  };
  compare("layers", a.layers, b.layers);
  compare("hidden", a.hidden, b.hidden);
  compare("heads", a.heads, b.heads);
  compare("ffn", a.ffn, b.ffn);
  compare("vocab", a.vocab, b.vocab);
  compare("context", a.context, b.context);
  compare("tied_embeddings", a.tiedEmbeddings, b.tiedEmbeddings);
  // kv heads change the k and v projections' shapes (llama; 0 means heads).
  // The rotary base and RMSNorm's epsilon do not: a run may change them.
  auto kvHeads = [](const ModelConfig& m) { return m.kvHeads > 0 ? m.kvHeads : m.heads; };
  compare("kv_heads", kvHeads(a), kvHeads(b));
  // Experts' count, width and placement change which tensors exist; top-k,
  // the losses' weights and the capacity do not.
  compare("experts", a.moe.experts, b.moe.experts);
  if (a.moe.enabled() && b.moe.enabled()) {
    compare("expert_ffn", a.moe.expertFfn, b.moe.expertFfn);
    compare("shared_experts", a.moe.sharedExperts, b.moe.sharedExperts);
    compare("every", a.moe.every, b.moe.every);
  }
  if (a.architecture != b.architecture)
    differences += std::string(differences.empty() ? "" : ", ") + "architecture " + a.architecture +
                   " there, " + b.architecture + " here";
  if (!differences.empty())
    throw CheckpointError("checkpoint '" + stepDir + "' holds another model (" + differences +
                          "): resume with the model it was saved with");
}

bool sameHoldingsPerRank(const TrainConfig& mine, const CheckpointInfo& saved,
                         const std::string& stepDir, int modelLayers) {
  TrainConfig theirs = savedConfig(saved, stepDir);
  if (mine.model.moe.enabled() && theirs.parallel.ep != mine.parallel.ep) return false;
  return layerOwners(theirs, modelLayers) == layerOwners(mine, modelLayers);
}

}  // namespace strata::train
