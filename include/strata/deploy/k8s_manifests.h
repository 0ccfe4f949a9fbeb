// The Kubernetes manifests of a training job, as plain JSON objects (the
// `strata k8s` command prints them as YAML): a Secret with the job token, a
// ConfigMap with the training config, a PersistentVolumeClaim for
// checkpoints (unless an existing one is named), and either a headless
// Service with one Indexed Job per group of equal nodes (node_groups.h) or
// one Kubeflow PyTorchJob.
//
// Every pod runs `strata launch` with the job's node count, its own worker
// count, node 0's rendezvous endpoint and the restart budget as flags, over
// `strata train --config /etc/strata/train.toml`, with checkpoints and run
// output on the claim and --resume, so a restarted job continues from its
// latest complete checkpoint. The layout map (layout_map.h) is an
// annotation of every Job.
//
// Nothing blocks. buildK8sManifests throws ConfigError for options
// checkK8sOptions refuses, a config that does not parse, a config that does
// not fit the job (the layout against the world size, and every other check
// of validateConfig), and names too long for the pods' host names.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "strata/deploy/k8s_options.h"

namespace strata::deploy {

// Where a pod finds the config, and the claim it writes to.
inline constexpr const char* kConfigDir = "/etc/strata";
inline constexpr const char* kConfigPath = "/etc/strata/train.toml";
inline constexpr const char* kRunVolumeDir = "/var/lib/strata";
// The annotation that holds the layout map.
inline constexpr const char* kLayoutAnnotation = "strata/layout";

struct K8sJob {
  K8sOptions options;
  std::string configPath;  // named in messages
  std::string configText;  // TOML, delivered to the pods as it is
  std::string jobToken;    // stored in the Secret, never in a pod spec
};

// The manifests in the order kubectl should create them.
std::vector<nlohmann::ordered_json> buildK8sManifests(const K8sJob& job);

// The manifests as one Kubernetes List, for `kubectl apply -f` of JSON.
nlohmann::ordered_json k8sList(const std::vector<nlohmann::ordered_json>& manifests);

}  // namespace strata::deploy
