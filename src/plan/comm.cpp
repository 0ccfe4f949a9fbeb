#include "strata/plan/comm.h"

#include <cmath>
#include <map>
#include <mutex>
#include <optional>

namespace strata::plan {

double allReduceSeconds(double bytes, int ranks, const Link& link) {
  if (ranks <= 1) return 0;
  double p = ranks;
  return 2 * (p - 1) / p * link.transferSeconds(bytes) + 2 * (p - 1) * link.latency;
}

double allGatherSeconds(double bytes, int ranks, const Link& link) {
  if (ranks <= 1) return 0;
  double p = ranks;
  return (p - 1) / p * link.transferSeconds(bytes) + (p - 1) * link.latency;
}

double reduceScatterSeconds(double bytes, int ranks, const Link& link) {
  return allGatherSeconds(bytes, ranks, link);
}

double allToAllSeconds(double bytes, int ranks, const Link& link) {
  return allGatherSeconds(bytes, ranks, link);  // the same (p-1)/p out, in p-1 messages
}

double pointToPointSeconds(double bytes, const Link& link) {
  return link.transferSeconds(bytes) + link.latency;
}

double syncWaitSeconds(double computeSeconds, int ranks, const ComputeNoise& noise) {
  if (ranks <= 1) return 0;
  // Noiseless devices (every preset's) wait for nothing: skip the integral,
  // which the search would otherwise evaluate for every layer of every layout.
  double deviation = noise.deviationSeconds(computeSeconds);
  if (deviation == 0) return 0;
  return deviation * expectedMaximumOfNormals(ranks);
}

namespace {

// The integral of x * p * phi(x) * Phi(x)^(p-1) over x, the density of the
// maximum of p standard normals times x, by the midpoint rule on [-10, 10]
// (what lies beyond is negligible for any p a cluster has).
double integrateMaximumOfNormals(int count) {
  constexpr double kLow = -10, kHigh = 10;
  constexpr int kSteps = 4000;
  const double step = (kHigh - kLow) / kSteps;
  const double inverseRootTwoPi = 1 / std::sqrt(2 * M_PI);
  double sum = 0;
  for (int i = 0; i < kSteps; ++i) {
    double x = kLow + (i + 0.5) * step;
    double density = inverseRootTwoPi * std::exp(-x * x / 2);
    double below = 0.5 * std::erfc(-x / std::sqrt(2.0));
    sum += x * count * density * std::pow(below, count - 1);
  }
  return sum * step;
}

}  // namespace

// Each count's integral once: a search asks for the same few group sizes
// again and again.
double expectedMaximumOfNormals(int count) {
  if (count <= 1) return 0;
  static std::mutex mutex;
  static std::map<int, double> known;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(count);
  if (it == known.end()) it = known.emplace(count, integrateMaximumOfNormals(count)).first;
  return it->second;
}

namespace {

bool staysInsideNode(const Cluster& cluster, int stride, int size) {
  long long span = static_cast<long long>(stride) * size;
  return span <= cluster.devicesPerNode && cluster.devicesPerNode % span == 0;
}

}  // namespace

const Link& groupLink(const Cluster& cluster, int stride, int size) {
  return staysInsideNode(cluster, stride, size) ? cluster.intraNode : cluster.interNode;
}

const Link& groupPointToPointLink(const Cluster& cluster, int stride, int size) {
  const std::optional<Link>& path =
      staysInsideNode(cluster, stride, size) ? cluster.intraNodeP2p : cluster.interNodeP2p;
  return path ? *path : groupLink(cluster, stride, size);
}

}  // namespace strata::plan
