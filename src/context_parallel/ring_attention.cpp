#include "strata/context_parallel/ring_attention.h"

#include <time.h>
#include <torch/torch.h>

#include <chrono>
#include <optional>
#include <vector>

#include "block_attention.h"
#include "context_parallel/causal_attention.h"
#include "ring_exchange.h"
#include "strata/context_parallel/sequence_layout.h"

namespace strata::context_parallel {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Tags of the two kinds of message; each is FIFO per peer.
constexpr int kKeysValuesTag = 1;
constexpr int kGradientTag = 2;

// Which part of a kv block the local queries meet, by the block's owner
// (sequence_layout.h): this rank's own block causally; an earlier rank's
// first chunk with every local query; a later rank's whole block with the
// local second chunk only. Every other chunk pair lies in the future.
struct BlockPart {
  bool causal = false;
  int64_t firstRow = 0, rows = 0;  // local queries
  int64_t firstKey = 0, keys = 0;  // the block's keys
};

BlockPart partOf(int owner, int rank, int64_t s) {
  int64_t half = s / 2;
  if (owner == rank) return {true, 0, s, 0, s};
  if (owner < rank) return {false, 0, s, 0, half};
  return {false, half, half, 0, s};
}

// What the part's queries may see of its keys. `segments`: the whole
// sequences' packed documents [b, S], or undefined.
detail::BlockMask maskOf(const BlockPart& part, int owner, const Communicator& cp,
                         const at::Tensor& segments) {
  detail::BlockMask mask;
  mask.causal = part.causal;
  if (!segments.defined()) return mask;
  auto segmentsOf = [&](int rank) {  // [b, s]: rank `rank`'s tokens' documents
    std::vector<int64_t> positions = localPositions(segments.size(1), rank, cp.size());
    return segments.index_select(1, at::tensor(positions, segments.options()));
  };
  mask.querySegments = segmentsOf(cp.rank()).narrow(1, part.firstRow, part.rows);
  mask.keySegments = segmentsOf(owner).narrow(1, part.firstKey, part.keys);
  return mask;
}

// Whether any query of the part may see any of its keys. A part from
// another rank holds only keys before its queries, and documents number
// upwards along a sequence, so a query and key can share a document only
// if the last key and the first query of some sequence do.
bool seesAnything(const BlockPart& part, const detail::BlockMask& mask) {
  if (part.causal || !mask.querySegments.defined()) return true;
  at::Tensor lastKey = std::get<0>(mask.keySegments.max(1));
  at::Tensor firstQuery = std::get<0>(mask.querySegments.min(1));
  return lastKey.eq(firstQuery).any().item<bool>();
}

// The group and the timing travel to backward inside the context as
// addresses: autograd contexts hold only IValues. The caller keeps both alive.
// The packed documents travel as a tensor (undefined without packing).
void remember(AutogradContext* ctx, Communicator& cp, RingTiming* timing,
              const at::Tensor& segments) {
  ctx->saved_data["cp"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(&cp));
  ctx->saved_data["timing"] = static_cast<int64_t>(reinterpret_cast<intptr_t>(timing));
  ctx->saved_data["packed"] = segments.defined();
  if (segments.defined()) ctx->saved_data["segments"] = segments;
}

at::Tensor segmentsOf(AutogradContext* ctx) {
  if (!ctx->saved_data["packed"].toBool()) return at::Tensor();
  return ctx->saved_data["segments"].toTensor();
}

Communicator& groupOf(AutogradContext* ctx) {
  return *reinterpret_cast<Communicator*>(static_cast<intptr_t>(ctx->saved_data["cp"].toInt()));
}

RingTiming* timingOf(AutogradContext* ctx) {
  return reinterpret_cast<RingTiming*>(static_cast<intptr_t>(ctx->saved_data["timing"].toInt()));
}

double threadCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Adds the seconds `work` takes to `*seconds` when timing.
template <typename Work>
void timed(RingTiming* timing, double RingTiming::*seconds, Work&& work) {
  if (!timing) return work();
  auto start = std::chrono::steady_clock::now();
  work();
  timing->*seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Block compute, by the clock and by this thread's CPU time.
template <typename Work>
void timedCompute(RingTiming* timing, Work&& work) {
  if (!timing) return work();
  double cpu = threadCpuSeconds();
  timed(timing, &RingTiming::computeSeconds, work);
  timing->computeCpuSeconds += threadCpuSeconds() - cpu;
}

struct RingAttentionFunction : torch::autograd::Function<RingAttentionFunction> {
  // q [b, H, s, d], k and v [b, K, s, d] -> [b, H, s, d]
  // `packed`: the whole sequences' documents, or nullptr. A pointer, not a
  // tensor argument: apply() takes every tensor argument for an input of
  // the graph, and an undefined one (no packing) cannot be.
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& q, const at::Tensor& k,
                            const at::Tensor& v, Communicator* cp, RingTiming* timing,
                            const at::Tensor* packed) {
    at::Tensor segments = packed ? *packed : at::Tensor();
    remember(ctx, *cp, timing, segments);
    int size = cp->size(), rank = cp->rank();
    int64_t heads = q.size(1), s = q.size(2);
    at::Tensor block = at::stack({k, v}).contiguous();  // [2, b, K, s, d]: what travels
    at::Tensor out = at::zeros(q.sizes(), q.options().dtype(at::kFloat));        // [b, H, s, d]
    at::Tensor lse = at::full({q.size(0), heads, s}, -INFINITY, out.options());  // [b, H, s]
    for (int step = 0; step < size; ++step) {
      at::Tensor arriving;
      std::optional<detail::RingHop> hop;
      if (step + 1 < size) {
        arriving = at::empty_like(block);
        hop.emplace(*cp, block, arriving, kKeysValuesTag);
      }
      int owner = (rank - step + size) % size;
      BlockPart part = partOf(owner, rank, s);
      detail::BlockMask mask = maskOf(part, owner, *cp, segments);
      at::Tensor keys = detail::repeatKvHeads(block[0], heads).narrow(2, part.firstKey, part.keys);
      at::Tensor values =
          detail::repeatKvHeads(block[1], heads).narrow(2, part.firstKey, part.keys);
      at::Tensor rowsOut = out.narrow(2, part.firstRow, part.rows);
      at::Tensor rowsLse = lse.narrow(2, part.firstRow, part.rows);
      if (seesAnything(part, mask))
        timedCompute(timing, [&] {
          detail::mergeBlock(
              rowsOut, rowsLse,
              detail::blockForward(q.narrow(2, part.firstRow, part.rows), keys, values, mask));
        });
      if (hop) {
        timed(timing, &RingTiming::hopWaitSeconds, [&] { hop->wait(); });
        if (timing) ++timing->hops;
        block = arriving;
      }
    }
    at::Tensor result = out.to(q.scalar_type());
    ctx->save_for_backward({q, k, v, result, lse});
    return result;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    Communicator& cp = groupOf(ctx);
    RingTiming* timing = timingOf(ctx);
    at::Tensor segments = segmentsOf(ctx);
    variable_list saved = ctx->get_saved_variables();
    const at::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &out = saved[3], &lse = saved[4];
    at::Tensor dout = grads[0].contiguous();
    int size = cp.size(), rank = cp.rank();
    int64_t heads = q.size(1), kvHeads = k.size(1), s = q.size(2);
    at::Tensor delta = (dout.to(at::kFloat) * out.to(at::kFloat)).sum(-1);  // [b, H, s]
    at::Tensor dq = at::zeros(q.sizes(), q.options().dtype(at::kFloat));
    at::Tensor block = at::stack({k, v}).contiguous();  // [2, b, K, s, d]
    // Sent gradients stay alive until their sends are done.
    std::vector<std::pair<at::Tensor, WorkHandle>> sent;
    for (int step = 0; step < size; ++step) {
      at::Tensor arriving, partial;
      std::optional<detail::RingHop> hop;
      WorkHandle partialRecv;
      if (step + 1 < size) {
        arriving = at::empty_like(block);
        hop.emplace(cp, block, arriving, kKeysValuesTag);
      }
      at::Tensor gradient = at::zeros(block.sizes(), block.options().dtype(at::kFloat));
      if (step > 0) {  // what the ranks before added to this block's gradient
        partial = at::empty_like(gradient);
        partialRecv = cp.recvAsync(partial, detail::previousRank(cp), kGradientTag);
      }
      int owner = (rank - step + size) % size;
      BlockPart part = partOf(owner, rank, s);
      detail::BlockMask mask = maskOf(part, owner, cp, segments);
      at::Tensor keys = detail::repeatKvHeads(block[0], heads).narrow(2, part.firstKey, part.keys);
      at::Tensor values =
          detail::repeatKvHeads(block[1], heads).narrow(2, part.firstKey, part.keys);
      if (seesAnything(part, mask))
        timedCompute(timing, [&] {
          detail::BlockGradients g = detail::blockBackward(
              q.narrow(2, part.firstRow, part.rows), keys, values, mask,
              dout.narrow(2, part.firstRow, part.rows), lse.narrow(2, part.firstRow, part.rows),
              delta.narrow(2, part.firstRow, part.rows));
          dq.narrow(2, part.firstRow, part.rows).add_(g.dq);
          gradient[0].narrow(2, part.firstKey, part.keys).add_(detail::foldKvHeads(g.dk, kvHeads));
          gradient[1].narrow(2, part.firstKey, part.keys).add_(detail::foldKvHeads(g.dv, kvHeads));
        });
      if (partialRecv) {
        timed(timing, &RingTiming::gradientWaitSeconds, [&] { partialRecv->wait(); });
        gradient.add_(partial);
      }
      // On to the next rank; after the last step that is the block's owner.
      sent.emplace_back(gradient, cp.sendAsync(gradient, detail::nextRank(cp), kGradientTag));
      if (hop) {
        timed(timing, &RingTiming::hopWaitSeconds, [&] { hop->wait(); });
        if (timing) ++timing->hops;
        block = arriving;
      }
    }
    at::Tensor own = at::empty(block.sizes(), block.options().dtype(at::kFloat));
    WorkHandle ownRecv = cp.recvAsync(own, detail::previousRank(cp), kGradientTag);
    timed(timing, &RingTiming::gradientWaitSeconds, [&] { ownRecv->wait(); });
    for (auto& [tensor, work] : sent) work->wait();
    return {dq.to(q.scalar_type()),
            own[0].to(k.scalar_type()),
            own[1].to(v.scalar_type()),
            at::Tensor(),
            at::Tensor(),
            at::Tensor()};
  }
};

}  // namespace

at::Tensor ringAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                         Communicator& cp, RingTiming* timing, const at::Tensor& segments) {
  if (cp.size() == 1) {
    at::Tensor keys = detail::repeatKvHeads(k, q.size(1));
    at::Tensor values = detail::repeatKvHeads(v, q.size(1));
    return segments.defined() ? detail::documentAttention(q, keys, values, segments)
                              : detail::causalAttention(q, keys, values);
  }
  // Each block's mask is built where its scores are.
  at::Tensor packed = segments.defined() ? segments.to(q.device()) : segments;
  return RingAttentionFunction::apply(q, k, v, &cp, timing, packed.defined() ? &packed : nullptr);
}

}  // namespace strata::context_parallel
