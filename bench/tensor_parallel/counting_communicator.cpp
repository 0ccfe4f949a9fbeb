#include "counting_communicator.h"

#include <ATen/ATen.h>

namespace strata::bench {
namespace {

using Clock = std::chrono::steady_clock;

class TimedWork : public Work {
 public:
  TimedWork(WorkHandle inner, Clock::time_point start, double* seconds)
      : inner_(std::move(inner)), start_(start), seconds_(seconds) {}
  void wait() override {
    inner_->wait();
    *seconds_ += std::chrono::duration<double>(Clock::now() - start_).count();
  }
  bool isCompleted() override { return inner_->isCompleted(); }

 private:
  WorkHandle inner_;
  Clock::time_point start_;
  double* seconds_;
};

int64_t bytesOf(const at::Tensor& t) { return t.numel() * t.element_size(); }

}  // namespace

CountingCommunicator::CountingCommunicator(std::shared_ptr<Communicator> inner)
    : inner_(std::move(inner)) {}

void CountingCommunicator::reset() {
  bytes_ = 0;
  calls_ = 0;
  seconds_ = 0;
}

WorkHandle CountingCommunicator::timed(WorkHandle work, Clock::time_point start, int64_t bytes) {
  bytes_ += bytes;
  ++calls_;
  return std::make_unique<TimedWork>(std::move(work), start, &seconds_);
}

WorkHandle CountingCommunicator::allReduceAsync(at::Tensor& tensor, ReduceOp op) {
  auto start = Clock::now();
  return timed(inner_->allReduceAsync(tensor, op), start, bytesOf(tensor));
}

WorkHandle CountingCommunicator::broadcastAsync(at::Tensor& tensor, int root) {
  auto start = Clock::now();
  return timed(inner_->broadcastAsync(tensor, root), start, bytesOf(tensor));
}

WorkHandle CountingCommunicator::allGatherAsync(at::Tensor& output, const at::Tensor& input) {
  auto start = Clock::now();
  return timed(inner_->allGatherAsync(output, input), start, bytesOf(output));
}

WorkHandle CountingCommunicator::reduceScatterAsync(at::Tensor& output, const at::Tensor& input,
                                                    ReduceOp op) {
  auto start = Clock::now();
  return timed(inner_->reduceScatterAsync(output, input, op), start, bytesOf(input));
}

WorkHandle CountingCommunicator::sendAsync(const at::Tensor& tensor, int peer, int tag) {
  auto start = Clock::now();
  return timed(inner_->sendAsync(tensor, peer, tag), start, bytesOf(tensor));
}

WorkHandle CountingCommunicator::recvAsync(at::Tensor& tensor, int peer, int tag) {
  auto start = Clock::now();
  return timed(inner_->recvAsync(tensor, peer, tag), start, bytesOf(tensor));
}

}  // namespace strata::bench
