#include "strata/launch/local_job.h"

#include <cstdlib>

#include "strata/launch/launcher.h"
#include "strata/util/subprocess.h"

namespace strata {

int runAsLocalJob(int workers, const std::function<int()>& worker, double timeoutSeconds) {
  if (std::getenv("RANK") != nullptr) return worker();
  LaunchOptions launch;
  launch.nprocPerNode = workers;
  launch.timeoutSeconds = timeoutSeconds;
  launch.command = {currentExecutable()};
  return runLauncher(launch);
}

}  // namespace strata
