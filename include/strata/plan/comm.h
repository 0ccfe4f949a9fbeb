// Alpha-beta costs of collectives and point-to-point transfers, and which
// link a parallel dimension's groups cross.
//
// `bytes` is always the size of the full tensor one rank holds (for all-gather
// the gathered result, for reduce-scatter the input). With p ranks on a ring,
// bandwidth beta (bytes/s) and per-message latency alpha:
//   all-reduce      2(p-1)/p * n/beta + 2(p-1) alpha
//   all-gather      (p-1)/p * n/beta + (p-1) alpha
//   reduce-scatter  (p-1)/p * n/beta + (p-1) alpha
//   point-to-point  n/beta + alpha
// A group of one rank costs nothing. Nothing here throws.
#pragma once

#include "strata/plan/cluster.h"

namespace strata::plan {

double allReduceSeconds(double bytes, int ranks, const Link& link);
double allGatherSeconds(double bytes, int ranks, const Link& link);
double reduceScatterSeconds(double bytes, int ranks, const Link& link);
double pointToPointSeconds(double bytes, const Link& link);

// The link a group crosses: `size` ranks `stride` apart under the placement
// of layout.h stay inside one node when stride * size divides the devices per
// node; otherwise the group's ring crosses the inter-node link, its slowest.
const Link& groupLink(const Cluster& cluster, int stride, int size);

}  // namespace strata::plan
