// Two groups of every rank over the same processes: one on the shared-memory
// transport and one on plain Gloo, so a test can run the same collective on
// both and compare. Collective (it creates groups); the Gloo group is made
// with STRATA_SHM=0, which stays set in the calling process.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "multiprocess.h"
#include "strata/runtime/world.h"

namespace strata::testing {

struct ShmAndGloo {
  std::shared_ptr<Communicator> shm;
  std::shared_ptr<Communicator> gloo;
};

inline ShmAndGloo shmAndGlooGroups(World& world, int worldSize, const std::string& name) {
  ShmAndGloo groups;
  groups.shm = world.newGroup(name + "-shm", allRanks(worldSize));
  setenv("STRATA_SHM", "0", 1);
  groups.gloo = world.newGroup(name + "-gloo", allRanks(worldSize));
  EXPECT_STREQ(groups.shm->backend(), "gloo+shm");
  EXPECT_STREQ(groups.gloo->backend(), "gloo");
  return groups;
}

}  // namespace strata::testing
