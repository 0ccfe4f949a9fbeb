#include "stage_links.h"

#include <torch/torch.h>

#include <string>

#include "strata/runtime/error.h"

namespace strata::pipeline {

StageLinks::StageLinks(const schedule::Schedule& schedule, int rank,
                       std::shared_ptr<Communicator> pp)
    : schedule_(schedule), rank_(rank), pp_(std::move(pp)) {}

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
  int peer = schedule_.rankOf(to);
  int tag = tagOf(fromStage, microbatch, flow);
  WorkHandle work = flow == Flow::kActivation ? pp_->sendTensorAsync(payload, peer, tag)
                                              : pp_->sendAsync(payload, peer, tag);
  pending_.push_back(PendingSend{std::move(work), payload});
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
    return takeLocal(Key{fromStage, microbatch, static_cast<int>(Flow::kActivation)}).to(device);
  }
  return pp_->recvTensor(schedule_.rankOf(fromStage),
                         tagOf(fromStage, microbatch, Flow::kActivation), device);
}

at::Tensor StageLinks::recvGradient(int fromStage, int microbatch, const at::Tensor& like) {
  if (isLocal(fromStage)) {
    return takeLocal(Key{fromStage, microbatch, static_cast<int>(Flow::kGradient)})
        .to(like.device());
  }
  at::Tensor grad = at::empty_like(like, at::MemoryFormat::Contiguous);
  pp_->recv(grad, schedule_.rankOf(fromStage), tagOf(fromStage, microbatch, Flow::kGradient));
  return grad;
}

void StageLinks::flush() {
  for (PendingSend& send : pending_) send.work->wait();
  pending_.clear();
}

}  // namespace strata::pipeline
