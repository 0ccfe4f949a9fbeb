// Tokens sent to their experts and their outputs brought back.
//
// A micro-batch's A = T k assignments (token t, slot j) are sorted by expert
// (stably: in assignment order within one expert); expert e of E lives on ep
// rank e / (E / ep). Dispatch:
//   1. each rank tells every other how many rows it sends each of its
//      experts (Communicator::exchangeCounts, [ep, E/ep]);
//   2. the rows go by one all-to-all of variable splits;
//   3. the arrivals, in (source rank, expert) order, are regrouped by local
//      expert: [rows for expert 0 from every source; expert 1; ...].
// Combine undoes 3 and 2 and sums each token's slots weighted by its gates.
// Without an ep group (or at ep 1) only the sorting and the weighted sum
// remain. Dropped assignments (expert -1) are not sent and add nothing.
//
// dispatch and combine are differentiable (the all-to-all's backward is the
// all-to-all back). They block in the ep group's all-to-all, bounded by its
// timeout; every ep rank must exchange with the others in the same order.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "strata/expert_parallel/expert_parallel.h"

namespace strata::expert_parallel::detail {

class TokenExchange {
 public:
  // experts [T, k] int64 (-1: dropped); numExperts E divisible by the ep
  // group's size; rows of `hidden` elements. Blocks in its count exchange,
  // which refuses (ProtocolError naming the sender) counts whose rows would
  // pass the receive limit; the all-to-alls' time goes to
  // parallel.addExchangeSeconds.
  TokenExchange(const at::Tensor& experts, int64_t numExperts, int64_t hidden,
                ExpertParallel& parallel);

  // tokens [T, hidden] -> [N, hidden]: this rank's experts' rows, grouped by
  // local expert (rowsPerLocalExpert() of each).
  at::Tensor dispatch(const at::Tensor& tokens) const;
  // expertOutput [N, hidden] (as dispatched), weights [T, k] -> [T, hidden].
  at::Tensor combine(const at::Tensor& expertOutput, const at::Tensor& weights) const;

  const std::vector<int64_t>& rowsPerLocalExpert() const { return rowsPerLocalExpert_; }
  // [E] int64: assignments this rank sends each expert (after drops).
  const at::Tensor& sentPerExpert() const { return sentPerExpert_; }

 private:
  ExpertParallel* parallel_;
  Communicator* ep_;
  int64_t topK_;
  at::Tensor order_;  // [sent] assignment indices t k + j, by expert
  at::Tensor sentPerExpert_;
  std::vector<int64_t> sendSplits_, receiveSplits_;  // rows per ep rank
  at::Tensor regroup_;                               // [N] arrival row of each grouped row
  at::Tensor ungroup_;                               // [N] grouped row of each arrival row
  std::vector<int64_t> rowsPerLocalExpert_;
};

}  // namespace strata::expert_parallel::detail
