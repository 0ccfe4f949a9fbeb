// strata/tensor_parallel/: tensor parallel: column/row-parallel linears, the MLP, attention,
// LayerNorm and RMSNorm under sequence parallel, grouped-query attention with
// rotary embeddings, the SwiGLU MLP, the vocabulary-parallel embedding and
// cross-entropy (alone or with the LM head's product), and the autograd
// functions that carry their communication.
//
// Includes every public header of the folder.
#pragma once

#include "strata/tensor_parallel/column_parallel_linear.h"
#include "strata/tensor_parallel/comm_ops.h"
#include "strata/tensor_parallel/dropout.h"
#include "strata/tensor_parallel/grouped_query_attention.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/kv_cache.h"
#include "strata/tensor_parallel/layer_norm.h"
#include "strata/tensor_parallel/lora.h"
#include "strata/tensor_parallel/parallel_attention.h"
#include "strata/tensor_parallel/parallel_mlp.h"
#include "strata/tensor_parallel/rms_norm.h"
#include "strata/tensor_parallel/rope_scaling.h"
#include "strata/tensor_parallel/rotary.h"
#include "strata/tensor_parallel/row_parallel_linear.h"
#include "strata/tensor_parallel/sharding.h"
#include "strata/tensor_parallel/swiglu_mlp.h"
#include "strata/tensor_parallel/transformer_block.h"
#include "strata/tensor_parallel/vocab_parallel_cross_entropy.h"
#include "strata/tensor_parallel/vocab_parallel_embedding.h"
#include "strata/tensor_parallel/vocab_parallel_linear_cross_entropy.h"
