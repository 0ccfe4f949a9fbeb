#include "strata/formats/safetensors.h"

#include <torch/torch.h>

#include <nlohmann/json.hpp>

#include "formats/atomic_file.h"
#include "formats/mapped_file.h"

namespace strata::formats {
namespace {

// The format stores little-endian bytes; tensors are written and viewed as
// they are in memory, which is only right on a little-endian host.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors I/O assumes little-endian");

// The header is padded with spaces to this multiple, as Hugging Face's
// writer does, so every tensor's data starts 8-byte aligned.
constexpr size_t kHeaderAlignment = 8;
// A header larger than this is corrupt rather than large (the reference
// implementation's own limit).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

const std::vector<std::pair<std::string, at::ScalarType>>& dtypeNames() {
  static const std::vector<std::pair<std::string, at::ScalarType>> names = {
      {"F64", at::kDouble}, {"F32", at::kFloat}, {"F16", at::kHalf},  {"BF16", at::kBFloat16},
      {"I64", at::kLong},   {"I32", at::kInt},   {"I16", at::kShort}, {"I8", at::kChar},
      {"U8", at::kByte},    {"BOOL", at::kBool}};
  return names;
}

std::string nameOf(at::ScalarType type, const std::string& tensor) {
  for (const auto& [name, t] : dtypeNames())
    if (t == type) return name;
  throw SafetensorsError("tensor '" + tensor + "' has dtype " + std::string(c10::toString(type)) +
                         ", which safetensors has no name for");
}

const at::ScalarType* typeOf(const std::string& name) {
  for (const auto& entry : dtypeNames())
    if (entry.first == name) return &entry.second;
  return nullptr;
}

std::string littleEndian64(uint64_t value) {
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i) bytes[static_cast<size_t>(i)] = static_cast<char>(value >> (8 * i));
  return bytes;
}

class HeaderParser {
 public:
  explicit HeaderParser(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw SafetensorsError("safetensors file '" + path_ + "': " + problem);
  }

  SafetensorsEntry entry(const std::string& name, const nlohmann::json& value,
                         int64_t dataBytes) const {
    std::string where = "tensor '" + name + "'";
    if (!value.is_object()) fail(where + " is not a JSON object in the header");
    SafetensorsEntry e;
    if (!value.contains("dtype") || !value["dtype"].is_string())
      fail(where + " has no \"dtype\" string");
    e.dtype = value["dtype"].get<std::string>();
    const at::ScalarType* type = typeOf(e.dtype);
    if (!type) fail(where + " has unknown dtype '" + e.dtype + "'");
    if (!value.contains("shape") || !value["shape"].is_array())
      fail(where + " has no \"shape\" array");
    int64_t elements = 1;
    for (const nlohmann::json& d : value["shape"]) {
      if (!d.is_number_unsigned())
        fail(where + " has a shape entry that is not a size: " + d.dump());
      e.shape.push_back(d.get<int64_t>());
      elements *= e.shape.back();
    }
    const nlohmann::json* offsets =
        value.contains("data_offsets") ? &value["data_offsets"] : nullptr;
    if (!offsets || !offsets->is_array() || offsets->size() != 2 ||
        !(*offsets)[0].is_number_unsigned() || !(*offsets)[1].is_number_unsigned())
      fail(where + " has no \"data_offsets\" pair");
    e.begin = (*offsets)[0].get<int64_t>();
    e.end = (*offsets)[1].get<int64_t>();
    if (e.begin > e.end || e.end > dataBytes)
      fail(where + " has data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
           ") outside the " + std::to_string(dataBytes) + " data bytes");
    int64_t expected = elements * static_cast<int64_t>(c10::elementSize(*type));
    if (e.end - e.begin != expected)
      fail(where + " has " + std::to_string(e.end - e.begin) + " data bytes, its dtype " + e.dtype +
           " and shape need " + std::to_string(expected));
    return e;
  }

 private:
  std::string path_;
};

}  // namespace

void writeSafetensors(const std::string& path,
                      const std::vector<std::pair<std::string, at::Tensor>>& tensors,
                      const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<at::Tensor> data;
  int64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    data.push_back(tensor.detach().to(at::kCPU).contiguous());
    int64_t bytes = data.back().numel() * static_cast<int64_t>(data.back().element_size());
    header[name] = {{"dtype", nameOf(tensor.scalar_type(), name)},
                    {"shape", tensor.sizes().vec()},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((kHeaderAlignment - text.size() % kHeaderAlignment) % kHeaderAlignment, ' ');
  AtomicFileWriter out(path);
  out.write(littleEndian64(text.size()).data(), 8);
  out.write(text.data(), text.size());
  for (const at::Tensor& t : data)
    out.write(t.data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
  out.commit();
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  HeaderParser parser(path);
  try {
    file_ = std::make_unique<MappedFile>(path);
  } catch (const ConfigError& error) {
    throw SafetensorsError(std::string("safetensors file: ") + error.what());
  }
  uint64_t size = file_->size();
  if (size < 8)
    parser.fail("is " + std::to_string(size) + " bytes, shorter than its 8-byte header length");
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i) headerBytes = (headerBytes << 8) | file_->data()[i];
  if (headerBytes > kMaxHeaderBytes || headerBytes > size - 8)
    parser.fail("header length " + std::to_string(headerBytes) +
                " runs past the end of the file (" + std::to_string(size) + " bytes)");
  dataStart_ = static_cast<int64_t>(8 + headerBytes);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(file_->data() + 8, file_->data() + dataStart_);
  } catch (const nlohmann::json::exception& error) {
    parser.fail(std::string("header is not valid JSON: ") + error.what());
  }
  if (!header.is_object()) parser.fail("header is not a JSON object");
  int64_t dataBytes = static_cast<int64_t>(size) - dataStart_;
  for (const auto& [name, value] : header.items()) {
    if (name != "__metadata__") {
      entries_[name] = parser.entry(name, value, dataBytes);
      continue;
    }
    if (!value.is_object()) parser.fail("\"__metadata__\" is not a JSON object");
    for (const auto& [key, text] : value.items()) {
      if (!text.is_string()) parser.fail("\"__metadata__\" entry '" + key + "' is not a string");
      metadata_[key] = text.get<std::string>();
    }
  }
}

SafetensorsFile::~SafetensorsFile() = default;

at::Tensor SafetensorsFile::view(const std::string& name) const {
  auto found = entries_.find(name);
  if (found == entries_.end())
    throw SafetensorsError("safetensors file '" + path_ + "' has no tensor '" + name + "'");
  const SafetensorsEntry& e = found->second;
  void* bytes = const_cast<unsigned char*>(file_->data()) + dataStart_ + e.begin;
  return torch::from_blob(bytes, e.shape, torch::TensorOptions().dtype(*typeOf(e.dtype)));
}

}  // namespace strata::formats
