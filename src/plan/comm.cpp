#include "strata/plan/comm.h"

namespace strata::plan {

double allReduceSeconds(double bytes, int ranks, const Link& link) {
  if (ranks <= 1) return 0;
  double p = ranks;
  return 2 * (p - 1) / p * bytes / link.bandwidth + 2 * (p - 1) * link.latency;
}

double allGatherSeconds(double bytes, int ranks, const Link& link) {
  if (ranks <= 1) return 0;
  double p = ranks;
  return (p - 1) / p * bytes / link.bandwidth + (p - 1) * link.latency;
}

double reduceScatterSeconds(double bytes, int ranks, const Link& link) {
  return allGatherSeconds(bytes, ranks, link);
}

double pointToPointSeconds(double bytes, const Link& link) {
  return bytes / link.bandwidth + link.latency;
}

const Link& groupLink(const Cluster& cluster, int stride, int size) {
  long long span = static_cast<long long>(stride) * size;
  bool insideNode = span <= cluster.devicesPerNode && cluster.devicesPerNode % span == 0;
  return insideNode ? cluster.intraNode : cluster.interNode;
}

}  // namespace strata::plan
