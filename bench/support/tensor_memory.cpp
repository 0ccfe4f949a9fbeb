#include "tensor_memory.h"

#include <c10/core/CPUAllocator.h>

#include <atomic>

namespace strata::bench {
namespace {

std::atomic<int64_t> live{0};
std::atomic<int64_t> peak{0};

void raisePeak(int64_t now) {
  int64_t seen = peak.load();
  while (now > seen && !peak.compare_exchange_weak(seen, now)) {
  }
}

// The wrapped allocation and its size, the context of the DataPtr handed out.
struct Allocation {
  c10::DataPtr inner;
  int64_t bytes;
};

void freeCounted(void* context) {
  auto* allocation = static_cast<Allocation*>(context);
  live -= allocation->bytes;
  delete allocation;  // frees the memory through the wrapped allocator's deleter
}

class CountingAllocator final : public c10::Allocator {
 public:
  explicit CountingAllocator(c10::Allocator* inner) : inner_(inner) {}
  c10::DataPtr allocate(size_t bytes) const override {
    c10::DataPtr data = inner_->allocate(bytes);
    void* pointer = data.get();
    c10::Device device = data.device();
    auto* allocation = new Allocation{std::move(data), static_cast<int64_t>(bytes)};
    raisePeak(live += allocation->bytes);
    return {pointer, allocation, &freeCounted, device};
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

}  // namespace strata::bench
