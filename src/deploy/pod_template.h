// What every pod of a Strata job shares, whichever object runs it: the
// labels, the one container running `strata launch` over `strata train`,
// the job token from the Secret, /dev/shm, the config and the claim, the
// resources of its workers, and one pod per cluster node.
//
// Plain JSON building; nothing blocks. checkHostName throws ConfigError for a
// host name Kubernetes refuses; podTemplate throws nothing for options that
// checkK8sOptions accepted.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "strata/deploy/k8s_options.h"

namespace strata::deploy {

// The key of the job token in the Secret.
inline constexpr const char* kJobTokenKey = "token";

// The names of the objects of a job.
std::string secretName(const K8sOptions& options);
std::string configMapName(const K8sOptions& options);
std::string claimName(const K8sOptions& options);

// Where the pods' `strata train` keeps its checkpoints and its run output:
// the job's folder on the claim.
std::string checkpointDir(const K8sOptions& options);
std::string runOutputDir(const K8sOptions& options);

// The labels every object and pod of the job carries; the Service and the
// anti-affinity select the pods by them.
nlohmann::ordered_json jobLabels(const K8sOptions& options);
// name, namespace (when given) and the labels.
nlohmann::ordered_json objectMeta(const K8sOptions& options, const std::string& name);

// A pod's host name may have at most 63 characters; the error blames --name.
void checkHostName(const std::string& host);

// One kind of pod of the job.
struct PodShape {
  std::string containerName;
  std::string portName;
  int64_t workers = 1;
  std::string masterAddress;        // node 0's host name
  std::optional<int64_t> nodeRank;  // given as a flag; otherwise from the environment
  nlohmann::ordered_json extraEnv = nlohmann::ordered_json::array();
};

nlohmann::ordered_json podTemplate(const K8sOptions& options, const PodShape& shape);

}  // namespace strata::deploy
