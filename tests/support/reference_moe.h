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
//   LoRA: a projection W with an adapter computes x W^T + scale (x A^T) B^T
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

// LoRA adapters of one SwiGLU's projections by name ("gate", "up", "down"):
// A [r, in], B [out, r]; none when empty.
struct ReferenceAdapters {
  std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> byProjection;
  double scale = 0;  // alpha / r
};

struct ReferenceMoeWeights {
  torch::Tensor router;                            // [E, hidden]
  std::vector<torch::Tensor> gate, up, down;       // per expert: [ffn, hidden] x 2, [hidden, ffn]
  torch::Tensor sharedGate, sharedUp, sharedDown;  // undefined without shared experts
  std::vector<ReferenceAdapters> adapters;         // per expert
  ReferenceAdapters sharedAdapters;
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

// The adapters named `targets` among gate, up and down under `prefix`
// ("block1.mlp.experts.0."): "<target>.lora_a" and "<target>.lora_b".
template <typename Take>
ReferenceAdapters referenceAdapters(Take&& take, const std::string& prefix,
                                    const std::vector<std::string>& targets, double scale) {
  ReferenceAdapters adapters;
  adapters.scale = scale;
  for (const std::string& t : targets)
    if (t == "gate" || t == "up" || t == "down")
      adapters.byProjection[t] = {take(prefix + t + ".lora_a"), take(prefix + t + ".lora_b")};
  return adapters;
}

// Weights named as Strata's MoE MLP names them under `prefix` ("block1.mlp."),
// taken from a name -> tensor map by `take`, with adapters on `loraTargets`.
template <typename Take>
ReferenceMoeWeights referenceMoeWeights(Take&& take, const std::string& prefix, int64_t experts,
                                        bool shared,
                                        const std::vector<std::string>& loraTargets = {},
                                        double loraScale = 0) {
  ReferenceMoeWeights w;
  w.router = take(prefix + "router.weight");
  for (int64_t e = 0; e < experts; ++e) {
    std::string p = prefix + "experts." + std::to_string(e) + ".";
    w.gate.push_back(take(p + "gate.weight"));
    w.up.push_back(take(p + "up.weight"));
    w.down.push_back(take(p + "down.weight"));
    w.adapters.push_back(referenceAdapters(take, p, loraTargets, loraScale));
  }
  if (shared) {
    w.sharedGate = take(prefix + "shared.gate.weight");
    w.sharedUp = take(prefix + "shared.up.weight");
    w.sharedDown = take(prefix + "shared.down.weight");
    w.sharedAdapters = referenceAdapters(take, prefix + "shared.", loraTargets, loraScale);
  }
  return w;
}

// Every weight of `weights` but the adapters, for an optimizer.
std::vector<torch::Tensor> referenceMoeTensors(const ReferenceMoeWeights& weights);
// The adapters' A and B of `weights`.
std::vector<torch::Tensor> referenceMoeAdapters(const ReferenceMoeWeights& weights);

// `weights` under Strata's names below `prefix` ("block1.mlp."), into `out`.
void putReferenceMoeWeights(const ReferenceMoeWeights& weights, const std::string& prefix,
                            std::map<std::string, torch::Tensor>& out);

}  // namespace strata::testing
