// A measured profile: a GPT's dimensions and the forward and backward seconds
// of each kind of its layers (embedding, one transformer block, the head with
// its loss) at one micro-batch shape, timed on one device running alone, plus
// how much slower that compute runs when every device of a node computes at
// once (devices that share vector units or memory bandwidth, like the cores
// of this CPU machine). Given to the cost model (TrainingJob::profile), it
// replaces FLOPs / (peak x efficiency) and the memory-bound element-wise
// estimate; see stage_costs.cpp for how it scales to other micro-batch sizes
// and tensor-parallel degrees.
//
// Text form: a TOML document of top-level keys (strata/util/toml.h). Keys:
//   name, layers, hidden, heads, ffn, vocab, seq_len      (the model; name a string)
//   micro_batch                                           (sequences it was timed on)
//   precision                                             "fp32" or "bf16"
//   embedding_forward_ms, embedding_backward_ms,
//   block_forward_ms, block_backward_ms,
//   head_forward_ms, head_backward_ms                     (per micro-batch, one device)
//   concurrent_slowdown                                   (>= 1; 1 = no sharing)
//   block_tp2_forward_ms, block_tp2_backward_ms           (optional, together: one
//                                                          block as a shard of a
//                                                          tp = 2 group, no comm)
//   block_half_forward_ms, block_half_backward_ms         (optional, together: one
//                                                          block on half the
//                                                          micro-batch's sequences)
// Times are numbers, integer or float. Every other key but `name` is
// required. parseProfileText() and loadProfileFile() throw PlanError naming
// the file, line and column of a TOML syntax error, and the file, line and
// key for an unknown or missing key or a value of the wrong type or out of
// range; nothing else here throws or blocks.
#pragma once

#include <string>

#include "strata/plan/cluster.h"
#include "strata/plan/memory.h"
#include "strata/plan/model_desc.h"

namespace strata::plan {

struct LayerSeconds {
  double forward = 0;
  double backward = 0;
};

struct MeasuredProfile {
  ModelDesc model;
  int microBatch = 1;
  Dtype dtype = Dtype::Fp32;
  LayerSeconds embedding;
  LayerSeconds block;
  LayerSeconds head;  // logits and loss
  double concurrentSlowdown = 1;
  // One block's shard of a tp = 2 group, timed without its communication;
  // zero when not measured (then tensor parallelism is taken to divide the
  // whole block).
  LayerSeconds blockTp2;
  // One block on half the tokens (half the micro-batch's sequences): the part
  // of its time that does not shrink with the tokens (each operation's fixed
  // cost, small matrices' lower efficiency), which shows when a rank's
  // micro-batch holds fewer tokens than profiled, as under context
  // parallelism. Zero when not measured (then time is taken to scale with
  // the tokens).
  LayerSeconds blockHalf;
};

MeasuredProfile parseProfileText(const std::string& text, const std::string& source);
MeasuredProfile loadProfileFile(const std::string& path);
// The text form, read back by parseProfileText.
std::string formatProfile(const MeasuredProfile& profile);

// Bytes per value the profiled training keeps: fp32 weights, gradients and
// AdamW moments (4 + 4 + 8), or the bf16 mixed-precision default of memory.h.
Precision precisionOf(const MeasuredProfile& profile);
// Bytes of one activation value that tensor- and pipeline-parallel transfers move.
double activationValueBytes(const MeasuredProfile& profile);

}  // namespace strata::plan
