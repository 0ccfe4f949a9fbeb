#include "strata/runtime/communicator.h"

#include <ATen/ATen.h>

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

 private:
  WorkHandle first_, second_;
};

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
