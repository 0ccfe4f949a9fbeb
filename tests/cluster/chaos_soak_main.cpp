// chaos_soak: the soak of chaos_soak.h from the command line, for longer
// runs than the test's (scripts/chaos-soak.sh).
//
//   chaos_soak --strata build/strata --faults 12 --seed 7 [--rdzv-backend etcd]
//
// Under etcd a fourth rehearsed node runs etcd, and kill-node and cut-link
// may hit node 0 too.
//
// Prints the plan, what each fault cost and the checks; exits 0 when every
// check passed, 1 when one failed, 2 for bad arguments or no rehearsal here.
#include <cstdlib>
#include <iostream>
#include <string>

#include "chaos_soak.h"

int main(int argc, char** argv) {
  strata::testing::SoakOptions options;
  int faults = 10;
  uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--strata") {
      options.strataBinary = value;
    } else if (flag == "--faults") {
      faults = std::atoi(value.c_str());
    } else if (flag == "--seed") {
      seed = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--rdzv-backend" && (value == "etcd" || value == "c10d")) {
      options.etcd = value == "etcd";
    } else {
      std::cerr << "chaos_soak: unknown flag '" << flag << "' or value '" << value
                << "' (known: --strata, --faults, --seed, --rdzv-backend c10d|etcd)\n";
      return 2;
    }
  }
  if (options.strataBinary.empty() || faults < 1 || argc % 2 == 0) {
    std::cerr << "usage: chaos_soak --strata PATH [--faults N (>= 1)] [--seed S] "
                 "[--rdzv-backend c10d|etcd]\n";
    return 2;
  }
  options.faults = strata::testing::faultPlan(faults, seed, options.etcd);
  std::cout << "chaos_soak: " << faults << " faults from seed " << seed << " under "
            << (options.etcd ? "etcd" : "c10d") << ":";
  for (const auto& f : options.faults)
    std::cout << " " << strata::testing::faultName(f.kind) << "@node" << f.node;
  std::cout << std::endl;
  strata::testing::SoakReport report = strata::testing::runChaosSoak(options);
  std::cout << report.summary();
  bool recovered = report.faults.size() == options.faults.size();
  for (const auto& f : report.faults) recovered = recovered && f.secondsLost >= 0;
  bool ok = report.finished && recovered && !report.uninterrupted.empty() &&
            report.losses.size() == report.uninterrupted.size() &&
            report.largestRelativeDifference <= 1e-5 && report.leftOver.empty() &&
            report.checkpointVerified;
  if (!ok) std::cout << report.log;
  return ok ? 0 : 1;
}
