// The parallel layout: how WORLD_SIZE ranks split into pp x dp x cp x tp.
//
// Built once, validated once, then passed explicitly to every component.
// The constructor throws ConfigError naming every factor
// ("world size 6 != pp 2 x dp 2 x tp 2"); nothing here blocks.
//
// Rank order (see rankOf): tp varies fastest, then cp, then dp, then pp.
// tp exchanges activations inside every layer, so its ranks are neighbours
// and land on one node's fast links under `--nproc-per-node`; pp sends only
// one activation per micro-batch boundary, so it tolerates the slowest links.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace strata {

enum class Dim { kPipeline = 0, kData = 1, kContext = 2, kTensor = 3 };
constexpr std::array<Dim, 4> kAllDims = {Dim::kPipeline, Dim::kData, Dim::kContext, Dim::kTensor};
// "pp", "dp", "cp", "tp".
const char* dimName(Dim dim);

struct ParallelDegrees {
  int pp = 1;
  int dp = 1;
  int cp = 1;  // context parallel: each sequence split over cp ranks
  int tp = 1;

  int of(Dim dim) const;
  int product() const { return pp * dp * cp * tp; }
};

struct Coord {
  int pp = 0;
  int dp = 0;
  int cp = 0;
  int tp = 0;

  int of(Dim dim) const;
  bool operator==(const Coord& other) const;
};

class ParallelLayout {
 public:
  // Throws ConfigError when a degree is below 1 or the product differs from
  // worldSize.
  ParallelLayout(int worldSize, ParallelDegrees degrees);

  int worldSize() const { return worldSize_; }
  const ParallelDegrees& degrees() const { return degrees_; }
  int degree(Dim dim) const { return degrees_.of(dim); }

  // rank = tp + TP * (cp + CP * (dp + DP * pp))
  // Worked example, pp 2 x dp 2 x tp 2 (8 ranks): rank 5 = 1 + 2 * (0 + 2 * (0 + 2 * 1))
  // is tp 1, dp 0, pp 1; its tp group is {4, 5}, its dp group {5, 7}, its pp group {1, 5}.
  int rankOf(const Coord& coord) const;
  // Throws ConfigError for a rank outside [0, worldSize).
  Coord coordOf(int rank) const;

  // Global ranks of the `dim` group holding `rank`, ordered by their `dim`
  // coordinate, so a rank's index in the list is its rank in the group.
  std::vector<int> groupRanks(Dim dim, int rank) const;
  // Every group along `dim`, ordered by the group's lowest rank.
  std::vector<std::vector<int>> allGroups(Dim dim) const;

  // "pp 2 x dp 2 x tp 2"; cp is shown only when above 1.
  std::string describe() const;

 private:
  int worldSize_;
  ParallelDegrees degrees_;
};

// Tensor parallelism exchanges activations inside every layer, which only a
// node's own links carry fast enough; a tp group must not span nodes.
// `nodeSizes`: workers per node in rank order (ProcessEnv::nodeSizes); empty
// means unknown and checks nothing. Throws ConfigError naming the group, the
// two nodes and their workers.
void checkTensorParallelInsideNodes(const ParallelLayout& layout,
                                    const std::vector<int>& nodeSizes);

}  // namespace strata
