#include "strata/plan/cluster.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "plan_toml.h"
#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

using Setter = std::function<void(Cluster&, double)>;

Link& pathOf(std::optional<Link>& p2p) { return p2p ? *p2p : p2p.emplace(); }

// The keys of one link, under `prefix`, with the link they set.
void addLinkKeys(std::map<std::string, Setter>& keys, const std::string& prefix,
                 const std::function<Link&(Cluster&)>& link) {
  keys[prefix + "gbytes_per_s"] = [link](Cluster& c, double v) { link(c).bandwidth = v * 1e9; };
  keys[prefix + "latency_us"] = [link](Cluster& c, double v) { link(c).latency = v * 1e-6; };
  keys[prefix + "large_message_mib"] = [link](Cluster& c, double v) {
    link(c).largeMessageBytes = v * 1048576.0;
  };
  keys[prefix + "large_message_gbytes_per_s"] = [link](Cluster& c, double v) {
    link(c).largeBandwidth = v * 1e9;
  };
}

// Each numeric key with the factor that turns its unit into SI.
std::map<std::string, Setter> makeNumericKeys() {
  std::map<std::string, Setter> keys = {
      {"nodes", [](Cluster& c, double v) { c.nodes = static_cast<int>(v); }},
      {"devices_per_node", [](Cluster& c, double v) { c.devicesPerNode = static_cast<int>(v); }},
      {"peak_fp32_tflops", [](Cluster& c, double v) { c.device.peakFp32Flops = v * 1e12; }},
      {"peak_bf16_tflops", [](Cluster& c, double v) { c.device.peakBf16Flops = v * 1e12; }},
      {"memory_gib", [](Cluster& c, double v) { c.device.memoryBytes = v * 1073741824.0; }},
      {"memory_bandwidth_gbytes_per_s",
       [](Cluster& c, double v) { c.device.memoryBandwidth = v * 1e9; }},
      {"matmul_efficiency", [](Cluster& c, double v) { c.device.matmulEfficiency = v; }},
      {"compute_spread", [](Cluster& c, double v) { c.device.noise.spread = v; }},
      {"compute_jitter_ms", [](Cluster& c, double v) { c.device.noise.jitter = v * 1e-3; }},
      {"failures_per_device_hour",
       [](Cluster& c, double v) {
         c.reliability.failuresPerDeviceHour = v;
         c.reliability.failureSource = "the cluster file";
       }},
      {"storage_gbytes_per_s_per_node",
       [](Cluster& c, double v) {
         c.reliability.storageBytesPerNode = v * 1e9;
         c.reliability.storageSource = "the cluster file";
       }},
      {"restart_s", [](Cluster& c, double v) { c.reliability.restartSeconds = v; }},
      {"detection_s", [](Cluster& c, double v) { c.reliability.detectionSeconds = v; }},
      {"rejoin_s", [](Cluster& c, double v) { c.reliability.rejoinSeconds = v; }},
  };
  addLinkKeys(keys, "intra_node_", [](Cluster& c) -> Link& { return c.intraNode; });
  addLinkKeys(keys, "inter_node_", [](Cluster& c) -> Link& { return c.interNode; });
  addLinkKeys(keys, "intra_node_p2p_", [](Cluster& c) -> Link& { return pathOf(c.intraNodeP2p); });
  addLinkKeys(keys, "inter_node_p2p_", [](Cluster& c) -> Link& { return pathOf(c.interNodeP2p); });
  return keys;
}

const std::map<std::string, Setter>& numericKeys() {
  static const std::map<std::string, Setter> keys = makeNumericKeys();
  return keys;
}

// Keys that mean nothing without another: a rate for large messages without
// where it starts (and the reverse), a point-to-point path without its
// bandwidth or latency.
const std::vector<std::pair<std::string, std::string>>& keysNeeded() {
  static const std::vector<std::pair<std::string, std::string>> needs = [] {
    std::vector<std::pair<std::string, std::string>> out;
    for (std::string link : {"intra_node_", "inter_node_", "intra_node_p2p_", "inter_node_p2p_"}) {
      out.push_back({link + "large_message_mib", link + "large_message_gbytes_per_s"});
      out.push_back({link + "large_message_gbytes_per_s", link + "large_message_mib"});
    }
    for (std::string path : {"intra_node_p2p_", "inter_node_p2p_"}) {
      for (std::string key : {"latency_us", "large_message_mib", "large_message_gbytes_per_s"})
        out.push_back({path + key, path + "gbytes_per_s"});
      out.push_back({path + "gbytes_per_s", path + "latency_us"});
    }
    return out;
  }();
  return needs;
}

void checkKeysNeeded(const std::vector<util::TomlEntry>& entries) {
  std::map<std::string, const util::TomlEntry*> given;
  for (const util::TomlEntry& entry : entries) given[entry.name()] = &entry;
  for (const auto& [key, needed] : keysNeeded()) {
    auto it = given.find(key);
    if (it != given.end() && !given.count(needed))
      throw PlanError(it->second->where + ": " + key + " needs " + needed + " as well");
  }
}

std::string knownKeys() {
  std::string out = "name, preset, device, host_memory, fused_swiglu_backward";
  for (const auto& entry : numericKeys()) out += ", " + entry.first;
  return out;
}

bool isIntegerKey(const std::string& key) { return key == "nodes" || key == "devices_per_node"; }

double parseValue(const util::TomlEntry& entry) {
  bool mayBeZero = entry.key.find("latency") != std::string::npos ||
                   entry.key.rfind("compute_", 0) == 0 || entry.key == "failures_per_device_hour";
  const char* expected = mayBeZero ? "a non-negative number" : "a positive number";
  double value = numberOf(entry, expected);
  if (!(mayBeZero ? value >= 0 : value > 0)) wrongValue(entry, expected);
  if (isIntegerKey(entry.key) && value != std::floor(value)) wrongValue(entry, "a whole number");
  if (entry.key == "matmul_efficiency" && value > 1)
    wrongValue(entry, "a fraction of peak in (0, 1]");
  return value;
}

// A preset is the base the other keys override wherever it is written: the
// keys of a TOML table have no order.
Cluster baseCluster(const std::vector<util::TomlEntry>& entries, const std::string& source) {
  for (const util::TomlEntry& entry : entries) {
    if (entry.name() != "preset") continue;
    std::string preset = stringOf(entry);
    try {
      return clusterPreset(preset);
    } catch (const PlanError& error) {
      throw PlanError(entry.where + ": " + error.what());
    }
  }
  Cluster cluster = clusterPreset("cpu-local");
  cluster.name = source;
  return cluster;
}

}  // namespace

double ComputeNoise::deviationSeconds(double computeSeconds) const {
  double t = std::max(0.0, computeSeconds);
  return std::sqrt(spread * spread * t * t + jitter * jitter * t);
}

double Link::transferSeconds(double bytes) const {
  bool oneRate = largeMessageBytes <= 0 || largeBandwidth <= 0;
  if (oneRate || bytes <= largeMessageBytes) return bytes / bandwidth;
  return largeMessageBytes / bandwidth + (bytes - largeMessageBytes) / largeBandwidth;
}

double Cluster::peakFlops(Dtype dtype) const {
  return dtype == Dtype::Fp32 ? device.peakFp32Flops : device.peakBf16Flops;
}

double Cluster::achievedFlops(Dtype dtype) const {
  return peakFlops(dtype) * device.matmulEfficiency;
}

Cluster parseClusterText(const std::string& text, const std::string& source) {
  std::vector<util::TomlEntry> entries = readPlanToml(text, source);
  Cluster cluster = baseCluster(entries, source);
  for (const util::TomlEntry& entry : entries) {
    std::string key = entry.name();
    if (key == "name") {
      cluster.name = stringOf(entry);
    } else if (key == "device") {
      cluster.device.name = stringOf(entry);
    } else if (key == "host_memory" || key == "fused_swiglu_backward") {
      auto* value = std::get_if<bool>(&entry.value);
      if (!value) wrongValue(entry, "true or false");
      (key == "host_memory" ? cluster.device.hostMemory : cluster.device.fusedSwigluBackward) =
          *value;
    } else if (auto it = numericKeys().find(key); it != numericKeys().end()) {
      it->second(cluster, parseValue(entry));
    } else if (key != "preset") {
      throw PlanError(entry.where + ": unknown key '" + key + "'; known keys: " + knownKeys());
    }
  }
  checkKeysNeeded(entries);
  return cluster;
}

Cluster loadClusterFile(const std::string& path) {
  return parseClusterText(readTextFile(path, "cluster"), path);
}

}  // namespace strata::plan
