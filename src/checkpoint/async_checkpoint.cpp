#include "strata/checkpoint/async_checkpoint.h"

#include <torch/torch.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "checkpoint/agreed_problem.h"
#include "checkpoint/checkpoint_shard.h"
#include "checkpoint/save_stages.h"
#include "formats/atomic_file.h"
#include "runtime/sha256.h"
#include "strata/runtime/communicator.h"

namespace strata::train {

struct AsyncCheckpoint::Save {
  SaveTicket ticket;
  ShardRecord record;
  // The shard with copies of its tensors (snapshotShard), until written.
  std::unique_ptr<ShardSnapshot> snapshot;
  std::string problem;  // why this rank's shard is not durable; empty when it is
  std::atomic<bool> written{false};
  std::thread writer;

  ~Save() {
    if (writer.joinable()) writer.join();
  }

  // On the writer thread.
  void write() {
    problem = attempt([&] {
      formats::AtomicFileWriter file(
          (std::filesystem::path(ticket.stepDir) / record.file).string());
      Sha256 hash;
      int64_t bytes = 0;
      writeShardArchive(*snapshot->archive, [&](const void* data, size_t size) {
        file.write(data, size);
        hash.update(data, size);
        bytes += static_cast<int64_t>(size);
      });
      file.commit();
      record.bytes = bytes;
      record.sha256 = hash.hexDigest();
    });
    snapshot.reset();  // the copies' memory goes back at once
    written.store(true, std::memory_order_release);
  }
};

AsyncCheckpoint::AsyncCheckpoint() = default;
AsyncCheckpoint::~AsyncCheckpoint() = default;

bool AsyncCheckpoint::inFlight() const { return save_ != nullptr; }

int64_t AsyncCheckpoint::step() const {
  if (!save_) throw Error("AsyncCheckpoint::step: no save is in flight");
  return save_->ticket.step;
}

void AsyncCheckpoint::start(const std::string& dir, int64_t step, const ParallelLayout& layout,
                            const std::string& configToml, const RankState& state,
                            Communicator& world) {
  if (save_) {
    throw Error("cannot start the checkpoint of step " + std::to_string(step) +
                ": the save of step " + std::to_string(save_->ticket.step) +
                " is still in flight (finish it first)");
  }
  auto save = std::make_unique<Save>();
  save->ticket = beginSave(dir, step, layout, configToml, state, world);
  save->record = unwrittenShard(world.rank());
  // A snapshot that fails (out of memory) is reported when the save
  // completes, by every rank alike, like a failed write.
  save->problem = attempt([&] { save->snapshot = snapshotShard(state); });
  if (save->problem.empty()) {
    Save* running = save.get();
    save->writer = std::thread([running] { running->write(); });
  } else {
    save->written.store(true, std::memory_order_release);
  }
  save_ = std::move(save);
}

std::optional<int64_t> AsyncCheckpoint::poll(Communicator& world) {
  if (!save_) return std::nullopt;
  at::Tensor allWritten =
      torch::full({1}, save_->written.load(std::memory_order_acquire) ? 1 : 0, torch::kInt);
  world.allReduce(allWritten, ReduceOp::kMin);
  if (allWritten.item<int>() == 0) return std::nullopt;
  return finish(world);
}

std::optional<int64_t> AsyncCheckpoint::finish(Communicator& world) {
  if (!save_) return std::nullopt;
  std::unique_ptr<Save> save = std::move(save_);  // no longer in flight, whatever happens
  if (save->writer.joinable()) save->writer.join();
  completeSave(save->ticket, save->record, save->problem, world);
  return save->ticket.step;
}

}  // namespace strata::train
