#include "calibration_model.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "bench_stats.h"

namespace strata::bench {

Values runTask(char** argv, const std::string& dir, const std::string& task, int ranks,
               const std::string& layout, const RankSites& sites) {
  std::map<std::string, std::string> env = {{"STRATA_CALIBRATION_TASK", task},
                                            {"STRATA_CALIBRATION_DIR", dir}};
  if (!layout.empty()) env["STRATA_CALIBRATION_LAYOUT"] = layout;
  std::filesystem::remove(dir + "/" + task + ".txt");
  RankSites placed = sites ? sites : [](int) { return RankSite{}; };
  spawnRanksIfParent(ranks, argv, env, std::chrono::seconds(300), placed);
  return readValues(dir + "/" + task + ".txt");
}

Values medianOverRounds(const std::vector<Values>& rounds) {
  std::map<std::string, std::vector<double>> all;
  for (const Values& round : rounds)
    for (const auto& [key, value] : round) all[key].push_back(value);
  Values middle;
  for (const auto& [key, values] : all) middle[key] = median(values);
  return middle;
}

double chainedFactor(const Values& profile, int64_t layers) {
  auto both = [&](const std::string& name) {
    return profile.at(name + "_forward_s") + profile.at(name + "_backward_s");
  };
  double alone = both("embedding") + layers * both("block") + both("head");
  return profile.at("microbatch_alone_s") / alone;
}

plan::MeasuredProfile makeProfile(const Values& profile, double concurrentSlowdown) {
  train::TrainConfig c = calibrationConfig(1, 1, 1, "1f1b");
  plan::MeasuredProfile p;
  p.model = {"calibration-gpt",
             static_cast<int>(c.model.layers),
             static_cast<int>(c.model.hidden),
             static_cast<int>(c.model.heads),
             static_cast<int>(c.model.ffn),
             static_cast<int>(c.model.vocab),
             static_cast<int>(c.train.seqLen)};
  p.microBatch = static_cast<int>(c.train.microBatch);
  p.dtype = plan::Dtype::Fp32;
  double chained = chainedFactor(profile, c.model.layers);
  auto layer = [&](const std::string& name) {
    return plan::LayerSeconds{chained * profile.at(name + "_forward_s"),
                              chained * profile.at(name + "_backward_s")};
  };
  p.embedding = layer("embedding");
  p.block = layer("block");
  p.head = layer("head");
  p.blockTp2 = layer("block_tp2");
  p.blockHalf = layer("block_half");
  p.concurrentSlowdown = std::max(1.0, concurrentSlowdown);
  return p;
}

FittedLink fitLink(const Values& machine) {
  return fitLink(machine, machine.at("noise_short_transfer_s"), machine.at("noise_bytes"));
}

plan::ComputeNoise fitNoise(const Values& machine) {
  auto probe = [&](const std::string& name) {
    std::string prefix = "noise_" + name;
    return SyncProbe{machine.at(prefix + "_work_s"), machine.at(prefix + "_wait_s")};
  };
  return fitComputeNoise(probe("short"), probe("long"), 2);
}

namespace {

// The slope in bytes per second between two messages' times.
double rateBetween(double bytes, double seconds, double moreBytes, double moreSeconds) {
  return (moreBytes - bytes) / std::max(1e-9, moreSeconds - seconds);
}

// One kind of transfer's rates from its idle times at the three sizes
// (`kind` is "allreduce" or "p2p"); latency left to the caller.
FittedLink ratesOf(const Values& machine, const std::string& kind) {
  double small = machine.at("small_bytes"), large = machine.at("large_bytes");
  double huge = machine.at("huge_bytes");
  double tSmall = machine.at(kind + "_small_s"), tLarge = machine.at(kind + "_large_s");
  double tHuge = machine.at(kind + "_huge_s");
  return {rateBetween(small, tSmall, large, tLarge), 0, large,
          rateBetween(large, tLarge, huge, tHuge)};
}

}  // namespace

FittedLink fitLink(const Values& machine, double loadedSeconds, double loadedBytes) {
  FittedLink link = ratesOf(machine, "allreduce");
  link.latencySeconds = std::max(0.0, (loadedSeconds - loadedBytes / link.bytesPerSecond) / 2);
  return link;
}

FittedLink fitPointToPointLink(const Values& machine) {
  FittedLink link = ratesOf(machine, "p2p");
  double small = machine.at("small_bytes");
  link.latencySeconds = std::max(0.0, machine.at("p2p_small_s") - small / link.bytesPerSecond);
  return link;
}

std::string linkKeys(const std::string& prefix, const FittedLink& link) {
  std::ostringstream out;
  out << prefix << "gbytes_per_s = " << link.bytesPerSecond / 1e9 << "\n"
      << prefix << "latency_us = " << link.latencySeconds * 1e6 << "\n"
      << prefix << "large_message_mib = " << link.largeMessageBytes / 1048576 << "\n"
      << prefix << "large_message_gbytes_per_s = " << link.largeBytesPerSecond / 1e9 << "\n";
  return out.str();
}

double optimizerBytesPerSecond(const Values& profile) {
  return 32 * profile.at("parameters") / profile.at("optimizer_step_s");
}

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path);
}

plan::TrainingJob jobFromFiles(const std::string& profilePath, const std::string& clusterPath,
                               int globalBatch) {
  plan::TrainingJob job;
  job.profile = plan::loadProfileFile(profilePath);
  job.model = job.profile->model;
  job.dtype = job.profile->dtype;
  job.precision = plan::precisionOf(*job.profile);
  job.cluster = plan::loadClusterFile(clusterPath);
  job.globalBatch = globalBatch;
  return job;
}

int calibrationMain(const char* name, char** argv, int (*parent)(char** argv)) {
  try {
    if (std::getenv("RANK")) {
      runCalibrationTask();
      return 0;
    }
    return parent(argv);
  } catch (const std::exception& e) {
    std::cerr << name << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace strata::bench
