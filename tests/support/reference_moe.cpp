#include "reference_moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace strata::testing {
namespace {

// x W^T, plus the adapter on `projection` when there is one.
torch::Tensor project(const torch::Tensor& x, const torch::Tensor& weight,
                      const ReferenceAdapters& adapters, const std::string& projection) {
  torch::Tensor y = torch::matmul(x, weight.t());
  auto adapter = adapters.byProjection.find(projection);
  if (adapter == adapters.byProjection.end()) return y;
  const auto& [a, b] = adapter->second;
  return y + torch::matmul(torch::matmul(x, a.t()), b.t()) * adapters.scale;
}

torch::Tensor swiglu(const torch::Tensor& x, const torch::Tensor& gate, const torch::Tensor& up,
                     const torch::Tensor& down, const ReferenceAdapters& adapters) {
  torch::Tensor g = project(x, gate, adapters, "gate");
  return project(g * torch::sigmoid(g) * project(x, up, adapters, "up"), down, adapters, "down");
}

void putAdapters(const ReferenceAdapters& adapters, const std::string& prefix,
                 std::map<std::string, torch::Tensor>& out) {
  for (const auto& [projection, ab] : adapters.byProjection) {
    out[prefix + projection + ".lora_a"] = ab.first;
    out[prefix + projection + ".lora_b"] = ab.second;
  }
}

// The k best experts of one token's probabilities, ties to the lower index.
std::vector<int64_t> bestExperts(const float* p, int64_t experts, int64_t k) {
  std::vector<int64_t> order(static_cast<size_t>(experts));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&](int64_t a, int64_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); });
  order.resize(static_cast<size_t>(k));
  return order;
}

}  // namespace

ReferenceMoeResult referenceMoe(const torch::Tensor& x, const ReferenceMoeWeights& w,
                                const ReferenceMoeConfig& c) {
  int64_t batch = x.size(0), length = x.size(1), hidden = x.size(2);
  int64_t E = c.experts, k = c.topK;
  torch::Tensor logits = torch::matmul(x.to(torch::kFloat), w.router.to(torch::kFloat).t());
  torch::Tensor p = torch::softmax(logits, -1);  // [B, S, E]
  torch::Tensor pValues = p.detach().contiguous();
  const float* probabilities = pValues.data_ptr<float>();

  int64_t capacity =
      c.capacityFactor > 0
          ? static_cast<int64_t>(std::ceil(c.capacityFactor * static_cast<double>(length * k) /
                                           static_cast<double>(E)))
          : length * k;
  ReferenceMoeResult result;
  result.tokensPerExpert.assign(static_cast<size_t>(E), 0);
  // Per (sequence, position, slot): the expert, and whether it was kept.
  std::vector<int64_t> chosen(static_cast<size_t>(batch * length * k));
  std::vector<bool> kept(chosen.size());
  torch::Tensor chosenCount = torch::zeros({batch, E});
  for (int64_t j = 0; j < batch; ++j) {
    std::vector<int64_t> taken(static_cast<size_t>(E), 0);
    for (int64_t i = 0; i < length; ++i) {
      std::vector<int64_t> best = bestExperts(probabilities + (j * length + i) * E, E, k);
      for (int64_t slot = 0; slot < k; ++slot) {
        size_t at = static_cast<size_t>((j * length + i) * k + slot);
        int64_t e = best[static_cast<size_t>(slot)];
        chosen[at] = e;
        chosenCount[j][e] += 1;
        kept[at] = taken[static_cast<size_t>(e)]++ < capacity;
        if (kept[at])
          ++result.tokensPerExpert[static_cast<size_t>(e)];
        else
          ++result.dropped;
      }
    }
  }
  torch::Tensor experts = torch::tensor(chosen, torch::kLong).view({batch, length, k});
  torch::Tensor gates = p.gather(-1, experts);  // [B, S, k]
  if (c.normalizeTopK) gates = gates / gates.sum(-1, true);

  torch::Tensor flat = x.reshape({batch * length, hidden});
  torch::Tensor flatGates = gates.reshape({batch * length, k});
  torch::Tensor y = torch::zeros_like(flat);
  for (int64_t e = 0; e < E; ++e) {
    std::vector<int64_t> tokens, slots;
    for (size_t at = 0; at < chosen.size(); ++at)
      if (chosen[at] == e && kept[at]) {
        tokens.push_back(static_cast<int64_t>(at) / k);
        slots.push_back(static_cast<int64_t>(at) % k);
      }
    // An expert no token chose still runs, on no rows: its gradient is zero,
    // not undefined, and AdamW steps it as it steps every expert.
    torch::Tensor rows = torch::tensor(tokens, torch::kLong);
    torch::Tensor g = flatGates.index({rows, torch::tensor(slots, torch::kLong)}).unsqueeze(1);
    torch::Tensor out =
        swiglu(flat.index_select(0, rows), w.gate[e], w.up[e], w.down[e], w.adapters[e]);
    y = y.index_add(0, rows, out * g.to(out.scalar_type()));
  }
  result.output = y.view({batch, length, hidden});
  if (w.sharedGate.defined())
    result.output =
        result.output + swiglu(x, w.sharedGate, w.sharedUp, w.sharedDown, w.sharedAdapters);

  torch::Tensor fraction = chosenCount * (static_cast<double>(E) / static_cast<double>(k * length));
  torch::Tensor meanP = p.mean(1);  // [B, E]
  result.balance = (fraction * meanP).sum(-1).mean();
  result.z = torch::logsumexp(logits, -1).pow(2).mean();
  return result;
}

std::vector<torch::Tensor> referenceMoeTensors(const ReferenceMoeWeights& w) {
  std::vector<torch::Tensor> all{w.router};
  for (size_t e = 0; e < w.gate.size(); ++e)
    for (const torch::Tensor& t : {w.gate[e], w.up[e], w.down[e]}) all.push_back(t);
  if (w.sharedGate.defined())
    for (const torch::Tensor& t : {w.sharedGate, w.sharedUp, w.sharedDown}) all.push_back(t);
  return all;
}

std::vector<torch::Tensor> referenceMoeAdapters(const ReferenceMoeWeights& w) {
  std::vector<torch::Tensor> all;
  std::vector<const ReferenceAdapters*> sets;
  for (const ReferenceAdapters& a : w.adapters) sets.push_back(&a);
  sets.push_back(&w.sharedAdapters);
  for (const ReferenceAdapters* set : sets)
    for (const auto& [projection, ab] : set->byProjection) {
      all.push_back(ab.first);
      all.push_back(ab.second);
    }
  return all;
}

void putReferenceMoeWeights(const ReferenceMoeWeights& w, const std::string& prefix,
                            std::map<std::string, torch::Tensor>& out) {
  out[prefix + "router.weight"] = w.router;
  for (size_t e = 0; e < w.gate.size(); ++e) {
    std::string expert = prefix + "experts." + std::to_string(e) + ".";
    out[expert + "gate.weight"] = w.gate[e];
    out[expert + "up.weight"] = w.up[e];
    out[expert + "down.weight"] = w.down[e];
    if (e < w.adapters.size()) putAdapters(w.adapters[e], expert, out);
  }
  if (w.sharedGate.defined()) {
    out[prefix + "shared.gate.weight"] = w.sharedGate;
    out[prefix + "shared.up.weight"] = w.sharedUp;
    out[prefix + "shared.down.weight"] = w.sharedDown;
    putAdapters(w.sharedAdapters, prefix + "shared.", out);
  }
}

}  // namespace strata::testing
