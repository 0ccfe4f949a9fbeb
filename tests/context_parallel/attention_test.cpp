// Ring and all-to-all attention in real processes, each rank holding its
// load-balanced tokens, against plain causal attention over the whole
// sequence written here: outputs and the gradients of q, k and v (each
// rank's own positions of the whole-sequence gradients), at cp 2, 3 and 4,
// with multi-head and grouped-query heads and chunks of 1 and 3 tokens; and
// over packed documents against each document attended alone.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "multiprocess.h"
#include "strata/context_parallel/all_to_all_attention.h"
#include "strata/context_parallel/context_parallel.h"
#include "strata/context_parallel/packed_documents.h"
#include "strata/context_parallel/ring_attention.h"
#include "strata/error.h"
#include "strata/runtime/world.h"

namespace strata::context_parallel {
namespace {

using strata::testing::RankContext;
using strata::testing::runInProcesses;

struct Case {
  int64_t heads = 4, kvHeads = 4, chunk = 1;
  // Packed documents: each batch row's document lengths (summing to the
  // sequence length); empty: every row one document.
  std::vector<std::vector<int64_t>> documents;
};

// softmax(q k^T / sqrt(d), the future masked) v over the whole sequence,
// each kv head read by its group of consecutive query heads.
at::Tensor fullCausalAttention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v) {
  int64_t group = q.size(1) / k.size(1), s = q.size(2);
  at::Tensor keys = k.repeat_interleave(group, 1), values = v.repeat_interleave(group, 1);
  at::Tensor scores = q.matmul(keys.transpose(-2, -1)) / std::sqrt(double(q.size(3)));
  at::Tensor future = torch::ones({s, s}, torch::kBool).triu(1);
  return torch::softmax(scores.masked_fill(future, -INFINITY), -1).matmul(values);
}

// Each row's documents attended alone, each by fullCausalAttention over
// its own slice of the sequence: what packed attention must equal.
at::Tensor documentsAlone(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                          const std::vector<std::vector<int64_t>>& documents) {
  std::vector<at::Tensor> rows;
  for (int64_t row = 0; row < q.size(0); ++row) {
    std::vector<at::Tensor> parts;
    int64_t start = 0;
    for (int64_t length : documents[static_cast<size_t>(row)]) {
      auto slice = [&](const at::Tensor& t) {
        return t.narrow(0, row, 1).narrow(2, start, length);
      };
      parts.push_back(fullCausalAttention(slice(q), slice(k), slice(v)));
      start += length;
    }
    rows.push_back(torch::cat(parts, 2));
  }
  return torch::cat(rows, 0);
}

// [b, S] int64: each token's document number within its row.
at::Tensor segmentsOf(const std::vector<std::vector<int64_t>>& documents) {
  std::vector<at::Tensor> rows;
  for (const std::vector<int64_t>& lengths : documents) {
    std::vector<int64_t> ids;
    for (size_t d = 0; d < lengths.size(); ++d) ids.insert(ids.end(), lengths[d], int64_t(d));
    rows.push_back(torch::tensor(ids, torch::kLong));
  }
  return torch::stack(rows);
}

void expectClose(const at::Tensor& got, const at::Tensor& expected, const std::string& what) {
  double err = (got - expected).abs().max().item<double>();
  double scale = expected.abs().max().item<double>();
  EXPECT_LE(err, 1e-5 * (1 + scale)) << what << ": largest difference " << err;
}

// One case on this rank: its tokens through `attend`, the whole sequence
// through the reference, the same loss weights on both.
void checkCase(const Case& c, Communicator& cp, CpAlgorithm algorithm) {
  int64_t batch = 2, dim = 4, seqLen = 2 * cp.size() * c.chunk;
  torch::manual_seed(static_cast<uint64_t>(100 * c.heads + 10 * c.kvHeads + c.chunk));
  at::Tensor q = torch::randn({batch, c.heads, seqLen, dim});
  at::Tensor k = torch::randn({batch, c.kvHeads, seqLen, dim});
  at::Tensor v = torch::randn({batch, c.kvHeads, seqLen, dim});
  at::Tensor weights = torch::randn({batch, c.heads, seqLen, dim});

  std::vector<at::Tensor> whole = {q.clone().requires_grad_(), k.clone().requires_grad_(),
                                   v.clone().requires_grad_()};
  const bool packed = !c.documents.empty();
  at::Tensor expected = packed ? documentsAlone(whole[0], whole[1], whole[2], c.documents)
                               : fullCausalAttention(whole[0], whole[1], whole[2]);
  (expected * weights).sum().backward();
  at::Tensor segments = packed ? segmentsOf(c.documents) : at::Tensor();

  at::Tensor mine = localPositions(seqLen / cp.size(), cp, at::kCPU);
  std::vector<at::Tensor> local;
  for (const at::Tensor& t : {q, k, v}) local.push_back(t.index_select(2, mine).requires_grad_());
  at::Tensor got = algorithm == CpAlgorithm::kRing
                       ? ringAttention(local[0], local[1], local[2], cp, nullptr, segments)
                       : allToAllAttention(local[0], local[1], local[2], cp, segments);
  (got * weights.index_select(2, mine)).sum().backward();

  std::string name = std::string(cpAlgorithmName(algorithm)) + " cp " + std::to_string(cp.size()) +
                     " heads " + std::to_string(c.heads) + "/" + std::to_string(c.kvHeads) +
                     " chunk " + std::to_string(c.chunk) + (packed ? " packed" : "");
  expectClose(got, expected.index_select(2, mine), name + " output");
  const char* names[] = {"dq", "dk", "dv"};
  for (int i = 0; i < 3; ++i)
    expectClose(local[i].grad(), whole[i].grad().index_select(2, mine), name + " " + names[i]);
}

void checkCases(CpAlgorithm algorithm, const std::vector<Case>& cases) {
  std::shared_ptr<World> world = World::init();
  std::shared_ptr<Communicator> cp = world->worldComm();
  for (const Case& c : cases) checkCase(c, *cp, algorithm);
  if (::testing::Test::HasFailure()) throw Error("a case differs from full attention");
}

TEST(ContextParallelAttention, RingEqualsFullAttention) {
  std::vector<Case> cases = {{4, 4, 1}, {4, 2, 3}, {4, 1, 1}};
  for (int cp : {2, 3, 4})
    runInProcesses(cp, [&](const RankContext&) { checkCases(CpAlgorithm::kRing, cases); });
}

// Blocks of 2048 x 2048 scores are computed a tile of query rows at a
// time (block_attention.cpp bounds each tile to 2^20 elements): the tiles
// of the own, causal block and of the full blocks must join exactly.
TEST(ContextParallelAttention, RingTilesLongBlocks) {
  runInProcesses(2, [](const RankContext&) { checkCases(CpAlgorithm::kRing, {{1, 1, 1024}}); });
}

TEST(ContextParallelAttention, AllToAllEqualsFullAttention) {
  runInProcesses(2, [](const RankContext&) {
    checkCases(CpAlgorithm::kAllToAll, {{4, 4, 1}, {4, 2, 3}});
  });
  runInProcesses(3, [](const RankContext&) { checkCases(CpAlgorithm::kAllToAll, {{6, 3, 1}}); });
  runInProcesses(4, [](const RankContext&) { checkCases(CpAlgorithm::kAllToAll, {{8, 4, 3}}); });
}

// Packed documents, S = 12 at cp 2 (chunks of 3: rank 0 holds tokens 0-2
// and 9-11, rank 1 tokens 3-8). Both rows start documents at tokens 3 and
// 9, so each rank meets one block from the other in which no query shares
// a document with a key (skipped); other blocks have queries that see none
// of their keys, and one row is a single document.
const std::vector<std::vector<int64_t>> kAlignedDocuments = {{3, 6, 3}, {1, 2, 6, 1, 2}};
const std::vector<std::vector<int64_t>> kWholeAndSplit = {{12}, {5, 4, 3}};

TEST(ContextParallelAttention, RingKeepsPackedDocumentsApart) {
  runInProcesses(2, [](const RankContext&) {
    checkCases(
        CpAlgorithm::kRing,
        {{4, 2, 3, kAlignedDocuments}, {4, 4, 3, kWholeAndSplit}, {4, 1, 3, {{2, 10}, {11, 1}}}});
  });
  runInProcesses(3, [](const RankContext&) {
    checkCases(CpAlgorithm::kRing, {{4, 2, 2, {{1, 4, 5, 2}, {7, 5}}}});
  });
}

TEST(ContextParallelAttention, AllToAllKeepsPackedDocumentsApart) {
  runInProcesses(2, [](const RankContext&) {
    checkCases(CpAlgorithm::kAllToAll, {{4, 2, 3, kAlignedDocuments}, {4, 4, 3, kWholeAndSplit}});
  });
}

TEST(PackedDocuments, PositionsRestartAndMicroBatchesAreSelected) {
  at::Tensor segments = segmentsOf({{3, 6, 3}, {1, 2, 6, 1, 2}, {12}, {11, 1}});
  at::Tensor expected = torch::tensor({0, 1, 2, 0, 1, 2, 3, 4, 5, 0, 1,  2,   //
                                       0, 0, 1, 0, 1, 2, 3, 4, 5, 0, 0,  1,   //
                                       0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,  //
                                       0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0},
                                      torch::kLong)
                            .view({4, 12});
  EXPECT_TRUE(documentPositions(segments).equal(expected)) << documentPositions(segments);
  PackedDocuments documents;
  EXPECT_FALSE(documents.segments().defined());
  documents.setBatch(segments, 2);
  EXPECT_FALSE(documents.segments().defined());  // none selected yet
  documents.select(1);
  EXPECT_TRUE(documents.segments().equal(segments.narrow(0, 2, 2)));
  EXPECT_THROW(documents.select(2), ConfigError);
  EXPECT_THROW(documents.setBatch(segments, 3), ConfigError);
  documents.clear();
  EXPECT_FALSE(documents.segments().defined());
}

TEST(ContextParallelAttention, AllToAllRefusesHeadsCpDoesNotDivide) {
  try {
    checkAllToAllHeads(4, 2, 4);
    FAIL() << "kv heads 2 at cp 4 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("4 query heads and 2 kv heads"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace strata::context_parallel
