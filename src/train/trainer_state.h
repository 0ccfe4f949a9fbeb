// The Trainer's private state, shared by its source files (trainer.cpp
// builds and steps it, trainer_checkpoints.cpp saves and restores it).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <set>
#include <vector>

#include "strata/context_parallel/context_parallel.h"
#include "strata/context_parallel/packed_documents.h"
#include "strata/data_parallel/data_parallel.h"
#include "strata/data_parallel/zero_optimizer.h"
#include "strata/expert_parallel/expert_parallel.h"
#include "strata/optim/fused_adamw.h"
#include "strata/pipeline/pipeline.h"
#include "strata/train/data_source.h"
#include "strata/train/grad_norm.h"
#include "strata/train/trainer.h"
#include "train/fully_sharded_training.h"

namespace strata::train {

struct Trainer::State {
  State(ParallelLayout l, ParallelGroups g, at::Device d)
      : layout(std::move(l)), groups(std::move(g)), device(d) {}

  ParallelLayout layout;
  ParallelGroups groups;
  // The ranks holding the same parameters, which average their gradients:
  // dp, or under context parallelism dp x cp (whose ranks see different
  // tokens of the same sequences).
  std::shared_ptr<Communicator> replicas;
  // The cp group and algorithm the attention uses; nullptr without cp.
  std::shared_ptr<const context_parallel::ContextParallel> contextParallel;
  // Mixture-of-experts: what the MoE layers share with the trainer (the ep
  // group, the loss scale, the routing statistics); nullptr for a dense model.
  std::shared_ptr<expert_parallel::ExpertParallel> experts;
  // The ranks holding the same experts, which average the experts'
  // gradients (moe_training.h); `replicas` at ep 1.
  std::shared_ptr<Communicator> expertReplicas;
  std::shared_ptr<Communicator> expertGroup;  // ep; nullptr at ep 1
  at::Device device;                          // this rank's stages, parameters and optimizer state
  models::ModelSpec spec;
  // Every layer, built on every rank; those of other pipeline ranks' stages
  // released once the pipeline is cut (held_layers.h).
  torch::nn::Sequential model;
  std::vector<bool> heldLayers;  // which of model's layers this rank keeps; empty: all
  std::unique_ptr<pipeline::Pipeline> pipeline;
  std::vector<at::Tensor> parameters;       // this rank's, each once
  std::vector<ParameterShard> shards;       // the same, named, with their tp split
  std::vector<NormTerm> normTerms;          // every parameter, whole
  GradientTerms gradients;                  // what clipping measures (ZeRO-2: chunks)
  std::shared_ptr<Communicator> tiedGroup;  // first and last stage, when they share a weight
  at::Tensor tiedWeight;
  // Gradient averaging over `replicas`: one replica set, or under ZeRO-1
  // two (weights that decay and those that do not, each with its own
  // sharded AdamW).
  std::vector<std::unique_ptr<data_parallel::DataParallel>> replicaSets;
  // Parallel to replicaSets: the pipeline stage whose last weight gradients
  // complete the set (one group of sets per model chunk when this rank runs
  // several, so each chunk reduces as it finishes), or kEveryStage.
  static constexpr int kEveryStage = -1;
  std::vector<int> replicaSetStages;
  // Parameters no replica set holds while others do (the experts when each
  // has a single holder, at ep = dp x cp): zeroed apart.
  std::vector<at::Tensor> unreplicated;
  std::vector<std::unique_ptr<data_parallel::ZeroOptimizer>> zero;
  std::unique_ptr<optim::FusedAdamW> optimizer;        // without ZeRO
  std::unique_ptr<FullyShardedTraining> fullySharded;  // ZeRO-3, instead of replicas
  std::unique_ptr<BatchReader> trainData;
  std::unique_ptr<BatchReader> validationData;
  pipeline::LossFn lossFn;
  // With data.pack, the batch's documents, which every attention reads: set
  // per batch, selected per micro-batch (packed_documents.h); else nullptr.
  std::shared_ptr<context_parallel::PackedDocuments> documents;
  // With a loss mask (data.loss_on) or packed documents, whose boundaries
  // leave targets out too, the counted targets the loss of each micro-batch
  // divides by, set before each step and evaluation (countTargets); 0
  // without: the mean over every target.
  bool lossMasked = false;
  // The training documents' layout in windows, with data.pack.
  PackingStats packing;
  std::shared_ptr<double> countedTargets = std::make_shared<double>(0);

  // Token ids or targets [b, S] -> this rank's [b, S / cp] (all of them without cp).
  at::Tensor localTokens(const at::Tensor& sequences) const {
    return contextParallel ? context_parallel::localTokens(sequences, *contextParallel->comm)
                           : sequences;
  }
};

// Whether `set` holds `t` (by its TensorImpl).
inline bool contains(const std::set<c10::TensorImpl*>& set, const at::Tensor& t) {
  return set.count(t.unsafeGetTensorImpl()) > 0;
}

}  // namespace strata::train
