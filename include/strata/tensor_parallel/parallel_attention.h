// Tensor-parallel causal self-attention, heads split across tp ranks.
//
// QKV is one column-parallel projection hidden -> 3 * hidden whose output
// features are laid out head-major, [heads, 3 (q, k, v), headDim], so rank r
// holds whole heads [r*H/p, (r+1)*H/p) with their q, k and v. Each rank runs
// scaled dot-product attention over its heads,
//   O_h = dropout(softmax(Q_h K_h^T / sqrt(d) + causal mask)) V_h,
// and the output projection is row-parallel over the concatenated heads.
//
// Under context parallelism (options.contextParallel) the s tokens are this
// cp rank's share of every sequence, and attention sees the whole sequence
// through the cp group (context_parallel.h); attention dropout is refused
// there, since its masks would not be those of the whole sequence.
//
// With packed documents (options.documents, while a batch is selected) a
// query sees only its own document's keys (packed_documents.h).
//
// Input/output [s, b, hidden], or [s/p, b, hidden] under sequence parallel.
// The constructor throws ConfigError when hidden is not divisible by heads,
// or heads or hidden by tp, for attention dropout under context
// parallelism, and under all-to-all context parallelism when cp does not
// divide a tp rank's heads; forward blocks in the tp and cp communication.
//
// Incremental decoding (kv_cache.h): with a cache, forward takes the tokens
// after the cache's position and keeps this layer's keys and values there.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "strata/context_parallel/context_parallel.h"
#include "strata/context_parallel/packed_documents.h"
#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/kv_cache.h"
#include "strata/tensor_parallel/row_parallel_linear.h"

namespace strata::tensor_parallel {

struct ParallelSelfAttentionOptions {
  int64_t hidden = 0;
  int64_t heads = 0;
  bool sequenceParallel = false;
  double attentionDropout = 0.0;  // on the probabilities, masks per global head
  InitOptions init;               // qkv, proj, dropout: sub-streams 0, 1, 2
  // Each sequence split over this cp group; nullptr: whole sequences here.
  std::shared_ptr<const context_parallel::ContextParallel> contextParallel = nullptr;
  // The training batch's packed documents; nullptr: each sequence one document.
  std::shared_ptr<const context_parallel::PackedDocuments> documents = nullptr;
};

class ParallelSelfAttentionImpl : public torch::nn::Module, public DecodesIncrementally {
 public:
  ParallelSelfAttentionImpl(const ParallelSelfAttentionOptions& options,
                            std::shared_ptr<Communicator> tp);

  at::Tensor forward(const at::Tensor& x);
  // Throws ConfigError under tp > 1, cp or sequence parallelism.
  void decodeWith(std::shared_ptr<KvCache> cache) override;

  ColumnParallelLinear qkv{nullptr};  // hidden -> 3 * hidden / p
  RowParallelLinear proj{nullptr};    // hidden / p -> hidden

 private:
  // Whether the heads are attended in the fused projection's layout
  // (strata/ops/causal_self_attention.h): whole sequences, no cache, no
  // dropout drawn, CPU float32 with a BLAS sgemm.
  bool attendsFused(const at::Tensor& fused) const;
  // q, k, v: [b, H/p, s, d] -> [b, H/p, s, d]; `segments`: packed documents
  // [b, S] or undefined.
  at::Tensor attend(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                    const at::Tensor& segments);

  int64_t localHeads_;
  int64_t headDim_;
  int64_t firstHead_;
  int tpSize_;
  bool sequenceParallel_;
  SeededDropout dropout_;
  std::shared_ptr<const context_parallel::ContextParallel> cp_;
  std::shared_ptr<const context_parallel::PackedDocuments> documents_;
  KvCacheSlot cache_;  // not joined: whole sequences
};
TORCH_MODULE(ParallelSelfAttention);

}  // namespace strata::tensor_parallel
