// Helpers shared by the end-to-end trainer tests.
//
// The ranks of a multi-process test are re-executions of the test binary
// (tests/support/multiprocess.h): they cannot return values to the parent.
// So each rank writes what it measured (its step losses) to a file in a
// folder the parent chose and passed down in the environment, and the parent
// compares after runInProcesses() returned. Code placed before a
// runInProcesses() call also runs in every child; code after it runs only in
// the parent.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "multiprocess.h"
#include "strata/config/config.h"
#include "strata/runtime/world.h"
#include "strata/train/trainer.h"

namespace strata::train::testing {

// A GPT small enough that a 4-process step takes a blink on two cores:
// 4 blocks of width 32, 4 heads, FFN 64, byte vocabulary, 16-token windows,
// global batch 8 in micro-batches of 2, no dropout, tied embeddings.
TrainConfig tinyConfig();

// tinyConfig as a Llama: `kvHeads` key/value heads for its 4 query heads, an
// untied head, Llama 3's rotary base (500000, not the default).
TrainConfig tinyLlamaConfig(int64_t kvHeads);
// tinyLlamaConfig(2) with MoE MLPs in blocks 1 and 3: 4 experts of ffn 32,
// top 2, balance and z-loss weights large enough to matter.
TrainConfig tinyMoeConfig();

// `c` laid out as pp x dp x cp x tp.
TrainConfig withLayout(TrainConfig c, int64_t pp, int64_t dp, int64_t cp, int64_t tp);

// The folder the processes of this test share: inherited from the parent
// (variable kSharedDirVariable) in a rank, freshly created and empty in the
// parent. removeSharedDir() deletes it, in the parent only.
constexpr char kSharedDirVariable[] = "STRATA_TRAINER_TEST_DIR";
std::string sharedDir(const std::string& name);
void removeSharedDir(const std::string& dir);
// Options that hand the shared folder to every rank.
strata::testing::MultiProcessOptions sharedDirOptions(const std::string& dir);

// A job of one process in the calling process, on a free port, so a parent
// can train a serial reference without spawning anything.
std::shared_ptr<World> singleProcessWorld();

// `steps` training steps; their losses (mean over the global batch).
std::vector<double> trainSteps(Trainer& trainer, int steps);

// dir/<name>-rank-<rank>.txt, one value a line, printed so that reading it
// back gives the same doubles bit for bit.
void writeValues(const std::string& dir, const std::string& name, int rank,
                 const std::vector<double>& values);
std::vector<double> readValues(const std::string& dir, const std::string& name, int rank);

// This rank's parameter shards (Trainer::parameterShards()) and its tp
// coordinate, saved to dir by a rank and read back by the parent.
struct SavedShards {
  int tpRank = 0;
  int tpSize = 1;
  std::vector<ParameterShard> shards;
};
void writeShards(const std::string& dir, int rank, const Trainer& trainer);
SavedShards readShards(const std::string& dir, int rank);

// Trains `config`'s layout for three steps, saves a checkpoint under
// dir/ckpt and exports it (strata export) to dir/hf/model.safetensors, in
// shards of at most maxShardBytes when not 0; returns that path.
std::string trainAndExportTo(const std::string& dir, TrainConfig config, int64_t maxShardBytes = 0);

using TensorMap = std::map<std::string, torch::Tensor>;
// Each of the trainer's parameters, cloned, by name.
TensorMap byName(const Trainer& trainer);
// The weights of the checkpoint under dir/ckpt, through a run of
// `oneProcess` (a one-process layout) resumed from it.
TensorMap checkpointWeightsOf(const std::string& dir, TrainConfig oneProcess);
// `config`'s model built in one process (a World of its own) holding
// `weights` by name, in evaluation mode.
torch::nn::Sequential oneProcessModel(const TrainConfig& config, const TensorMap& weights);
// Each of `ranks` ranks' shards saved by writeShards() equals its tp slice
// of `whole`, whose vocabulary tensors (the token embedding, an untied head)
// are first padded with zero rows to `paddedVocabulary`.
void expectShardsSliceWhole(const std::string& dir, int ranks, const TensorMap& whole,
                            int64_t paddedVocabulary);

// Flips one byte in the middle of a file / cuts `bytes` off its end.
void flipMiddleByte(const std::string& path);
void truncateBy(const std::string& path, uintmax_t bytes);

}  // namespace strata::train::testing
