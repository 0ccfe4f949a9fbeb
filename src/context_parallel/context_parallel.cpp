#include "strata/context_parallel/context_parallel.h"

#include <torch/torch.h>

#include "block_attention.h"
#include "context_parallel/causal_attention.h"
#include "strata/context_parallel/all_to_all_attention.h"
#include "strata/context_parallel/ring_attention.h"
#include "strata/context_parallel/sequence_layout.h"
#include "strata/error.h"

namespace strata::context_parallel {

CpAlgorithm parseCpAlgorithm(const std::string& name) {
  if (name == "ring") return CpAlgorithm::kRing;
  if (name == "all-to-all") return CpAlgorithm::kAllToAll;
  throw ConfigError("cp_algorithm must be ring or all-to-all, got '" + name + "'");
}

const char* cpAlgorithmName(CpAlgorithm algorithm) {
  return algorithm == CpAlgorithm::kRing ? "ring" : "all-to-all";
}

at::Tensor localPositions(int64_t localTokens, const Communicator& cp, at::Device device) {
  std::vector<int64_t> positions =
      context_parallel::localPositions(localTokens * cp.size(), cp.rank(), cp.size());
  return at::tensor(positions, at::TensorOptions().dtype(at::kLong)).to(device);
}

at::Tensor localTokens(const at::Tensor& sequences, const Communicator& cp) {
  if (cp.size() == 1) return sequences;
  checkSequenceLength(sequences.size(1), cp.size());
  at::Tensor positions = localPositions(sequences.size(1) / cp.size(), cp, sequences.device());
  return sequences.index_select(1, positions);
}

at::Tensor causalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const ContextParallel* cp, const at::Tensor& segments) {
  if (cp && cp->comm->size() > 1) {
    if (cp->algorithm == CpAlgorithm::kAllToAll)
      return allToAllAttention(q, k, v, *cp->comm, segments);
    return ringAttention(q, k, v, *cp->comm, nullptr, segments);
  }
  int64_t heads = q.size(1);
  at::Tensor keys = detail::repeatKvHeads(k, heads), values = detail::repeatKvHeads(v, heads);
  if (segments.defined()) return detail::documentAttention(q, keys, values, segments);
  return detail::causalAttention(q, keys, values);
}

}  // namespace strata::context_parallel
