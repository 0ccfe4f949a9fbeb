#include "strata/deploy/k8s_manifests.h"

#include <nlohmann/json.hpp>

#include "pod_template.h"
#include "strata/config/config_file.h"
#include "strata/config/validate_config.h"
#include "strata/deploy/layout_map.h"
#include "strata/error.h"
#include "strata/runtime/layout.h"
#include "strata/util/json.h"
#include "workload.h"

namespace strata::deploy {
namespace {

using nlohmann::ordered_json;
using std::to_string;

// Kubernetes' limit on all annotations of an object together.
constexpr size_t kMaxAnnotationBytes = 262144;
// The shortest entry a rank can have in the layout map: "[0,0,0,0],".
constexpr size_t kMinRankEntryBytes = 10;

std::string describeNodes(const K8sOptions& o) {
  std::string counts;
  for (int64_t count : o.workersPerNode) counts += (counts.empty() ? "" : ",") + to_string(count);
  return to_string(o.workersPerNode.size()) + " nodes with " + counts + " workers (world size " +
         to_string(worldSize(o)) + ")";
}

// The config as the pods run it: checkpoints and output on the claim, and
// --resume, as the pod's `strata train` flags set them.
train::TrainConfig configAsRun(const K8sJob& job) {
  train::TrainConfig config;
  train::applyConfigToml(job.configText, job.configPath, config);
  config.checkpoint.dir = checkpointDir(job.options);
  config.checkpoint.resume = true;
  config.train.outDir = runOutputDir(job.options);
  return config;
}

// The trainer refuses tp groups that span two nodes (runtime/layout.h); so
// does this, before anything is deployed.
std::vector<std::string> placementProblems(const K8sJob& job, const train::TrainConfig& config) {
  const train::ParallelConfig& p = config.parallel;
  std::vector<int> sizes(job.options.workersPerNode.begin(), job.options.workersPerNode.end());
  try {
    checkTensorParallelInsideNodes(ParallelLayout(static_cast<int>(worldSize(job.options)),
                                                  {static_cast<int>(p.pp), static_cast<int>(p.dp),
                                                   static_cast<int>(p.cp), static_cast<int>(p.tp)}),
                                   sizes);
  } catch (const ConfigError& e) {
    return {e.what()};
  }
  return {};
}

void checkConfigFits(const K8sJob& job, const train::TrainConfig& config) {
  std::vector<std::string> problems =
      train::configProblems(config, static_cast<int>(worldSize(job.options)));
  if (problems.empty()) problems = placementProblems(job, config);
  if (problems.empty()) return;
  std::string message =
      "the config " + job.configPath + " does not fit " + describeNodes(job.options) + ":";
  for (const std::string& problem : problems) message += "\n  - " + problem;
  throw ConfigError(message);
}

std::string layoutTooLarge(const K8sOptions& o) {
  return "the layout map of " + to_string(worldSize(o)) +
         " ranks does not fit in a Kubernetes annotation (at most " +
         to_string(kMaxAnnotationBytes) + " bytes)";
}

// Before anything is built for every rank: a world this large cannot be
// annotated whatever its layout.
void checkRankCount(const K8sOptions& o) {
  if (static_cast<size_t>(worldSize(o)) > kMaxAnnotationBytes / kMinRankEntryBytes)
    throw ConfigError(layoutTooLarge(o));
}

std::string layoutAnnotation(const K8sOptions& o, const train::ParallelConfig& parallel) {
  std::string text = dumpJson(layoutMap(parallel, o.workersPerNode));
  if (text.size() > kMaxAnnotationBytes) throw ConfigError(layoutTooLarge(o));
  return text;
}

ordered_json secret(const K8sJob& job) {
  return {{"apiVersion", "v1"},
          {"kind", "Secret"},
          {"metadata", objectMeta(job.options, secretName(job.options))},
          {"type", "Opaque"},
          {"stringData", {{kJobTokenKey, job.jobToken}}}};
}

ordered_json configMap(const K8sJob& job) {
  std::string file = std::string(kConfigPath).substr(std::string(kConfigDir).size() + 1);
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", objectMeta(job.options, configMapName(job.options))},
          {"data", {{file, job.configText}}}};
}

// Every pod writes its own checkpoint shards, so pods on several cluster
// nodes mount the claim at once: ReadWriteMany.
ordered_json checkpointClaim(const K8sOptions& o) {
  ordered_json spec = {{"accessModes", {"ReadWriteMany"}},
                       {"resources", {{"requests", {{"storage", o.checkpointSize}}}}}};
  if (!o.storageClass.empty()) spec["storageClassName"] = o.storageClass;
  return {{"apiVersion", "v1"},
          {"kind", "PersistentVolumeClaim"},
          {"metadata", objectMeta(o, claimName(o))},
          {"spec", spec}};
}

}  // namespace

std::vector<ordered_json> buildK8sManifests(const K8sJob& job) {
  const K8sOptions& o = job.options;
  checkK8sOptions(o);
  checkRankCount(o);
  train::TrainConfig config = configAsRun(job);
  checkConfigFits(job, config);
  std::string layout = layoutAnnotation(o, config.parallel);
  std::vector<ordered_json> manifests = {secret(job), configMap(job)};
  if (o.checkpointClaim.empty()) manifests.push_back(checkpointClaim(o));
  if (o.flavor == K8sFlavor::kPyTorchJob) {
    manifests.push_back(pyTorchJob(o, layout));
  } else {
    std::vector<ordered_json> jobs = indexedJobs(o, layout);
    manifests.insert(manifests.end(), jobs.begin(), jobs.end());
  }
  return manifests;
}

ordered_json k8sList(const std::vector<ordered_json>& manifests) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", manifests}};
}

}  // namespace strata::deploy
