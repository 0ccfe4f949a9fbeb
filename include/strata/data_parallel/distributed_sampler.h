// Which dataset indices each data-parallel replica reads in an epoch.
//
// Every epoch the indices 0..N-1 are permuted by a shuffle seeded with
// (seed, epoch), identically on every replica and on every platform (the
// generator and the shuffle are our own, not the standard library's
// implementation-defined distributions). Replica r then takes positions
// r, r + R, r + 2R, ... of the permuted list.
//
// Remainder policy, when R does not divide N:
//  - kPadByWrapping (default): the permuted list is extended with its own
//    first elements until R divides its length, so every replica gets
//    ceil(N/R) indices and every index is read at least once per epoch (a few
//    twice).
//  - kDropLast: the last N mod R permuted indices are left out this epoch, so
//    every replica gets floor(N/R) indices and none repeats.
// With shuffle off the permutation is the identity.
//
// Nothing blocks or communicates. The constructor throws ConfigError for a
// replica count below 1, a rank outside [0, R), a negative size, or an empty
// dataset under kPadByWrapping.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::data_parallel {

enum class Remainder { kPadByWrapping, kDropLast };

struct SamplerOptions {
  bool shuffle = true;
  uint64_t seed = 0;
  Remainder remainder = Remainder::kPadByWrapping;
};

class DistributedSampler {
 public:
  DistributedSampler(int64_t datasetSize, int replicas, int rank, SamplerOptions options = {});

  // This replica's indices for `epoch`, in reading order.
  std::vector<int64_t> indices(uint64_t epoch) const;
  // Indices per replica per epoch.
  int64_t samplesPerReplica() const;

 private:
  std::vector<int64_t> permutation(uint64_t epoch) const;

  int64_t datasetSize_;
  int replicas_;
  int rank_;
  SamplerOptions options_;
};

}  // namespace strata::data_parallel
