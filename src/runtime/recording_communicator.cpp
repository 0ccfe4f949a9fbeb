#include "recording_communicator.h"

#include <atomic>
#include <vector>

#include "strata/error.h"

namespace strata {
namespace {

// Marks the record when the wrapped work's wait ends, however it ends.
class RecordedWork : public Work {
 public:
  RecordedWork(WorkHandle inner, FlightRecord* record)
      : inner_(std::move(inner)), record_(record) {}
  void wait() override {
    try {
      inner_->wait();
    } catch (const TimeoutError&) {
      FlightRecorder::finish(record_, FlightState::kTimedOut);
      throw;
    } catch (...) {
      FlightRecorder::finish(record_, FlightState::kFailed);
      throw;
    }
    FlightRecorder::finish(record_, FlightState::kCompleted);
  }
  bool isCompleted() override { return inner_->isCompleted(); }

 private:
  WorkHandle inner_;
  FlightRecord* record_;
};

class RecordingCommunicator : public Communicator {
 public:
  RecordingCommunicator(std::shared_ptr<Communicator> inner,
                        std::shared_ptr<FlightRecorder> recorder)
      : inner_(std::move(inner)),
        recorder_(std::move(recorder)),
        sends_(inner_->size()),
        recvs_(inner_->size()) {}

  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  const std::string& name() const override { return inner_->name(); }
  const std::vector<int>& globalRanks() const override { return inner_->globalRanks(); }
  const char* backend() const override { return inner_->backend(); }
  const CommOptions& options() const override { return inner_->options(); }

  WorkHandle allReduceAsync(at::Tensor& tensor, ReduceOp op) override {
    FlightRecord* r = collective(FlightOp::kAllReduce, tensor);
    return started(r, [&] { return inner_->allReduceAsync(tensor, op); });
  }
  WorkHandle broadcastAsync(at::Tensor& tensor, int root) override {
    FlightRecord* r = collective(FlightOp::kBroadcast, tensor);
    return started(r, [&] { return inner_->broadcastAsync(tensor, root); });
  }
  WorkHandle allGatherAsync(at::Tensor& output, const at::Tensor& input) override {
    FlightRecord* r = collective(FlightOp::kAllGather, input);
    return started(r, [&] { return inner_->allGatherAsync(output, input); });
  }
  WorkHandle reduceScatterAsync(at::Tensor& output, const at::Tensor& input, ReduceOp op) override {
    FlightRecord* r = collective(FlightOp::kReduceScatter, input);
    return started(r, [&] { return inner_->reduceScatterAsync(output, input, op); });
  }
  WorkHandle sendAsync(const at::Tensor& tensor, int peer, int tag) override {
    FlightRecord* r = message(FlightOp::kSend, tensor, peer, sends_);
    return started(r, [&] { return inner_->sendAsync(tensor, peer, tag); });
  }
  WorkHandle recvAsync(at::Tensor& tensor, int peer, int tag) override {
    FlightRecord* r = message(FlightOp::kRecv, tensor, peer, recvs_);
    return started(r, [&] { return inner_->recvAsync(tensor, peer, tag); });
  }
  WorkHandle allToAllAsync(at::Tensor& output, const at::Tensor& input,
                           const std::vector<int64_t>& outputSplits,
                           const std::vector<int64_t>& inputSplits) override {
    FlightRecord* r = collective(FlightOp::kAllToAll, input);
    return started(r,
                   [&] { return inner_->allToAllAsync(output, input, outputSplits, inputSplits); });
  }
  void barrier() override {
    FlightRecord* r = issue(FlightOp::kBarrier, ++collectives_, 0, 0, -1);
    RecordedWork work(std::make_unique<BarrierWork>(*inner_), r);
    work.wait();
  }
  at::Tensor allocateCollectiveBuffer(int64_t numel, const at::TensorOptions& options) override {
    return inner_->allocateCollectiveBuffer(numel, options);
  }

 private:
  // The wrapped communicator's barrier() as a Work, so it is marked alike.
  class BarrierWork : public Work {
   public:
    explicit BarrierWork(Communicator& comm) : comm_(comm) {}
    void wait() override {
      comm_.barrier();
      done_ = true;
    }
    bool isCompleted() override { return done_; }  // the barrier runs in wait()

   private:
    Communicator& comm_;
    bool done_ = false;
  };

  FlightRecord* issue(FlightOp op, uint64_t sequence, int64_t numel, uint8_t dtype, int peer) {
    return recorder_->issue(inner_->name(), inner_->rank(), inner_->size(), sequence, op, numel,
                            dtype, peer);
  }
  FlightRecord* collective(FlightOp op, const at::Tensor& t) {
    return issue(op, ++collectives_, t.numel(), static_cast<uint8_t>(t.scalar_type()), -1);
  }
  FlightRecord* message(FlightOp op, const at::Tensor& t, int peer,
                        std::vector<std::atomic<uint64_t>>& counts) {
    uint64_t sequence = peer >= 0 && peer < size() ? ++counts[peer] : 0;
    return issue(op, sequence, t.numel(), static_cast<uint8_t>(t.scalar_type()), peer);
  }
  // A start that throws (a misuse the inner communicator refuses) fails its record.
  template <typename Start>
  static WorkHandle started(FlightRecord* r, Start&& start) {
    try {
      return std::make_unique<RecordedWork>(start(), r);
    } catch (...) {
      FlightRecorder::finish(r, FlightState::kFailed);
      throw;
    }
  }

  std::shared_ptr<Communicator> inner_;
  std::shared_ptr<FlightRecorder> recorder_;
  std::atomic<uint64_t> collectives_{0};
  std::vector<std::atomic<uint64_t>> sends_, recvs_;
};

}  // namespace

std::shared_ptr<Communicator> recordFlight(std::shared_ptr<Communicator> inner,
                                           std::shared_ptr<FlightRecorder> recorder) {
  return std::make_shared<RecordingCommunicator>(std::move(inner), std::move(recorder));
}

}  // namespace strata
