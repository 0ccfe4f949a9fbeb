#include "checkpoint_shard.h"

#include <torch/torch.h>

#include <mutex>
#include <sstream>

namespace strata::train {
namespace {

// The default CPU generator drives dropout and init; its state makes the
// random stream after a resume equal the uninterrupted one.
at::Tensor cpuGeneratorState() {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  return generator.get_state();
}

void setCpuGeneratorState(const at::Tensor& state) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

at::Tensor scalar(int64_t value) { return torch::tensor(value, torch::kLong); }

int64_t readScalar(torch::serialize::InputArchive& archive, const char* key) {
  at::Tensor value;
  archive.read(key, value);
  return value.item<int64_t>();
}

std::string shapeText(at::IntArrayRef sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

// Copies the saved tensor into `target` in place (so the optimizer's
// references stay valid) after checking its shape: LibTorch's own
// Module::load would silently replace a tensor of a different shape.
void readTensor(torch::serialize::InputArchive& archive, const std::string& key, at::Tensor& target,
                const std::string& path, const std::string& origin) {
  at::Tensor saved;
  if (!archive.try_read(key, saved))
    throw CheckpointError("checkpoint shard '" + origin + "' does not fit this model: it lacks '" +
                          path + key + "'");
  if (saved.sizes() != target.sizes())
    throw CheckpointError("checkpoint shard '" + origin + "' does not fit this model: '" + path +
                          key + "' has shape " + shapeText(saved.sizes()) + " in the checkpoint, " +
                          shapeText(target.sizes()) + " here");
  torch::NoGradGuard noGrad;
  target.copy_(saved);
}

// Mirrors Module::save: own parameters and buffers by name, then one
// sub-archive per child module.
void loadModule(torch::nn::Module& module, torch::serialize::InputArchive& archive,
                const std::string& path, const std::string& origin) {
  for (auto& parameter : module.named_parameters(/*recurse=*/false))
    readTensor(archive, parameter.key(), parameter.value(), path, origin);
  for (auto& buffer : module.named_buffers(/*recurse=*/false))
    readTensor(archive, buffer.key(), buffer.value(), path, origin);
  for (auto& child : module.named_children()) {
    torch::serialize::InputArchive childArchive;
    if (!archive.try_read(child.key(), childArchive))
      throw CheckpointError("checkpoint shard '" + origin +
                            "' does not fit this model: it lacks '" + path + child.key() + "'");
    loadModule(*child.value(), childArchive, path + child.key() + ".", origin);
  }
}

}  // namespace

std::string serializeShard(const RankState& state) {
  torch::serialize::OutputArchive archive, model, optimizer;
  state.model->save(model);
  state.optimizer->save(optimizer);
  archive.write("model", model);
  archive.write("optimizer", optimizer);
  archive.write("lr_step", scalar(state.lr.step));
  archive.write("data_epoch", scalar(state.data.epoch));
  archive.write("data_batch", scalar(state.data.batch));
  archive.write("rng_cpu", cpuGeneratorState());
  std::ostringstream bytes;
  archive.save_to(bytes);
  return bytes.str();
}

void parseShard(const std::string& bytes, const std::string& origin, RankState& state) {
  try {
    torch::serialize::InputArchive archive, model, optimizer;
    archive.load_from(bytes.data(), bytes.size());
    archive.read("model", model);
    archive.read("optimizer", optimizer);
    loadModule(*state.model, model, "", origin);
    if (state.optimizer) state.optimizer->load(optimizer);  // null: model only (generation)
    state.lr.step = readScalar(archive, "lr_step");
    state.data = {readScalar(archive, "data_epoch"), readScalar(archive, "data_batch")};
    at::Tensor rng;
    archive.read("rng_cpu", rng);
    setCpuGeneratorState(rng);
  } catch (const c10::Error& error) {
    throw CheckpointError(
        "checkpoint shard '" + origin +
        "' does not fit this model and optimizer: " + error.what_without_backtrace());
  }
}

}  // namespace strata::train
