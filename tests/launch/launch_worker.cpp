// A worker for the launcher's tests. Its first argument picks a behaviour;
// the rank named by FAIL_RANK misbehaves, the others do honest collectives.
#include <signal.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <thread>

#include "strata/runtime/world.h"

namespace {

int failRank() {
  const char* text = std::getenv("FAIL_RANK");
  return text ? std::atoi(text) : -1;
}

void allReduceOnce(strata::World& world) {
  torch::Tensor t = torch::ones({4});
  world.comm().allReduce(t);
  std::cout << "sum " << t[0].item<float>() << std::endl;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "ok";
  auto world = strata::World::init();
  world->comm().barrier();
  bool misbehave = world->rank() == failRank();
  if (mode == "exit" && misbehave) {
    std::cerr << "worker gives up on purpose" << std::endl;
    return 3;
  }
  if (mode == "sigkill" && misbehave) raise(SIGKILL);
  if (mode == "stall" && misbehave) raise(SIGSTOP);
  // Stalls in the first attempt only, so a restarted job can finish.
  if (mode == "stall-once" && misbehave && world->env().restartAttempt == 0) raise(SIGSTOP);
  if (mode == "attempt") {
    std::cout << "attempt " << world->env().restartAttempt << std::endl;
    if (world->env().restartAttempt == 0 && misbehave) return 1;
  }
  if (mode == "elastic") {
    // Round 0 keeps all-reducing until a node is killed and this worker
    // fails; a later round reports its world and ends.
    const strata::ProcessEnv& env = world->env();
    std::cout << "round " << env.restartAttempt << " world " << env.worldSize << std::endl;
    if (env.restartAttempt == 0) {
      std::cout << "ready" << std::endl;
      for (int i = 0; i < 600; ++i) {
        torch::Tensor t = torch::ones({4});
        world->comm().allReduce(t);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      return 4;  // never killed: the test's node failure did not happen
    }
  }
  if (mode == "sleep") {
    // After the barrier, so every worker of the job is up once all said so.
    // The parent shows whether a wrapper stands between launcher and worker.
    std::cout << "ready pid " << getpid() << " ppid " << getppid() << std::endl;
    std::this_thread::sleep_for(std::chrono::minutes(5));
  }
  const strata::ProcessEnv& env = world->env();
  std::string nodes;
  for (int size : env.nodeSizes) nodes += (nodes.empty() ? "" : ",") + std::to_string(size);
  std::cout << "world " << env.worldSize << " local " << env.localRank << " of "
            << env.localWorldSize << " nodes " << nodes << std::endl;
  allReduceOnce(*world);
  return 0;
}
