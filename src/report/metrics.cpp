#include "strata/report/metrics.h"

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/atomic_file.h"
#include "strata/error.h"
#include "strata/util/json.h"

namespace strata::train {

std::string toJsonLine(const StepMetrics& m) {
  nlohmann::ordered_json line = {{"step", m.step},
                                 {"loss", jsonNumber(m.loss)},
                                 {"val_loss", jsonNumber(m.validationLoss)},
                                 {"lr", jsonNumber(m.lr)},
                                 {"grad_norm", jsonNumber(m.gradNorm)},
                                 {"tokens_per_s", jsonNumber(m.tokensPerSecond)},
                                 {"mfu", jsonNumber(m.mfu)},
                                 {"peak_memory_bytes", jsonNumber(m.peakMemoryBytes)},
                                 {"peak_cuda_memory_bytes", jsonNumber(m.peakCudaMemoryBytes)},
                                 {"bubble", jsonNumber(m.bubble)},
                                 {"skipped_steps", m.skippedSteps},
                                 {"compute_median_s", jsonNumber(m.computeMedianSeconds)},
                                 {"stragglers", nlohmann::ordered_json::array()}};
  for (const Straggler& s : m.stragglers)
    line["stragglers"].push_back(
        {{"rank", s.rank}, {"host", s.host}, {"compute_s", jsonNumber(s.computeSeconds)}});
  if (std::isfinite(m.moeTokensMean)) {
    line["moe_tokens_min"] = jsonNumber(m.moeTokensMin);
    line["moe_tokens_mean"] = jsonNumber(m.moeTokensMean);
    line["moe_tokens_max"] = jsonNumber(m.moeTokensMax);
    line["moe_dropped"] = jsonNumber(m.moeDropped);
    line["moe_aux_loss"] = jsonNumber(m.moeAuxLoss);
    line["moe_z_loss"] = jsonNumber(m.moeZLoss);
    line["moe_exchange_s"] = jsonNumber(m.moeExchangeSeconds);
  }
  if (!m.rankComputeSeconds.empty()) {
    line["rank_compute_s"] = nlohmann::ordered_json::array();
    for (double seconds : m.rankComputeSeconds)
      line["rank_compute_s"].push_back(jsonNumber(seconds));
  }
  return dumpJson(line);
}

namespace {

// The lines of `path` whose step is at most `lastStep`; lines that are not a
// step's metrics (a line cut short by a crash) are dropped too.
std::string linesThrough(const std::string& path, int64_t lastStep) {
  std::ifstream in(path);
  std::string kept;
  for (std::string text; std::getline(in, text);) {
    nlohmann::json line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!line.is_object() || !line.contains("step") || !line["step"].is_number_integer()) continue;
    if (line["step"].get<int64_t>() <= lastStep) kept += text + "\n";
  }
  return kept;
}

}  // namespace

MetricsWriter::MetricsWriter(const std::string& path, int64_t resumedAt) : path_(path) {
  if (resumedAt >= 0 && std::filesystem::exists(path)) {
    formats::writeFileAtomically(path, linesThrough(path, resumedAt));
  }
  out_.open(path, resumedAt >= 0 ? std::ios::app : std::ios::trunc);
  if (!out_) throw Error("cannot open metrics file '" + path + "'");
}

void MetricsWriter::write(const StepMetrics& metrics) {
  out_ << toJsonLine(metrics) << '\n';
  out_.flush();
  if (!out_) throw Error("cannot write metrics file '" + path_ + "'");
}

}  // namespace strata::train
