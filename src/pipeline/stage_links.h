// How activations and gradients travel between stages: to a stage of this
// process through a local mailbox (moved to the receiving stage's device), to
// a stage of another rank over the pp communicator.
//
// Every message is keyed by (sending stage, micro-batch, flow); the key is
// also the point-to-point tag, so messages never match the wrong receive.
// Every remote message carries a TensorHeader, so a receiver checks what it
// gets. Sends are posted asynchronously. Each send first lets go of the
// earlier ones already delivered (Work::isCompleted), so a rank holds the
// hand-offs still in flight rather than every one of the step (a middle
// stage of GPT-3 175B at pp 12, tp 8 and 192 micro-batches would otherwise
// keep 384 of them, 17.7 GiB); flush() waits for the rest. Remote receives
// are posted by a RecvPrefetcher from beginStep() on, in this rank's action
// order; recv* blocks until its message is in (bounded by the communicator's
// timeout). A local message that was never sent is a ProtocolError, which a
// validated schedule never triggers.
#pragma once

#include <ATen/core/Tensor.h>

#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "recv_prefetcher.h"
#include "strata/runtime/communicator.h"
#include "strata/schedule/schedule.h"

namespace strata::pipeline {

enum class Flow { kActivation = 0, kGradient = 1 };

class StageLinks {
 public:
  // `pp` may be null when every stage lives in this process.
  StageLinks(const schedule::Schedule& schedule, int rank, std::shared_ptr<Communicator> pp);

  // Starts receiving what this rank's actions `order` need from other ranks;
  // `deviceOf(stage)` is where a stage's inputs live.
  void beginStep(const std::vector<schedule::Action>& order,
                 const std::function<at::Device(int)>& deviceOf);
  // Activations go to fromStage + 1, gradients to fromStage - 1.
  void send(const at::Tensor& tensor, int fromStage, int microbatch, Flow flow);
  at::Tensor recvActivation(int fromStage, int microbatch, at::Device device);
  // A gradient must be shaped like the output it belongs to (else ProtocolError).
  at::Tensor recvGradient(int fromStage, int microbatch, const at::Tensor& like);
  // Waits for every posted send and for the step's receiving thread.
  void flush();

 private:
  using Key = std::tuple<int, int, int>;
  int toStage(int fromStage, Flow flow) const;
  bool isLocal(int stage) const;
  int tagOf(int fromStage, int microbatch, Flow flow) const;
  at::Tensor takeLocal(const Key& key);
  void releaseDelivered();

  const schedule::Schedule& schedule_;
  int rank_;
  std::shared_ptr<Communicator> pp_;
  std::map<Key, at::Tensor> mailbox_;
  std::unique_ptr<RecvPrefetcher> prefetcher_;  // null without remote stages
  struct PendingSend {
    WorkHandle work;
    at::Tensor buffer;  // kept alive until the send completes
  };
  std::vector<PendingSend> pending_;
};

}  // namespace strata::pipeline
