#include "strata/plan/cluster.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

std::string trim(const std::string& s) {
  size_t begin = s.find_first_not_of(" \t\r");
  if (begin == std::string::npos) return "";
  size_t end = s.find_last_not_of(" \t\r");
  return s.substr(begin, end - begin + 1);
}

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
  errno = 0;
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  bool ok = !text.empty() && errno == 0 && end && *end == '\0' && std::isfinite(value);
  bool positive = key.find("latency") != std::string::npos ? value >= 0 : value > 0;
  if (!ok || !positive)
    throw PlanError(where + ": " + key + " expects a " +
                    (key.find("latency") != std::string::npos ? "non-negative" : "positive") +
                    " number, got '" + text + "'");
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
  std::istringstream lines(text);
  std::string line;
  bool sawKey = false;
  for (int number = 1; std::getline(lines, line); ++number) {
    line = trim(line.substr(0, line.find('#')));
    if (line.empty()) continue;
    std::string where = source + ":" + std::to_string(number);
    size_t eq = line.find('=');
    if (eq == std::string::npos)
      throw PlanError(where + ": expected 'key = value', got '" + line + "'");
    std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
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
  std::ifstream in(path);
  if (!in) throw PlanError("cannot read cluster file '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return parseClusterText(text.str(), path);
}

}  // namespace strata::plan
