// --to-dcp: a Strata checkpoint of any layout as one DCP folder.
#include <torch/torch.h>

#include <filesystem>

#include "checkpoint/adamw_state.h"
#include "checkpoint/dcp_bridge.h"
#include "checkpoint/indexed_checkpoint.h"
#include "checkpoint/layout_rank.h"
#include "checkpoint/whole_model.h"
#include "models/llama/llama_torchtitan.h"
#include "strata/checkpoint/dcp_convert.h"
#include "strata/config/model_spec.h"

namespace strata::train {
namespace {

// A tensor in torchtitan's row order.
at::Tensor toTorchtitan(const models::TorchtitanTensor& t, const at::Tensor& ours) {
  at::Tensor whole = ours.detach().contiguous();
  return t.rotaryHeads > 0 ? models::halvesToPairs(whole, t.rotaryHeads) : whole.clone();
}

// Which of the optimizer's parameter groups holds `parameter`.
int64_t groupOf(const torch::optim::AdamW& optimizer, const at::Tensor& parameter) {
  const auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    for (const at::Tensor& p : groups[g].params())
      if (p.is_same(parameter)) return static_cast<int64_t>(g);
  }
  throw CheckpointError("parameter not in any AdamW group");
}

void addGroupSettings(const torch::optim::AdamW& optimizer, FlatDcpState& flat) {
  const auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) {
    const auto& o = static_cast<const torch::optim::AdamWOptions&>(groups[g].options());
    std::string prefix = "param_groups/" + std::to_string(g) + "/";
    auto setting = [&](const std::string& name, double value) {
      flat[prefix + name] = torch::tensor(value, torch::kFloat64);
    };
    // The peak rate: PyTorch's schedulers set each step's themselves.
    setting("lr", o.lr());
    setting("weight_decay", o.weight_decay());
    setting("eps", o.eps());
    setting("beta1", std::get<0>(o.betas()));
    setting("beta2", std::get<1>(o.betas()));
  }
}

// The whole model and AdamW state of `rank` under torchtitan's names.
FlatDcpState flatten(const LayoutRank& rank, const std::vector<models::TorchtitanTensor>& names,
                     int64_t step) {
  FlatDcpState flat;
  auto parameters = rank.model->named_parameters();
  for (const models::TorchtitanTensor& t : names) {
    const at::Tensor* p = parameters.find(t.strata);
    if (!p) throw CheckpointError("the checkpoint's model has no '" + t.strata + "'");
    flat["model/" + t.torchtitan] = toTorchtitan(t, *p);
    flat["group/" + t.torchtitan] = torch::tensor(groupOf(*rank.optimizer, *p), torch::kInt64);
    const torch::optim::AdamWParamState* state = adamWStateOf(*rank.optimizer, *p);
    if (!state) continue;  // never stepped
    flat["exp_avg/" + t.torchtitan] = toTorchtitan(t, state->exp_avg());
    flat["exp_avg_sq/" + t.torchtitan] = toTorchtitan(t, state->exp_avg_sq());
    // PyTorch's AdamW keeps its step count as a float32 scalar tensor.
    flat["step/" + t.torchtitan] = torch::tensor(static_cast<float>(state->step()));
  }
  addGroupSettings(*rank.optimizer, flat);
  flat["train_state/step"] = torch::tensor(step, torch::kInt64);
  return flat;
}

void refuseNonEmpty(const std::string& to) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::exists(to, error) && !(fs::is_directory(to) && fs::is_empty(to, error)))
    throw ConfigError("--to-dcp '" + to +
                      "' exists and is not an empty folder: DCP would mix its files with what "
                      "is there; give a new folder");
}

}  // namespace

std::string exportToDcp(const DcpExportOptions& o) {
  auto say = [&](const std::string& line) {
    if (o.progress) o.progress(line);
  };
  refuseNonEmpty(o.to);
  IndexedCheckpoint source = openIndexedCheckpoint(o.from);
  TrainConfig config = oneProcessConfig(source);
  std::vector<models::TorchtitanTensor> names = models::torchtitanTensors(modelSpecOf(config));
  LayoutRank rank = buildLayoutRank(config, 0, 0);
  loadResharded(source.directory, source.info, rank.state);
  say("read step " + std::to_string(source.info.step) + " of " + source.directory + " (" +
      std::to_string(source.info.worldSize) + " shards)");
  FlatDcpState flat = flatten(rank, names, source.info.step);
  std::string python = dcpPython(o.python);
  say("writing " + std::to_string(names.size()) + " weights and their AdamW state to " + o.to +
      " with PyTorch's DCP (" + python + ")");
  writeDcp(flat, o.to, python);
  return o.to;
}

}  // namespace strata::train
