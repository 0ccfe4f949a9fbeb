#include "runtime/shm/shm_group_segment.h"

#include <ATen/ATen.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <random>

#include "strata/error.h"

namespace strata {
namespace {

// POSIX allows short names only; 63 characters and the terminator.
constexpr int kNameBytes = 64;

std::string freshSegmentName(const std::string& purpose) {
  std::random_device random;
  std::string name = "/strata-" + std::to_string(getpid()) + "-" + std::to_string(random());
  for (char c : purpose) name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name.substr(0, kNameBytes - 1);
}

}  // namespace

GroupSegment mapSegmentTogether(Communicator& group, std::size_t bytes,
                                const std::string& purpose) {
  GroupSegment result;
  at::Tensor nameBytes = at::zeros({kNameBytes}, at::kByte);
  if (group.rank() == 0) {
    std::string name = freshSegmentName(purpose);
    try {
      result.segment = SharedSegment::create(name, bytes);
      std::copy(name.begin(), name.end(), nameBytes.data_ptr<uint8_t>());
    } catch (const ConfigError& e) {
      result.problem = e.what();
    }
  }
  group.broadcast(nameBytes, 0);
  std::string name(reinterpret_cast<const char*>(nameBytes.data_ptr<uint8_t>()));
  if (group.rank() != 0 && !name.empty()) {
    try {
      result.segment = SharedSegment::open(name, bytes);
    } catch (const ConfigError& e) {
      result.problem = e.what();
    }
  }
  at::Tensor mapped = at::full({1}, result.segment ? 1 : 0, at::kInt);
  group.allReduce(mapped, ReduceOp::kMin);
  if (group.rank() == 0 && result.segment) result.segment->unlink();
  if (mapped.item<int>() == 0) result.segment.reset();
  return result;
}

}  // namespace strata
