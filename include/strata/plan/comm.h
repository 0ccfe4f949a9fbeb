// Alpha-beta costs of collectives and point-to-point transfers, and which
// link a parallel dimension's groups cross.
//
// `bytes` is always the size of the full tensor one rank holds (for all-gather
// the gathered result, for reduce-scatter the input). With p ranks on a ring,
// bandwidth beta (bytes/s) and per-message latency alpha:
//   all-reduce      2(p-1)/p * n/beta + 2(p-1) alpha
//   all-gather      (p-1)/p * n/beta + (p-1) alpha
//   reduce-scatter  (p-1)/p * n/beta + (p-1) alpha
//   all-to-all      (p-1)/p * n/beta + (p-1) alpha
//   point-to-point  n/beta + alpha
// n / beta is the link's transferSeconds(n), whose rate may fall past a
// message size (cluster.h). A group of one rank costs nothing. Nothing here
// throws.
//
// A collective also waits: it ends after its slowest member arrives. When
// each of p members computed t seconds since their last synchronisation,
// their times spread normally by the device's deviation sigma(t) (ComputeNoise,
// cluster.h), a member waits on average
//   sigma(t) * E[max of p standard normals]
// (0.564 for 2 members, 1.03 for 4, 1.42 for 8): the expected slowest arrival
// after the member's own, which is the mean's.
#pragma once

#include "strata/plan/cluster.h"

namespace strata::plan {

double allReduceSeconds(double bytes, int ranks, const Link& link);
double allGatherSeconds(double bytes, int ranks, const Link& link);
double reduceScatterSeconds(double bytes, int ranks, const Link& link);
// Every rank sends each of the p - 1 others its 1/p of `bytes` (and keeps its
// own): one message a peer, (p-1)/p of the tensor out of each rank.
double allToAllSeconds(double bytes, int ranks, const Link& link);
double pointToPointSeconds(double bytes, const Link& link);
double syncWaitSeconds(double computeSeconds, int ranks, const ComputeNoise& noise);

// E[max of `count` independent standard normals]; 0 for one.
double expectedMaximumOfNormals(int count);

// The link a group crosses: `size` ranks `stride` apart under the placement
// of layout.h stay inside one node when stride * size divides the devices per
// node; otherwise the group's ring crosses the inter-node link, its slowest.
const Link& groupLink(const Cluster& cluster, int stride, int size);
// The link of the group's point-to-point transfers: the cluster's p2p path
// on that side of the node boundary where it has one, else groupLink's.
const Link& groupPointToPointLink(const Cluster& cluster, int stride, int size);

}  // namespace strata::plan
