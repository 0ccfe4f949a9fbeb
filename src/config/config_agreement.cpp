#include "config/config_agreement.h"

#include <torch/torch.h>

#include <cstring>

#include "strata/config/config_file.h"
#include "strata/error.h"

namespace strata::train {
namespace {

// FNV-1a: the same 64 bits in every process, whatever the binary.
int64_t fingerprint(const std::string& text) {
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return static_cast<int64_t>(hash);
}

// The fingerprint of every rank, [world.size()].
at::Tensor gatherFingerprints(const std::string& text, Communicator& world) {
  at::Tensor mine = torch::full({1}, fingerprint(text), torch::kLong);
  at::Tensor all = torch::empty({world.size()}, torch::kLong);
  world.allGather(all, mine);
  return all;
}

// `root`'s text on every rank: its length, then its bytes.
std::string broadcastText(const std::string& text, int root, Communicator& world) {
  at::Tensor length = torch::full({1}, static_cast<int64_t>(text.size()), torch::kLong);
  world.broadcast(length, root);
  at::Tensor bytes = torch::zeros({length.item<int64_t>()}, torch::kUInt8);
  if (world.rank() == root) std::memcpy(bytes.data_ptr(), text.data(), text.size());
  world.broadcast(bytes, root);
  return std::string(static_cast<const char*>(bytes.data_ptr()), bytes.numel());
}

// "model.hidden = 64 on rank 3, 32 on rank 0; ..." for every option that differs.
std::string describeDifferences(const std::string& reference, const std::string& other,
                                int otherRank) {
  TrainConfig a, b;
  applyConfigToml(reference, "rank 0's configuration", a);
  applyConfigToml(other, "rank " + std::to_string(otherRank) + "'s configuration", b);
  auto left = configEntries(a), right = configEntries(b);
  std::string text;
  for (size_t i = 0; i < left.size(); ++i) {
    if (left[i].second == right[i].second) continue;
    text += (text.empty() ? "" : "; ") + left[i].first + " = " + right[i].second + " on rank " +
            std::to_string(otherRank) + ", " + left[i].second + " on rank 0";
  }
  return text;
}

}  // namespace

void checkSameConfigOnEveryRank(const TrainConfig& config, Communicator& world) {
  std::string text = configToToml(config);
  at::Tensor all = gatherFingerprints(text, world);
  const int64_t* prints = all.data_ptr<int64_t>();
  std::string differing;
  int first = -1;
  for (int rank = 1; rank < world.size(); ++rank) {
    if (prints[rank] == prints[0]) continue;
    if (first < 0) first = rank;
    differing += (differing.empty() ? "" : ", ") + std::to_string(rank);
  }
  if (first < 0) return;
  std::string reference = broadcastText(text, 0, world);
  std::string other = broadcastText(text, first, world);
  throw ConfigError("ranks were started with different configurations: rank(s) " + differing +
                    " differ from rank 0; " + describeDifferences(reference, other, first));
}

}  // namespace strata::train
