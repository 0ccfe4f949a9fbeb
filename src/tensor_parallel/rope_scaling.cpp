#include "strata/tensor_parallel/rope_scaling.h"

#include <sstream>

#include "strata/error.h"

namespace strata::tensor_parallel {

void checkRopeScaling(const RopeScaling& r) {
  auto n = [](double v) {
    std::ostringstream text;
    text << v;
    return text.str();
  };
  if (r.type == "none") return;
  if (r.type != "llama3")
    throw ConfigError("model.rope_scaling.type must be none or llama3, got '" + r.type + "'");
  if (!(r.factor >= 1))
    throw ConfigError("model.rope_scaling.factor must be >= 1, got " + n(r.factor));
  if (!(r.lowFreqFactor > 0) || !(r.highFreqFactor > r.lowFreqFactor))
    throw ConfigError("model.rope_scaling needs 0 < low_freq_factor < high_freq_factor, got " +
                      n(r.lowFreqFactor) + " and " + n(r.highFreqFactor));
  if (r.originalContext < 1)
    throw ConfigError("model.rope_scaling.original_context must be >= 1, got " +
                      std::to_string(r.originalContext));
}

}  // namespace strata::tensor_parallel
