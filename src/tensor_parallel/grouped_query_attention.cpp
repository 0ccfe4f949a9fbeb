#include "strata/tensor_parallel/grouped_query_attention.h"

#include <torch/torch.h>

#include "strata/context_parallel/all_to_all_attention.h"
#include "strata/error.h"
#include "strata/ops/linear.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/rotary.h"

namespace strata::tensor_parallel {
namespace {

std::string n(int64_t value) { return std::to_string(value); }

// Sub-streams of the attention's seed.
enum Stream : uint64_t { kQuery = 0, kKey = 1, kValue = 2, kOutput = 3 };

}  // namespace

void checkGroupedQueryAttention(const GroupedQueryAttentionOptions& o, int tp) {
  if (o.heads <= 0 || o.hidden % o.heads != 0)
    throw ConfigError("attention hidden " + n(o.hidden) + " is not divisible by heads " +
                      n(o.heads));
  if ((o.hidden / o.heads) % 2 != 0)
    throw ConfigError("rotary embeddings need an even head dimension: hidden " + n(o.hidden) +
                      " / heads " + n(o.heads) + " = " + n(o.hidden / o.heads));
  if (o.kvHeads <= 0 || o.heads % o.kvHeads != 0)
    throw ConfigError("kv_heads " + n(o.kvHeads) + " does not divide heads " + n(o.heads));
  if (o.heads % tp != 0)
    throw ConfigError("heads " + n(o.heads) + " is not divisible by tp " + n(tp));
  if (o.kvHeads % tp != 0 && tp % o.kvHeads != 0)
    throw ConfigError("kv_heads " + n(o.kvHeads) + " can be neither split over tp " + n(tp) +
                      " (tp does not divide it) nor replicated evenly (it does not divide tp)");
  const context_parallel::ContextParallel* cp = o.contextParallel.get();
  if (cp && cp->algorithm == context_parallel::CpAlgorithm::kAllToAll)
    context_parallel::checkAllToAllHeads(o.heads / tp, o.kvHeads % tp == 0 ? o.kvHeads / tp : 1,
                                         cp->comm->size());
}

KvProjectionImpl::KvProjectionImpl(const GroupedQueryAttentionOptions& o, const InitOptions& init,
                                   const LoraOptions& lora, std::shared_ptr<Communicator> tp)
    : split_(o.kvHeads % tp->size() == 0),
      headDim_(o.hidden / o.heads),
      localHeads_(split_ ? o.kvHeads / tp->size() : 1),
      firstRow_(split_ ? 0 : tp->rank() / (tp->size() / o.kvHeads) * headDim_),
      lora_(lora),
      tp_(std::move(tp)),
      loraDropout_(lora.dropout, lora.dropoutSeed) {
  at::Tensor full = seededNormal({o.kvHeads * headDim_, o.hidden}, deriveSeed(init.seed, 0),
                                 init.weightStd, init.draw);
  weight = register_parameter("weight", split_ ? shardOf(full, 0, tp_->rank(), tp_->size()) : full);
  if (!lora.enabled()) return;
  LoraWeights adapter = loraWeights(lora, o.hidden, o.kvHeads * headDim_, init);
  loraA = register_parameter(kLoraA, adapter.a);
  loraB = register_parameter(kLoraB,
                             split_ ? shardOf(adapter.b, 0, tp_->rank(), tp_->size()) : adapter.b);
  if (lora.dropout > 0) register_buffer("lora_dropout_calls", loraDropout_.callCounter());
}

at::Tensor KvProjectionImpl::forwardEntered(const at::Tensor& entered) {
  // The adapter's input is whole on every rank, and so is its dropout mask.
  if (split_) {
    at::Tensor y = ops::linear(entered, weight);  // [s, b, K d / p]
    if (!loraA.defined()) return y;
    return y + loraProduct(loraDropout_.replicated(entered, is_training()),
                           copyToTensorRegion(loraA, *tp_), loraB, lora_);
  }
  at::Tensor summed = copyToTensorRegion(weight, *tp_);  // gradient summed over tp
  at::Tensor y = ops::linear(entered, summed.narrow(0, firstRow_, headDim_));  // [s, b, d]
  if (!loraA.defined()) return y;
  at::Tensor rows = copyToTensorRegion(loraB, *tp_).narrow(0, firstRow_, headDim_);  // [d, r]
  return y + loraProduct(loraDropout_.replicated(entered, is_training()),
                         copyToTensorRegion(loraA, *tp_), rows, lora_);
}

ParallelGroupedQueryAttentionImpl::ParallelGroupedQueryAttentionImpl(
    const GroupedQueryAttentionOptions& options, std::shared_ptr<Communicator> tp)
    : localHeads_((checkGroupedQueryAttention(options, tp->size()), options.heads / tp->size())),
      headDim_(options.hidden / options.heads),
      ropeTheta_(options.ropeTheta),
      ropeScaling_(options.ropeScaling),
      sequenceParallel_(options.sequenceParallel),
      tp_(tp),
      cp_(options.contextParallel),
      documents_(options.documents) {
  ColumnParallelLinearOptions query;
  query.inFeatures = options.hidden;
  query.outFeatures = options.heads * headDim_;
  query.bias = false;
  query.init = deriveInit(options.init, kQuery);
  query.lora = options.lora.on("q");
  RowParallelLinearOptions output;
  output.inFeatures = options.heads * headDim_;
  output.outFeatures = options.hidden;
  output.bias = false;
  output.sequenceParallel = options.sequenceParallel;
  output.init = deriveInit(options.init, kOutput);
  output.lora = options.lora.on("o");
  q = register_module("q", ColumnParallelLinear(query, tp));
  k = register_module(
      "k", KvProjection(options, deriveInit(options.init, kKey), options.lora.on("k"), tp));
  v = register_module(
      "v", KvProjection(options, deriveInit(options.init, kValue), options.lora.on("v"), tp));
  o = register_module("o", RowParallelLinear(output, tp));
}

at::Tensor ParallelGroupedQueryAttentionImpl::headsFirst(const at::Tensor& x, int64_t heads) const {
  return x.view({x.size(0), x.size(1), heads, headDim_}).permute({1, 2, 0, 3});
}

at::Tensor ParallelGroupedQueryAttentionImpl::forward(const at::Tensor& x) {
  at::Tensor entered = enterTensorRegion(x, sequenceParallel_, *tp_);  // [s, b, hidden]
  int64_t s = entered.size(0);
  int64_t b = entered.size(1);
  int64_t kvHeads = k->localHeads();
  at::Tensor query = headsFirst(q->forwardEntered(entered), localHeads_);    // [b, H/p, s, d]
  at::Tensor key = headsFirst(k->forwardEntered(entered), kvHeads);          // [b, kv, s, d]
  at::Tensor value = headsFirst(v->forwardEntered(entered), kvHeads);        // [b, kv, s, d]
  at::Tensor segments = documents_ ? documents_->segments() : at::Tensor();  // [b, S]
  RotaryTables tables = rotaryTablesOf(s, query, segments);
  at::Tensor heads = attend(applyRotary(query, tables), applyRotary(key, tables), value, segments);
  return o(heads.permute({2, 0, 1, 3}).reshape({s, b, localHeads_ * headDim_}));
}

RotaryTables ParallelGroupedQueryAttentionImpl::rotaryTablesOf(int64_t s, const at::Tensor& like,
                                                               const at::Tensor& segments) const {
  // This rank's whole share of the sequence is here (gathered under
  // sequence parallel): positions 0 .. s-1, a cp rank's positions, or the s
  // after those the cache holds; packed, each sequence's positions within
  // its documents, of this cp rank's tokens.
  if (segments.defined()) {
    at::Tensor positions = context_parallel::documentPositions(segments);  // [b, S]
    if (cp_) positions = context_parallel::localTokens(positions, *cp_->comm);
    return rotaryTablesAt(positions, headDim_, ropeTheta_, ropeScaling_, like);
  }
  if (cp_)
    return rotaryTablesAt(context_parallel::localPositions(s, *cp_->comm, like.device()), headDim_,
                          ropeTheta_, ropeScaling_, like);
  return rotaryTables(s, headDim_, ropeTheta_, ropeScaling_, like, cache_.position());
}

at::Tensor ParallelGroupedQueryAttentionImpl::attend(const at::Tensor& query, const at::Tensor& key,
                                                     const at::Tensor& value,
                                                     const at::Tensor& segments) {
  if (cache_.joined()) return cache_.attend(query, key, value, is_training());
  // Each kv head serves the group of consecutive query heads that read it:
  // the attention repeats them (after any cp exchange, which moves them once).
  return context_parallel::causalAttention(query, key, value, cp_.get(),
                                           segments);  // [b, H/p, s, d]
}

void ParallelGroupedQueryAttentionImpl::decodeWith(std::shared_ptr<KvCache> cache) {
  cache_.join(std::move(cache), tp_->size(), cp_ != nullptr, sequenceParallel_);
}

}  // namespace strata::tensor_parallel
