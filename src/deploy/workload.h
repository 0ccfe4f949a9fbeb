// The objects that run a job's pods: a headless Service and one Indexed Job
// per group of equal nodes (indexedJobs), or one Kubeflow PyTorchJob
// (pyTorchJob). Each Job, and the PyTorchJob, carries `layoutMap` as the
// kLayoutAnnotation.
//
// Plain JSON building; nothing blocks. Throws ConfigError when a pod's host
// name would exceed Kubernetes' 63 characters (a --name too long).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "strata/deploy/k8s_options.h"

namespace strata::deploy {

std::vector<nlohmann::ordered_json> indexedJobs(const K8sOptions& options,
                                                const std::string& layoutMap);

nlohmann::ordered_json pyTorchJob(const K8sOptions& options, const std::string& layoutMap);

}  // namespace strata::deploy
