// Compares a tensor-parallel layer on a tp group with its plain-LibTorch
// reference (reference_math.h), forward and backward.
//
// The reference runs on the serial weights, which are the layer's own shards
// all-gathered along the dimension its header documents, so a shard that is
// not the right slice of the serial tensor shows up as a mismatch. Outputs,
// input gradients and parameter gradients of the layer are all-gathered to
// serial tensors the same way and must match the reference within
// kReferenceRtol / kReferenceAtol.
#pragma once

#include <ATen/core/Tensor.h>
#include <torch/nn/module.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "strata/runtime/communicator.h"
#include "tp_test_support.h"

namespace strata::tensor_parallel::testing {

// float32 on both sides, different summation orders (per-rank partial
// products, all-reduces, per-head loops): rounding differences stay near
// 1e-7 of the tensor's largest entry, whatever the entry's own size (a
// gradient entry near zero is a sum of terms as large as any). So the
// largest difference must stay within kReferenceAtol + kReferenceRtol x the
// largest entry: a wrong slice or a missing reduction is off by the
// entries' own size. The absolute term only serves tensors that are zero up
// to rounding (the key-bias gradient, which softmax cancels).
constexpr double kReferenceRtol = 1e-5;
constexpr double kReferenceAtol = 1e-6;

// A parameter that every rank holds whole.
constexpr int64_t kNotSplit = -1;

// Serial tensors by qualified parameter name ("mlp.fc1.weight").
using ParamMap = std::map<std::string, at::Tensor>;

struct ReferenceCase {
  std::string name;
  std::shared_ptr<torch::nn::Module> layer;          // built on the tp group
  std::function<at::Tensor(const at::Tensor&)> run;  // the layer on this rank's input
  // Every parameter of `layer` and the dimension split over tp, as its header states.
  std::map<std::string, int64_t> splitDims;
  // The serial computation on the serial input and weights.
  std::function<at::Tensor(const at::Tensor&, const ParamMap&)> reference;
  at::Tensor input;  // serial
  Sharding inputSharding = Sharding::kReplicated;
  Sharding outputSharding = Sharding::kReplicated;
};

// `local` of every rank concatenated along `dim` in rank order.
at::Tensor gatherAlong(const at::Tensor& local, int64_t dim, Communicator& tp);

// Every parameter of `layer` (or with `grads` its gradient) as a serial
// tensor: split ones all-gathered along splitDims, replicated ones as held.
ParamMap gatherParameters(const torch::nn::Module& layer,
                          const std::map<std::string, int64_t>& splitDims, Communicator& tp,
                          bool grads);

// EXPECT max |actual - expected| <= kReferenceAtol + kReferenceRtol max |expected|.
void expectNearReference(const at::Tensor& actual, const at::Tensor& expected,
                         const std::string& what);

// Runs the case with the loss sum(Y * G) for a fixed random G (each rank
// taking its part of G) on the layer and on the reference, and EXPECTs
// equal outputs, input gradients and parameter gradients, none all zero.
void expectMatchesReference(const ReferenceCase& check, Communicator& tp);

}  // namespace strata::tensor_parallel::testing
