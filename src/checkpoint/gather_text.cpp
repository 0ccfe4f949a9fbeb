#include "checkpoint/gather_text.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstring>

#include "strata/runtime/communicator.h"

namespace strata::train {

std::vector<std::string> allGatherText(Communicator& world, const std::string& mine) {
  at::Tensor lengths = torch::empty({world.size()}, torch::kLong);  // [W]
  world.allGather(lengths, torch::full({1}, static_cast<int64_t>(mine.size()), torch::kLong));
  int64_t longest = std::max<int64_t>(1, lengths.max().item<int64_t>());
  // All-gather wants equal sizes: every text padded to the longest.
  at::Tensor padded = torch::zeros({longest}, torch::kByte);
  std::memcpy(padded.data_ptr(), mine.data(), mine.size());
  at::Tensor all = torch::empty({world.size() * longest}, torch::kByte);  // [W * longest]
  world.allGather(all, padded);
  std::vector<std::string> texts;
  const char* bytes = static_cast<const char*>(all.data_ptr());
  for (int r = 0; r < world.size(); ++r)
    texts.emplace_back(bytes + r * longest, static_cast<size_t>(lengths[r].item<int64_t>()));
  return texts;
}

}  // namespace strata::train
