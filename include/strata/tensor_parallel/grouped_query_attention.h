// Tensor-parallel causal self-attention with grouped-query attention (GQA)
// and rotary position embeddings, as the Llama family has it:
//
//   q = x Wq^T [s, b, H d],  k = x Wk^T, v = x Wv^T [s, b, K d]   (no biases)
//   q, k rotated by position (rotary.h); query head h reads kv head h / (H/K)
//   O = softmax(q k^T / sqrt(d) + causal mask) v;  y = O Wo^T
//
// with H query heads, K kv heads (K divides H: K = H is multi-head, K = 1
// multi-query) and d = hidden / H. Over tp ranks p:
//   - query heads split by whole heads: rank r holds [r H/p, (r+1) H/p);
//     Wq is column-parallel and Wo row-parallel, as in Megatron;
//   - kv heads split the same way when p divides K (rank r holds
//     [r K/p, (r+1) K/p), the kv heads its query heads read);
//   - when p is a multiple of K instead, each kv head is replicated over the
//     p/K ranks whose query heads read it: every rank holds all of Wk and Wv
//     (replicated parameters) and uses kv head r / (p/K). Their gradients
//     are partial per rank, so the weights pass through copyToTensorRegion,
//     which sums the gradients over tp in backward: replicas stay equal.
// Any other (K, p) is refused. The input is entered once for q, k and v
// (all-gathered once under sequence parallel).
//
// Under context parallelism (options.contextParallel) the s tokens are this
// cp rank's share of every sequence: they are rotated by their global
// positions, and attention sees the whole sequence through the cp group
// (context_parallel.h), with the kv heads unrepeated on the wire.
//
// With packed documents (options.documents, while a batch is selected)
// positions restart at each document and a query sees only its own
// document's keys (packed_documents.h).
//
// Input/output [s, b, hidden], or [s/p, b, hidden] under sequence parallel.
// The constructor throws ConfigError naming the values (hidden not divisible
// by heads, an odd head dimension, K not dividing H, H not divisible by p,
// K and p neither dividing the other, and under all-to-all context
// parallelism a cp that does not divide the heads and kv heads of a tp
// rank); forward blocks in the tp and cp communication.
//
// Incremental decoding (kv_cache.h): with a cache, forward takes the tokens
// after the cache's position, rotated by their positions there, and keeps
// this layer's (unrepeated) keys and values in the cache.
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
#include "strata/tensor_parallel/lora.h"
#include "strata/tensor_parallel/rope_scaling.h"
#include "strata/tensor_parallel/rotary.h"
#include "strata/tensor_parallel/row_parallel_linear.h"

namespace strata::tensor_parallel {

struct GroupedQueryAttentionOptions {
  int64_t hidden = 0;
  int64_t heads = 0;    // H
  int64_t kvHeads = 0;  // K
  double ropeTheta = 10000.0;
  RopeScaling ropeScaling;
  bool sequenceParallel = false;
  InitOptions init;  // q, k, v, o: sub-streams 0-3
  // Each sequence split over this cp group; nullptr: whole sequences here.
  std::shared_ptr<const context_parallel::ContextParallel> contextParallel = nullptr;
  // The training batch's packed documents; nullptr: each sequence one document.
  std::shared_ptr<const context_parallel::PackedDocuments> documents = nullptr;
  LoraConfig lora;  // adapters on "q", "k", "v", "o" (lora.h)
};

// Throws ConfigError naming the values when `options` cannot be built over
// tp ranks (the rules above); checks only, builds nothing.
void checkGroupedQueryAttention(const GroupedQueryAttentionOptions& options, int tp);

// Wk or Wv: hidden -> K d, split by whole kv heads over tp or replicated
// (see the top of this header).
class KvProjectionImpl : public torch::nn::Module, public ShardedModule {
 public:
  KvProjectionImpl(const GroupedQueryAttentionOptions& options, const InitOptions& init,
                   const LoraOptions& lora, std::shared_ptr<Communicator> tp);

  // An entered input [s, b, hidden] -> this rank's kv heads [s, b, K/p d],
  // or under replication the one kv head it reads [s, b, d].
  at::Tensor forwardEntered(const at::Tensor& entered);
  int64_t shardDim(const std::string& name) const override {
    return split_ && name != kLoraA ? 0 : kReplicated;
  }
  // kv heads this rank's forward returns.
  int64_t localHeads() const { return localHeads_; }

  at::Tensor weight;  // [K d / p, hidden] split, [K d, hidden] replicated
  // A LoRA adapter: lora_a [r, hidden] whole; lora_b [K d / p, r] split as
  // the weight, or whole when the weight is replicated (each rank then uses
  // its kv head's rows of B, and sums the gradients of both over tp).
  at::Tensor loraA, loraB;

 private:
  bool split_;
  int64_t headDim_;
  int64_t localHeads_;
  int64_t firstRow_;  // under replication: where this rank's kv head starts
  LoraOptions lora_;
  std::shared_ptr<Communicator> tp_;
  SeededDropout loraDropout_;  // on the adapter's input (lora.h)
};
TORCH_MODULE(KvProjection);

class ParallelGroupedQueryAttentionImpl : public torch::nn::Module, public DecodesIncrementally {
 public:
  ParallelGroupedQueryAttentionImpl(const GroupedQueryAttentionOptions& options,
                                    std::shared_ptr<Communicator> tp);

  at::Tensor forward(const at::Tensor& x);
  // Throws ConfigError under tp > 1, cp or sequence parallelism.
  void decodeWith(std::shared_ptr<KvCache> cache) override;

  ColumnParallelLinear q{nullptr};  // hidden -> H d / p
  KvProjection k{nullptr};
  KvProjection v{nullptr};
  RowParallelLinear o{nullptr};  // H d / p -> hidden

 private:
  // [s, b, heads d] -> [b, heads, s, d]
  at::Tensor headsFirst(const at::Tensor& x, int64_t heads) const;
  // The rotary tables of this forward's s tokens [s, d/2]: positions 0 ..
  // s-1, a cp rank's positions, or those after the cache's.
  // `segments`: packed documents [b, S] or undefined.
  RotaryTables rotaryTablesOf(int64_t s, const at::Tensor& like, const at::Tensor& segments) const;
  // Rotated q and k, v [b, *, s, d] -> [b, H/p, s, d].
  at::Tensor attend(const at::Tensor& query, const at::Tensor& key, const at::Tensor& value,
                    const at::Tensor& segments);

  int64_t localHeads_;
  int64_t headDim_;
  double ropeTheta_;
  RopeScaling ropeScaling_;
  bool sequenceParallel_;
  std::shared_ptr<Communicator> tp_;
  std::shared_ptr<const context_parallel::ContextParallel> cp_;
  std::shared_ptr<const context_parallel::PackedDocuments> documents_;
  KvCacheSlot cache_;  // not joined: whole sequences
};
TORCH_MODULE(ParallelGroupedQueryAttention);

}  // namespace strata::tensor_parallel
