// An independent mixture-of-experts MLP for the parallel-equals-serial
// tests: every expert runs in one process on exactly the tokens routed to
// it (an expert no token chose on none, so that its gradient is zero),
// written from the definition with plain LibTorch and loops, calling none of
// Strata's layers.
//
//   x [B, S, hidden] (batch first, as the reference models hold it)
//   p = softmax(x R^T) per token (float32); its k best experts, ties to the
//       lower index; gates = their p, divided by their sum when normalized
//   capacity C = ceil(factor S k / E) per sequence and expert: walking each
//       sequence by position, slot 0 then slot 1, an assignment past C is
//       dropped
//   y = sum over kept slots of gate * down(silu(gate_e x) * up_e x)
//       + the shared SwiGLU
//   balance = mean over sequences of sum_e (E / (k S) n_e) (mean_t p_e)
//   z = mean over tokens of logsumexp(x R^T)^2
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace strata::testing {

struct ReferenceMoeConfig {
  int64_t experts = 0;
  int64_t topK = 0;
  bool normalizeTopK = true;
  double capacityFactor = 0;  // 0: dropless
};

struct ReferenceMoeWeights {
  torch::Tensor router;                            // [E, hidden]
  std::vector<torch::Tensor> gate, up, down;       // per expert: [ffn, hidden] x 2, [hidden, ffn]
  torch::Tensor sharedGate, sharedUp, sharedDown;  // undefined without shared experts
};

struct ReferenceMoeResult {
  torch::Tensor output;                  // [B, S, hidden]
  torch::Tensor balance;                 // scalar
  torch::Tensor z;                       // scalar
  std::vector<int64_t> tokensPerExpert;  // kept assignments of each expert
  int64_t dropped = 0;
};

ReferenceMoeResult referenceMoe(const torch::Tensor& x, const ReferenceMoeWeights& weights,
                                const ReferenceMoeConfig& config);

// Weights named as Strata's MoE MLP names them under `prefix` ("block1.mlp."),
// taken from a name -> tensor map by `take`.
template <typename Take>
ReferenceMoeWeights referenceMoeWeights(Take&& take, const std::string& prefix, int64_t experts,
                                        bool shared) {
  ReferenceMoeWeights w;
  w.router = take(prefix + "router.weight");
  for (int64_t e = 0; e < experts; ++e) {
    std::string p = prefix + "experts." + std::to_string(e) + ".";
    w.gate.push_back(take(p + "gate.weight"));
    w.up.push_back(take(p + "up.weight"));
    w.down.push_back(take(p + "down.weight"));
  }
  if (shared) {
    w.sharedGate = take(prefix + "shared.gate.weight");
    w.sharedUp = take(prefix + "shared.up.weight");
    w.sharedDown = take(prefix + "shared.down.weight");
  }
  return w;
}

// Every tensor of `weights`, for an optimizer.
std::vector<torch::Tensor> referenceMoeTensors(const ReferenceMoeWeights& weights);

// `weights` under Strata's names below `prefix` ("block1.mlp."), into `out`.
void putReferenceMoeWeights(const ReferenceMoeWeights& weights, const std::string& prefix,
                            std::map<std::string, torch::Tensor>& out);

}  // namespace strata::testing
