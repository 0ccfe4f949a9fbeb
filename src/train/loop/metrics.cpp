#include "strata/train/loop/metrics.h"

#include <nlohmann/json.hpp>

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
                                 {"skipped_steps", m.skippedSteps}};
  return dumpJson(line);
}

MetricsWriter::MetricsWriter(const std::string& path, bool append)
    : path_(path), out_(path, append ? std::ios::app : std::ios::trunc) {
  if (!out_) throw Error("cannot open metrics file '" + path + "'");
}

void MetricsWriter::write(const StepMetrics& metrics) {
  out_ << toJsonLine(metrics) << '\n';
  out_.flush();
  if (!out_) throw Error("cannot write metrics file '" + path_ + "'");
}

}  // namespace strata::train
