#include "strata/runtime/world.h"

#include <torch/torch.h>

#include <map>
#include <optional>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "c10d_communicator.h"
#include "local_address.h"
#include "recording_communicator.h"
#include "runtime/shm/shm_communicator.h"
#include "strata/error.h"
#include "strata/runtime/allocator_tuning.h"
#include "strata/runtime/flight_recorder.h"
#include "strata/runtime/rendezvous.h"
#include "strata/util/log.h"
#include "strata/util/openblas_core.h"

namespace strata {

struct World::StoreHolder {
  c10::intrusive_ptr<c10d::Store> store;
  // How many groups of each name this rank has made: a name made again (a
  // second Trainer over the same layout) gets its own keys in the store.
  std::map<std::string, int> madeByName;
};

namespace {

std::string chooseBackend(const std::string& requested) {
  if (requested == "auto") {
    return ncclCompiledIn() && torch::cuda::is_available() ? "nccl" : "gloo";
  }
  if (requested != "gloo" && requested != "nccl") {
    throw ConfigError("unknown backend '" + requested + "' (known: auto, gloo, nccl)");
  }
  return requested;
}

// "tp[pp=1,dp=0]": the dimension and the coordinates that pick its group.
std::string groupName(Dim dim, const ParallelLayout& layout, const Coord& coord) {
  std::string name = dimName(dim);
  std::string where;
  for (Dim other : kAllDims) {
    if (other == dim || layout.degree(other) == 1) continue;
    where += (where.empty() ? "" : ",") + std::string(dimName(other)) + "=" +
             std::to_string(coord.of(other));
  }
  return where.empty() ? name : name + "[" + where + "]";
}

}  // namespace

Communicator& ParallelGroups::of(Dim dim) const {
  switch (dim) {
    case Dim::kPipeline:
      return *pp;
    case Dim::kData:
      return *dp;
    case Dim::kContext:
      return *cp;
    case Dim::kTensor:
      return *tp;
  }
  return *world;
}

World::World(ProcessEnv env, Timeouts timeouts, std::string backend, int64_t maxRecvElements)
    : env_(std::move(env)),
      timeouts_(timeouts),
      backend_(std::move(backend)),
      maxRecvElements_(maxRecvElements),
      store_(std::make_unique<StoreHolder>()) {}

World::~World() = default;

std::shared_ptr<World> World::init(const WorldOptions& options) {
  return init(ProcessEnv::fromEnvironment(), Timeouts::fromEnvironment(), options);
}

std::shared_ptr<World> World::init(const ProcessEnv& env, const Timeouts& timeouts,
                                   const WorldOptions& options) {
  retainFreedMemory();
  if (env.rank == 0) {
    if (std::optional<std::string> warning = openBlasCoreWarning()) logWarning(*warning);
  }
  std::shared_ptr<World> world(
      new World(env, timeouts, chooseBackend(options.backend), options.maxRecvElements));
  world->localAddress_ = localAddressToward(env.masterAddr);
  world->store_->store = rendezvous(env, timeouts);
  if (!env.flightDir.empty())
    world->flight_ = FlightRecorder::open(env.flightDir, env.rank, env.worldSize);
  std::vector<int> everyone(env.worldSize);
  for (int r = 0; r < env.worldSize; ++r) everyone[r] = r;
  world->world_ = world->newGroup("world", everyone);
  return world;
}

std::shared_ptr<Communicator> World::newGroup(const std::string& name,
                                              const std::vector<int>& globalRanks) {
  auto self = std::find(globalRanks.begin(), globalRanks.end(), env_.rank);
  if (self == globalRanks.end()) {
    throw Error("rank " + std::to_string(env_.rank) + " cannot create group " + name +
                ": it is not a member");
  }
  GroupSpec spec;
  // Every member makes its groups in the same order, so the n-th group of
  // one name is the same group on each of them.
  int made = store_->madeByName[name]++;
  spec.name = made == 0 ? name : name + "#" + std::to_string(made + 1);
  spec.globalRanks = globalRanks;
  spec.rank = static_cast<int>(self - globalRanks.begin());
  spec.options.timeout = timeouts_.collective;
  spec.options.maxRecvElements = maxRecvElements_;
  spec.backend = backend_;
  spec.localAddress = localAddress_;
  std::shared_ptr<Communicator> comm = createC10dCommunicator(spec, store_->store);
  if (backend_ == "gloo") comm = attachSharedMemory(std::move(comm), env_.localWorldSize);
  return flight_ ? recordFlight(std::move(comm), flight_) : comm;
}

ParallelGroups World::parallelGroups(const ParallelLayout& layout) {
  if (layout.worldSize() != size()) {
    throw ConfigError("layout " + layout.describe() + " needs " +
                      std::to_string(layout.worldSize()) + " ranks but the job has " +
                      std::to_string(size()));
  }
  Coord coord = layout.coordOf(rank());
  auto make = [&](Dim dim) {
    return newGroup(groupName(dim, layout, coord), layout.groupRanks(dim, rank()));
  };
  return ParallelGroups{layout,
                        coord,
                        world_,
                        make(Dim::kPipeline),
                        make(Dim::kData),
                        make(Dim::kContext),
                        make(Dim::kTensor)};
}

}  // namespace strata
