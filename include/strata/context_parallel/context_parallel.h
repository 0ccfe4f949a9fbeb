// Context parallelism (cp): every sequence split over the ranks of a cp
// group, so that no rank holds a whole long sequence's activations.
//
// A rank holds seq_len / cp tokens of every sequence (which ones:
// sequence_layout.h). Everything but attention works token by token, so
// embeddings, norms, MLPs and the loss run on those tokens alone; attention,
// which must see the whole sequence, runs by one of two algorithms:
//
//   ring        keys and values travel around the group (ring_attention.h);
//               any cp, any head count
//   all-to-all  Ulysses: heads are traded for tokens and back
//               (all_to_all_attention.h); cp must divide the heads and kv
//               heads of each tp rank
//
// The cp ranks of a layout hold the same parameters, as data-parallel
// replicas do: their gradients are averaged over dp x cp.
//
// parseCpAlgorithm throws ConfigError naming the known algorithms; the
// attention blocks as its algorithm's header says.
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

#include "strata/runtime/communicator.h"

namespace strata::context_parallel {

enum class CpAlgorithm { kRing, kAllToAll };

// "ring" or "all-to-all".
CpAlgorithm parseCpAlgorithm(const std::string& name);
const char* cpAlgorithmName(CpAlgorithm algorithm);

struct ContextParallel {
  std::shared_ptr<Communicator> comm;
  CpAlgorithm algorithm = CpAlgorithm::kRing;
};

// The global positions [s] (int64, on `device`) of this rank's s tokens of
// every sequence of s x cp tokens.
at::Tensor localPositions(int64_t localTokens, const Communicator& cp, at::Device device);

// Token ids or targets [b, S] -> this rank's [b, S / cp].
at::Tensor localTokens(const at::Tensor& sequences, const Communicator& cp);

// Causal attention over the whole sequences whose local tokens are given:
// q [b, H, s, d], k, v [b, K, s, d] (K dividing H) -> [b, H, s, d]. Without
// a cp group (nullptr) the sequences are whole here. With `segments`, the
// whole sequences' packed documents [b, s x cp] (packed_documents.h), each
// query sees only its own document's keys.
at::Tensor causalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                           const ContextParallel* cp, const at::Tensor& segments = {});

}  // namespace strata::context_parallel
