// A Llama small enough to reason about by hand: 2 layers, hidden 8, 4 heads
// (2 kv heads), ffn 12, vocabulary 16, sequence 4.
#pragma once

#include "strata/plan/model_desc.h"

namespace strata::plan {

inline ModelDesc tinyLlama() {
  ModelDesc m{"tiny-llama", 2, 8, 4, 12, 16, 4, false};
  m.family = Family::kLlama;
  m.kvHeads = 2;
  return m;
}

}  // namespace strata::plan
