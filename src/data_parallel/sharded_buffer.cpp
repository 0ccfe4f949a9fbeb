#include "data_parallel/sharded_buffer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <limits>

#include "data_parallel/storage_release.h"

namespace strata::data_parallel {

ShardedBuffer::ShardedBuffer(std::vector<NamedTensor> params, int shards)
    : params_(std::move(params)) {
  if (params_.empty()) return;
  std::vector<int64_t> numels;
  for (const NamedTensor& p : params_) numels.push_back(p.tensor.numel());
  // One bucket: bucket sizes larger than any unit.
  constexpr int64_t kWhole = std::numeric_limits<int64_t>::max() / 2;
  layout_ = BucketLayout::plan(numels, params_[0].tensor.element_size(),
                               BucketSizes{kWhole, kWhole}, shards);
}

int64_t ShardedBuffer::shardValues(int rank) {
  torch::NoGradGuard noGrad;
  if (empty()) {
    shard_ = full_ = torch::empty({0});
    return 0;
  }
  at::TensorOptions type = params_[0].tensor.options().requires_grad(false);
  int64_t chunk = layout_.shardNumel();
  int64_t begin = rank * chunk;          // the chunk in the flat layout
  shard_ = torch::zeros({chunk}, type);  // padding stays 0
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor param = params_[i].tensor;
    const ParamSlot& slot = layout_.slot(static_cast<int>(i));
    int64_t from = std::max(slot.offset, begin);
    int64_t to = std::min(slot.offset + slot.numel, begin + chunk);
    if (from < to) {
      shard_.narrow(0, from - begin, to - from)
          .copy_(param.reshape({-1}).narrow(0, from - slot.offset, to - from));
    }
  }
  std::vector<std::vector<int64_t>> shapes;
  for (const NamedTensor& named : params_) {
    at::Tensor param = named.tensor;
    shapes.push_back(param.sizes().vec());
    param.set_();  // frees the values unless someone else holds them
  }
  full_ = torch::empty({layout_.totalNumel()}, type);
  for (size_t i = 0; i < params_.size(); ++i) {
    at::Tensor param = params_[i].tensor;
    const ParamSlot& slot = layout_.slot(static_cast<int>(i));
    // set_ rather than a view: the parameter keeps its own version counter,
    // so gathers into the buffer never invalidate what autograd saved.
    param.set_(full_.storage(), slot.offset, shapes[i], c10::contiguous_strides(shapes[i]));
    param.mutable_grad().reset();
  }
  releaseStorage(full_);
  return chunk * static_cast<int64_t>(shard_.element_size());
}

int64_t ShardedBuffer::gather(Communicator& comm) {
  if (held_ || empty()) return 0;
  int64_t numel = layout_.totalNumel();
  restoreStorage(full_, static_cast<size_t>(numel * full_.element_size()));
  held_ = true;
  gather_ = comm.allGatherAsync(full_, shard_);
  return numel * static_cast<int64_t>(full_.element_size());
}

double ShardedBuffer::wait() {
  if (!gather_) return 0;
  WorkHandle work = std::move(gather_);
  auto start = std::chrono::steady_clock::now();
  work->wait();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int64_t ShardedBuffer::release() {
  if (!held_) return 0;
  wait();  // the collective must complete on every rank before its memory goes
  releaseStorage(full_);
  held_ = false;
  return layout_.totalNumel() * static_cast<int64_t>(full_.element_size());
}

void ShardedBuffer::commit(int rank) {
  torch::NoGradGuard noGrad;
  wait();
  int64_t chunk = layout_.shardNumel();
  shard_.copy_(full_.narrow(0, rank * chunk, chunk));
}

std::vector<ShardedBuffer> buffersByDtype(const std::vector<NamedTensor>& params, int shards) {
  std::vector<std::vector<NamedTensor>> byDtype;
  for (const NamedTensor& p : params) {
    auto same = std::find_if(byDtype.begin(), byDtype.end(), [&](const auto& group) {
      return group.front().tensor.scalar_type() == p.tensor.scalar_type();
    });
    if (same == byDtype.end())
      byDtype.push_back({p});
    else
      same->push_back(p);
  }
  std::vector<ShardedBuffer> buffers;
  for (std::vector<NamedTensor>& group : byDtype) buffers.emplace_back(std::move(group), shards);
  return buffers;
}

}  // namespace strata::data_parallel
