#include "strata/data_parallel/replica_sync.h"

#include <torch/torch.h>

#include "strata/error.h"

namespace strata::data_parallel {
namespace {

// FNV-1a over the dtypes and shapes, kept below 2^62 so it survives an int64
// all-reduce unchanged.
int64_t structureFingerprint(const std::vector<NamedTensor>& tensors) {
  uint64_t hash = 1469598103934665603ull;
  auto mix = [&hash](uint64_t value) {
    hash ^= value;
    hash *= 1099511628211ull;
  };
  for (const NamedTensor& t : tensors) {
    mix(static_cast<uint64_t>(t.tensor.scalar_type()));
    mix(static_cast<uint64_t>(t.tensor.dim()));
    for (int64_t d : t.tensor.sizes()) mix(static_cast<uint64_t>(d));
  }
  return static_cast<int64_t>(hash >> 2);
}

// The element-wise max and min of `values` over the group.
std::pair<at::Tensor, at::Tensor> groupExtremes(const at::Tensor& values, Communicator& comm) {
  at::Tensor max = values.clone();
  at::Tensor min = values.clone();
  WorkHandle maxWork = comm.allReduceAsync(max, ReduceOp::kMax);
  WorkHandle minWork = comm.allReduceAsync(min, ReduceOp::kMin);
  maxWork->wait();
  minWork->wait();
  return {max, min};
}

}  // namespace

void checkSameStructure(const std::vector<NamedTensor>& tensors, Communicator& comm) {
  at::Tensor summary = torch::tensor(
      {static_cast<int64_t>(tensors.size()), structureFingerprint(tensors)}, torch::kInt64);
  auto [max, min] = groupExtremes(summary, comm);
  if (max[0].item<int64_t>() != min[0].item<int64_t>()) {
    throw ConfigError(
        "replicas in group " + comm.name() + " hold different numbers of tensors: " + "between " +
        std::to_string(min[0].item<int64_t>()) + " and " + std::to_string(max[0].item<int64_t>()));
  }
  if (max[1].item<int64_t>() != min[1].item<int64_t>()) {
    throw ConfigError("replicas in group " + comm.name() + " hold " +
                      std::to_string(tensors.size()) +
                      " tensors each but their shapes or dtypes differ; build the same model on "
                      "every replica");
  }
}

void broadcastTensors(const std::vector<NamedTensor>& tensors, Communicator& comm, int root) {
  torch::NoGradGuard noGrad;
  std::vector<at::Tensor> staged;
  std::vector<WorkHandle> works;
  // A contiguous tensor is received in place, as itself rather than a
  // detached alias: a transport that keeps its op a little after the wait
  // then holds the tensor, not its storage, which the caller may replace and
  // free at once (ZeRO-3 sharding a unit).
  for (const NamedTensor& t : tensors) {
    staged.push_back(t.tensor.is_contiguous() ? t.tensor : t.tensor.contiguous());
    works.push_back(comm.broadcastAsync(staged.back(), root));
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    works[i]->wait();
    if (!staged[i].is_same(tensors[i].tensor)) tensors[i].tensor.detach().copy_(staged[i]);
  }
}

void checkTensorsEqual(const std::vector<NamedTensor>& tensors, Communicator& comm) {
  if (tensors.empty()) return;
  torch::NoGradGuard noGrad;
  std::vector<at::Tensor> flat;
  for (const NamedTensor& t : tensors)
    flat.push_back(t.tensor.detach().reshape(-1).to(at::kDouble));
  auto [max, min] = groupExtremes(torch::cat(flat), comm);
  at::Tensor equal = max.eq(min);
  int64_t offset = 0;
  for (const NamedTensor& t : tensors) {
    int64_t n = t.tensor.numel();
    if (!equal.narrow(0, offset, n).all().item<bool>()) {
      double spread = (max.narrow(0, offset, n) - min.narrow(0, offset, n)).max().item<double>();
      throw ConfigError("replicas in group " + comm.name() + " differ in parameter '" + t.name +
                        "' (largest difference " + std::to_string(spread) +
                        "); seed them alike or let data parallelism broadcast from rank 0");
    }
    offset += n;
  }
}

}  // namespace strata::data_parallel
