#include "reference_comparison.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <set>

#include "reference_training.h"
#include "strata/tensor_parallel/init.h"
#include "strata/tensor_parallel/sharding.h"
#include "trainer_test_util.h"

namespace strata::train::testing {
namespace {

struct Tolerances {
  double loss;       // relative, the validation loss's too
  double norm;       // the gradient norm's, relative
  double parameter;  // each parameter's difference over its norm
};

// float32. Losses and gradient norms: float32 summed in other orders
// (sharded matmuls, all-reduces) lands within about 1e-7 of the reference.
// Parameters after the compared AdamW steps: the trainer's linear layers
// multiply through their own products (src/ops/linear.cpp), the reference's
// through at::linear, in other orders, and AdamW divides each gradient by
// the root of its own second moment, so an element whose gradient is small
// turns a rounding difference of the whole gradient into a whole step's. On
// a Xeon of CPU model 207 (LibTorch 1.13, oneDNN against OpenBLAS) the
// largest difference over these tests was 1.07e-5 of the parameter's norm
// (7.9e-6 the next), with gradient norms within 1.4e-7.
constexpr Tolerances kFloat32{1e-5, 1e-5, 2e-5};
// train.precision = "bf16", against the reference under the same autocast:
// every product's output is rounded to bf16's 8 significant bits, after
// sums whose order differs between the trainer's kernels and layouts and
// the reference's. Measured on LoRA runs (an AVX512-BF16 EPYC, LibTorch
// 2.11): losses within 6.2e-5, gradient norms within 7.0e-3, parameters
// within 7.9e-2 of their norm; the largest are LoRA's B, which start at zero
// and move by AdamW's steps of the learning rate, each element's sign set by
// a gradient that bf16 noise can flip (A's within 2.5e-2). Coarse: they
// catch a wrong scale or a missing term, not the last bits a wrong
// tensor-parallel sum moves, which the float32 comparisons catch.
constexpr Tolerances kBf16{5e-4, 3e-2, 0.2};

Tolerances tolerancesFor(const TrainConfig& config) {
  return config.train.precision == "bf16" ? kBf16 : kFloat32;
}

double relativeDifference(const torch::Tensor& got, const torch::Tensor& expected) {
  double scale = expected.norm().item<double>();
  double difference = (got - expected).norm().item<double>();
  return scale > 0 ? difference / scale : difference;
}

// A fused QKV bias ([heads, 3 (q, k, v), d] entries, or a tp shard of them)
// with the key entries set to zero.
torch::Tensor withoutKeyBias(const torch::Tensor& bias, int64_t headDim) {
  torch::Tensor copy = bias.clone();
  copy.view({-1, 3, headDim}).select(1, 1).zero_();
  return copy;
}

bool isQkvBias(const std::string& name) {
  const std::string suffix = "attention.qkv.bias";
  return name.size() >= suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The slice of the reference tensor a rank holds: the vocabulary padded with
// zero rows to a multiple of tp (models/gpt.h), then its tp part.
torch::Tensor expectedShard(const torch::Tensor& full, const ParameterShard& shard,
                            const SavedShards& saved) {
  torch::Tensor expected = full;
  bool vocabulary = shard.name == "embedding.tokens.weight" || shard.name == "head.lm_head.weight";
  if (vocabulary)
    expected = tensor_parallel::padRows(
        full, tensor_parallel::paddedToMultiple(full.size(0), saved.tpSize));
  if (shard.shardDim == tensor_parallel::kReplicated) return expected;
  int64_t part = expected.size(shard.shardDim) / saved.tpSize;
  return expected.narrow(shard.shardDim, part * saved.tpRank, part);
}

// What a rank records: kComparedSteps losses, kComparedSteps gradient norms, then the
// validation loss after them.
std::vector<double> trainAndRecord(Trainer& trainer) {
  std::vector<double> losses, norms;
  for (int i = 0; i < kComparedSteps; ++i) {
    StepReport report = trainer.step();
    losses.push_back(report.loss);
    norms.push_back(report.gradNorm);
  }
  losses.insert(losses.end(), norms.begin(), norms.end());
  losses.push_back(trainer.evaluate(1));
  return losses;
}

// The largest relative differences seen, printed after a comparison (the
// figures the docs quote).
struct Largest {
  double loss = 0, norm = 0, parameter = 0;
  std::string parameterName;
};

double relative(double got, double expected) {
  return std::abs(got - expected) / std::abs(expected);
}

void expectRecordMatches(const std::vector<double>& got, const ReferenceRun& reference, int rank,
                         Tolerances tolerances, Largest& largest) {
  ASSERT_EQ(got.size(), static_cast<size_t>(2 * kComparedSteps + 1))
      << "rank " << rank << " recorded too little";
  for (int i = 0; i < kComparedSteps; ++i) {
    largest.loss = std::max(largest.loss, relative(got[i], reference.losses[i]));
    largest.norm =
        std::max(largest.norm, relative(got[kComparedSteps + i], reference.gradNorms[i]));
    EXPECT_NEAR(got[i], reference.losses[i], tolerances.loss * reference.losses[i])
        << "rank " << rank << ", loss of step " << i + 1;
    EXPECT_NEAR(got[kComparedSteps + i], reference.gradNorms[i],
                tolerances.norm * reference.gradNorms[i])
        << "rank " << rank << ", gradient norm of step " << i + 1;
  }
  EXPECT_NEAR(got[2 * kComparedSteps], reference.validationLoss,
              tolerances.loss * reference.validationLoss)
      << "rank " << rank << ", validation loss after step " << kComparedSteps;
}

// Checks every shard of the rank; returns the names it held.
std::set<std::string> expectShardsMatch(const SavedShards& saved, const ReferenceRun& reference,
                                        int64_t headDim, int rank, Tolerances tolerances,
                                        Largest& largest) {
  std::set<std::string> held;
  for (const ParameterShard& shard : saved.shards) {
    held.insert(shard.name);
    auto full = reference.parameters.find(shard.name);
    if (full == reference.parameters.end()) {
      ADD_FAILURE() << "rank " << rank << " holds " << shard.name << ", which the reference lacks";
      continue;
    }
    torch::Tensor expected = expectedShard(full->second, shard, saved);
    if (!expected.sizes().equals(shard.tensor.sizes())) {
      ADD_FAILURE() << "rank " << rank << ", " << shard.name << ": shape " << shard.tensor.sizes()
                    << ", expected " << expected.sizes();
      continue;
    }
    torch::Tensor got = shard.tensor;
    if (isQkvBias(shard.name)) {
      got = withoutKeyBias(got, headDim);
      expected = withoutKeyBias(expected, headDim);
    }
    double difference = relativeDifference(got, expected);
    if (difference > largest.parameter) {
      largest.parameter = difference;
      largest.parameterName = shard.name;
    }
    EXPECT_LE(difference, tolerances.parameter)
        << "rank " << rank << ", parameter " << shard.name << " after step " << kComparedSteps;
  }
  return held;
}

}  // namespace

void recordRun(Trainer& trainer, const std::string& dir, int rank) {
  writeValues(dir, "record", rank, trainAndRecord(trainer));
  writeShards(dir, rank, trainer);
}

void expectRunMatchesReference(const std::string& dir, int processes, const TrainConfig& config) {
  ReferenceRun reference = trainReference(config, kComparedSteps);
  // Equal numbers only mean something when training moves them.
  ASSERT_LT(reference.losses[kComparedSteps - 1], reference.losses[0] - 0.01)
      << "the reference does not learn";
  std::set<std::string> held;
  Largest largest;
  for (int rank = 0; rank < processes; ++rank) {
    expectRecordMatches(readValues(dir, "record", rank), reference, rank, tolerancesFor(config),
                        largest);
    int64_t headDim = config.model.hidden / config.model.heads;
    for (const std::string& n : expectShardsMatch(readShards(dir, rank), reference, headDim, rank,
                                                  tolerancesFor(config), largest))
      held.insert(n);
  }
  std::cout << "largest relative differences from the reference: loss " << largest.loss
            << ", gradient norm " << largest.norm << ", parameter " << largest.parameter << " ("
            << largest.parameterName << ")" << std::endl;
  for (const auto& [parameter, tensor] : reference.parameters)
    EXPECT_TRUE(held.count(parameter)) << "no rank holds " << parameter;
}

void expectEqualsReference(const std::string& name, const TrainConfig& config) {
  const ParallelConfig& p = config.parallel;
  int processes = static_cast<int>(p.pp * p.dp * p.cp * p.tp);
  std::string dir = sharedDir(name);
  strata::testing::runInProcesses(
      processes,
      [&](const strata::testing::RankContext& ctx) {
        Trainer trainer(config, World::init());
        recordRun(trainer, dir, ctx.rank);
      },
      sharedDirOptions(dir));
  expectRunMatchesReference(dir, processes, config);
  removeSharedDir(dir);
}

}  // namespace strata::train::testing
