// Helpers shared by the deploy tests: jobs to build, and the parts of the
// manifests they check.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/deploy/k8s_manifests.h"
#include "strata/error.h"

namespace strata::deploy {

using nlohmann::ordered_json;

// A valid config for pp x dp x tp: 4 layers, 8 sequences a step in
// micro-batches of 1, checkpoints every 10 steps.
inline std::string configText(int pp, int dp, int tp) {
  return "[model]\nlayers = 4\nhidden = 64\nheads = 4\nffn = 128\n\n[parallel]\npp = " +
         std::to_string(pp) + "\ndp = " + std::to_string(dp) + "\ntp = " + std::to_string(tp) +
         "\n\n[train]\nglobal_batch = 8\nmicro_batch = 1\nseq_len = 32\n\n[checkpoint]\nevery = "
         "10\n";
}

inline K8sJob jobOf(std::vector<int64_t> workersPerNode, const std::string& config) {
  K8sJob job;
  job.options.name = "gpt";
  job.options.image = "registry.example/strata:1";
  job.options.workersPerNode = std::move(workersPerNode);
  job.configPath = "train.toml";
  job.configText = config;
  job.jobToken = "0123abcd-token";
  return job;
}

// Every manifest of `kind`, in order.
inline std::vector<ordered_json> ofKind(const std::vector<ordered_json>& manifests,
                                        const std::string& kind) {
  std::vector<ordered_json> found;
  for (const ordered_json& m : manifests)
    if (m["kind"] == kind) found.push_back(m);
  return found;
}

inline const ordered_json& onlyContainer(const ordered_json& podTemplate) {
  EXPECT_EQ(podTemplate["spec"]["containers"].size(), 1u);
  return podTemplate["spec"]["containers"][0];
}

// The entry named `name` of a list of named entries (env, volumes, mounts).
inline ordered_json named(const ordered_json& list, const std::string& name) {
  for (const ordered_json& entry : list)
    if (entry["name"] == name) return entry;
  ADD_FAILURE() << "no entry named " << name << " in " << list.dump();
  return ordered_json::object();
}

inline std::vector<std::string> commandOf(const ordered_json& container) {
  return container["command"].get<std::vector<std::string>>();
}

// Runs body, expecting a ConfigError whose message contains every part.
inline void expectErrorNaming(const std::function<void()>& body,
                              const std::vector<std::string>& parts) {
  try {
    body();
    ADD_FAILURE() << "expected an error naming " << (parts.empty() ? "" : parts.front());
  } catch (const ConfigError& e) {
    for (const std::string& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "'" << part << "' not in: " << e.what();
  }
}

}  // namespace strata::deploy
