#include "strata/report/tensor_memory.h"

#include <c10/core/CPUAllocator.h>

#include <atomic>
#include <mutex>
#include <unordered_map>

#include "runtime/torch_version.h"

namespace strata::train {
namespace {

std::atomic<int64_t> live{0};
std::atomic<int64_t> peak{0};

void raisePeak(int64_t now) {
  int64_t seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
}

// Every counted block in use, by data pointer: the data pointer is also the
// context, so that LibTorch's raw interface (raw_allocate, which some of its
// own code calls) works through the counter. Never destroyed, as tensors may
// be freed during static destruction.
struct Counted {
  std::mutex mutex;
  std::unordered_map<void*, std::pair<c10::DataPtr, int64_t>> blocks;
};

Counted& counted() {
  static auto* blocks = new Counted;
  return *blocks;
}

void freeCounted(void* data) {
  c10::DataPtr inner;  // frees through the wrapped allocator's deleter when it goes
  {
    Counted& all = counted();
    std::lock_guard<std::mutex> lock(all.mutex);
    auto it = all.blocks.find(data);
    if (it == all.blocks.end()) return;
    inner = std::move(it->second.first);
    live -= it->second.second;
    all.blocks.erase(it);
  }
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(size_t bytes) override {
    c10::DataPtr data = inner_->allocate(bytes);
    void* pointer = data.get();
    if (pointer == nullptr) return data;  // nothing to count (zero bytes)
    c10::Device device = data.device();
    {
      Counted& all = counted();
      std::lock_guard<std::mutex> lock(all.mutex);
      all.blocks.emplace(pointer, std::make_pair(std::move(data), static_cast<int64_t>(bytes)));
    }
    raisePeak(live += static_cast<int64_t>(bytes));
    return {pointer, pointer, &freeCounted, device};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &freeCounted; }
  void copy_data(void* dest, const void* src, size_t bytes) const override {
    default_copy_data(dest, src, bytes);
  }

 private:
  c10::Allocator* inner_;
};

}  // namespace

void installTensorMemoryCounter() {
  // Priority 1 outranks the default allocator's registration (0).
  static CountingAllocator counting(c10::GetCPUAllocator());
  c10::SetCPUAllocator(&counting, 1);
}

int64_t liveTensorBytes() { return live.load(); }
int64_t peakTensorBytes() { return peak.load(); }
void resetPeakTensorBytes() { peak = live.load(); }

}  // namespace strata::train
