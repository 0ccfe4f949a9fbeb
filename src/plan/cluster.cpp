#include "strata/plan/cluster.h"

#include <cmath>
#include <functional>
#include <map>

#include "key_value_text.h"
#include "strata/plan/errors.h"
#include "strata/util/parse_number.h"

namespace strata::plan {
namespace {

using Setter = std::function<void(Cluster&, double)>;

// Each numeric key with the factor that turns its unit into SI.
const std::map<std::string, Setter>& numericKeys() {
  static const std::map<std::string, Setter> keys = {
      {"nodes", [](Cluster& c, double v) { c.nodes = static_cast<int>(v); }},
      {"devices_per_node", [](Cluster& c, double v) { c.devicesPerNode = static_cast<int>(v); }},
      {"peak_fp32_tflops", [](Cluster& c, double v) { c.device.peakFp32Flops = v * 1e12; }},
      {"peak_bf16_tflops", [](Cluster& c, double v) { c.device.peakBf16Flops = v * 1e12; }},
      {"memory_gib", [](Cluster& c, double v) { c.device.memoryBytes = v * 1073741824.0; }},
      {"memory_bandwidth_gbytes_per_s",
       [](Cluster& c, double v) { c.device.memoryBandwidth = v * 1e9; }},
      {"matmul_efficiency", [](Cluster& c, double v) { c.device.matmulEfficiency = v; }},
      {"intra_node_gbytes_per_s", [](Cluster& c, double v) { c.intraNode.bandwidth = v * 1e9; }},
      {"intra_node_latency_us", [](Cluster& c, double v) { c.intraNode.latency = v * 1e-6; }},
      {"inter_node_gbytes_per_s", [](Cluster& c, double v) { c.interNode.bandwidth = v * 1e9; }},
      {"inter_node_latency_us", [](Cluster& c, double v) { c.interNode.latency = v * 1e-6; }},
  };
  return keys;
}

std::string knownKeys() {
  std::string out = "name, preset, device";
  for (const auto& entry : numericKeys()) out += ", " + entry.first;
  return out;
}

bool isIntegerKey(const std::string& key) { return key == "nodes" || key == "devices_per_node"; }

double parseValue(const std::string& where, const std::string& key, const std::string& text) {
  std::optional<double> parsed = parseReal(text);
  bool latency = key.find("latency") != std::string::npos;
  if (!parsed || !(latency ? *parsed >= 0 : *parsed > 0))
    throw PlanError(where + ": " + key + " expects a " + (latency ? "non-negative" : "positive") +
                    " number, got '" + text + "'");
  double value = *parsed;
  if (isIntegerKey(key) && value != std::floor(value))
    throw PlanError(where + ": " + key + " expects a whole number, got '" + text + "'");
  if (key == "matmul_efficiency" && value > 1)
    throw PlanError(where + ": matmul_efficiency is a fraction of peak in (0, 1], got '" + text +
                    "'");
  return value;
}

}  // namespace

double Cluster::peakFlops(Dtype dtype) const {
  return dtype == Dtype::Fp32 ? device.peakFp32Flops : device.peakBf16Flops;
}

double Cluster::achievedFlops(Dtype dtype) const {
  return peakFlops(dtype) * device.matmulEfficiency;
}

Cluster parseClusterText(const std::string& text, const std::string& source) {
  Cluster cluster = clusterPreset("cpu-local");
  cluster.name = source;
  bool sawKey = false;
  for (const auto& [where, key, value] : readKeyValueLines(text, source)) {
    if (key == "preset") {
      if (sawKey) throw PlanError(where + ": 'preset' must come before every other key");
      cluster = clusterPreset(value);
    } else if (key == "name") {
      cluster.name = value;
    } else if (key == "device") {
      cluster.device.name = value;
    } else if (auto it = numericKeys().find(key); it != numericKeys().end()) {
      it->second(cluster, parseValue(where, key, value));
    } else {
      throw PlanError(where + ": unknown key '" + key + "'; known keys: " + knownKeys());
    }
    sawKey = sawKey || key != "preset";
  }
  return cluster;
}

Cluster loadClusterFile(const std::string& path) {
  return parseClusterText(readTextFile(path, "cluster"), path);
}

}  // namespace strata::plan
