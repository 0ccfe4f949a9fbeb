#include "plan_failures.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "strata/plan/failures.h"
#include "strata/plan/model_desc.h"
#include "strata/util/json.h"

namespace strata {
namespace {

constexpr double kDay = 86400;
constexpr uint64_t kSimulationSeed = 20261207;

std::string numberText(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// "14.3 min", "3.1 h", "33 s": a duration in the unit that suits it.
std::string duration(double seconds) {
  if (!std::isfinite(seconds)) return "never";
  if (seconds >= 2 * 3600) return numberText("%.1f h", seconds / 3600);
  if (seconds >= 120) return numberText("%.1f min", seconds / 60);
  return numberText("%.0f s", seconds);
}

// What one checkpoint writes, each byte once however the layout replicates
// it: every weight, and the optimizer state of the trained ones (a LoRA
// run's adapters).
double checkpointBytes(const plan::TrainingJob& job) {
  const plan::ModelDesc& m = job.model;
  const plan::Precision& p = job.precision;
  double weights = plan::parameterCount(m);
  double trained = m.lora.enabled ? plan::loraParameters(m) : weights;
  return weights * p.weightBytes + trained * p.optimizerBytes;
}

// The nodes the layout runs on, each writing its share.
double nodesUsed(const plan::TrainingJob& job, const plan::Estimate& e) {
  const plan::Layout& l = e.layout;
  return static_cast<double>(l.pp * l.tp * l.cp * l.dp) / job.cluster.devicesPerNode;
}

void printSimulation(std::ostream& out, const plan::FailureInputs& in, double work,
                     const plan::GoodputPlan& goodput, int runs) {
  auto line = [&](const char* name, const plan::SimulatedRuns& sim) {
    out << "    " << name << ": days p10 " << numberText("%.2f", sim.percentileSeconds(0.1) / kDay)
        << ", p50 " << numberText("%.2f", sim.percentileSeconds(0.5) / kDay) << ", p90 "
        << numberText("%.2f", sim.percentileSeconds(0.9) / kDay) << "; interruptions "
        << numberText("%.1f", sim.meanInterruptions()) << " on average, "
        << sim.interruptions.front() << " to " << sim.interruptions.back() << "\n";
  };
  out << "  simulated, " << runs << " runs with failures drawn at that rate:\n";
  line("checkpoint-restart", plan::simulateFailures(in, work, goodput.checkpointIntervalSeconds,
                                                    false, runs, kSimulationSeed));
  if (in.replicas > 1)
    line("in-job recovery   ", plan::simulateFailures(in, work, goodput.checkpointIntervalSeconds,
                                                      true, runs, kSimulationSeed));
}

// The failure model's inputs for `e` on `job`'s cluster: the save's stall is
// the checkpoint (every weight and the trained ones' optimizer state, each
// byte once) over the storage rate of the nodes the layout uses.
plan::FailureInputs failureInputs(const plan::TrainingJob& job, const plan::Estimate& e) {
  const plan::Reliability& r = job.cluster.reliability;
  plan::FailureInputs in;
  in.failuresPerDeviceHour = r.failuresPerDeviceHour;
  in.devices = e.layout.pp * e.layout.tp * e.layout.cp * e.layout.dp;
  in.replicas = e.layout.dp;
  in.stepSeconds = e.iterationSeconds;
  in.saveSeconds = r.storageBytesPerNode > 0
                       ? checkpointBytes(job) / (r.storageBytesPerNode * nodesUsed(job, e))
                       : 0;
  in.restartSeconds = r.restartSeconds;
  in.detectionSeconds = r.detectionSeconds;
  in.rejoinSeconds = r.rejoinSeconds;
  return in;
}

// Whether the job can say anything about failures: a token count (days to
// train) and a failure rate.
bool plansFailures(const plan::TrainingJob& job, const plan::Estimate& e) {
  return e.daysToTrain > 0 && job.cluster.reliability.failuresPerDeviceHour > 0;
}

}  // namespace

void printFailures(std::ostream& out, const plan::TrainingJob& job, const plan::Estimate& e,
                   int simulatedRuns) {
  if (!plansFailures(job, e)) return;
  const plan::Reliability& r = job.cluster.reliability;
  plan::FailureInputs in = failureInputs(job, e);
  plan::GoodputPlan goodput = plan::planGoodput(in);
  const double work = e.daysToTrain * kDay;
  out << "\nwith failures, " << plan::toString(e.layout) << " on " << in.devices
      << " devices: " << numberText("%.3g", r.failuresPerDeviceHour) << " per device-hour ("
      << r.failureSource << "), the job's mean time between failures "
      << duration(goodput.mtbfSeconds) << "\n";
  out << "  checkpoint-restart: each save stalls " << duration(in.saveSeconds) << " ("
      << numberText("%.0f", checkpointBytes(job) / 1e9) << " GB";
  if (r.storageBytesPerNode > 0)
    out << " at " << numberText("%.2f", r.storageBytesPerNode / 1e9) << " GB/s a node, "
        << r.storageSource;
  out << "), a restart takes " << duration(in.restartSeconds) << ": save every "
      << duration(goodput.checkpointIntervalSeconds) << " (Young/Daly), goodput "
      << numberText("%.1f%%", 100 * goodput.restartGoodput) << ", "
      << numberText("%.2f", work / goodput.restartGoodput / kDay) << " days, "
      << numberText("%.0f", work / goodput.restartGoodput / goodput.mtbfSeconds)
      << " interruptions expected\n";
  if (in.replicas > 1) {
    out << "  in-job recovery over " << in.replicas
        << " replicas: " << duration(goodput.inJobLostSecondsPerFailure) << " lost a failure ("
        << duration(in.detectionSeconds) << " to notice, the step, " << duration(in.rejoinSeconds)
        << " to rejoin at 1/" << in.replicas << " of the throughput), goodput "
        << numberText("%.1f%%", 100 * goodput.inJobGoodput) << ", "
        << numberText("%.2f", work / goodput.inJobGoodput / kDay) << " days\n";
  } else {
    out << "  in-job recovery: needs at least 2 data-parallel replicas (dp " << e.layout.dp
        << ")\n";
  }
  if (simulatedRuns > 0) printSimulation(out, in, work, goodput, simulatedRuns);
}

void addFailureFields(nlohmann::ordered_json& line, const plan::TrainingJob& job,
                      const plan::Estimate& e) {
  if (!plansFailures(job, e)) return;
  plan::FailureInputs in = failureInputs(job, e);
  plan::GoodputPlan goodput = plan::planGoodput(in);
  line["mtbf_h"] = jsonNumber(goodput.mtbfSeconds / 3600);
  line["checkpoint_save_s"] = jsonNumber(in.saveSeconds);
  line["checkpoint_interval_s"] = jsonNumber(goodput.checkpointIntervalSeconds);
  line["goodput_restart"] = jsonNumber(goodput.restartGoodput);
  line["days_with_failures_restart"] = jsonNumber(e.daysToTrain / goodput.restartGoodput);
  if (in.replicas > 1) {
    line["goodput_in_job"] = jsonNumber(goodput.inJobGoodput);
    line["days_with_failures_in_job"] = jsonNumber(e.daysToTrain / goodput.inJobGoodput);
  }
}

}  // namespace strata
