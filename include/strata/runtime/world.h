// The process world: this process's identity, the job's rendezvous store and
// the communicator over all ranks, plus the factory for sub-groups.
//
// World::init also calls retainFreedMemory() (allocator_tuning.h).
//
// World::init blocks until every rank of the job has joined (at most the
// rendezvous timeout) and throws ConfigError for a bad environment or a
// refused token, TimeoutError when peers do not arrive. newGroup and
// parallelGroups block until every member of the new group has joined.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "strata/runtime/communicator.h"
#include "strata/runtime/layout.h"
#include "strata/runtime/process_env.h"
#include "strata/runtime/timeouts.h"

namespace strata {

class FlightRecorder;

struct WorldOptions {
  // "gloo", "nccl", or "auto" (NCCL when built with it and CUDA is present).
  std::string backend = "auto";
  // Receivers refuse tensor headers announcing more elements than this.
  int64_t maxRecvElements = int64_t{1} << 31;
};

// The communicators a rank uses for each dimension of its layout.
struct ParallelGroups {
  ParallelLayout layout;
  Coord coord;
  std::shared_ptr<Communicator> world;
  std::shared_ptr<Communicator> pp;
  std::shared_ptr<Communicator> dp;
  std::shared_ptr<Communicator> cp;
  std::shared_ptr<Communicator> tp;

  Communicator& of(Dim dim) const;
};

class World {
 public:
  // Reads the environment (ProcessEnv, Timeouts) and joins the job.
  static std::shared_ptr<World> init(const WorldOptions& options = {});
  static std::shared_ptr<World> init(const ProcessEnv& env, const Timeouts& timeouts,
                                     const WorldOptions& options = {});
  ~World();

  int rank() const { return env_.rank; }
  int size() const { return env_.worldSize; }
  const ProcessEnv& env() const { return env_; }
  const Timeouts& timeouts() const { return timeouts_; }
  const std::string& backend() const { return backend_; }
  Communicator& comm() const { return *world_; }
  std::shared_ptr<Communicator> worldComm() const { return world_; }

  // A communicator over `globalRanks` (this rank must be a member). `name`
  // must be unique in the job and the same on every member.
  std::shared_ptr<Communicator> newGroup(const std::string& name,
                                         const std::vector<int>& globalRanks);
  // One group per dimension of `layout` holding this rank. Throws ConfigError
  // when the layout's world size differs from the job's.
  ParallelGroups parallelGroups(const ParallelLayout& layout);

 private:
  World(ProcessEnv env, Timeouts timeouts, std::string backend, int64_t maxRecvElements);

  struct StoreHolder;
  ProcessEnv env_;
  Timeouts timeouts_;
  std::string backend_;
  int64_t maxRecvElements_;
  std::string localAddress_;
  std::unique_ptr<StoreHolder> store_;
  // Wraps every group's communicator when env_.flightDir is set.
  std::shared_ptr<FlightRecorder> flight_;
  std::shared_ptr<Communicator> world_;
};

}  // namespace strata
