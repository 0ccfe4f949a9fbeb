// Rotary frequency scaling for contexts longer than pretraining's (the
// `model.rope_scaling` table), as Llama 3.1 and later train with it
// (type "llama3"). With L = originalContext, each of RoPE's frequencies f
// (wavelength w = 2 pi / f) becomes
//
//   f                                  where w < L / highFreqFactor
//   f / factor                         where w > L / lowFreqFactor
//   (1 - a) f / factor + a f           between, a = (L / w - low) / (high - low)
//
// so the fast rotations that order nearby tokens stay as trained and the
// slow ones that span the context stretch by `factor`. Type "none" leaves
// the frequencies alone.
//
// Plain data: nothing blocks; checkRopeScaling throws ConfigError naming the
// values.
#pragma once

#include <cstdint>
#include <string>

namespace strata::tensor_parallel {

struct RopeScaling {
  std::string type = "none";  // "none" or "llama3"
  // Llama 3.1's values.
  double factor = 8.0;
  double lowFreqFactor = 1.0;
  double highFreqFactor = 4.0;
  int64_t originalContext = 8192;

  bool enabled() const { return type != "none"; }
};

void checkRopeScaling(const RopeScaling& scaling);

}  // namespace strata::tensor_parallel
