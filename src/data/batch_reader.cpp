#include "strata/data/batch_reader.h"

#include <numeric>
#include <string>

#include "strata/error.h"
#include "strata/util/random.h"

namespace strata::train {
namespace {

void checkOptions(const WindowDataset& dataset, const ReaderOptions& o) {
  auto text = [](int64_t v) { return std::to_string(v); };
  if (o.globalBatch < 1) throw ConfigError("global batch must be >= 1, got " + text(o.globalBatch));
  if (o.replicas < 1) throw ConfigError("replica count must be >= 1, got " + text(o.replicas));
  if (o.replica < 0 || o.replica >= o.replicas)
    throw ConfigError("replica " + text(o.replica) + " is outside [0, " + text(o.replicas) + ")");
  if (o.globalBatch % o.replicas != 0)
    throw ConfigError("global batch " + text(o.globalBatch) + " is not divisible by " +
                      text(o.replicas) + " data-parallel replicas");
  if (dataset.size() < o.globalBatch)
    throw ConfigError(dataset.name() + " data has " + text(dataset.size()) + " windows of " +
                      text(dataset.sequenceLength()) + " tokens, fewer than one global batch of " +
                      text(o.globalBatch) +
                      (o.tooLittleData.empty() ? "" : ": " + o.tooLittleData));
}

}  // namespace

BatchReader::BatchReader(WindowDataset dataset, ReaderOptions options)
    : dataset_(std::move(dataset)), options_(options) {
  checkOptions(dataset_, options_);
  batchesPerEpoch_ = dataset_.size() / options_.globalBatch;
}

const std::vector<int64_t>& BatchReader::order(int64_t epoch) const {
  if (epoch != cachedEpoch_) {
    if (options_.shuffle) {
      cachedOrder_ =
          util::permutation(dataset_.size(), util::mixSeed(options_.seed, uint64_t(epoch)));
    } else {
      cachedOrder_.resize(static_cast<size_t>(dataset_.size()));
      std::iota(cachedOrder_.begin(), cachedOrder_.end(), int64_t{0});
    }
    cachedEpoch_ = epoch;
  }
  return cachedOrder_;
}

std::vector<int64_t> BatchReader::peekIndices() const {
  const std::vector<int64_t>& windows = order(position_.epoch);
  int64_t local = localBatch();
  int64_t first = position_.batch * options_.globalBatch + options_.replica * local;
  return {windows.begin() + first, windows.begin() + first + local};
}

Batch BatchReader::next() {
  Batch batch = dataset_.gather(peekIndices());
  if (++position_.batch == batchesPerEpoch_) position_ = {position_.epoch + 1, 0};
  return batch;
}

void BatchReader::seek(DataPosition position) {
  if (position.epoch < 0 || position.batch < 0 || position.batch >= batchesPerEpoch_)
    throw ConfigError("data position (epoch " + std::to_string(position.epoch) + ", batch " +
                      std::to_string(position.batch) + ") is invalid for " + dataset_.name() +
                      " data with " + std::to_string(batchesPerEpoch_) + " batches per epoch");
  position_ = position;
}

}  // namespace strata::train
