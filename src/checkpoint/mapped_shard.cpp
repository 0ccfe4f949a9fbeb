#include "checkpoint/mapped_shard.h"

#include <caffe2/serialize/inline_container.h>
#include <caffe2/serialize/read_adapter_interface.h>
#include <torch/csrc/jit/serialization/unpickler.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "formats/mapped_file.h"
#include "strata/error.h"

namespace strata::train {
namespace {

// The container's reader over the mapping (it reads the zip directory and
// data.pkl through it; the tensors' records it never reads).
class MappedAdapter : public caffe2::serialize::ReadAdapterInterface {
 public:
  explicit MappedAdapter(const formats::MappedFile& file) : file_(file) {}
  size_t size() const override { return file_.size(); }
  size_t read(uint64_t pos, void* buf, size_t n, const char* = "") const override {
    if (pos >= file_.size()) return 0;
    size_t count = std::min<size_t>(n, file_.size() - pos);
    std::memcpy(buf, file_.data() + pos, count);
    return count;
  }

 private:
  const formats::MappedFile& file_;
};

// Each pickled object (a module of the archive) gets a class of its own,
// its attributes those its state holds: the archive's own class
// definitions (TorchScript source) are never compiled.
c10::intrusive_ptr<c10::ivalue::Object> objectOf(
    const std::shared_ptr<torch::jit::CompilationUnit>& unit, const at::StrongTypePtr& type,
    c10::IValue state) {
  auto cls = c10::ClassType::create(type.type_->expect<c10::ClassType>()->name(), unit);
  std::vector<c10::IValue> values;
  for (const auto& entry : state.toGenericDict()) {
    cls->addAttribute(entry.key().toStringRef(), entry.value().type());
    values.push_back(entry.value());
  }
  auto object = c10::ivalue::Object::create(at::StrongTypePtr(unit, cls), values.size());
  for (size_t i = 0; i < values.size(); ++i) object->setSlot(i, std::move(values[i]));
  return object;
}

}  // namespace

MappedShard::MappedShard(const std::string& path) : path_(path) {
  try {
    file_ = std::make_shared<formats::MappedFile>(path);
  } catch (const ConfigError& error) {
    throw CheckpointError("checkpoint shard " + std::string(error.what()));
  }
  try {
    caffe2::serialize::PyTorchStreamReader reader(std::make_unique<MappedAdapter>(*file_));
    auto [pickle, pickleSize] = reader.getRecord("data.pkl");
    const char* bytes = static_cast<const char*>(pickle.get());
    size_t at = 0;
    auto readPickle = [&](char* buffer, size_t n) {
      n = std::min(n, pickleSize - at);
      std::memcpy(buffer, bytes + at, n);
      at += n;
      return n;
    };
    auto unit = std::make_shared<torch::jit::CompilationUnit>();
    auto resolveType = [&](const c10::QualifiedName& name) {
      return c10::StrongTypePtr(unit, c10::ClassType::create(name, unit));
    };
    auto loadObject = [&](const at::StrongTypePtr& type, c10::IValue state) {
      return objectOf(unit, type, std::move(state));
    };
    std::shared_ptr<formats::MappedFile> file = file_;
    auto readRecord = [&](const std::string& name) {
      size_t offset = reader.getRecordOffset("data/" + name);
      // The storage holds the mapping: it outlives this shard while a view lives.
      auto* owner = new std::shared_ptr<formats::MappedFile>(file);
      void* data = const_cast<unsigned char*>(file->data() + offset);
      return at::DataPtr(
          data, owner,
          [](void* o) { delete static_cast<std::shared_ptr<formats::MappedFile>*>(o); },
          at::Device(at::kCPU));
    };
    torch::jit::Unpickler unpickler(readPickle, resolveType, loadObject, readRecord, c10::nullopt);
    root_ = unpickler.parse_ivalue();
  } catch (const c10::Error& error) {
    throw CheckpointError("checkpoint shard '" + path +
                          "' cannot be read: " + error.what_without_backtrace());
  }
}

std::optional<at::Tensor> MappedShard::tensor(const std::string& key) const {
  c10::IValue node = root_;
  size_t start = 0;
  while (true) {
    size_t slash = key.find('/', start);
    std::string name = key.substr(start, slash == std::string::npos ? slash : slash - start);
    if (!node.isObject()) return std::nullopt;
    const auto& object = node.toObjectRef();
    auto slot = object.type()->findAttributeSlot(name);
    if (!slot) return std::nullopt;
    node = object.getSlot(*slot);
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (!node.isTensor()) return std::nullopt;
  at::Tensor tensor = node.toTensor();
  // A record the archive's pickle sizes beyond the file would read past the
  // mapping (the shard's checksum, verified before, rules out a damaged file).
  const auto* begin = static_cast<const unsigned char*>(tensor.storage().data());
  if (begin < file_->data() || begin + tensor.storage().nbytes() > file_->data() + file_->size())
    throw CheckpointError("checkpoint shard '" + path_ + "': '" + key + "' lies outside the file");
  return tensor;
}

}  // namespace strata::train
