// strata/ops/: tensor operations the layers share where LibTorch's own are
// slower: a linear layer and causal self-attention through LibTorch's BLAS sgemm,
// GELU and SwiGLU's gated product sixteen lanes at a time.
//
// Includes every public header of the folder.
#pragma once

#include "strata/ops/causal_self_attention.h"
#include "strata/ops/gelu.h"
#include "strata/ops/linear.h"
#include "strata/ops/swiglu.h"
