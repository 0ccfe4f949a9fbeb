// Mixture-of-experts in the Trainer: the expert-parallel groups, which
// parameters belong to one expert, how their gradients are averaged, and
// the step's routing statistics.
//
// Groups: the replicas (dp x cp ranks holding the same parameters, in the
// layout's order) are cut into ep groups of `ep` consecutive replicas; the
// replicas at the same place of every ep group hold the same experts (the
// expert replicas, dp x cp / ep of them). Expert e of E lives on ep rank
// e / (E / ep).
//
// Gradients: the loss the trainer averages is (1 / R) sum_r L_r over the R
// replicas. An expert's gradient on the rank holding it collects the terms
// of every rank of its ep group (their tokens came to it), so summed over
// its R / ep expert replicas it holds sum_r dL_r; averaging over those
// replicas and dividing by ep gives (1 / R) sum_r dL_r, as for any other
// parameter. The 1 / ep is a gradient hook on each expert parameter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "strata/data_parallel/replica_sync.h"
#include "strata/expert_parallel/expert_parallel.h"
#include "strata/runtime/layout.h"
#include "strata/runtime/world.h"
#include "strata/train/trainer.h"

namespace strata::train {

struct ExpertGroups {
  std::shared_ptr<Communicator> ep;              // nullptr at ep 1
  std::shared_ptr<Communicator> expertReplicas;  // `replicas` at ep 1
};

// Collective over `replicas`: each rank joins its ep group and its expert
// replicas (World::newGroup, bounded by the rendezvous timeout).
ExpertGroups joinExpertGroups(World& world, const std::shared_ptr<Communicator>& replicas, int ep,
                              const Coord& coord);

// `named` cut into the routed experts' parameters and the rest.
struct ExpertSplit {
  std::vector<data_parallel::NamedTensor> common;
  std::vector<data_parallel::NamedTensor> experts;
};
ExpertSplit splitExpertParameters(const std::vector<data_parallel::NamedTensor>& named);

// Divides every future gradient of `experts` by ep (see above).
void divideExpertGradients(const std::vector<data_parallel::NamedTensor>& experts, int ep);

// The routing statistics recorded since the last call, agreed on every rank:
// counts summed over the replicas, layers and stages combined over pp.
// Collective over `replicas` and `pp` (small all-reduces, each within its
// timeout).
MoeReport gatherMoeReport(expert_parallel::ExpertParallel& experts, Communicator& replicas,
                          Communicator& pp);

}  // namespace strata::train
