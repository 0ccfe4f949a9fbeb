#include "stage_links.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>

#include "device_copy.h"
#include "strata/error.h"

namespace strata::pipeline {

StageLinks::StageLinks(const schedule::Schedule& schedule, int rank,
                       std::shared_ptr<Communicator> pp)
    : schedule_(schedule), rank_(rank), pp_(std::move(pp)) {
  if (pp_) prefetcher_ = std::make_unique<RecvPrefetcher>(pp_);
}

void StageLinks::beginStep(const std::vector<schedule::Action>& order,
                           const std::function<at::Device(int)>& deviceOf) {
  if (!prefetcher_) return;
  std::vector<RecvPrefetcher::Expected> expected;
  for (const schedule::Action& action : order) {
    int s = action.stage;
    bool needsActivation = action.kind == schedule::ActionKind::kForward && s > 0;
    bool needsGradient = (action.kind == schedule::ActionKind::kBackward ||
                          action.kind == schedule::ActionKind::kBackwardInput) &&
                         s + 1 < schedule_.stages();
    if (!needsActivation && !needsGradient) continue;
    int from = needsActivation ? s - 1 : s + 1;
    if (isLocal(from)) continue;
    Flow flow = needsActivation ? Flow::kActivation : Flow::kGradient;
    expected.push_back({schedule_.rankOf(from), tagOf(from, action.microbatch, flow), deviceOf(s)});
  }
  prefetcher_->start(std::move(expected));
}

int StageLinks::toStage(int fromStage, Flow flow) const {
  return flow == Flow::kActivation ? fromStage + 1 : fromStage - 1;
}

bool StageLinks::isLocal(int stage) const { return !pp_ || schedule_.rankOf(stage) == rank_; }

// tag = 2 * (m * S + s) + flow: unique per (sending stage, micro-batch,
// direction) within a step; steps reuse tags, which is safe because messages
// on one (peer, tag) pair arrive in order.
int StageLinks::tagOf(int fromStage, int microbatch, Flow flow) const {
  return 2 * (microbatch * schedule_.stages() + fromStage) + static_cast<int>(flow);
}

void StageLinks::send(const at::Tensor& tensor, int fromStage, int microbatch, Flow flow) {
  int to = toStage(fromStage, flow);
  at::Tensor payload = tensor.detach();
  if (isLocal(to)) {
    mailbox_[Key{fromStage, microbatch, static_cast<int>(flow)}] = payload;
    return;
  }
  payload = payload.contiguous();
  releaseDelivered();
  int peer = schedule_.rankOf(to);
  int tag = tagOf(fromStage, microbatch, flow);
  pending_.push_back(PendingSend{pp_->sendTensorAsync(payload, peer, tag), payload});
}

void StageLinks::releaseDelivered() {
  auto delivered = [](PendingSend& send) {
    if (!send.work->isCompleted()) return false;
    send.work->wait();  // returns at once, or throws what the send hit
    return true;
  };
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), delivered), pending_.end());
}

at::Tensor StageLinks::takeLocal(const Key& key) {
  auto it = mailbox_.find(key);
  if (it == mailbox_.end()) {
    throw ProtocolError("pipeline: no local message from stage " +
                        std::to_string(std::get<0>(key)) + " for micro-batch " +
                        std::to_string(std::get<1>(key)));
  }
  at::Tensor tensor = it->second;
  mailbox_.erase(it);
  return tensor;
}

at::Tensor StageLinks::recvActivation(int fromStage, int microbatch, at::Device device) {
  if (isLocal(fromStage)) {
    return toStageDevice(takeLocal(Key{fromStage, microbatch, static_cast<int>(Flow::kActivation)}),
                         device);
  }
  return prefetcher_->take(tagOf(fromStage, microbatch, Flow::kActivation));
}

at::Tensor StageLinks::recvGradient(int fromStage, int microbatch, const at::Tensor& like) {
  if (isLocal(fromStage)) {
    return toStageDevice(takeLocal(Key{fromStage, microbatch, static_cast<int>(Flow::kGradient)}),
                         like.device());
  }
  at::Tensor grad = prefetcher_->take(tagOf(fromStage, microbatch, Flow::kGradient));
  if (grad.sizes() != like.sizes() || grad.scalar_type() != like.scalar_type()) {
    throw ProtocolError("pipeline: stage " + std::to_string(fromStage) +
                        " sent a gradient for micro-batch " + std::to_string(microbatch) +
                        " that does not match the output it belongs to (" + grad.toString() + " " +
                        c10::str(grad.sizes()) + " vs " + like.toString() + " " +
                        c10::str(like.sizes()) + ")");
  }
  return grad;
}

void StageLinks::flush() {
  for (PendingSend& send : pending_) send.work->wait();
  pending_.clear();
  if (prefetcher_) prefetcher_->finish();
}

}  // namespace strata::pipeline
