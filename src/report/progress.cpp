#include "strata/report/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "strata/util/progress_text.h"

namespace strata::train {
namespace {

std::string format(const char* pattern, double value) {
  char text[48];
  std::snprintf(text, sizeof(text), pattern, value);
  return text;
}

std::string rate(double tokensPerSecond) {
  if (!std::isfinite(tokensPerSecond)) return "";
  if (tokensPerSecond >= 1e6) return format("  %.2fM tok/s", tokensPerSecond / 1e6);
  if (tokensPerSecond >= 1e3) return format("  %.1fk tok/s", tokensPerSecond / 1e3);
  return format("  %.0f tok/s", tokensPerSecond);
}

// "  name value" for measured values, "" for the rest.
std::string field(const char* name, const char* pattern, double value) {
  if (!std::isfinite(value)) return "";
  return std::string("  ") + name + " " + format(pattern, value);
}

// "  mem 312 MiB" (or GiB), for a measured peak.
std::string memory(const char* name, double bytes) {
  if (!std::isfinite(bytes)) return "";
  constexpr double kMiB = 1024.0 * 1024.0;
  if (bytes >= 1024 * kMiB)
    return std::string("  ") + name + format(" %.1f GiB", bytes / 1024 / kMiB);
  return std::string("  ") + name + format(" %.0f MiB", bytes / kMiB);
}

// "  bubble 25%": the pipeline's idle share; nothing without a pipeline.
std::string bubble(double share) {
  if (!std::isfinite(share) || share <= 0) return "";
  return format("  bubble %.0f%%", 100 * share);
}

// "  experts 12/16/21 tok" (min/mean/max per expert and layer), with drops.
std::string experts(const StepMetrics& m) {
  if (!std::isfinite(m.moeTokensMean)) return "";
  std::string text = format("  experts %.0f", m.moeTokensMin) + format("/%.0f", m.moeTokensMean) +
                     format("/%.0f tok", m.moeTokensMax);
  if (m.moeDropped > 0) text += format(" (%.0f dropped)", m.moeDropped);
  return text;
}

}  // namespace

ProgressReporter::ProgressReporter(std::ostream& out, bool terminal, int64_t totalSteps,
                                   int64_t firstStep)
    : out_(out), terminal_(terminal), totalSteps_(totalSteps), firstStep_(firstStep) {}

std::string ProgressReporter::bar(int64_t step) const {
  constexpr int kWidth = 20;
  int64_t filled = totalSteps_ > 0 ? step * kWidth / totalSteps_ : kWidth;
  filled = std::min<int64_t>(std::max<int64_t>(filled, 0), kWidth);
  return "[" + std::string(static_cast<size_t>(filled), '#') +
         std::string(static_cast<size_t>(kWidth - filled), '.') + "]";
}

void ProgressReporter::report(const StepMetrics& m, double elapsedSeconds) {
  std::string eta = util::formatDuration(util::estimateRemainingSeconds(
      elapsedSeconds, m.step - firstStep_, totalSteps_ - firstStep_));
  std::string counter = std::to_string(m.step) + "/" + std::to_string(totalSteps_);
  if (terminal_) {
    // \r returns to the line start; \033[K clears what a longer line left.
    out_ << "\r" << bar(m.step) << "  " << counter << field("loss", "%.3f", m.loss)
         << field("lr", "%.1e", m.lr) << rate(m.tokensPerSecond) << "  ETA " << eta << "\033[K"
         << std::flush;
    drawn_ = true;
    return;
  }
  out_ << "step " << counter << field("loss", "%.4f", m.loss)
       << field("val_loss", "%.4f", m.validationLoss) << field("lr", "%.2e", m.lr)
       << field("grad", "%.3f", m.gradNorm) << rate(m.tokensPerSecond)
       << field("mfu", "%.1f%%", 100 * m.mfu) << memory("mem", m.peakMemoryBytes)
       << memory("cuda", m.peakCudaMemoryBytes) << bubble(m.bubble) << experts(m) << "  ETA " << eta
       << "\n"
       << std::flush;
}

void ProgressReporter::finish() {
  if (drawn_) out_ << "\n" << std::flush;
  drawn_ = false;
}

}  // namespace strata::train
