#include "checkpoint/checkpoint_shard.h"

#include <torch/torch.h>

#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "checkpoint/adamw_state.h"
#include "strata/data_parallel/sharded_state.h"

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
// sub-archive per child module. With `held` (the top-level children to
// load, by index), the others keep what they have.
void loadModule(torch::nn::Module& module, torch::serialize::InputArchive& archive,
                const std::string& path, const std::string& origin,
                const std::vector<bool>& held = {}) {
  for (auto& parameter : module.named_parameters(/*recurse=*/false))
    readTensor(archive, parameter.key(), parameter.value(), path, origin);
  for (auto& buffer : module.named_buffers(/*recurse=*/false))
    readTensor(archive, buffer.key(), buffer.value(), path, origin);
  size_t index = 0;
  for (auto& child : module.named_children()) {
    if (!held.empty() && !held[index++]) continue;
    torch::serialize::InputArchive childArchive;
    if (!archive.try_read(child.key(), childArchive))
      throw CheckpointError("checkpoint shard '" + origin +
                            "' does not fit this model: it lacks '" + path + child.key() + "'");
    loadModule(*child.value(), childArchive, path + child.key() + ".", origin);
  }
}

// The model's layers (top-level children) a shard holds, as saved under
// "held_layers" by a pipeline rank; every layer when the key is absent (a
// whole model, or a shard written before ranks kept only their stages).
std::vector<bool> savedHeldLayers(torch::serialize::InputArchive& archive, size_t layers,
                                  const std::string& origin) {
  at::Tensor held;
  if (!archive.try_read("held_layers", held)) return std::vector<bool>(layers, true);
  if (held.numel() != static_cast<int64_t>(layers))
    throw CheckpointError("checkpoint shard '" + origin +
                          "' does not fit this model: it was saved "
                          "from a model of " +
                          std::to_string(held.numel()) + " layers, this one has " +
                          std::to_string(layers));
  held = held.to(torch::kLong).contiguous();
  const int64_t* flags = held.data_ptr<int64_t>();
  return std::vector<bool>(flags, flags + layers);
}

// The layers to read: those both the shard and this rank hold (`mine`
// empty: all). A layer either lacks keeps what it has (released here, or
// trained by another rank).
std::vector<bool> layersToRead(const std::vector<bool>& saved, const std::vector<bool>& mine) {
  std::vector<bool> read = saved;
  for (size_t i = 0; i < mine.size() && i < read.size(); ++i) read[i] = read[i] && mine[i];
  return read;
}

std::string shardedKey(size_t group) { return "sharded_optimizer_" + std::to_string(group); }

at::Tensor live(const at::Tensor& tensor) { return tensor; }

// Copies the archive can be written from later, whatever happens to the
// originals meanwhile, the same archive byte for byte as the originals'
// would have been now:
// - each storage is copied once, and the copies keep the originals'
//   offsets, sizes, strides and requires_grad, so tensors sharing a storage
//   (a tied weight, views into one flat buffer) still share it;
// - a tensor met twice gives one copy. The originals are kept alive until
//   done(), so the address of a temporary (a view made for the archive) is
//   never taken for another's;
// - the archive's pickler records a tensor that something else references
//   once, and refers back to it: done() keeps a copy referenced from `held`
//   exactly when its original is referenced outside the archive.
class Copier {
 public:
  explicit Copier(std::vector<at::Tensor>& held) : held_(held) {}

  at::Tensor operator()(const at::Tensor& tensor) {
    auto [known, first] = tensors_.try_emplace(tensor.unsafeGetTensorImpl());
    if (first) known->second = {tensor, copy(tensor)};
    return known->second.second;
  }

  void done() {
    for (auto& [impl, pair] : tensors_)
      if (pair.first.use_count() > 1) held_.push_back(pair.second);  // beyond this map's
    tensors_.clear();
    storages_.clear();
  }

 private:
  at::Tensor copy(const at::Tensor& tensor) {
    const c10::Storage& storage = tensor.storage();
    auto [it, fresh] = storages_.try_emplace(storage.unsafeGetStorageImpl());
    if (fresh) {
      it->second = {storage, c10::Storage(c10::Storage::use_byte_size_t(), storage.nbytes(),
                                          c10::GetAllocator(storage.device_type()),
                                          /*resizable=*/false)};
      std::memcpy(it->second.second.data_ptr().get(), storage.data(), storage.nbytes());
    }
    at::Tensor copy = at::empty({0}, tensor.options().requires_grad(false));
    copy.set_(it->second.second, tensor.storage_offset(), tensor.sizes(), tensor.strides());
    return copy.requires_grad_(tensor.requires_grad());
  }

  std::vector<at::Tensor>& held_;
  std::unordered_map<const c10::TensorImpl*, std::pair<at::Tensor, at::Tensor>> tensors_;
  std::unordered_map<const c10::StorageImpl*, std::pair<c10::Storage, c10::Storage>> storages_;
};

// What Module::save writes, parameters and buffers by name, then one
// sub-archive per child module sharing the compilation unit, with each
// tensor as `keep` returns it: the same archive, byte for byte, as
// Module::save's when `keep` is `live`.
// With `held` (the top-level children to save, by index), the others are
// left out.
void saveModule(const torch::nn::Module& module, torch::serialize::OutputArchive& archive,
                const KeepTensor& keep, const std::vector<bool>& held = {}) {
  for (const auto& parameter : module.named_parameters(/*recurse=*/false))
    archive.write(parameter.key(), keep(parameter.value()));
  for (const auto& buffer : module.named_buffers(/*recurse=*/false))
    archive.write(buffer.key(), keep(buffer.value()), /*is_buffer=*/true);
  size_t index = 0;
  for (const auto& child : module.named_children()) {
    if (!held.empty() && !held[index++]) continue;
    if (!child.value()->is_serializable()) continue;
    torch::serialize::OutputArchive childArchive(archive.compilation_unit());
    saveModule(*child.value(), childArchive, keep);
    archive.write(child.key(), childArchive);
  }
}

// AdamW by parameter (adamw_state.h), so the tensor index can address its
// moments; any other optimizer as LibTorch serialises it (live tensors only).
void writeOptimizers(const RankState& state, torch::serialize::OutputArchive& archive,
                     const KeepTensor& keep) {
  if (torch::optim::AdamW* adamw = indexableAdamW(state.optimizer)) {
    torch::serialize::OutputArchive optimizer;
    writeAdamWState(*adamw, optimizer, keep);
    archive.write("adamw", optimizer);
  } else if (state.optimizer) {
    torch::serialize::OutputArchive optimizer;
    state.optimizer->save(optimizer);
    archive.write("optimizer", optimizer);
  }
  archive.write("sharded_optimizers", scalar(static_cast<int64_t>(state.shardedOptimizers.size())));
  for (size_t g = 0; g < state.shardedOptimizers.size(); ++g) {
    torch::serialize::OutputArchive sharded;
    for (const auto& item : state.shardedOptimizers[g]->saveState())
      sharded.write(item.name, keep(item.tensor));
    archive.write(shardedKey(g), sharded);
  }
}

std::unique_ptr<torch::serialize::OutputArchive> shardArchive(const RankState& state,
                                                              const KeepTensor& keep) {
  auto archive = std::make_unique<torch::serialize::OutputArchive>();
  torch::serialize::OutputArchive model(archive->compilation_unit());
  saveModule(*state.model, model, keep, state.heldLayers);
  archive->write("model", model);
  if (!state.heldLayers.empty()) {
    std::vector<int64_t> held(state.heldLayers.begin(), state.heldLayers.end());
    archive->write("held_layers", torch::tensor(held, torch::kLong));
  }
  writeOptimizers(state, *archive, keep);
  archive->write("lr_step", scalar(state.lr.step));
  archive->write("data_epoch", scalar(state.data.epoch));
  archive->write("data_batch", scalar(state.data.batch));
  archive->write("rng_cpu", cpuGeneratorState());
  return archive;
}

// Into the live state: each saved tensor is shape-checked and copied into
// the one saveState() names, then the optimizer rereads its counters.
void readShardedOptimizer(torch::serialize::InputArchive& archive, size_t group,
                          data_parallel::ShardedOptimizerState& optimizer,
                          const std::string& origin) {
  torch::serialize::InputArchive sharded;
  archive.read(shardedKey(group), sharded);
  std::vector<data_parallel::NamedTensor> state = optimizer.saveState();
  for (auto& item : state)
    readTensor(sharded, item.name, item.tensor, shardedKey(group) + ".", origin);
  optimizer.loadState(state);
}

// Shards are read onto the CPU (a checkpoint written on a GPU resumes on a
// machine without one, and the other way round); AdamW's moments then move to
// the device of the parameters, where LibTorch's optimizer expects them. A
// trainer's optimizer holds the parameters of one device.
void placeStateWithParameters(torch::optim::Optimizer& optimizer) {
  std::optional<at::Device> device;
  for (const torch::optim::OptimizerParamGroup& group : optimizer.param_groups())
    if (!group.params().empty()) device = group.params().front().device();
  if (!device) return;
  for (auto& entry : optimizer.state()) {
    if (auto* adamw = dynamic_cast<torch::optim::AdamWParamState*>(entry.second.get())) {
      adamw->exp_avg(adamw->exp_avg().to(*device));
      adamw->exp_avg_sq(adamw->exp_avg_sq().to(*device));
      if (adamw->max_exp_avg_sq().defined())
        adamw->max_exp_avg_sq(adamw->max_exp_avg_sq().to(*device));
    }
  }
}

void readOptimizers(torch::serialize::InputArchive& archive, RankState& state,
                    const std::string& origin) {
  int64_t sharded = 0;
  if (at::Tensor count; archive.try_read("sharded_optimizers", count))
    sharded = count.item<int64_t>();
  bool zeroHere = !state.shardedOptimizers.empty();
  if (state.optimizer || zeroHere) {
    if ((sharded > 0) != zeroHere) {
      throw CheckpointError("checkpoint shard '" + origin + "' was saved by a run " +
                            (sharded > 0 ? "with" : "without") + " ZeRO and this run is " +
                            (zeroHere ? "with" : "without") + " it: resume with the same --zero");
    }
    if (zeroHere && sharded != static_cast<int64_t>(state.shardedOptimizers.size())) {
      throw CheckpointError("checkpoint shard '" + origin + "' holds " + std::to_string(sharded) +
                            " sharded optimizers, this run has " +
                            std::to_string(state.shardedOptimizers.size()));
    }
  }
  torch::serialize::InputArchive optimizer;
  torch::optim::AdamW* adamw = indexableAdamW(state.optimizer);
  if (adamw && archive.try_read("adamw", optimizer)) {
    readAdamWState(optimizer, *adamw, origin);
  } else if (state.optimizer) {
    archive.read("optimizer", optimizer);
    state.optimizer->load(optimizer);
    placeStateWithParameters(*state.optimizer);
  }
  for (size_t g = 0; g < state.shardedOptimizers.size(); ++g)
    readShardedOptimizer(archive, g, *state.shardedOptimizers[g], origin);
}

}  // namespace

std::unique_ptr<ShardSnapshot> snapshotShard(const RankState& state) {
  if (state.optimizer && !indexableAdamW(state.optimizer))
    throw CheckpointError(
        "asynchronous checkpoints need AdamW without AMSGrad, whose state Strata can copy");
  torch::NoGradGuard noGrad;
  auto snapshot = std::make_unique<ShardSnapshot>();
  Copier copier(snapshot->copies);
  snapshot->archive = shardArchive(state, std::ref(copier));
  copier.done();
  return snapshot;
}

void writeShardArchive(torch::serialize::OutputArchive& archive, const ByteSink& sink) {
  // An exception must not unwind through LibTorch's zip writer: its
  // destructor would finish the archive through the failed sink once more.
  std::exception_ptr failure;
  archive.save_to([&](const void* data, std::size_t size) -> std::size_t {
    if (failure) return size;
    try {
      sink(data, size);
    } catch (...) {
      failure = std::current_exception();
    }
    return size;
  });
  if (failure) std::rethrow_exception(failure);
}

void serializeShard(const RankState& state, const ByteSink& sink) {
  writeShardArchive(*shardArchive(state, live), sink);
}

void readRunState(const ShardTensorReader& read, RankState& state) {
  state.lr.step = read("lr_step").item<int64_t>();
  state.data = {read("data_epoch").item<int64_t>(), read("data_batch").item<int64_t>()};
  setCpuGeneratorState(read("rng_cpu"));
}

void readShardFile(const std::string& path, RankState& state) {
  try {
    torch::serialize::InputArchive archive, model;
    archive.load_from(path, at::Device(at::kCPU));
    archive.read("model", model);
    std::vector<bool> saved = savedHeldLayers(archive, state.model->children().size(), path);
    loadModule(*state.model, model, "", path, layersToRead(saved, state.heldLayers));
    readOptimizers(archive, state, path);  // none: model only (generation)
    readRunState(
        [&](const std::string& key) {
          at::Tensor value;
          archive.read(key, value);
          return value;
        },
        state);
  } catch (const c10::Error& error) {
    throw CheckpointError(
        "checkpoint shard '" + path +
        "' does not fit this model and optimizer: " + error.what_without_backtrace());
  }
}

}  // namespace strata::train
