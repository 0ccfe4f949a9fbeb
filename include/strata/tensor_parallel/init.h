// Deterministic initialisation that makes parallel layers exact shards of
// serial ones.
//
// A layer built from seed S first draws its full ("master") tensor, exactly
// as the serial layer would, from a CPU generator seeded with S, then keeps
// this rank's slice. So for every tp the shards concatenate to the serial
// weights bit for bit, and checkpoints can be resharded to another tp. The
// price is drawing the full tensor on every rank once, at construction.
//
// Nothing here blocks or communicates; shardOf throws ConfigError when the
// dimension does not divide into `parts`.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace strata::tensor_parallel {

struct InitOptions {
  uint64_t seed = 0;
  double weightStd = 0.02;  // weights ~ N(0, weightStd^2)
  double biasStd = 0.0;     // biases ~ N(0, biasStd^2); 0 gives zeros
  // false: the values are left unset, for a layer built only for its shapes
  // and names (a pipeline rank's other blocks, emptied at once; ZeRO-3's
  // shells, given their values later), which then skips every draw.
  bool draw = true;
};

// An independent seed for sub-stream `stream` of `seed` (splitmix64), so a
// composite layer hands each sublayer its own reproducible stream.
uint64_t deriveSeed(uint64_t seed, uint64_t stream);

// `init` with its seed replaced by deriveSeed(init.seed, stream).
InitOptions deriveInit(const InitOptions& init, uint64_t stream);

// A float32 CPU tensor of `shape` with entries ~ N(0, std^2), drawn from a
// fresh generator seeded with `seed`; identical on every process. With
// `draw` false, a tensor of that shape whose values are left unset.
at::Tensor seededNormal(at::IntArrayRef shape, uint64_t seed, double std, bool draw = true);

// Slice `part` of `parts` equal slices of `full` along `dim`: an independent
// contiguous copy, or with one part `full` itself when it is contiguous (no
// second copy of a freshly drawn weight while a layer is built).
at::Tensor shardOf(const at::Tensor& full, int64_t dim, int part, int parts);

// `size` rounded up to a multiple of `multiple`: a vocabulary padded so that
// tp divides it (GPT-2's 50257 tokens become 50258 rows at tp 2).
int64_t paddedToMultiple(int64_t size, int multiple);

// `full` with zero rows appended along dimension 0 up to `rows`: the serial
// tensor of a padded vocabulary, whose first rows are the unpadded layer's.
at::Tensor padRows(const at::Tensor& full, int64_t rows);

}  // namespace strata::tensor_parallel
