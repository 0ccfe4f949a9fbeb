#include "strata/train/data_source.h"

#include <torch/torch.h>

#include <sstream>

#include "strata/data/corpus.h"
#include "strata/data/document_split.h"
#include "strata/data/prepared_data.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"
#include "strata/util/random.h"

namespace strata::train {
namespace {

// Separate from the seeds of model init and dropout, which also derive from
// train.seed.
constexpr uint64_t kDataOrderStream = 0xda7a;

std::string loadText(const TrainConfig& config) {
  if (config.data.files.empty())
    return generateCorpus(static_cast<uint64_t>(config.data.corpusSeed), config.data.corpusBytes);
  return readTextFiles(config.data.files);
}

ReaderOptions readerOptions(const TrainConfig& config, int dpRank) {
  ReaderOptions options;
  options.globalBatch = config.train.globalBatch;
  options.replicas = static_cast<int>(config.parallel.dp);
  options.replica = dpRank;
  options.seed = util::mixSeed(static_cast<uint64_t>(config.train.seed), kDataOrderStream);
  return options;
}

// data.prepared: the mapped file split by documents; its vocabulary must be
// data.tokenizer's, so generate decodes what training saw.
// data.loss_on decides whether the targets are masked: "auto" where the
// dataset has a loss mask; data.pack whether windows keep their documents
// apart.
DataSplit preparedSplit(const TrainConfig& config, const Tokenizer& tokenizer) {
  std::shared_ptr<const PreparedData> prepared = openPrepared(config.data.prepared, tokenizer);
  const std::string& lossOn = config.data.lossOn;
  if (lossOn == "assistant" && !prepared->hasLossMask())
    throw ConfigError("data.loss_on = \"assistant\", but " + prepared->prefix() +
                      " has no loss mask (" + prepared->lossMaskPath() +
                      "): prepare it with `strata data prepare --chat`, or set "
                      "data.loss_on = \"all\"");
  const bool masked = lossOn == "assistant" || (lossOn == "auto" && prepared->hasLossMask());
  DocumentSplit split = splitDocuments(prepared, config.data.validationFraction);
  WindowOptions windows;
  windows.maskTargets = masked;
  windows.packDocuments = config.data.pack;
  windows.splitAcrossWindows = config.data.splitAcrossWindows;
  return {WindowDataset(split.train, config.train.seqLen, "training", windows),
          WindowDataset(split.validation, config.train.seqLen, "validation", windows), masked,
          config.data.pack};
}

}  // namespace

DataSplit makeDataSplit(const TrainConfig& config) {
  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(config.data.tokenizer);
  if (config.model.vocab < tokenizer->vocabSize())
    throw ConfigError("model.vocab " + std::to_string(config.model.vocab) +
                      " is smaller than the vocabulary of data.tokenizer, " +
                      tokenizer->describe());
  if (!config.data.prepared.empty()) return preparedSplit(config, *tokenizer);
  std::vector<int64_t> ids = tokenizer->encode(loadText(config));
  torch::Tensor tokens = torch::tensor(ids, torch::kLong);  // [n]
  TokenSplit split = splitTokens(tokens, config.data.validationFraction);
  return {WindowDataset(split.train, config.train.seqLen, "training"),
          WindowDataset(split.validation, config.train.seqLen, "validation")};
}

BatchReader makeTrainReader(const DataSplit& data, const TrainConfig& config, int dpRank) {
  ReaderOptions options = readerOptions(config, dpRank);
  options.shuffle = config.data.shuffle;
  options.tooLittleData = "give more text or lower train.global_batch";
  return BatchReader(data.train, options);
}

BatchReader makeValidationReader(const DataSplit& data, const TrainConfig& config, int dpRank) {
  ReaderOptions options = readerOptions(config, dpRank);
  options.shuffle = false;
  std::ostringstream fraction;
  fraction << config.data.validationFraction;
  options.tooLittleData = "give more text, raise data.validation_fraction (now " + fraction.str() +
                          ") or lower train.global_batch";
  return BatchReader(data.validation, options);
}

}  // namespace strata::train
