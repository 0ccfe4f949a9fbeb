// strata/tensor_parallel/: tensor parallel: column/row-parallel linears, the MLP, attention,
// LayerNorm under sequence parallel, the vocabulary-parallel embedding and
// cross-entropy (alone or with the LM head's product), and the autograd
// functions that carry their communication.
//
// Includes every public header of the folder.
#pragma once

#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/layer_norm.h"
#include "strata/tensor_parallel/parallel_attention.h"
#include "strata/tensor_parallel/parallel_mlp.h"
#include "strata/tensor_parallel/row_parallel_linear.h"
#include "strata/tensor_parallel/sharding.h"
#include "strata/tensor_parallel/transformer_block.h"
#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"
#include "strata/tensor_parallel/vocab_parallel_linear_cross_entropy.h"
