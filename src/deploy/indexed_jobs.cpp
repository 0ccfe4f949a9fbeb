// The default flavor: plain Kubernetes. Pods of an Indexed Job get the host
// name JOB-INDEX and JOB_COMPLETION_INDEX; with `subdomain` naming a headless
// Service that selects them, JOB-INDEX.SERVICE resolves to the pod, so node
// 0's launcher is reachable at a name known before it starts. Each group's
// STRATA_NODE_RANK_OFFSET turns its completion index into the node rank.
#include <nlohmann/json.hpp>

#include "pod_template.h"
#include "strata/deploy/k8s_manifests.h"
#include "strata/deploy/node_groups.h"
#include "workload.h"

namespace strata::deploy {
namespace {

using nlohmann::ordered_json;
using std::to_string;

constexpr const char* kPortName = "rendezvous";

// One Job when every node has the same count, named after the job itself.
std::string jobName(const K8sOptions& o, size_t group, size_t groups) {
  return groups == 1 ? o.name : o.name + "-g" + to_string(group);
}

ordered_json headlessService(const K8sOptions& o) {
  ordered_json port = {{"name", kPortName}, {"port", o.port}, {"targetPort", o.port}};
  // Pods are published before they are ready, so every launcher can resolve
  // node 0 as soon as its pod has an address.
  ordered_json spec = {{"clusterIP", "None"},
                       {"publishNotReadyAddresses", true},
                       {"selector", jobLabels(o)},
                       {"ports", ordered_json::array({port})}};
  return {{"apiVersion", "v1"},
          {"kind", "Service"},
          {"metadata", objectMeta(o, o.name)},
          {"spec", spec}};
}

ordered_json indexedJob(const K8sOptions& o, const NodeGroup& group, const std::string& name,
                        const std::string& masterAddress, const std::string& layoutMap) {
  PodShape shape{"strata", kPortName, group.workersPerNode, masterAddress, std::nullopt};
  shape.extraEnv.push_back(
      {{"name", "STRATA_NODE_RANK_OFFSET"}, {"value", to_string(group.firstNode)}});
  ordered_json pod = podTemplate(o, shape);
  pod["spec"]["subdomain"] = o.name;
  pod["spec"]["restartPolicy"] = "Never";
  ordered_json meta = objectMeta(o, name);
  meta["annotations"] = {{kLayoutAnnotation, layoutMap}};
  ordered_json spec = {{"completionMode", "Indexed"},
                       {"completions", group.nodes},
                       {"parallelism", group.nodes},
                       {"backoffLimit", o.maxRestarts},
                       {"template", pod}};
  return {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", meta}, {"spec", spec}};
}

}  // namespace

std::vector<ordered_json> indexedJobs(const K8sOptions& options, const std::string& layoutMap) {
  std::vector<NodeGroup> groups = nodeGroups(options.workersPerNode);
  std::string masterAddress = jobName(options, 0, groups.size()) + "-0." + options.name;
  std::vector<ordered_json> manifests = {headlessService(options)};
  for (size_t g = 0; g < groups.size(); ++g) {
    std::string name = jobName(options, g, groups.size());
    checkHostName(name + "-" + to_string(groups[g].nodes - 1));
    manifests.push_back(indexedJob(options, groups[g], name, masterAddress, layoutMap));
  }
  return manifests;
}

}  // namespace strata::deploy
