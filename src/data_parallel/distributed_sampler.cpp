#include "strata/data_parallel/distributed_sampler.h"

#include <numeric>
#include <string>

#include "strata/error.h"
#include "strata/util/random.h"

namespace strata::data_parallel {

DistributedSampler::DistributedSampler(int64_t datasetSize, int replicas, int rank,
                                       SamplerOptions options)
    : datasetSize_(datasetSize), replicas_(replicas), rank_(rank), options_(options) {
  if (replicas < 1)
    throw ConfigError("sampler replicas must be >= 1, got " + std::to_string(replicas));
  if (rank < 0 || rank >= replicas) {
    throw ConfigError("sampler rank " + std::to_string(rank) + " is outside [0, " +
                      std::to_string(replicas) + ")");
  }
  if (datasetSize < 0) {
    throw ConfigError("sampler dataset size must be >= 0, got " + std::to_string(datasetSize));
  }
  if (datasetSize == 0 && options.remainder == Remainder::kPadByWrapping) {
    throw ConfigError("sampler cannot pad an empty dataset to " + std::to_string(replicas) +
                      " replicas");
  }
}

int64_t DistributedSampler::samplesPerReplica() const {
  if (options_.remainder == Remainder::kDropLast) return datasetSize_ / replicas_;
  return (datasetSize_ + replicas_ - 1) / replicas_;
}

// Fisher-Yates with a generator seeded from (seed, epoch).
std::vector<int64_t> DistributedSampler::permutation(uint64_t epoch) const {
  std::vector<int64_t> order(datasetSize_);
  std::iota(order.begin(), order.end(), 0);
  if (!options_.shuffle) return order;
  util::SplitMix64 mixer(options_.seed);
  util::SplitMix64 random(mixer.next() ^ (epoch * 0xD1B54A32D192ED03ull));
  for (int64_t i = datasetSize_ - 1; i > 0; --i) {
    std::swap(order[i], order[random.below(static_cast<uint64_t>(i) + 1)]);
  }
  return order;
}

std::vector<int64_t> DistributedSampler::indices(uint64_t epoch) const {
  std::vector<int64_t> order = permutation(epoch);
  int64_t perReplica = samplesPerReplica();
  std::vector<int64_t> mine;
  mine.reserve(perReplica);
  for (int64_t k = 0; k < perReplica; ++k) {
    int64_t position = rank_ + k * replicas_;
    mine.push_back(order[position % datasetSize_]);  // wraps only when padding
  }
  return mine;
}

}  // namespace strata::data_parallel
