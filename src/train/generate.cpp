#include "strata/train/generate.h"

#include <torch/torch.h>

#include <filesystem>
#include <map>

#include "shape_communicator.h"
#include "strata/error.h"
#include "strata/models/gpt.h"
#include "strata/pipeline/split.h"
#include "strata/schedule/registry.h"
#include "strata/tensor_parallel/sharding.h"
#include "strata/train/checkpoint.h"
#include "strata/train/config_file.h"
#include "strata/train/tokenizer.h"
#include "strata/train/trainer.h"

namespace strata::train {

ShapeCommunicator::ShapeCommunicator(int rank, int size)
    : rank_(rank), ranks_(static_cast<size_t>(size)), name_("shapes-only") {
  for (int r = 0; r < size; ++r) ranks_[static_cast<size_t>(r)] = r;
}

void ShapeCommunicator::refuse() const {
  throw Error("a shapes-only communicator cannot communicate (generation runs in one process)");
}

namespace {

std::string stepDirectoryOf(const std::string& path) {
  if (std::filesystem::exists(path + "/COMPLETE")) return path;
  std::optional<std::string> latest = findLatestComplete(path);
  if (!latest) throw CheckpointError("no complete checkpoint under '" + path + "'");
  return *latest;
}

// Pipeline rank that trained each top-level layer, as Trainer cut the model:
// even counts over pp x virtual stages, stages placed round-robin.
std::vector<int> layerOwners(const TrainConfig& c, int layers) {
  int pp = static_cast<int>(c.parallel.pp);
  int stages = pp * static_cast<int>(c.parallel.virtualStages);
  std::vector<int> owners;
  std::vector<int> counts = pipeline::evenCounts(layers, stages);
  for (int stage = 0; stage < stages; ++stage) {
    for (int i = 0; i < counts[static_cast<size_t>(stage)]; ++i) owners.push_back(stage % pp);
  }
  return owners;
}

// The full model: every tensor from the shard of the rank that trained it,
// tensor-parallel slices concatenated.
torch::nn::Sequential assemble(const std::string& stepDir, const CheckpointInfo& info,
                               const TrainConfig& config) {
  ParallelLayout layout(info.worldSize, info.degrees);
  models::GptConfig gpt = gptConfigOf(config);
  torch::nn::Sequential full = models::buildGpt(gpt, std::make_shared<ShapeCommunicator>(0, 1));
  std::vector<std::string> children;
  for (const auto& child : full->named_children()) children.push_back(child.key());
  std::vector<int> owners = layerOwners(config, static_cast<int>(children.size()));

  int tp = info.degrees.tp;
  std::map<std::pair<int, int>, torch::nn::Sequential> shards;  // (pp, tp) -> loaded model
  for (int p = 0; p < info.degrees.pp; ++p) {
    for (int t = 0; t < tp; ++t) {
      torch::nn::Sequential part =
          models::buildGpt(gpt, std::make_shared<ShapeCommunicator>(t, tp));
      RankState state{part.ptr().get(), nullptr, {}, {}};
      loadCheckpoint(stepDir, layout, layout.rankOf(Coord{p, 0, 0, t}), state);
      shards[{p, t}] = part;
    }
  }
  torch::NoGradGuard noGrad;
  auto copyNamed = [&](const std::string& name, at::Tensor target, bool isParameter) {
    std::string top = name.substr(0, name.find('.'));
    int layer =
        static_cast<int>(std::find(children.begin(), children.end(), top) - children.begin());
    int owner = owners[static_cast<size_t>(layer)];
    int64_t dim = isParameter ? tensor_parallel::shardDimOf(*shards[{owner, 0}], name)
                              : tensor_parallel::kReplicated;
    std::vector<at::Tensor> slices;
    for (int t = 0; t < (dim == tensor_parallel::kReplicated ? 1 : tp); ++t) {
      auto& source = shards[{owner, t}];
      slices.push_back(isParameter ? source->named_parameters()[name]
                                   : source->named_buffers()[name]);
    }
    at::Tensor whole = slices.size() == 1 ? slices[0] : torch::cat(slices, dim);
    // A vocabulary padded to a multiple of tp ends in padding rows.
    if (dim != tensor_parallel::kReplicated && whole.size(dim) > target.size(dim))
      whole = whole.narrow(dim, 0, target.size(dim));
    target.copy_(whole);
  };
  for (const auto& item : full->named_parameters()) copyNamed(item.key(), item.value(), true);
  for (const auto& item : full->named_buffers()) copyNamed(item.key(), item.value(), false);
  full->eval();
  return full;
}

int64_t sampleNext(const at::Tensor& logits, const GenerateOptions& o, at::Generator& generator) {
  if (o.temperature <= 0) return logits.argmax().item<int64_t>();
  at::Tensor scaled = logits / o.temperature;
  if (o.topK > 0 && o.topK < scaled.size(0)) {
    at::Tensor kth = std::get<0>(scaled.topk(o.topK)).min();
    scaled = scaled.masked_fill(scaled < kth, -std::numeric_limits<float>::infinity());
  }
  at::Tensor probabilities = torch::softmax(scaled, 0);
  return at::multinomial(probabilities, 1, false, generator).item<int64_t>();
}

}  // namespace

torch::nn::Sequential loadFullModel(const std::string& checkpoint, TrainConfig* config) {
  std::string stepDir = stepDirectoryOf(checkpoint);
  CheckpointInfo info = readCheckpointInfo(stepDir);
  applyConfigToml(info.configToml, stepDir + "/metadata.toml", *config);
  return assemble(stepDir, info, *config);
}

std::string generateText(const GenerateOptions& o) {
  if (o.tokens < 0 || o.temperature < 0 || o.topK < 0) {
    throw ConfigError("generate: --tokens, --temperature and --top-k must not be negative");
  }
  TrainConfig config;
  torch::nn::Sequential model = loadFullModel(o.checkpoint, &config);

  std::vector<int64_t> ids = encodeBytes(o.prompt.empty() ? "\n" : o.prompt);
  at::Generator generator = at::detail::createCPUGenerator(static_cast<uint64_t>(o.seed));
  torch::NoGradGuard noGrad;
  int64_t context = config.model.context;
  for (int64_t i = 0; i < o.tokens; ++i) {
    int64_t start = std::max<int64_t>(0, static_cast<int64_t>(ids.size()) - context);
    at::Tensor window =
        torch::tensor(std::vector<int64_t>(ids.begin() + start, ids.end()), torch::kLong)
            .unsqueeze(0);                                        // [1, s]
    at::Tensor logits = model->forward(window);                   // [s, 1, vocab]
    at::Tensor last = logits[-1][0].slice(0, 0, kByteVocabSize);  // bytes only
    ids.push_back(sampleNext(last, o, generator));
  }
  return decodeBytes(ids);
}

}  // namespace strata::train
