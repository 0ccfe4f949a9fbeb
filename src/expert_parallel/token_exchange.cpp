#include "token_exchange.h"

#include <torch/torch.h>

#include <chrono>

namespace strata::expert_parallel::detail {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Adds the time of its scope to the ExpertParallel's exchange time.
class ExchangeTimer {
 public:
  explicit ExchangeTimer(ExpertParallel& parallel)
      : parallel_(parallel), start_(std::chrono::steady_clock::now()) {}
  ~ExchangeTimer() {
    parallel_.addExchangeSeconds(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  }

 private:
  ExpertParallel& parallel_;
  std::chrono::steady_clock::time_point start_;
};

at::Tensor exchangeRows(const at::Tensor& rows, const std::vector<int64_t>& receiveSplits,
                        const std::vector<int64_t>& sendSplits, ExpertParallel& parallel) {
  ExchangeTimer timer(parallel);
  Communicator& group = *parallel.ep();
  int64_t received = 0;
  for (int64_t n : receiveSplits) received += n;
  std::vector<int64_t> shape = rows.sizes().vec();
  shape[0] = received;
  at::Tensor output = at::empty(shape, rows.options());
  group.allToAll(output, rows.contiguous(), receiveSplits, sendSplits);
  return output;
}

// The variable all-to-all as an autograd function: backward sends the
// gradients back along the same pairs.
struct AllToAllRows : torch::autograd::Function<AllToAllRows> {
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& rows,
                            std::vector<int64_t> receiveSplits, std::vector<int64_t> sendSplits,
                            ExpertParallel* parallel) {
    ctx->saved_data["receive"] = receiveSplits;
    ctx->saved_data["send"] = sendSplits;
    ctx->saved_data["parallel"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(parallel));
    return exchangeRows(rows, receiveSplits, sendSplits, *parallel);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* parallel = reinterpret_cast<ExpertParallel*>(
        static_cast<intptr_t>(ctx->saved_data["parallel"].toInt()));
    at::Tensor grad = exchangeRows(grads[0], ctx->saved_data["send"].toIntVector(),
                                   ctx->saved_data["receive"].toIntVector(), *parallel);
    return {grad, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

std::vector<int64_t> sumRows(const at::Tensor& matrix) {  // [n, m] -> n sums
  at::Tensor sums = matrix.sum(1).cpu();
  return {sums.data_ptr<int64_t>(), sums.data_ptr<int64_t>() + sums.numel()};
}

}  // namespace

TokenExchange::TokenExchange(const at::Tensor& experts, int64_t numExperts, int64_t hidden,
                             ExpertParallel& parallel)
    : parallel_(&parallel), ep_(parallel.ep()), topK_(experts.size(1)) {
  at::Tensor flat = experts.flatten();  // [A]
  at::Tensor kept = flat.ge(0).nonzero().flatten();
  at::Tensor sorted = std::get<1>(at::sort(flat.index_select(0, kept), /*stable=*/true, 0, false));
  order_ = kept.index_select(0, sorted);
  sentPerExpert_ = at::bincount(flat.index_select(0, kept), {}, numExperts).to(at::kLong).cpu();
  if (ep_ == nullptr) {
    const int64_t* counts = sentPerExpert_.data_ptr<int64_t>();
    rowsPerLocalExpert_.assign(counts, counts + numExperts);
    return;
  }
  int n = ep_->size();
  int64_t local = numExperts / n;
  at::Tensor sent = sentPerExpert_.view({n, local});
  at::Tensor arriving;  // [source, local expert]
  {
    ExchangeTimer timer(parallel);
    arriving = ep_->exchangeCounts(sent, hidden);
  }
  sendSplits_ = sumRows(sent);
  receiveSplits_ = sumRows(arriving);
  // Arrival rows are [source 0: expert 0.., source 1: expert 0.., ...];
  // grouped rows are [expert 0: source 0.., expert 1: source 0.., ...].
  const int64_t* a = arriving.data_ptr<int64_t>();
  std::vector<int64_t> sourceStart(static_cast<size_t>(n), 0), regroup;
  for (int s = 1; s < n; ++s) sourceStart[s] = sourceStart[s - 1] + receiveSplits_[s - 1];
  for (int64_t e = 0; e < local; ++e) {
    int64_t rows = 0;
    for (int s = 0; s < n; ++s) {
      int64_t start = sourceStart[s];
      for (int64_t before = 0; before < e; ++before) start += a[s * local + before];
      for (int64_t r = 0; r < a[s * local + e]; ++r) regroup.push_back(start + r);
      rows += a[s * local + e];
    }
    rowsPerLocalExpert_.push_back(rows);
  }
  auto device = experts.device();
  regroup_ = torch::tensor(regroup, torch::kLong).to(device);
  ungroup_ = torch::empty_like(regroup_).index_copy_(
      0, regroup_, torch::arange(static_cast<int64_t>(regroup.size()), regroup_.options()));
}

at::Tensor TokenExchange::dispatch(const at::Tensor& tokens) const {
  at::Tensor rows = tokens.index_select(0, order_.div(topK_, "floor"));  // [sent, hidden]
  if (ep_ == nullptr) return rows;
  at::Tensor arrived = AllToAllRows::apply(rows, receiveSplits_, sendSplits_, parallel_);
  return arrived.index_select(0, regroup_);
}

at::Tensor TokenExchange::combine(const at::Tensor& expertOutput, const at::Tensor& weights) const {
  at::Tensor rows = expertOutput;
  if (ep_ != nullptr) {
    at::Tensor arrivals = expertOutput.index_select(0, ungroup_);
    rows = AllToAllRows::apply(arrivals, sendSplits_, receiveSplits_, parallel_);  // [sent, hidden]
  }
  at::Tensor gates = weights.flatten().index_select(0, order_).to(rows.scalar_type());
  at::Tensor tokens = order_.div(topK_, "floor");
  int64_t count = weights.size(0);
  return torch::zeros({count, rows.size(1)}, rows.options())
      .index_add(0, tokens, rows * gates.unsqueeze(1));
}

}  // namespace strata::expert_parallel::detail
