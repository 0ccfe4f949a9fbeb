#include "strata/runtime/communicator.h"

#include <ATen/ATen.h>

#include <sstream>

#include "strata/error.h"
#include "strata/runtime/tensor_header.h"

namespace strata {
namespace {

WireDtype toWire(at::ScalarType type) {
  switch (type) {
    case at::kFloat:
      return WireDtype::kFloat32;
    case at::kDouble:
      return WireDtype::kFloat64;
    case at::kHalf:
      return WireDtype::kFloat16;
    case at::kBFloat16:
      return WireDtype::kBFloat16;
    case at::kLong:
      return WireDtype::kInt64;
    case at::kInt:
      return WireDtype::kInt32;
    case at::kChar:
      return WireDtype::kInt8;
    case at::kByte:
      return WireDtype::kUInt8;
    case at::kBool:
      return WireDtype::kBool;
    default:
      throw Error(std::string("sendTensor cannot send dtype ") + c10::toString(type));
  }
}

at::ScalarType fromWire(WireDtype type) {
  switch (type) {
    case WireDtype::kFloat32:
      return at::kFloat;
    case WireDtype::kFloat64:
      return at::kDouble;
    case WireDtype::kFloat16:
      return at::kHalf;
    case WireDtype::kBFloat16:
      return at::kBFloat16;
    case WireDtype::kInt64:
      return at::kLong;
    case WireDtype::kInt32:
      return at::kInt;
    case WireDtype::kInt8:
      return at::kChar;
    case WireDtype::kUInt8:
      return at::kByte;
    case WireDtype::kBool:
      return at::kBool;
  }
  return at::kFloat;
}

class WorkPair : public Work {
 public:
  WorkPair(WorkHandle first, WorkHandle second)
      : first_(std::move(first)), second_(std::move(second)) {}
  void wait() override {
    first_->wait();
    second_->wait();
  }
  bool isCompleted() override { return first_->isCompleted() && second_->isCompleted(); }

 private:
  WorkHandle first_, second_;
};

// Waits for every piece of an all-to-all.
class WorkList : public Work {
 public:
  explicit WorkList(std::vector<WorkHandle> work) : work_(std::move(work)) {}
  void wait() override {
    for (WorkHandle& w : work_) w->wait();
  }
  bool isCompleted() override {
    for (WorkHandle& w : work_)
      if (!w->isCompleted()) return false;
    return true;
  }

 private:
  std::vector<WorkHandle> work_;
};

constexpr int kAllToAllTag = 0xa2a;

std::string shapeText(const at::Tensor& t) {
  std::ostringstream text;
  text << t.sizes();
  return text.str();
}

// Row offsets of each rank's piece; throws unless the splits cover `rows`.
std::vector<int64_t> offsetsOf(const std::vector<int64_t>& splits, int size, int64_t rows,
                               const char* what, const std::string& group) {
  if (static_cast<int>(splits.size()) != size)
    throw Error("all-to-all on " + group + ": " + what + " has " + std::to_string(splits.size()) +
                " splits for " + std::to_string(size) + " ranks");
  std::vector<int64_t> offsets(splits.size() + 1, 0);
  for (size_t i = 0; i < splits.size(); ++i) {
    if (splits[i] < 0)
      throw Error("all-to-all on " + group + ": " + what + " split " + std::to_string(i) +
                  " is negative (" + std::to_string(splits[i]) + ")");
    offsets[i + 1] = offsets[i] + splits[i];
  }
  if (offsets.back() != rows)
    throw Error("all-to-all on " + group + ": " + what + " splits add up to " +
                std::to_string(offsets.back()) + " rows, the tensor has " + std::to_string(rows));
  return offsets;
}

}  // namespace

at::Tensor Communicator::allocateCollectiveBuffer(int64_t numel, const at::TensorOptions& options) {
  return at::zeros({numel}, options);
}

void Communicator::allReduce(at::Tensor& tensor, ReduceOp op) {
  allReduceAsync(tensor, op)->wait();
}

void Communicator::broadcast(at::Tensor& tensor, int root) { broadcastAsync(tensor, root)->wait(); }

void Communicator::allGather(at::Tensor& output, const at::Tensor& input) {
  allGatherAsync(output, input)->wait();
}

void Communicator::reduceScatter(at::Tensor& output, const at::Tensor& input, ReduceOp op) {
  reduceScatterAsync(output, input, op)->wait();
}

void Communicator::send(const at::Tensor& tensor, int peer, int tag) {
  sendAsync(tensor, peer, tag)->wait();
}

void Communicator::recv(at::Tensor& tensor, int peer, int tag) {
  recvAsync(tensor, peer, tag)->wait();
}

WorkHandle Communicator::allToAllAsync(at::Tensor& output, const at::Tensor& input,
                                       const std::vector<int64_t>& outputSplits,
                                       const std::vector<int64_t>& inputSplits) {
  int n = size(), me = rank();
  if (!input.is_contiguous() || !output.is_contiguous() ||
      input.scalar_type() != output.scalar_type() || input.dim() != output.dim() ||
      input.sizes().slice(1) != output.sizes().slice(1))
    throw Error("all-to-all on " + name() + ": input " + shapeText(input) + " and output " +
                shapeText(output) + " must be contiguous, of one dtype and the same row shape");
  std::vector<int64_t> in = offsetsOf(inputSplits, n, input.size(0), "input", name());
  std::vector<int64_t> out = offsetsOf(outputSplits, n, output.size(0), "output", name());
  if (inputSplits[me] != outputSplits[me])
    throw Error("all-to-all on " + name() + ": rank " + std::to_string(me) + " sends itself " +
                std::to_string(inputSplits[me]) + " rows but expects " +
                std::to_string(outputSplits[me]));
  auto piece = [](const at::Tensor& t, const std::vector<int64_t>& at, int i) {
    return t.narrow(0, at[i], at[i + 1] - at[i]);
  };
  std::vector<WorkHandle> work;
  // Round o pairs each rank with the ranks o after and o before it; even
  // ranks send first so that no two neighbours both wait on a send.
  for (int offset = 1; offset < n; ++offset) {
    int to = (me + offset) % n, from = (me + n - offset) % n;
    bool sends = inputSplits[to] > 0, receives = outputSplits[from] > 0;
    at::Tensor incoming = piece(output, out, from);
    if (me % 2 == 0 && sends) work.push_back(sendAsync(piece(input, in, to), to, kAllToAllTag));
    if (receives) work.push_back(recvAsync(incoming, from, kAllToAllTag));
    if (me % 2 != 0 && sends) work.push_back(sendAsync(piece(input, in, to), to, kAllToAllTag));
  }
  piece(output, out, me).copy_(piece(input, in, me));
  return std::make_unique<WorkList>(std::move(work));
}

void Communicator::allToAll(at::Tensor& output, const at::Tensor& input,
                            const std::vector<int64_t>& outputSplits,
                            const std::vector<int64_t>& inputSplits) {
  allToAllAsync(output, input, outputSplits, inputSplits)->wait();
}

at::Tensor Communicator::exchangeCounts(const at::Tensor& counts, int64_t rowNumel) {
  if (counts.scalar_type() != at::kLong || counts.dim() != 2 || counts.size(0) != size())
    throw Error("exchangeCounts on " + name() + ": counts must be int64 [" +
                std::to_string(size()) + ", k], got " + shapeText(counts));
  at::Tensor sent = counts.contiguous();
  at::Tensor received = at::empty_like(sent);
  std::vector<int64_t> splits(static_cast<size_t>(size()), 1);  // one row of k per rank
  allToAll(received, sent, splits, splits);
  const int64_t* values = received.data_ptr<int64_t>();
  int64_t total = 0, limit = options().maxRecvElements;
  for (int from = 0; from < size(); ++from)
    for (int64_t j = 0; j < counts.size(1); ++j) {
      int64_t count = values[from * counts.size(1) + j];
      if (count < 0)
        throw ProtocolError(describePeer(from) + " announced " + std::to_string(count) +
                            " rows for slot " + std::to_string(j) + " of an all-to-all");
      total += count;
      if (rowNumel > 0 && total > limit / rowNumel)
        throw ProtocolError(describePeer(from) + " announced rows bringing an all-to-all to " +
                            std::to_string(total) + " rows of " + std::to_string(rowNumel) +
                            " elements, more than the " + std::to_string(limit) +
                            " elements this rank accepts");
    }
  return received;
}

WorkHandle Communicator::sendTensorAsync(const at::Tensor& tensor, int peer, int tag) {
  TensorHeader header;
  header.dtype = toWire(tensor.scalar_type());
  header.shape.assign(tensor.sizes().begin(), tensor.sizes().end());
  std::vector<int64_t> words = header.encode();
  at::Tensor wire = at::tensor(words, at::kLong).to(tensor.device());
  WorkHandle headerWork = sendAsync(wire, peer, tag);
  return std::make_unique<WorkPair>(std::move(headerWork), sendAsync(tensor, peer, tag));
}

void Communicator::sendTensor(const at::Tensor& tensor, int peer, int tag) {
  sendTensorAsync(tensor, peer, tag)->wait();
}

at::Tensor Communicator::recvTensor(int peer, int tag, at::Device device) {
  at::Tensor wire = at::empty({TensorHeader::kWords}, at::TensorOptions(at::kLong).device(device));
  recv(wire, peer, tag);
  at::Tensor words = wire.cpu();
  TensorHeader header = TensorHeader::decode(words.data_ptr<int64_t>(), options().maxRecvElements,
                                             describePeer(peer));
  at::Tensor payload =
      at::empty(header.shape, at::TensorOptions(fromWire(header.dtype)).device(device));
  recv(payload, peer, tag);
  return payload;
}

std::string Communicator::describePeer(int peer) const {
  std::string global =
      peer >= 0 && peer < size() ? " (global " + std::to_string(globalRanks()[peer]) + ")" : "";
  return "rank " + std::to_string(peer) + global + " of " + name();
}

}  // namespace strata
