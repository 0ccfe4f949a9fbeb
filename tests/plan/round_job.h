// A cluster and a job with round numbers, so that the planner's times can be
// checked by hand: devices of 1 TFLOP/s at 50% efficiency, memory bandwidth
// next to free, 100 GB/s inside a node and 10 GB/s between nodes, no
// latency; a GPT of 8 layers, hidden 1024, 16 heads, ffn 4096, sequence
// 1024 and a vocabulary of 8, so the logits are negligible and every stage
// costs the same.
#pragma once

#include "strata/plan/cost_model.h"

namespace strata::plan {

inline Cluster roundCluster(int nodes, int devicesPerNode) {
  Cluster c;
  c.name = "round";
  c.nodes = nodes;
  c.devicesPerNode = devicesPerNode;
  c.device = {"dev", 1e12, 1e12, 1e12, 1e18, 0.5, {}};
  c.intraNode = {1e11, 0};
  c.interNode = {1e10, 0};
  return c;
}

inline TrainingJob roundJob(int nodes, int devicesPerNode, int batch) {
  TrainingJob job;
  job.model = {"toy", 8, 1024, 16, 4096, 8, 1024};
  job.cluster = roundCluster(nodes, devicesPerNode);
  job.globalBatch = batch;
  return job;
}

}  // namespace strata::plan
