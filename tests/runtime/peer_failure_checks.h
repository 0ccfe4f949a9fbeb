// The two failures every transport's collectives must report instead of
// hanging: a peer that exits, and a peer that stalls past the timeout. Each
// check runs two processes; `collective` runs one collective on the world
// communicator (its tensor made by `setup` once per process).
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "multiprocess.h"
#include "strata/error.h"
#include "strata/runtime/world.h"

namespace strata::testing {

using MakeTensor = std::function<torch::Tensor(Communicator&)>;

// Rank 1 exits after one collective; rank 0's next one throws PeerError
// within a second, its message holding `named`.
inline void expectExitedPeerNamed(const MakeTensor& setup, const std::string& named) {
  MultiProcessOptions options;
  options.commTimeoutSeconds = 60;
  runInProcesses(
      2,
      [&](const RankContext& ctx) {
        auto world = World::init();
        torch::Tensor t = setup(world->comm());
        world->comm().allReduce(t);
        if (ctx.rank == 1) std::_Exit(0);
        auto start = std::chrono::steady_clock::now();
        try {
          world->comm().allReduce(t);
          ADD_FAILURE() << "all_reduce returned although the peer exited";
        } catch (const PeerError& e) {
          std::string message = e.what();
          EXPECT_NE(message.find("all_reduce on group world"), std::string::npos) << message;
          EXPECT_NE(message.find(named), std::string::npos) << message;
        }
        EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(1));
      },
      options);
}

// Rank 1 sleeps past the 2 s timeout; rank 0's collective throws
// TimeoutError naming it, and so does the next one (the group is out of step
// after a failed collective).
inline void expectStalledPeerTimesOut(const MakeTensor& setup) {
  MultiProcessOptions options;
  options.commTimeoutSeconds = 2;
  runInProcesses(
      2,
      [&](const RankContext& ctx) {
        auto world = World::init();
        torch::Tensor t = setup(world->comm());
        world->comm().allReduce(t);
        if (ctx.rank == 1) {
          std::this_thread::sleep_for(std::chrono::seconds(6));
          std::_Exit(0);
        }
        try {
          world->comm().allReduce(t);
          ADD_FAILURE() << "all_reduce returned although the peer stalled";
        } catch (const TimeoutError& e) {
          std::string message = e.what();
          EXPECT_NE(message.find("timed out after 2 s waiting for group ranks 1"),
                    std::string::npos)
              << message;
        }
        EXPECT_THROW(world->comm().allReduce(t), TimeoutError);
      },
      options);
}

}  // namespace strata::testing
