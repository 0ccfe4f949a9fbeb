#include "strata/plan/failures.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

#include "strata/plan/errors.h"

namespace strata::plan {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

void checkInputs(const FailureInputs& in) {
  auto nonNegative = [](double value, const char* name) {
    if (!(value >= 0))
      throw PlanError(std::string(name) + " must be >= 0, got " + std::to_string(value));
  };
  nonNegative(in.failuresPerDeviceHour, "failures per device-hour");
  nonNegative(in.stepSeconds, "the step time");
  nonNegative(in.saveSeconds, "the checkpoint save time");
  nonNegative(in.restartSeconds, "the restart time");
  nonNegative(in.detectionSeconds, "the detection time");
  nonNegative(in.rejoinSeconds, "the rejoin time");
  if (in.devices < 1 || in.replicas < 1)
    throw PlanError("failures need at least one device and one replica, got " +
                    std::to_string(in.devices) + " and " + std::to_string(in.replicas));
}

double mtbfOf(const FailureInputs& in) {
  double perSecond = in.failuresPerDeviceHour * in.devices / 3600;
  return perSecond > 0 ? 1 / perSecond : kInfinity;
}

// The tau in [lo, hi] minimising Daly's wall time, by golden-section search
// on log tau (the wall time is unimodal in tau).
double optimalInterval(const FailureInputs& in, double lo, double hi) {
  const double ratio = (std::sqrt(5.0) - 1) / 2;
  double a = std::log(lo), b = std::log(hi);
  for (int i = 0; i < 200 && b - a > 1e-9; ++i) {
    double c = b - ratio * (b - a), d = a + ratio * (b - a);
    if (restartWallPerWork(in, std::exp(c)) <= restartWallPerWork(in, std::exp(d)))
      b = d;
    else
      a = c;
  }
  return std::exp((a + b) / 2);
}

double exponential(std::mt19937_64& random, double mean) {
  if (!std::isfinite(mean)) return kInfinity;
  return -mean * std::log1p(-std::generate_canonical<double, 53>(random));
}

// One run of checkpoint-restart: segments of tau seconds of work, each but
// the last followed by a save; a failure loses the segment in progress and
// starts a restart, which a further failure starts over.
std::pair<double, int64_t> restartRun(const FailureInputs& in, double work, double tau, double mtbf,
                                      std::mt19937_64& random) {
  double now = 0, done = 0, failure = exponential(random, mtbf);
  int64_t failures = 0;
  while (done < work) {
    double segment = std::min(tau, work - done);
    double needed = segment + (done + segment < work ? in.saveSeconds : 0);
    if (now + needed <= failure) {
      now += needed;
      done += segment;
      continue;
    }
    now = failure;
    ++failures;
    for (;;) {
      failure = now + exponential(random, mtbf);
      if (now + in.restartSeconds <= failure) break;
      now = failure;
      ++failures;
    }
    now += in.restartSeconds;
  }
  return {now, failures};
}

// One run of in-job recovery: each failure costs its lost seconds of
// productive time and nothing else.
std::pair<double, int64_t> inJobRun(double work, double lostPerFailure, double mtbf,
                                    std::mt19937_64& random) {
  double now = 0, done = 0;
  int64_t failures = 0;
  for (;;) {
    double gap = exponential(random, mtbf);
    if (done + gap >= work) return {now + (work - done), failures};
    done += gap;
    now += gap + lostPerFailure;
    ++failures;
  }
}

}  // namespace

double restartWallPerWork(const FailureInputs& in, double tau) {
  double mtbf = mtbfOf(in);
  if (!std::isfinite(mtbf)) return (tau + in.saveSeconds) / tau;
  return mtbf * std::exp(in.restartSeconds / mtbf) * std::expm1((tau + in.saveSeconds) / mtbf) /
         tau;
}

GoodputPlan planGoodput(const FailureInputs& in) {
  checkInputs(in);
  GoodputPlan plan;
  plan.mtbfSeconds = mtbfOf(in);
  if (!std::isfinite(plan.mtbfSeconds)) {
    plan.checkpointIntervalSeconds = kInfinity;
    plan.inJobGoodput = in.replicas > 1 ? 1 : 0;
    return plan;
  }
  double mtbf = plan.mtbfSeconds;
  plan.checkpointIntervalSeconds =
      optimalInterval(in, std::max(1e-3, in.saveSeconds * 1e-3), 100 * mtbf);
  plan.restartGoodput = 1 / restartWallPerWork(in, plan.checkpointIntervalSeconds);
  if (in.replicas > 1) {
    plan.inJobLostSecondsPerFailure =
        in.detectionSeconds + in.stepSeconds + in.rejoinSeconds / in.replicas;
    plan.inJobGoodput = std::max(0.0, 1 - plan.inJobLostSecondsPerFailure / mtbf);
  }
  return plan;
}

double SimulatedRuns::percentileSeconds(double p) const {
  if (wallSeconds.empty()) return 0;
  auto at = static_cast<size_t>(std::lround(p * static_cast<double>(wallSeconds.size() - 1)));
  return wallSeconds[std::min(at, wallSeconds.size() - 1)];
}

double SimulatedRuns::meanInterruptions() const {
  if (interruptions.empty()) return 0;
  return static_cast<double>(
             std::accumulate(interruptions.begin(), interruptions.end(), int64_t{0})) /
         static_cast<double>(interruptions.size());
}

SimulatedRuns simulateFailures(const FailureInputs& in, double workSeconds, double tau, bool inJob,
                               int runs, uint64_t seed) {
  checkInputs(in);
  if (runs < 1)
    throw PlanError("--simulate-failures needs at least 1 run, got " + std::to_string(runs));
  if (inJob && in.replicas < 2)
    throw PlanError("in-job recovery needs at least 2 data-parallel replicas, got " +
                    std::to_string(in.replicas));
  if (!(tau > 0)) throw PlanError("the checkpoint interval must be > 0");
  std::mt19937_64 random(seed);
  const double mtbf = mtbfOf(in);
  const double lost = in.detectionSeconds + in.stepSeconds + in.rejoinSeconds / in.replicas;
  SimulatedRuns result;
  for (int r = 0; r < runs; ++r) {
    auto [wall, failures] = inJob ? inJobRun(workSeconds, lost, mtbf, random)
                                  : restartRun(in, workSeconds, tau, mtbf, random);
    result.wallSeconds.push_back(wall);
    result.interruptions.push_back(failures);
  }
  std::sort(result.wallSeconds.begin(), result.wallSeconds.end());
  std::sort(result.interruptions.begin(), result.interruptions.end());
  return result;
}

}  // namespace strata::plan
