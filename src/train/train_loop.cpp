#include "strata/train/train_loop.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "report/stragglers.h"
#include "strata/config/config_file.h"
#include "strata/error.h"
#include "strata/pipeline/pipeline.h"
#include "strata/pipeline/trace.h"
#include "strata/report/flops.h"
#include "strata/report/loss_curve.h"
#include "strata/report/memory.h"
#include "strata/report/metrics.h"
#include "strata/report/peak_flops.h"
#include "strata/report/progress.h"
#include "strata/report/run_report.h"
#include "strata/schedule/simulator.h"
#include "strata/schedule/svg.h"
#include "strata/train/loss_spike.h"
#include "strata/util/json.h"
#include "strata/util/progress_text.h"
#include "train/checkpoint_saves.h"

namespace strata::train {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Measured on rank 0 (once per machine, then cached) and shared, so every
// rank reports the same MFU and only one process disturbs the others.
double sharedPeakFlops(Trainer& trainer) {
  at::Tensor peak = torch::zeros({1}, torch::kDouble);
  if (trainer.world().rank() == 0) {
    PeakFlopsOptions options;
    options.threads = static_cast<int>(trainer.config().train.threads);
    peak.fill_(cachedPeakFlops(options));
  }
  trainer.world().comm().broadcast(peak, 0);
  return peak.item<double>();
}

double maxOverJob(Trainer& trainer, double value) {
  at::Tensor t = torch::full({1}, value, torch::kDouble);
  trainer.world().comm().allReduce(t, ReduceOp::kMax);
  return t.item<double>();
}

// "strata train: 4 experts (top 2) in blocks 1, 3, over ep 2: 2 per rank".
std::string expertsLine(const TrainConfig& c) {
  const expert_parallel::MoeOptions& m = c.model.moe;
  std::string blocks;
  for (int64_t i = 0; i < c.model.layers; ++i)
    if (m.isMoeBlock(i)) blocks += (blocks.empty() ? "" : ", ") + std::to_string(i);
  std::ostringstream capacity;
  if (m.capacityFactor > 0)
    capacity << ", capacity factor " << m.capacityFactor;
  else
    capacity << ", dropless";
  return "strata train: " + std::to_string(m.experts) + " experts (top " + std::to_string(m.topK) +
         ") in blocks " + blocks + ", over ep " + std::to_string(c.parallel.ep) + ": " +
         std::to_string(m.experts / c.parallel.ep) + " per rank" + capacity.str();
}

// "strata train: documents packed (data.pack): each sees only itself, its
// positions from 0; 1200 training documents in whole-document windows, 18.2%
// of the targets padding".
std::string packingLine(const TrainConfig& c, const PackingStats& packing) {
  std::ostringstream line;
  line << "strata train: documents packed (data.pack): each sees only itself, its positions from "
          "0; "
       << packing.documents << " training documents";
  if (c.data.splitAcrossWindows) {
    line << ", " << packing.cutDocuments
         << " of them split across windows (data.split_across_windows)";
  } else {
    line << " in whole-document windows, " << std::fixed << std::setprecision(1)
         << 100 * packing.paddedFraction << "% of the targets padding";
    if (packing.cutDocuments > 0)
      line << "; " << packing.cutDocuments << " longer than a window (" << c.train.seqLen + 1
           << " tokens), cut";
  }
  return line.str();
}

// Names the writer's version: a run resumed from another version's checkpoint
// is the first place to look when its losses differ from the original run's.
std::string resumeNote(const CheckpointInfo& info) {
  std::string writer =
      info.strataVersion.empty() ? "a Strata older than 0.5.0" : "strata " + info.strataVersion;
  return ", resumed at step " + std::to_string(info.step) + " from a checkpoint written by " +
         writer;
}

void writeText(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out) throw Error("cannot write " + path);
}

// The last step's timeline, measured and simulated, into the report as SVGs.
// Gathering the trace is collective over pp, so every rank calls this; only
// rank 0 gets the pictures.
void captureTimelines(Trainer& trainer, RunReportData& report) {
  std::vector<pipeline::TraceEvent> events = trainer.gatherLastTrace();
  if (trainer.world().rank() != 0 || events.empty()) return;
  const schedule::Schedule& plan = trainer.pipeline().schedule();
  schedule::Timeline measured =
      pipeline::toTimeline(events, plan.ranks(), pipeline::earliestStart(events));
  report.measuredTimelineSvg = schedule::renderSvg(measured, "measured: last training step");
  schedule::CostModel costs;
  costs.perStage = pipeline::measuredStageCosts(events, plan.stages());
  schedule::SimulationResult simulated = schedule::simulate(plan, costs);
  report.simulatedTimelineSvg = schedule::renderSvg(schedule::toTimeline(simulated),
                                                    "simulated from the measured stage costs");
}

// The last step is always logged, so the report holds its timelines.
void writeTimelineFiles(const std::string& dir, const RunReportData& report) {
  if (report.measuredTimelineSvg.empty()) return;
  writeText(dir + "/timeline.svg", report.measuredTimelineSvg);
  writeText(dir + "/timeline-simulated.svg", report.simulatedTimelineSvg);
}

std::vector<StageLayers> stageLayers(const pipeline::Pipeline& pipeline) {
  const std::vector<plan::StageReport>& parts = pipeline.partition().stages;
  std::vector<StageLayers> stages;
  for (int s = 0; s < static_cast<int>(parts.size()); ++s) {
    stages.push_back({s, pipeline.schedule().rankOf(s), parts[s].firstLayer, parts[s].numLayers});
  }
  return stages;
}

// The report's facts about the run; its history and timelines come as it runs.
RunReportData reportOfRun(const Trainer& trainer) {
  const TrainConfig& c = trainer.config();
  RunReportData report;
  report.title = c.model.architecture + " model of " + std::to_string(trainer.parameterCount()) +
                 " parameters, " + c.train.outDir;
  report.schedule = c.parallel.schedule;
  report.stepsPlanned = c.train.steps;
  report.layout = trainer.layout();
  report.stages = stageLayers(trainer.pipeline());
  report.configToml = configToToml(c);
  return report;
}

// "pp 2 ranks over gloo, dp alone, tp 2 ranks over gloo+shm" (and cp when
// above 1): the transport
// each of this rank's groups took (shared memory only where every member
// shares this host; Gloo between hosts; NCCL on GPUs).
std::string groupTransports(const ParallelGroups& groups) {
  std::string text;
  for (Dim dim : kAllDims) {
    if (dim == Dim::kContext && groups.cp->size() == 1) continue;  // shown only in use
    const Communicator& group = groups.of(dim);
    text += std::string(text.empty() ? "" : ", ") + dimName(dim) + " ";
    text += group.size() == 1 ? std::string("alone")
                              : std::to_string(group.size()) + " ranks over " + group.backend();
  }
  return text;
}

// "strata train: step 7 skipped: loss nan, gradient norm nan; parameters
// unchanged (2 in a row)"
std::string skippedStepLine(const StepReport& step, int64_t inARow) {
  std::ostringstream line;
  line << "strata train: step " << step.step << " skipped: loss " << step.loss << ", gradient norm "
       << step.gradNorm << "; parameters unchanged (" << inARow << " in a row)";
  return line.str();
}

// "strata train: loss spike at step 812: loss 4.1 is 7.3 standard deviations
// above the mean of the last 50 steps (2.9)"
std::string spikeLine(const StepReport& step, const LossSpike& spike) {
  std::ostringstream line;
  line.precision(3);
  line << "strata train: loss spike at step " << step.step << ": loss " << step.loss << " is "
       << spike.zScore << " standard deviations above the mean of the last "
       << LossSpikeDetector::kDefaultWindow << " steps (" << spike.mean << ")";
  return line.str();
}

// A rollback runs the steps after the checkpoint's `kept` again: what was
// recorded of them goes, as a resume after a crash drops it (MetricsWriter),
// so that metrics.jsonl, the curve and the report hold each step once, the
// one the final model went through. The log keeps the rollback's lines.
template <typename Entry>
void dropStepsAfter(std::vector<Entry>& entries, int64_t kept) {
  auto later = [kept](const Entry& entry) { return entry.step > kept; };
  entries.erase(std::remove_if(entries.begin(), entries.end(), later), entries.end());
}

}  // namespace

TrainSummary runTraining(Trainer& trainer, std::ostream& log) {
  const TrainConfig& c = trainer.config();
  bool leader = trainer.world().rank() == 0;
  TrainSummary summary;
  summary.architecture = c.model.architecture;
  summary.layout = trainer.layout().describe();
  if (!c.checkpoint.dir.empty()) checkCheckpointDirectory(c.checkpoint.dir, trainer.world().comm());
  std::optional<CheckpointInfo> resumedFrom;
  if (c.checkpoint.resume && !c.checkpoint.dir.empty()) resumedFrom = trainer.resumeFromLatest();
  bool resumed = resumedFrom.has_value();
  if (!resumed && !c.checkpoint.initFrom.empty()) {
    trainer.initFrom(c.checkpoint.initFrom);
    if (leader) log << "strata train: initialised from " << c.checkpoint.initFrom << std::endl;
  }
  if (!resumed && !c.finetune.initAdapter.empty()) {
    trainer.initAdapter(c.finetune.initAdapter);
    if (leader) log << "strata train: LoRA adapters from " << c.finetune.initAdapter << std::endl;
  }
  int64_t first = trainer.stepsDone();
  if (leader) {
    std::filesystem::create_directories(c.train.outDir);
    log << "strata train: " << c.model.architecture << " model of " << trainer.parameterCount()
        << " parameters, layout " << summary.layout << ", " << c.microBatches()
        << " micro-batches of " << c.train.microBatch << " per replica, schedule "
        << c.parallel.schedule << (resumed ? resumeNote(*resumedFrom) : std::string()) << std::endl;
    log << "strata train: rank 0's groups: " << groupTransports(trainer.groups()) << std::endl;
    if (c.model.moe.enabled()) log << expertsLine(c) << std::endl;
    if (trainer.lossMasked())
      log << "strata train: the loss counts the assistant's tokens only (" << c.data.prepared
          << ".mask; data.loss_on = " << c.data.lossOn << ")" << std::endl;
    if (c.data.pack) log << packingLine(c, trainer.packing()) << std::endl;
  }
  summary.peakFlopsPerWorker = sharedPeakFlops(trainer);
  models::ModelSpec spec = modelSpecOf(c);
  const models::ModelFamily& family = models::modelFamily(spec.architecture);
  double flopsPerToken = trainingFlopsPerToken(family.matmulParameters(spec), spec.layers,
                                               spec.hidden, c.train.seqLen);
  double tokensPerStep = static_cast<double>(c.train.globalBatch * c.train.seqLen);

  std::string metricsPath = c.train.outDir + "/metrics.jsonl";
  std::string reportPath = c.train.outDir + "/report.html";
  RunReportData report;
  std::unique_ptr<MetricsWriter> metrics;
  if (leader) {
    report = reportOfRun(trainer);
    // Read before the writer opens the file: a fresh run truncates it.
    if (resumed) report.history = readMetricsHistory(metricsPath, first);
    metrics = std::make_unique<MetricsWriter>(metricsPath, resumed ? first : -1);
  }
  ProgressReporter progress(log, util::stderrIsTerminal(), c.train.steps, first);
  LossCurve curve;
  curve.title = c.model.architecture + " training loss (" + summary.layout + ")";
  // A resumed run's curve and counts start with the steps before its checkpoint.
  for (const StepMetrics& earlier : report.history) {
    curve.train.push_back({earlier.step, earlier.loss});
    if (!std::isnan(earlier.validationLoss))
      curve.validation.push_back({earlier.step, earlier.validationLoss});
  }
  int64_t skippedBefore = report.history.empty() ? 0 : report.history.back().skippedSteps;
  auto runStart = Clock::now();
  double stepSeconds = 0;
  int64_t stepsRun = 0, skippedInARow = 0;
  LossSpikeDetector spikes(c.train.spikeZscore);
  std::optional<StragglerWatch> stragglers;
  if (c.train.stragglerEvery > 0)
    stragglers.emplace(trainer.world().comm(), c.train.stragglerFactor);
  CheckpointSaves saves(trainer, leader, log);
  bool rolledBackSinceSave = false;  // for a spike: at most one rollback per checkpoint
  auto forgetStepsAfter = [&](int64_t kept) {
    dropStepsAfter(curve.train, kept);
    dropStepsAfter(curve.validation, kept);
    if (!leader) return;
    dropStepsAfter(report.history, kept);
    metrics.reset();  // closed before the new writer rewrites the file
    metrics = std::make_unique<MetricsWriter>(metricsPath, kept);
  };
  while (trainer.stepsDone() < c.train.steps) {
    StepReport step = trainer.step();
    ++stepsRun;
    stepSeconds += step.seconds;
    if (stepsRun == 1) summary.lossStart = step.loss;
    skippedInARow = step.skipped ? skippedInARow + 1 : 0;
    summary.skippedSteps += step.skipped ? 1 : 0;
    if (step.skipped && leader) log << skippedStepLine(step, skippedInARow) << std::endl;
    std::optional<LossSpike> spike = spikes.observe(step.loss);
    if (spike && leader) log << spikeLine(step, *spike) << std::endl;
    bool spikeRollBack = spike && c.train.spikeRollback && !rolledBackSinceSave;
    if (spike && c.train.spikeRollback && !spikeRollBack && leader) {
      log << "strata train: no rollback for the spike at step " << step.step
          << ": the run rolled back once since the latest checkpoint" << std::endl;
    }
    summary.lossEnd = step.loss;
    curve.train.push_back({step.step, step.loss});
    StepMetrics m;
    m.step = step.step;
    m.loss = step.loss;
    m.lr = step.lr;
    m.gradNorm = step.gradNorm;
    m.bubble = step.bubble;
    if (step.moe.present) {
      m.moeTokensMin = step.moe.tokensMin;
      m.moeTokensMean = step.moe.tokensMean;
      m.moeTokensMax = step.moe.tokensMax;
      m.moeDropped = static_cast<double>(step.moe.dropped);
      m.moeAuxLoss = step.moe.auxLoss;
      m.moeZLoss = step.moe.zLoss;
      m.moeExchangeSeconds = step.moe.exchangeSeconds;
    }
    if (stragglers && step.step % c.train.stragglerEvery == 0) {
      StragglerWatch::Comparison compared = stragglers->compare(step.computeSeconds);
      m.computeMedianSeconds = compared.medianSeconds;
      m.stragglers = compared.stragglers;
      m.rankComputeSeconds = compared.seconds;
      for (const Straggler& slow : m.stragglers) {
        if (leader)
          log << stragglerLine(step.step, slow, compared.medianSeconds, trainer.world().size(),
                               c.train.stragglerFactor)
              << std::endl;
      }
    }
    m.tokensPerSecond = tokensPerStep * static_cast<double>(stepsRun) / stepSeconds;
    m.skippedSteps = skippedBefore + summary.skippedSteps;
    m.mfu = modelFlopsUtilization(flopsPerToken, m.tokensPerSecond, summary.peakFlopsPerWorker,
                                  trainer.world().size());
    bool last = step.step == c.train.steps;
    if (c.train.evalEvery > 0 && (step.step % c.train.evalEvery == 0 || last)) {
      m.validationLoss = trainer.evaluate(c.train.evalBatches);
      curve.validation.push_back({step.step, m.validationLoss});
    }
    bool logNow = step.step % c.train.logEvery == 0 || last;
    if (logNow) {
      m.peakMemoryBytes = maxOverJob(trainer, static_cast<double>(peakResidentBytes()));
      if (c.train.device == "cuda") {
        m.peakCudaMemoryBytes = maxOverJob(trainer, static_cast<double>(peakCudaBytes()));
      }
      if (leader) progress.report(m, since(runStart));
    }
    if (leader) {
      metrics->write(m);
      report.history.push_back(m);
    }
    if (logNow) {
      captureTimelines(trainer, report);
      if (leader) writeRunReport(reportPath, report);
    }
    // No save inside a run of skipped steps, nor of a spike about to be rolled
    // back: a rollback must find the state from before them.
    bool saveNow = c.checkpoint.every > 0 && step.step % c.checkpoint.every == 0 &&
                   skippedInARow == 0 && !spikeRollBack;
    if (!c.checkpoint.dir.empty()) {
      saves.poll();
      if (saveNow || (last && !spikeRollBack)) {
        saves.save();
        rolledBackSinceSave = false;
      }
      if (last) saves.finish();
    }
    summary.tokensPerSecond = m.tokensPerSecond;
    summary.mfu = m.mfu;
    if (c.train.maxSkippedSteps > 0 && skippedInARow == c.train.maxSkippedSteps) {
      saves.finish();
      CheckpointInfo info =
          trainer.rollBackPastBadData("produced non-finite values in " +
                                      std::to_string(c.train.maxSkippedSteps) + " steps in a row");
      skippedInARow = 0;
      ++summary.rollBacks;
      forgetStepsAfter(info.step);
      if (leader) {
        log << "strata train: rolled back to the checkpoint of step " << info.step << " after "
            << c.train.maxSkippedSteps
            << " non-finite steps in a row; training goes on past the data that caused them"
            << std::endl;
      }
    } else if (spikeRollBack) {
      saves.finish();
      CheckpointInfo info =
          trainer.rollBackPastBadData("produced a loss spike at step " + std::to_string(step.step));
      rolledBackSinceSave = true;
      ++summary.rollBacks;
      forgetStepsAfter(info.step);
      if (leader) {
        log << "strata train: rolled back to the checkpoint of step " << info.step
            << " after the loss spike at step " << step.step
            << "; training goes on past the data that caused it" << std::endl;
      }
    }
  }
  if (leader) progress.finish();
  summary.steps = trainer.stepsDone();
  summary.validationLoss = trainer.evaluate(c.train.evalBatches);
  if (leader) {
    curve.validation.push_back({summary.steps, summary.validationLoss});
    writeLossCurveSvg(c.train.outDir + "/loss.svg", curve);
    writeTimelineFiles(c.train.outDir, report);
    report.finished = true;
    report.finalValidationLoss = summary.validationLoss;
    writeRunReport(reportPath, report);
    log << "strata train: wrote " << c.train.outDir << "/{metrics.jsonl,report.html,loss.svg,"
        << "timeline.svg,timeline-simulated.svg}" << std::endl;
  }
  return summary;
}

std::string summaryJson(const TrainSummary& s, const std::string& key) {
  nlohmann::ordered_json summary = {{key, s.architecture},
                                    {"layout", s.layout},
                                    {"steps", s.steps},
                                    {"loss_start", jsonNumber(s.lossStart)},
                                    {"loss_end", jsonNumber(s.lossEnd)},
                                    {"val_loss", jsonNumber(s.validationLoss)},
                                    {"tokens_per_s", jsonNumber(s.tokensPerSecond)},
                                    {"mfu", jsonNumber(s.mfu)},
                                    {"skipped_steps", s.skippedSteps}};
  return dumpJson(summary);
}

}  // namespace strata::train
