// What bench_peers measures: one row per parallel form, each Strata's layout
// of one Llama beside PyTorch's own form of it (scripts/peers/peer.py), with
// the goal the ratio of their step times is held to.
#pragma once

#include <string>
#include <vector>

#include "strata/config/config.h"

namespace strata::bench {

struct PeerRow {
  std::string name;         // "dp", "zero3", "tp", "pp2-1f1b", ...
  int ranks = 2;            // processes on each side
  std::string pytorchForm;  // peer.py's FORM
  std::string pytorchName;  // what the peer is, for the report
  double goal = 1.0;        // PyTorch's step time over Strata's, at least
  train::TrainConfig config;
  // PyTorch's form is known not to run on every CPU build (context parallel
  // on 2.11): its failure is reported in the row, not raised.
  bool pytorchMayFail = false;
};

// The model and training every row shares: a Llama (8 blocks; width 256 or,
// with `smoke`, 64), fp32, one thread a rank, AdamW at a constant rate, no
// clipping, global batch 16 of 128 tokens (32 with `smoke`).
train::TrainConfig peerBaseConfig(bool smoke);

// Every row, in the order they run: data parallel (the base model, and
// others of 2M and 17M parameters, but for `smoke`), ZeRO-3, tensor parallel,
// DeepSpeed's ZeRO-2 and ZeRO-3, context parallel, then each pipeline
// schedule at pp 2 and at pp 4.
std::vector<PeerRow> peerRows(const train::TrainConfig& base, bool smoke);

}  // namespace strata::bench
