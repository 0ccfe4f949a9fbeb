#include "strata/train/loop/generate.h"

#include <torch/torch.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "strata/error.h"
#include "strata/models/model_family.h"
#include "strata/schedule/registry.h"
#include "strata/tensor_parallel/sharding.h"
#include "strata/train/checkpoint/checkpoint.h"
#include "strata/train/config/config_file.h"
#include "strata/train/data/tokenizer.h"
#include "strata/train/loop/trainer.h"
#include "train/loop/parameter_index.h"
#include "train/loop/shape_communicator.h"

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

// The full model: every tensor from the shard of the rank that trained it,
// tensor-parallel slices concatenated.
torch::nn::Sequential assemble(const std::string& stepDir, const CheckpointInfo& info,
                               const TrainConfig& config) {
  ParallelLayout layout(info.worldSize, info.degrees);
  models::ModelSpec spec = modelSpecOf(config);
  const models::ModelFamily& family = models::modelFamily(spec.architecture);
  torch::nn::Sequential full = family.build(spec, std::make_shared<ShapeCommunicator>(0, 1));
  std::vector<std::string> children;
  for (const auto& child : full->named_children()) children.push_back(child.key());
  std::vector<int> owners = layerOwners(config, static_cast<int>(children.size()));

  int tp = info.degrees.tp;
  std::map<std::pair<int, int>, torch::nn::Sequential> shards;  // (pp, tp) -> loaded model
  for (int p = 0; p < info.degrees.pp; ++p) {
    // Each part holds its pipeline rank's layers only: the others are empty
    // shapes, neither drawn nor read.
    std::vector<bool> held = layersOfPipelineRank(config, static_cast<int>(children.size()), p);
    for (int t = 0; t < tp; ++t) {
      torch::nn::Sequential part =
          family.build(spec, std::make_shared<ShapeCommunicator>(t, tp), nullptr, nullptr, held);
      RankState state{part.ptr().get(), nullptr, {}, {}};
      state.heldLayers = held;
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

}  // namespace

void checkSamplingOptions(double temperature, int64_t topK) {
  if (!(temperature >= 0) || !std::isfinite(temperature)) {
    std::ostringstream got;
    got << temperature;
    throw ConfigError("--temperature must be a finite number >= 0 (0 is greedy), got " + got.str());
  }
  if (topK < 0) {
    throw ConfigError("--top-k must be at least 1 (or unset: all tokens), got " +
                      std::to_string(topK));
  }
}

int64_t sampleNextToken(const at::Tensor& logits, double temperature, int64_t topK,
                        at::Generator& generator) {
  checkSamplingOptions(temperature, topK);
  if (temperature == 0) return logits.argmax().item<int64_t>();
  // Exactly the k likeliest by index, not every logit >= the k-th: with ties
  // at the k-th value a threshold would let more than k tokens through.
  int64_t k = topK > 0 ? std::min(topK, logits.size(0)) : logits.size(0);
  auto [values, indices] = logits.topk(k);
  at::Tensor probabilities = torch::softmax(values / temperature, 0);
  int64_t pick = at::multinomial(probabilities, 1, false, generator).item<int64_t>();
  return indices[pick].item<int64_t>();
}

torch::nn::Sequential loadFullModel(const std::string& checkpoint, TrainConfig* config) {
  std::string stepDir = stepDirectoryOf(checkpoint);
  CheckpointInfo info = readCheckpointInfo(stepDir);
  applyConfigToml(info.configToml, stepDir + "/metadata.toml", *config);
  return assemble(stepDir, info, *config);
}

std::string generateText(const GenerateOptions& o) {
  if (o.tokens < 0)
    throw ConfigError("--tokens must not be negative, got " + std::to_string(o.tokens));
  checkSamplingOptions(o.temperature, o.topK);
  TrainConfig config;
  torch::nn::Sequential model = loadFullModel(o.checkpoint, &config);

  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(config.data.tokenizer);
  const int64_t vocab = std::min(tokenizer->vocabSize(), config.model.vocab);
  std::vector<int64_t> ids = tokenizer->encode(o.prompt.empty() ? "\n" : o.prompt);
  // The prompt starts a document, as each training document started.
  if (std::optional<int64_t> begin = tokenizer->beginOfTextId()) ids.insert(ids.begin(), *begin);
  // A prompt that encodes to nothing (SentencePiece drops white space)
  // starts from the end of a document.
  if (ids.empty()) ids.push_back(tokenizer->endOfTextId().value_or(0));
  at::Generator generator = at::detail::createCPUGenerator(static_cast<uint64_t>(o.seed));
  torch::NoGradGuard noGrad;
  int64_t context = config.model.context;
  for (int64_t i = 0; i < o.tokens; ++i) {
    int64_t start = std::max<int64_t>(0, static_cast<int64_t>(ids.size()) - context);
    at::Tensor window =
        torch::tensor(std::vector<int64_t>(ids.begin() + start, ids.end()), torch::kLong)
            .unsqueeze(0);                               // [1, s]
    at::Tensor logits = model->forward(window);          // [s, 1, vocab]
    at::Tensor last = logits[-1][0].slice(0, 0, vocab);  // the tokenizer's ids only
    int64_t next = sampleNextToken(last, o.temperature, o.topK, generator);
    ids.push_back(next);
    // The model ended the document (Llama 3's <|end_of_text|>, GPT-2's
    // <|endoftext|>, SentencePiece's </s>): what follows would be another.
    if (next == tokenizer->endOfTextId()) break;
  }
  // The begin-of-text id marks where the prompt starts; it is no text.
  if (tokenizer->beginOfTextId() && !ids.empty() && ids.front() == *tokenizer->beginOfTextId())
    ids.erase(ids.begin());
  return tokenizer->decode(ids);
}

}  // namespace strata::train
