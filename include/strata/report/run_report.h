// The run report: report.html in the run directory, one self-contained page
// (inline CSS, JavaScript and SVG; it needs no network) that a person keeps
// open during a run. It shows the loss and validation-loss curves, learning
// rate, gradient norm, tokens/s, MFU, peak memory and bubble over the steps,
// the last logged step's measured pipeline timeline beside the simulated one,
// the layout map (which rank holds which stage, dp replica and tp shard) and
// the resolved configuration. While the run is live the page reloads itself
// every few seconds; a finished run's page stays still.
//
// The page is a fixed template (src/report/report.html) plus one JSON
// object, reportDataJson(), that its script draws. Non-finite values become
// null there, and the page draws them as gaps.
//
// Nothing here blocks but file I/O. writeRunReport replaces the file
// atomically (checkpoint/atomic_file.h), so a browser never reads half a
// page, and throws CheckpointError naming the path when it cannot write.
// readMetricsHistory throws Error naming the path when the file exists but
// cannot be read.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "strata/report/metrics.h"
#include "strata/runtime/layout.h"

namespace strata::train {

// A pipeline stage and the contiguous layers it holds, on pipeline rank ppRank.
struct StageLayers {
  int stage = 0;
  int ppRank = 0;
  int firstLayer = 0;
  int layers = 0;
};

struct RunReportData {
  std::string title;  // "GPT of 123456 parameters"
  std::string schedule;
  int64_t stepsPlanned = 0;
  bool finished = false;
  double finalValidationLoss = kNotMeasured;
  std::vector<StepMetrics> history;  // one entry per step, in step order
  // The last logged step's timelines as SVG (schedule/svg.h); empty before one
  // was traced.
  std::string measuredTimelineSvg;
  std::string simulatedTimelineSvg;
  ParallelLayout layout{1, ParallelDegrees{}};
  std::vector<StageLayers> stages;
  std::string configToml;
};

// The JSON object the page renders, with every '<' escaped (\u003c) so that
// no string in it, however odd, can end the <script> element it sits in.
std::string reportDataJson(const RunReportData& data);
// The whole page.
std::string renderRunReport(const RunReportData& data);
void writeRunReport(const std::string& path, const RunReportData& data);

// The entries of a metrics.jsonl (metrics.h) up to and including `lastStep`,
// so that a resumed run's report starts with the history its checkpoint
// covers. Nulls read back as kNotMeasured; a line that is not a JSON object
// (a crash can leave half a line) is skipped. A missing file gives none.
std::vector<StepMetrics> readMetricsHistory(const std::string& path, int64_t lastStep);

}  // namespace strata::train
