// Which tokens of every sequence a context-parallel rank holds.
//
// Causal attention makes contiguous shards unequal: the last of cp ranks
// attends to cp times the keys of the first. So each sequence of S tokens is
// cut into 2 cp chunks of S / (2 cp), and rank r holds chunks r and
// 2 cp - 1 - r (the load-balanced order Megatron-LM and torchtitan use):
// with cp 2, rank 0 holds chunks 0 and 3, rank 1 chunks 1 and 2, and every
// rank does the same attention work. A rank's tokens keep their order, so
// its own positions ascend and "key position <= query position" is a plain
// lower-triangular mask on its own block.
//
// Plain index arithmetic: nothing blocks; checkSequenceLength throws
// ConfigError naming the values.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::context_parallel {

// Throws ConfigError unless `seqLen` splits into 2 * cp equal chunks.
void checkSequenceLength(int64_t seqLen, int cp);

// The global positions, ascending, of rank `rank`'s seqLen / cp tokens.
std::vector<int64_t> localPositions(int64_t seqLen, int rank, int cp);

// Every rank's positions one after another (rank 0's first): where the
// tokens of the whole sequence sit when the ranks' shards are concatenated
// in rank order, as an all-to-all leaves them.
std::vector<int64_t> concatenatedPositions(int64_t seqLen, int cp);

}  // namespace strata::context_parallel
