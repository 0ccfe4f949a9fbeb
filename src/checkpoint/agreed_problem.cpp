#include "checkpoint/agreed_problem.h"

#include <torch/torch.h>

#include <cstring>
#include <exception>

#include "strata/runtime/communicator.h"

namespace strata::train {

std::string attempt(const std::function<void()>& work) {
  try {
    work();
    return "";
  } catch (const std::exception& error) {
    std::string what = error.what();
    return what.empty() ? "failed without a message" : what;
  }
}

std::string firstProblem(Communicator& world, const std::string& mine) {
  at::Tensor failed = torch::empty({world.size()}, torch::kInt);  // [W]: 1 where it failed
  world.allGather(failed, torch::full({1}, mine.empty() ? 0 : 1, torch::kInt));
  int first = -1, count = 0;
  for (int r = 0; r < world.size(); ++r) {
    if (failed[r].item<int>() == 0) continue;
    if (first < 0) first = r;
    ++count;
  }
  if (first < 0) return "";
  at::Tensor length = torch::full({1}, static_cast<int64_t>(mine.size()), torch::kLong);
  world.broadcast(length, first);
  at::Tensor text = torch::empty({length.item<int64_t>()}, torch::kByte);
  if (world.rank() == first) std::memcpy(text.data_ptr(), mine.data(), mine.size());
  world.broadcast(text, first);
  std::string reason(static_cast<const char*>(text.data_ptr()), text.numel());
  std::string others = count == 1   ? ""
                       : count == 2 ? " (and 1 more rank)"
                                    : " (and " + std::to_string(count - 1) + " more ranks)";
  return "rank " + std::to_string(first) + others + ": " + reason;
}

}  // namespace strata::train
