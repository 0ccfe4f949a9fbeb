#include "independent_gpt2.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace strata::train::testing {
namespace {

uint64_t littleEndian(const std::string& bytes, size_t at, int width) {
  uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i)
    value = (value << 8) | static_cast<unsigned char>(bytes[at + static_cast<size_t>(i)]);
  return value;
}

torch::Tensor decodeF32(const std::string& bytes, size_t begin, size_t end,
                        const std::vector<int64_t>& shape) {
  std::vector<float> values;
  for (size_t at = begin; at < end; at += 4) {
    auto bits = static_cast<uint32_t>(littleEndian(bytes, at, 4));
    float value;
    std::memcpy(&value, &bits, 4);
    values.push_back(value);
  }
  return torch::tensor(values, torch::kFloat).reshape(shape);
}

const torch::Tensor& at(const std::map<std::string, RawTensor>& w, const std::string& name) {
  auto found = w.find(name);
  if (found == w.end()) throw std::runtime_error("no tensor " + name);
  return found->second.value;
}

torch::Tensor layerNorm(const torch::Tensor& x, const torch::Tensor& weight,
                        const torch::Tensor& bias) {
  torch::Tensor mean = x.mean(-1, true);
  torch::Tensor variance = (x - mean).pow(2).mean(-1, true);
  return (x - mean) / torch::sqrt(variance + 1e-5) * weight + bias;
}

torch::Tensor geluNew(const torch::Tensor& x) {
  return 0.5 * x * (1.0 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x.pow(3))));
}

}  // namespace

RawSafetensors readSafetensorsIndependently(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string bytes = buffer.str();
  if (bytes.size() < 8) throw std::runtime_error(path + " is shorter than 8 bytes");
  auto headerLength = static_cast<size_t>(littleEndian(bytes, 0, 8));
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, headerLength));
  size_t data = 8 + headerLength;
  RawSafetensors file;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [key, value] : entry.items()) file.metadata[key] = value.get<std::string>();
      continue;
    }
    RawTensor t;
    t.dtype = entry.at("dtype").get<std::string>();
    t.shape = entry.at("shape").get<std::vector<int64_t>>();
    auto begin = entry.at("data_offsets")[0].get<size_t>();
    auto end = entry.at("data_offsets")[1].get<size_t>();
    if (t.dtype != "F32") throw std::runtime_error(name + " is " + t.dtype + ", not F32");
    if (data + end > bytes.size()) throw std::runtime_error(name + " runs past the end");
    t.value = decodeF32(bytes, data + begin, data + end, t.shape);
    file.tensors[name] = t;
  }
  return file;
}

torch::Tensor gpt2Logits(const std::map<std::string, RawTensor>& w, int64_t layers, int64_t heads,
                         const torch::Tensor& ids) {
  torch::NoGradGuard noGrad;
  int64_t b = ids.size(0), s = ids.size(1);
  torch::Tensor wte = at(w, "transformer.wte.weight");
  int64_t hidden = wte.size(1), d = hidden / heads;
  torch::Tensor x = wte.index_select(0, ids.reshape({-1})).reshape({b, s, hidden}) +
                    at(w, "transformer.wpe.weight").narrow(0, 0, s);
  torch::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
  for (int64_t i = 0; i < layers; ++i) {
    std::string p = "transformer.h." + std::to_string(i) + ".";
    torch::Tensor a = layerNorm(x, at(w, p + "ln_1.weight"), at(w, p + "ln_1.bias"));
    torch::Tensor qkv =
        torch::matmul(a, at(w, p + "attn.c_attn.weight")) + at(w, p + "attn.c_attn.bias");
    std::vector<torch::Tensor> parts = qkv.split(hidden, -1);  // q, k, v: [b, s, hidden]
    auto headsOf = [&](const torch::Tensor& t) {
      return t.reshape({b, s, heads, d}).transpose(1, 2);
    };
    torch::Tensor q = headsOf(parts[0]), k = headsOf(parts[1]), v = headsOf(parts[2]);
    torch::Tensor scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(d));
    torch::Tensor probs = torch::softmax(scores.masked_fill(future, -INFINITY), -1);
    torch::Tensor merged = torch::matmul(probs, v).transpose(1, 2).reshape({b, s, hidden});
    x = x + torch::matmul(merged, at(w, p + "attn.c_proj.weight")) + at(w, p + "attn.c_proj.bias");
    torch::Tensor m = layerNorm(x, at(w, p + "ln_2.weight"), at(w, p + "ln_2.bias"));
    torch::Tensor up =
        geluNew(torch::matmul(m, at(w, p + "mlp.c_fc.weight")) + at(w, p + "mlp.c_fc.bias"));
    x = x + torch::matmul(up, at(w, p + "mlp.c_proj.weight")) + at(w, p + "mlp.c_proj.bias");
  }
  x = layerNorm(x, at(w, "transformer.ln_f.weight"), at(w, "transformer.ln_f.bias"));
  return torch::matmul(x, wte.t());
}

}  // namespace strata::train::testing
