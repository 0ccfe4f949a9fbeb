#include "strata/plan/model_desc.h"

#include <map>
#include <utility>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

ModelDesc gpt(const std::string& name, int layers, int hidden, int heads, int vocab, int seqLen) {
  return {name, layers, hidden, heads, 4 * hidden, vocab, seqLen};
}

// GPT-2 (Radford et al. 2019, Table 2; sizes as released): vocabulary 50257,
// context 1024. GPT-3 (Brown et al. 2020, Table 2.1): context 2048, same
// vocabulary; the table's 13B d_model 5140 and 1.3B's 24 heads are
// inconsistent with its d_head 128, so the shapes below use hidden = heads x
// 128 as the released implementations do. Megatron-LM (Narayanan et al. SC21,
// Table 1): vocabulary 51200, sequence 2048.
const std::map<std::string, ModelDesc>& presets() {
  static const std::map<std::string, ModelDesc> table = {
      {"gpt2-small", gpt("gpt2-small", 12, 768, 12, 50257, 1024)},
      {"gpt2-medium", gpt("gpt2-medium", 24, 1024, 16, 50257, 1024)},
      {"gpt2-large", gpt("gpt2-large", 36, 1280, 20, 50257, 1024)},
      {"gpt2-xl", gpt("gpt2-xl", 48, 1600, 25, 50257, 1024)},
      {"gpt3-1.3b", gpt("gpt3-1.3b", 24, 2048, 16, 50257, 2048)},
      {"gpt3-6.7b", gpt("gpt3-6.7b", 32, 4096, 32, 50257, 2048)},
      {"gpt3-13b", gpt("gpt3-13b", 40, 5120, 40, 50257, 2048)},
      {"gpt3-175b", gpt("gpt3-175b", 96, 12288, 96, 50257, 2048)},
      {"megatron-1.7b", gpt("megatron-1.7b", 24, 2304, 24, 51200, 2048)},
      {"megatron-3.6b", gpt("megatron-3.6b", 30, 3072, 32, 51200, 2048)},
      {"megatron-7.5b", gpt("megatron-7.5b", 36, 4096, 32, 51200, 2048)},
      {"megatron-18.4b", gpt("megatron-18.4b", 40, 6144, 48, 51200, 2048)},
      {"megatron-39.1b", gpt("megatron-39.1b", 48, 8192, 64, 51200, 2048)},
      {"megatron-76.1b", gpt("megatron-76.1b", 60, 10240, 80, 51200, 2048)},
      {"megatron-145.6b", gpt("megatron-145.6b", 80, 12288, 96, 51200, 2048)},
      {"megatron-310.1b", gpt("megatron-310.1b", 96, 16384, 128, 51200, 2048)},
      {"megatron-529.6b", gpt("megatron-529.6b", 105, 20480, 128, 51200, 2048)},
      {"megatron-1t", gpt("megatron-1t", 128, 25600, 160, 51200, 2048)},
  };
  return table;
}

}  // namespace

void ModelDesc::validate() const {
  std::string nonPositive;
  for (auto [size, value] : {std::pair{"layers", layers},
                             {"hidden", hidden},
                             {"heads", heads},
                             {"ffn", ffn},
                             {"vocab", vocab},
                             {"seq-len", seqLen}}) {
    if (value < 1)
      nonPositive +=
          (nonPositive.empty() ? "" : ", ") + std::string(size) + " " + std::to_string(value);
  }
  if (!nonPositive.empty())
    throw PlanError("model '" + name + "' needs positive sizes, got " + nonPositive);
  if (hidden % heads != 0)
    throw PlanError("model '" + name + "': " + std::to_string(heads) +
                    " heads do not divide hidden size " + std::to_string(hidden));
}

std::vector<std::string> modelPresetNames() {
  std::vector<std::string> names;
  for (const auto& entry : presets()) names.push_back(entry.first);
  return names;
}

ModelDesc modelPreset(const std::string& name) {
  auto it = presets().find(name);
  if (it == presets().end()) {
    std::string known;
    for (const std::string& n : modelPresetNames()) known += (known.empty() ? "" : ", ") + n;
    throw PlanError("unknown model preset '" + name + "'; known presets: " + known);
  }
  return it->second;
}

ModelDesc overrideSizes(const ModelDesc& base, const ModelOverrides& overrides) {
  ModelDesc model = base;
  std::string changes;
  auto apply = [&](const char* size, const std::optional<int>& value, int& field) {
    if (!value || *value == field) return;
    field = *value;
    changes +=
        (changes.empty() ? " with " : ", ") + std::string(size) + " " + std::to_string(*value);
  };
  apply("layers", overrides.layers, model.layers);
  apply("hidden", overrides.hidden, model.hidden);
  apply("heads", overrides.heads, model.heads);
  apply("ffn", overrides.ffn, model.ffn);
  apply("vocab", overrides.vocab, model.vocab);
  apply("seq-len", overrides.seqLen, model.seqLen);
  model.name += changes;
  model.validate();
  return model;
}

double layerParameters(const ModelDesc& m) {
  double h = m.hidden, f = m.ffn;
  return 4 * h * h + 2 * h * f + 9 * h + f;
}

double embeddingParameters(const ModelDesc& m) {
  double h = m.hidden;
  return double(m.vocab) * h + double(m.seqLen) * h + 2 * h;
}

double headParameters(const ModelDesc& m) {
  return m.tiedEmbeddings ? 0 : double(m.vocab) * m.hidden;
}

double parameterCount(const ModelDesc& m) {
  return m.layers * layerParameters(m) + embeddingParameters(m) + headParameters(m);
}

double layerForwardFlops(const ModelDesc& m, double sequences) {
  double b = sequences, s = m.seqLen, h = m.hidden, f = m.ffn;
  return 2 * b * s * (4 * h * h + 2 * h * f) + 4 * b * s * s * h;
}

double logitsForwardFlops(const ModelDesc& m, double sequences) {
  return 2 * sequences * m.seqLen * double(m.hidden) * m.vocab;
}

double trainingFlops(const ModelDesc& m, double sequences, bool recompute) {
  double layers = m.layers * layerForwardFlops(m, sequences);
  double passes = recompute ? 4 : 3;
  return passes * layers + 3 * logitsForwardFlops(m, sequences);
}

double flopsPerToken6N(const ModelDesc& m) {
  return 6 * parameterCount(m) + 12.0 * m.layers * m.seqLen * double(m.hidden);
}

}  // namespace strata::plan
