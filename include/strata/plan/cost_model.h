// Predicts one training iteration of a layout: time (with its breakdown),
// memory per device, throughput and time to train.
//
// Time. Every pipeline stage holds layers / stages transformer layers when
// that divides, otherwise the balanced partitioner's cut (partition.h), with
// pp x v stages, or 2 pp in a V for zb-v and dualpipe-v (layout.h's
// pipelineStages and stageRanks; rank 0 then runs the first and the last);
// the first stage also holds the embedding, the last the logits. A layer's forward on a
// tensor-parallel rank takes its FLOPs (tpRankLayerForwardFlops: FLOPs / tp
// but for replicated k and v) / (peak x efficiency), plus its element-wise
// work (norms, softmax, GeLU or SiLU, dropout), bound by memory bandwidth: 2
// x its activation bytes (memory.h) / device memory bandwidth, plus its two
// tensor-parallel all-reduces of b*s*h 16-bit values; its backward twice the
// compute and two more all-reduces, and, when the k and v projections are
// replicated over tp (model_desc.h), the all-reduce of their weights'
// gradients; full recompute adds one more forward to
// the backward. These per-stage costs, and the point-to-point time of one
// activation (b*s*h*2/tp bytes, each tp rank sending its slice) as the hand-off
// latency, feed the schedule simulator (strata/schedule/simulator.h), whose
// makespan is the pipeline time. DualPipeV's overlapped pairs hide each
// other's exposed tp, cp and ep traffic (stage_costs.cpp's pairOverlap),
// which the breakdown takes off that communication. The data-parallel
// gradient all-reduce is bucketed and starts during the last micro-batch's backward: it hides
// behind one micro-batch's backward through the rank's layers, the rest is exposed. Every
// tensor-parallel collective, and the step's data-parallel gradient sync, also waits for the
// group's slowest member: comm.h's syncWaitSeconds of the compute since the last synchronisation
// (half a layer's forward or backward; the rank's whole step for dp), by the device's ComputeNoise.
// ZeRO-3 gathers each layer of the rank before its forward and again before
// its backward, in every micro-batch, and reduce-scatters each layer's
// gradient in the step's last backward, layer by layer
// (fully_sharded_time.h): a layer's gather overlaps the compute of the layer
// before it (one layer prefetched), so each layer shows what its gather
// (and, in the last backward, its reduce-scatter on the same link) takes
// beyond its own compute, and each pass's first gather and the last
// reduce-scatter show whole. Every collective pays the ring's (p - 1)
// latencies. A framework that gathers tensor by tensor (Framework's
// kByTensor) is timed matrix by matrix instead (tensor_gather_time.h). Its
// memory adds two gathered layers (the
// running one and the prefetched) to the shards (the word embedding when it
// is the largest layer; the trainer gathers one unit per layer,
// fully_sharded.h). With Layout::reshardAfterForward off the rank's layers
// are gathered once per step, in the first micro-batch's forward, and all
// stay gathered for the step instead. Full gradients: one layer's before its
// reduce-scatter with one micro-batch per step; with more, every layer of the
// rank's, accumulated until the step's reduce-scatters (FSDP's no_sync),
// which make the gradient shards as they drop them. The
// optimizer step streams 32 bytes per optimizer-owned parameter through
// device memory.
//
// Context parallelism (Layout::cp > 1; strata/context_parallel/) gives each
// rank S/cp tokens of every sequence: every per-layer and end-stage compute
// above, the tensor-parallel collectives, the hand-offs and the logits divide
// by cp, the attention products too (the planner counts them over the whole
// square of scores at every cp; the trainer's ring skips the masked halves of
// other ranks' blocks). Ring attention's backward recomputes each block's
// scores: half the attention products' forward more. Its k and v (2*b*(S/cp)*c
// values, c the kv columns of a tp rank, model_desc.h) travel cp - 1 hops
// forward and again backward, where each block's fp32 gradient follows it,
// cp hops home; a hop hides behind one block's compute (1/cp of the rank's
// attention), and only what is longer is exposed. All-to-all attention's
// four exchanges a direction (q and the output of b*(S/cp)*h/tp values, k
// and v of b*(S/cp)*c) are on the critical path. The cp group's transfers take
// the point-to-point path of the link it crosses (comm.h's
// groupPointToPointLink, Layout::cpStride() apart), and it waits for its
// slowest rank twice a direction, entering and leaving attention. The ring's
// element-wise work over its block scores is priced as cp = 1's over its
// kept scores, a cp-th of it. The dp x cp ranks that hold the same
// parameters all-reduce (or ZeRO-shard) together. Memory: memory.h.
//
// Mixture-of-experts layers (model_desc.h's MoeDesc) compute their active
// FLOPs: the router, each token's top_k routed experts and the shared ones.
// Their MLP's tensor-parallel reduction is of the experts' rows, top_k a
// token, and of the shared experts' output. Routing is taken as balanced
// (what the load-balancing loss pursues): every expert gets T k / E of the
// T tokens' k assignments, so no capacity drops and no rank busier than
// another. Under expert parallelism (Layout::ep > 1) a rank holds E/ep
// experts of every MoE layer and runs them on the rows the ep group sends
// it, T k a micro-batch, as many as at ep = 1; each MoE layer's forward
// trades its T k rows of h activation values by two all-to-alls over ep
// (dispatch and combine, after a count exchange of E int64) and its
// backward by two more, blocking, each (ep - 1)/ep of the rows out of every
// rank on the p2p path of the link the ep group crosses, with a wait for
// the group's slowest rank at each of dispatch and combine. The ep group is
// ep consecutive ranks of the dp x cp run (layout.h). A rank's experts are
// averaged (all-reduced, or ZeRO-1/2 reduce-scattered and gathered) over
// the dp x cp / ep ranks that hold them, after the rest's dp x cp traffic,
// and ZeRO shards their optimizer state (and gradients) over that group.
//
// With a measured profile (measured_profile.h) the layers' compute comes from
// it instead of from FLOPs: the measured forward and backward of a block, the
// embedding (first stage) and the head with its loss (last stage), scaled
// linearly to the micro-batch size, divided by tp and stretched by the
// node-sharing slowdown; activations move in the profile's precision. The
// profile must describe the job's model (PlanError naming both otherwise).
//
// A layout fits in memory when its busiest rank needs at most 90% of the
// device's memory at its peak over a step (memory.h: model state, stashes,
// the hand-offs and working tensors beside them); the rest is left to the
// CUDA context, the allocator's rounding and fragmentation and the
// communication library's own buffers (NCCL's, Gloo's), which are not
// itemised.
// evaluateLayout() throws PlanError when the layout does not fit the job
// (see checkLayout); memory over the device's capacity is reported, not thrown.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "strata/plan/cluster.h"
#include "strata/plan/layout.h"
#include "strata/plan/measured_profile.h"
#include "strata/plan/memory.h"
#include "strata/plan/model_desc.h"

namespace strata::plan {

// Data parallelism's gradient buckets (data_parallel/bucket_layout.h's
// BucketSizes, whose defaults these are): a small first bucket, so that the
// sync starts early in the backward, then buckets of `bytes`. Each is its own
// message, so a link's large-message rate (cluster.h) applies per bucket.
struct GradientBuckets {
  double firstBytes = 1 << 20;
  double bytes = 25 << 20;
};

// What the framework a job runs under does differently from Strata's
// trainer, for predicting runs made with other software (the published
// runs of tests/plan/published_runs.toml). The defaults are the trainer's.
struct Framework {
  // How ZeRO-3 gathers the parameters. kByLayer: the trainer's one unit a
  // layer (fully_sharded.h), the next layer prefetched, each layer gathered
  // for its forward and again for its backward, which rebuilds it under
  // recompute too; the gradients reduce-scattered in the step's last
  // backward. kByTensor: DeepSpeed's stage 3, every weight matrix by itself
  // (tensor_gather_time.h), the next one prefetched, each paying the
  // ring's (p - 1) latencies; a layer's recompute gathers it once more; each
  // micro-batch reduce-scatters every gradient, on the same link; the rank
  // holds the running tensor and the prefetched one, not two layers.
  enum class Zero3Gathering { kByLayer, kByTensor };
  Zero3Gathering zero3Gathering = Zero3Gathering::kByLayer;
  // Each tp rank hands 1/tp of an activation to the next stage, as the
  // trainer and Megatron-LM's scatter/gather do; false: every tp rank sends
  // all of it, as DeepSpeed's pipeline engine does.
  bool splitHandOffs = true;
  // The sender waits for its hand-off to arrive before it computes on (a
  // blocking send, DeepSpeed's pipeline engine); false: the send runs
  // beside the sender's next compute.
  bool blockingHandOffs = false;
  // Recompute checkpoints every layer, keeping each layer's input and
  // rebuilding one layer at a time in the backward (Megatron-LM's full
  // recompute, FSDP's activation checkpointing); false: the trainer's, which
  // checkpoints a whole stage, keeping its input and rebuilding all of its
  // layers for the stage's backward (pipeline/executor.h).
  bool layerRecompute = false;
  // The sender holds each hand-off until its receiver has taken it and the
  // sender sends again, as the trainer does (src/plan/held_sends.h); false:
  // a send's buffer goes once it is delivered (Megatron-LM, DeepSpeed).
  bool holdsSendsUntilTaken = true;
};

struct TrainingJob {
  ModelDesc model;
  Cluster cluster;
  int globalBatch = 1;  // sequences per iteration
  double tokens = 0;    // tokens to train on, for days-to-train; 0 = not asked
  Dtype dtype = Dtype::Bf16;
  Precision precision;
  bool allowCrossNodeTp = false;           // tp groups larger than a node
  bool evenStages = false;                 // require layers % (pp * v) == 0
  std::optional<MeasuredProfile> profile;  // measured layer times replace FLOPs
  GradientBuckets buckets;
  Framework framework;
};

// Why `layout` cannot run `job`, or "" when it can: devices, at least one
// layer per stage (and layers divisible by pp * v if evenStages), heads and ffn by tp, the kv
// heads by tp or tp by them, the global batch by
// mb * dp, the schedule's own rules (interleaved needs v > 1 and micro-batches a multiple of pp),
// tp within a node unless allowed; under cp > 1 what the trainer refuses: a
// sequence length not divisible by 2 * cp, with sequence parallel S/cp not
// divisible by tp, and all-to-all where cp does not divide each tp rank's
// heads and kv heads; and for experts what the trainer refuses: ep > 1
// without MoE layers, ep not dividing dp * cp or the experts, expert_ffn
// not divisible by tp, and sequence parallel with MoE; ZeRO-2 under pp > 1.
std::string checkLayout(const TrainingJob& job, const Layout& layout);

struct TimeBreakdown {
  double compute = 0;    // forward + backward FLOPs of the busiest rank (ring's score redo too)
  double recompute = 0;  // the extra forward of full recompute, and W's re-walk (stage_costs)
  double tpComm = 0;     // tensor-parallel collectives, on the critical path
  double cpComm = 0;     // context-parallel traffic not hidden behind attention, and its waits
  double epComm = 0;     // expert-parallel all-to-alls (none hidden), and their waits
  double bubble = 0;     // pipeline idle time incl. point-to-point waits
  double ppComm = 0;     // hand-offs a blocking sender waits for (Framework)
  double dpExposed = 0;  // data-parallel (and ZeRO) traffic not hidden
  double optimizer = 0;
  double total() const {
    return compute + recompute + tpComm + cpComm + epComm + bubble + ppComm + dpExposed + optimizer;
  }
  double exposedComm() const { return tpComm + cpComm + epComm + ppComm + dpExposed; }
};

struct Estimate {
  Layout layout;
  int microBatches = 0;
  double iterationSeconds = 0;
  TimeBreakdown time;
  MemoryBreakdown memory;  // the rank that needs the most
  // Every pipeline rank's, and the stage-micro-batches each keeps at its
  // peak: the embedding's and head's ranks and the first stages' deeper
  // stash make them differ, and the heaviest is the one that runs out.
  std::vector<MemoryBreakdown> rankMemory;
  std::vector<int> rankStash;
  int peakStash = 0;         // stage-micro-batches the busiest-memory rank keeps
  int pipelineMessages = 0;  // activations and gradients handed between ranks a step
  bool fitsMemory = false;
  double samplesPerSecond = 0;
  double tokensPerSecond = 0;
  double modelFlopsPerDevice = 0;     // achieved, without recompute (MFU's numerator)
  double hardwareFlopsPerDevice = 0;  // achieved, counting recompute (Megatron's teraFLOP/s)
  double mfu = 0;
  double daysToTrain = 0;  // 0 when the job gives no token count
};

Estimate evaluateLayout(const TrainingJob& job, const Layout& layout);

}  // namespace strata::plan
