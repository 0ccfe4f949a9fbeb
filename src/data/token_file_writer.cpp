#include "data/token_file_writer.h"

#include <cstdio>
#include <cstring>
#include <filesystem>

#include "runtime/sha256.h"
#include "strata/data/prepared_data.h"
#include "strata/error.h"

namespace strata::train {
namespace {

void checkWritten(const std::ofstream& out, const std::string& path) {
  if (!out) throw ConfigError(path + ": cannot write (disk full or not writable?)");
}

template <typename T>
void put(std::vector<unsigned char>& bytes, T value) {
  unsigned char raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  bytes.insert(bytes.end(), raw, raw + sizeof(T));
}

void rename(const std::string& from, const std::string& to) {
  std::error_code error;
  std::filesystem::rename(from, to, error);
  if (error) throw ConfigError(to + ": cannot rename " + from + " to it: " + error.message());
}

template <typename T>
std::vector<unsigned char> pack(const std::vector<int64_t>& ids, int64_t vocabSize) {
  std::vector<unsigned char> bytes(ids.size() * sizeof(T));
  for (size_t i = 0; i < ids.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= vocabSize)
      throw ConfigError("token " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                        " is outside the vocabulary of " + std::to_string(vocabSize));
    auto value = static_cast<T>(ids[i]);
    std::memcpy(bytes.data() + i * sizeof(T), &value, sizeof(T));
  }
  return bytes;
}

}  // namespace

std::vector<unsigned char> packTokens(const std::vector<int64_t>& ids, int width,
                                      int64_t vocabSize) {
  return width == 2 ? pack<uint16_t>(ids, vocabSize) : pack<uint32_t>(ids, vocabSize);
}

TokenFileWriter::TokenFileWriter(std::string prefix, int width, int64_t vocabSize, bool lossMask)
    : prefix_(std::move(prefix)), width_(width), vocabSize_(vocabSize), lossMask_(lossMask) {
  if (width_ != 2 && width_ != 4)
    throw ConfigError("token width must be 2 or 4 bytes, got " + std::to_string(width_));
  if (vocabSize_ > (int64_t{1} << (8 * width_)))
    throw ConfigError("a vocabulary of " + std::to_string(vocabSize_) +
                      " ids does not fit tokens of " + std::to_string(width_) + " bytes (at most " +
                      std::to_string(int64_t{1} << (8 * width_)) + " ids)");
  std::filesystem::path folder = std::filesystem::path(prefix_).parent_path();
  std::error_code error;
  if (!folder.empty()) std::filesystem::create_directories(folder, error);
  if (error) throw ConfigError(folder.string() + ": cannot create: " + error.message());
  bin_.open(prefix_ + ".bin.partial", std::ios::binary | std::ios::trunc);
  checkWritten(bin_, prefix_ + ".bin.partial");
  if (lossMask_) {
    mask_.open(prefix_ + ".mask.partial", std::ios::binary | std::ios::trunc);
    std::vector<unsigned char> header(kLossMaskMagic, kLossMaskMagic + 8);
    put<uint32_t>(header, kLossMaskVersion);
    put<uint32_t>(header, 0);
    put<uint64_t>(header, 0);  // the token count, written by finish()
    mask_.write(reinterpret_cast<const char*>(header.data()),
                static_cast<std::streamsize>(header.size()));
    checkWritten(mask_, prefix_ + ".mask.partial");
  }
}

void TokenFileWriter::appendLossMask(const std::vector<uint8_t>& mask) {
  if (!lossMask_) throw ConfigError(prefix_ + ": this writer writes no loss mask");
  mask_.write(reinterpret_cast<const char*>(mask.data()),
              static_cast<std::streamsize>(mask.size()));
  checkWritten(mask_, prefix_ + ".mask.partial");
  maskTokens_ += mask.size();
}

void TokenFileWriter::append(const std::vector<int64_t>& document) {
  std::vector<unsigned char> bytes;
  try {
    bytes = packTokens(document, width_, vocabSize_);
  } catch (const ConfigError& e) {
    throw ConfigError(prefix_ + ".bin: document " + std::to_string(documents()) + ": " + e.what());
  }
  appendPacked(bytes.data(), bytes.size());
}

void TokenFileWriter::appendPacked(const unsigned char* bytes, size_t size) {
  bin_.write(reinterpret_cast<const char*>(bytes), static_cast<std::streamsize>(size));
  checkWritten(bin_, prefix_ + ".bin.partial");
  starts_.push_back(starts_.back() + size / static_cast<size_t>(width_));
}

void TokenFileWriter::finish() {
  bin_.close();
  checkWritten(bin_, prefix_ + ".bin.partial");
  std::vector<unsigned char> header(kIndexMagic, kIndexMagic + 8);
  put<uint32_t>(header, kIndexVersion);
  put<uint32_t>(header, static_cast<uint32_t>(width_));
  put<uint64_t>(header, static_cast<uint64_t>(vocabSize_));
  put<uint64_t>(header, static_cast<uint64_t>(documents()));
  put<uint64_t>(header, starts_.back());
  std::vector<unsigned char> starts;
  starts.reserve(starts_.size() * 8);
  for (uint64_t start : starts_) put<uint64_t>(starts, start);
  Sha256 digest;
  digest.update(header.data(), header.size());
  digest.update(starts.data(), starts.size());
  std::string hex = digest.hexDigest();
  for (size_t i = 0; i < hex.size(); i += 2)
    header.push_back(static_cast<unsigned char>(std::stoi(hex.substr(i, 2), nullptr, 16)));

  const std::string partial = prefix_ + ".idx.partial";
  std::ofstream idx(partial, std::ios::binary | std::ios::trunc);
  idx.write(reinterpret_cast<const char*>(header.data()),
            static_cast<std::streamsize>(header.size()));
  idx.write(reinterpret_cast<const char*>(starts.data()),
            static_cast<std::streamsize>(starts.size()));
  idx.close();
  checkWritten(idx, partial);
  if (mask_.is_open()) {
    if (maskTokens_ != starts_.back())
      throw ConfigError(prefix_ + ".mask: " + std::to_string(maskTokens_) + " mask bytes for " +
                        std::to_string(starts_.back()) + " tokens");
    std::vector<unsigned char> count;
    put<uint64_t>(count, maskTokens_);
    mask_.seekp(16);
    mask_.write(reinterpret_cast<const char*>(count.data()),
                static_cast<std::streamsize>(count.size()));
    mask_.close();
    checkWritten(mask_, prefix_ + ".mask.partial");
  }
  rename(prefix_ + ".bin.partial", prefix_ + ".bin");
  if (lossMask_) {
    rename(prefix_ + ".mask.partial", prefix_ + ".mask");
  } else {
    std::error_code ignored;  // a mask left by an earlier preparation would not match
    std::filesystem::remove(prefix_ + ".mask", ignored);
  }
  rename(partial, prefix_ + ".idx");
}

}  // namespace strata::train
