// --from-dcp: a DCP folder into the model and layout of a run's config.
#include <torch/torch.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "checkpoint/adamw_state.h"
#include "checkpoint/dcp_bridge.h"
#include "checkpoint/layout_rank.h"
#include "checkpoint/whole_model.h"
#include "models/llama/llama_torchtitan.h"
#include "strata/checkpoint/dcp_convert.h"
#include "strata/checkpoint/tensor_index.h"
#include "strata/config/config_file.h"
#include "strata/config/model_spec.h"
#include "strata/config/validate_config.h"
#include "strata/runtime/layout.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

// The entry `kind/<name>` of `flat`, of `like`'s shape, in Strata's row order.
at::Tensor entryFor(const FlatDcpState& flat, const std::string& kind,
                    const models::TorchtitanTensor& t, const at::Tensor& like) {
  auto found = flat.find(kind + "/" + t.torchtitan);
  if (found == flat.end())
    throw CheckpointError("the DCP checkpoint has no " +
                          (kind == "model" ? "weight" : "AdamW " + kind + " of") + " '" +
                          t.torchtitan + "' (Strata's " + t.strata + ")");
  const at::Tensor& theirs = found->second;
  if (theirs.sizes() != like.sizes())
    throw CheckpointError("the DCP checkpoint's " + kind + " '" + t.torchtitan + "' is " +
                          shapeText(theirs.sizes().vec()) + " where the config's model has " +
                          shapeText(like.sizes().vec()));
  at::Tensor value = theirs.to(like.scalar_type());
  return t.rotaryHeads > 0 ? models::pairsToHalves(value, t.rotaryHeads) : value;
}

// Weights the DCP holds that the config's model has not: another model.
void refuseUnknownWeights(const FlatDcpState& flat,
                          const std::vector<models::TorchtitanTensor>& names) {
  std::set<std::string> known;
  for (const models::TorchtitanTensor& t : names) known.insert("model/" + t.torchtitan);
  std::string extra;
  int count = 0;
  for (const auto& [key, tensor] : flat) {
    if (key.rfind("model/", 0) != 0 || known.count(key)) continue;
    if (++count <= 5) extra += (extra.empty() ? "'" : ", '") + key.substr(6) + "'";
  }
  if (count > 0)
    throw CheckpointError("the DCP checkpoint holds " + std::to_string(count) +
                          " weights the config's model has not: " + extra +
                          (count > 5 ? ", ..." : "") +
                          " (is --config the model that was trained?)");
}

// AdamW's step count of `t`: a scalar, kept by PyTorch as a float32 tensor.
int64_t adamStep(const FlatDcpState& flat, const models::TorchtitanTensor& t) {
  auto found = flat.find("step/" + t.torchtitan);
  if (found == flat.end() || found->second.numel() != 1)
    throw CheckpointError("the DCP checkpoint has no AdamW step count of '" + t.torchtitan + "'");
  return static_cast<int64_t>(found->second.item<double>());
}

// The step the DCP was saved at: its train_state's, else its AdamW's.
int64_t savedStep(const FlatDcpState& flat) {
  auto found = flat.find("train_state/step");
  if (found != flat.end()) return found->second.item<int64_t>();
  double step = 0;
  for (const auto& [key, tensor] : flat)
    if (key.rfind("step/", 0) == 0) step = std::max(step, tensor.item<double>());
  return static_cast<int64_t>(step);
}

// Fills `rank` from `flat`; returns whether AdamW state came with it.
bool fill(LayoutRank& rank, const FlatDcpState& flat,
          const std::vector<models::TorchtitanTensor>& names) {
  bool withState = false;
  for (const auto& entry : flat) withState = withState || entry.first.rfind("exp_avg/", 0) == 0;
  auto parameters = rank.model->named_parameters();
  torch::NoGradGuard noGrad;
  for (const models::TorchtitanTensor& t : names) {
    at::Tensor* p = parameters.find(t.strata);
    if (!p) throw CheckpointError("the config's model has no '" + t.strata + "'");
    p->copy_(entryFor(flat, "model", t, *p));
    if (!withState) continue;
    setAdamWState(*rank.optimizer, *p, adamStep(flat, t), entryFor(flat, "exp_avg", t, *p),
                  entryFor(flat, "exp_avg_sq", t, *p));
  }
  return withState;
}

// One process's checkpoint of `rank` at `step`, under `folder`.
std::string writeOneProcess(const std::string& folder, const LayoutRank& rank,
                            const TrainConfig& config, int64_t step) {
  std::string stepDir = stepDirectory(folder, step);
  std::error_code error;
  fs::create_directories(stepDir, error);
  if (!fs::is_directory(stepDir))
    throw CheckpointError("cannot create '" + stepDir + "': " + error.message());
  ShardRecord record = writeShard(stepDir, 0, rank.state);
  CheckpointInfo info{
      step, 1, ParallelLayout(1, {1, 1, 1, 1}).degrees(), configToToml(config), {record}};
  info.pieces = indexShard(rank.state, record.file);
  writeMetadataAndMarker(stepDir, info);
  return stepDir;
}

// The config's own layout, for convertCheckpoint.
ConvertOptions layoutOf(const DcpImportOptions& o, const std::string& from) {
  const ParallelConfig& p = o.config.parallel;
  ConvertOptions layout;
  layout.from = from;
  layout.to = o.to;
  layout.pp = p.pp;
  layout.dp = p.dp;
  layout.tp = p.tp;
  layout.virtualStages = p.virtualStages;
  layout.schedule = p.schedule;
  layout.globalBatch = o.config.train.globalBatch;
  layout.microBatch = o.config.train.microBatch;
  layout.progress = o.progress;
  return layout;
}

}  // namespace

std::string importFromDcp(const DcpImportOptions& o) {
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  TrainConfig oneProcess = oneProcessLayout(o.config);
  validateConfig(oneProcess, 1);
  std::vector<models::TorchtitanTensor> names = models::torchtitanTensors(modelSpecOf(oneProcess));
  std::string python = dcpPython(o.python);
  say("reading " + o.from + " with PyTorch's DCP (" + python + ")");
  FlatDcpState flat = readDcp(o.from, python);
  refuseUnknownWeights(flat, names);
  LayoutRank rank = buildLayoutRank(oneProcess, 0, 0);
  bool withState = fill(rank, flat, names);
  int64_t step = savedStep(flat);
  rank.state.lr.step = step;
  if (o.dataPosition) rank.state.data = o.dataPosition(oneProcess, step);
  say("step " + std::to_string(step) + ": " + std::to_string(names.size()) + " weights" +
      (withState ? " and their AdamW state" : ", no AdamW state (it starts afresh)"));
  // One process's checkpoint first, beside the target, then the config's
  // layout from it as `checkpoint convert` makes any other.
  std::string staging = (fs::path(o.to) / (".from-dcp-" + std::to_string(getpid()))).string();
  std::string written;
  try {
    written = convertCheckpoint(layoutOf(o, writeOneProcess(staging, rank, oneProcess, step)));
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  fs::remove_all(staging);
  return written;
}

}  // namespace strata::train
