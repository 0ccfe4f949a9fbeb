#include "strata/deploy/k8s_options.h"

#include <numeric>
#include <regex>

#include "quantity.h"
#include "strata/error.h"
#include "strata/util/endpoint.h"
#include "strata/util/parse_number.h"

namespace strata::deploy {
namespace {

using std::to_string;

constexpr size_t kMaxLabelLength = 63;

std::string joined(const std::vector<int64_t>& counts, size_t first = 0) {
  std::string text;
  for (size_t i = first; i < counts.size(); ++i)
    text += (text.empty() ? "" : ",") + to_string(counts[i]);
  return text;
}

// Kubernetes' rules for names: an RFC 1035 label for Services (a letter
// first), an RFC 1123 label for namespaces, a DNS subdomain for claims.
const std::regex kServiceName("[a-z]([-a-z0-9]*[a-z0-9])?");
const std::regex kNamespaceName("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
const std::regex kClaimName("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
constexpr size_t kMaxSubdomainLength = 253;

void checkName(const std::string& flag, const std::string& value, const std::regex& rule,
               size_t maxLength, const std::string& rules) {
  if (value.size() > maxLength || !std::regex_match(value, rule))
    throw ConfigError(flag + " '" + value + "' is not a valid name: " + rules + ", at most " +
                      to_string(maxLength) + " characters");
}

void checkNames(const K8sOptions& o) {
  checkName("--name", o.name, kServiceName, kMaxLabelLength,
            "lowercase letters, digits and '-', starting with a letter and ending with a letter "
            "or digit");
  if (!o.namespaceName.empty())
    checkName("--namespace", o.namespaceName, kNamespaceName, kMaxLabelLength,
              "lowercase letters, digits and '-', starting and ending with a letter or digit");
  if (!o.checkpointClaim.empty())
    checkName("--checkpoint-claim", o.checkpointClaim, kClaimName, kMaxSubdomainLength,
              "lowercase letters, digits, '-' and '.', each part starting and ending with a "
              "letter or digit");
}

void checkPositiveQuantity(const std::string& flag, const std::string& text) {
  if (parseQuantity(flag, text).digits == 0)
    throw ConfigError(flag + " must be above 0, got " + text);
}

void checkCounts(const K8sOptions& o) {
  if (o.workersPerNode.empty()) throw ConfigError("--nodes must be at least 1, got 0");
  for (int64_t count : o.workersPerNode) {
    if (count < 1)
      throw ConfigError("--workers-per-node " + joined(o.workersPerNode) +
                        ": every node needs at least 1 worker, got " + to_string(count));
  }
  if (o.gpusPerWorker < 0)
    throw ConfigError("--gpus-per-worker must be at least 0, got " + to_string(o.gpusPerWorker));
  if (o.maxRestarts < 0)
    throw ConfigError("--max-restarts must be at least 0, got " + to_string(o.maxRestarts));
  if (o.port < 1 || o.port > kMaxPort)
    throw ConfigError("--port must be in [1, " + to_string(kMaxPort) + "], got " +
                      to_string(o.port));
}

void checkQuantities(const K8sOptions& o) {
  checkPositiveQuantity("--shm-size", o.shmSize);
  if (!o.cpuPerWorker.empty()) checkPositiveQuantity("--cpu", o.cpuPerWorker);
  if (!o.memoryPerWorker.empty()) checkPositiveQuantity("--memory", o.memoryPerWorker);
  if (o.checkpointClaim.empty()) checkPositiveQuantity("--checkpoint-size", o.checkpointSize);
}

// etcd's endpoints and key are checked here, so a typo fails `strata k8s`
// rather than every pod of the job.
void checkRendezvous(const K8sOptions& o) {
  if (o.rdzvBackend != "c10d" && o.rdzvBackend != "etcd")
    throw ConfigError("--rdzv-backend must be c10d or etcd, got '" + o.rdzvBackend + "'");
  if (o.rdzvBackend == "c10d") {
    if (!o.rdzvEndpoint.empty())
      throw ConfigError("--rdzv-endpoint '" + o.rdzvEndpoint +
                        "' names etcd's endpoints, but --rdzv-backend is c10d, where pod 0 "
                        "serves the rendezvous; add --rdzv-backend etcd");
    return;
  }
  if (o.rdzvEndpoint.empty())
    throw ConfigError(
        "--rdzv-backend etcd needs --rdzv-endpoint: etcd's client endpoints "
        "HOST:PORT[,HOST:PORT...] as the pods reach them (e.g. etcd.etcd.svc:2379)");
  if (!etcdEndpointsIn(o.rdzvEndpoint))
    throw ConfigError("--rdzv-endpoint '" + o.rdzvEndpoint +
                      "' is not etcd's client endpoints HOST:PORT[,HOST:PORT...] (plain http)");
  if (o.runId.empty() || o.runId.find_first_of(" /\t\n") != std::string::npos)
    throw ConfigError("--rdzv-id '" + o.runId + "' must be a non-empty name without spaces or '/'");
}

// A PyTorchJob has one pod template for its Master and one for all Workers.
void checkPyTorchJobCounts(const std::vector<int64_t>& counts) {
  for (size_t node = 2; node < counts.size(); ++node) {
    if (counts[node] != counts[1])
      throw ConfigError(
          "--flavor pytorchjob gives the Master one worker count and every Worker "
          "one other, but --workers-per-node " +
          joined(counts) + " gives the Workers " + joined(counts, 1) +
          "; use --flavor job, which runs any counts");
  }
}

}  // namespace

K8sFlavor parseFlavor(const std::string& text) {
  if (text == "job") return K8sFlavor::kIndexedJob;
  if (text == "pytorchjob") return K8sFlavor::kPyTorchJob;
  throw ConfigError("--flavor must be job or pytorchjob, got '" + text + "'");
}

std::vector<int64_t> workersPerNodeList(int64_t nodes, const std::string& text) {
  if (nodes < 1) throw ConfigError("--nodes must be at least 1, got " + to_string(nodes));
  std::vector<int64_t> counts;
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma == std::string::npos ? comma : comma - start);
    std::optional<int64_t> count = parseInteger(item);
    if (!count || *count < 1)
      throw ConfigError("--workers-per-node '" + text +
                        "': every count must be an integer of at "
                        "least 1, got '" +
                        item + "'");
    counts.push_back(*count);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (counts.size() == 1) return std::vector<int64_t>(nodes, counts[0]);
  if (static_cast<int64_t>(counts.size()) != nodes)
    throw ConfigError("--workers-per-node " + text + " gives " + to_string(counts.size()) +
                      " counts for --nodes " + to_string(nodes) +
                      ": give one count for all nodes or one for each");
  return counts;
}

void checkK8sOptions(const K8sOptions& options) {
  checkCounts(options);
  if (options.image.empty())
    throw ConfigError("--image is required: the container image that holds the strata command");
  checkNames(options);
  checkQuantities(options);
  checkRendezvous(options);
  if (options.flavor == K8sFlavor::kPyTorchJob) checkPyTorchJobCounts(options.workersPerNode);
}

int64_t worldSize(const K8sOptions& options) {
  return std::accumulate(options.workersPerNode.begin(), options.workersPerNode.end(), int64_t{0});
}

}  // namespace strata::deploy
