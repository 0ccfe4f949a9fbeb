// strata/ops/: tensor operations the layers share where LibTorch's own are
// slower: a linear layer through oneDNN's GEMM.
//
// Includes every public header of the folder.
#pragma once

#include "strata/ops/linear.h"
