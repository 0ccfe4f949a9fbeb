#include "strata/data/prepared_data.h"

#include <cstring>
#include <filesystem>

#include "formats/mapped_file.h"
#include "runtime/sha256.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "prepared data files are little-endian and read in place");

namespace strata::train {
namespace {

template <typename T>
T load(const unsigned char* at) {
  T value;
  std::memcpy(&value, at, sizeof(T));
  return value;
}

std::string at(const std::string& path, uint64_t offset) {
  return path + " at byte offset " + std::to_string(offset);
}

template <typename T>
void copyTokens(const unsigned char* bytes, int64_t begin, int64_t count, int64_t vocab,
                const std::string& path, int64_t* out) {
  const unsigned char* first = bytes + begin * static_cast<int64_t>(sizeof(T));
  for (int64_t i = 0; i < count; ++i) {
    T token = load<T>(first + i * static_cast<int64_t>(sizeof(T)));
    if (static_cast<int64_t>(token) >= vocab)
      throw ConfigError(at(path, static_cast<uint64_t>((begin + i) * int64_t(sizeof(T)))) +
                        ": token " + std::to_string(token) + " is outside the vocabulary of " +
                        std::to_string(vocab) + " (a corrupt token file)");
    out[i] = static_cast<int64_t>(token);
  }
}

}  // namespace

int tokenWidthFor(int64_t vocabSize) { return vocabSize <= 65536 ? 2 : 4; }

PreparedData::PreparedData(const std::string& prefix) : prefix_(prefix) {
  index_ = std::make_unique<formats::MappedFile>(indexPath());
  checkIndex();
  tokenFile_ = std::make_unique<formats::MappedFile>(tokenPath());
  uint64_t expected = static_cast<uint64_t>(tokens_) * static_cast<uint64_t>(width_);
  if (tokenFile_->size() != expected)
    throw ConfigError(tokenPath() + ": " + std::to_string(tokenFile_->size()) + " bytes, but " +
                      indexPath() + " lists " + std::to_string(tokens_) + " tokens of " +
                      std::to_string(width_) + " bytes = " + std::to_string(expected) +
                      (tokenFile_->size() < expected ? " (truncated at byte offset " +
                                                           std::to_string(tokenFile_->size()) + ")"
                                                     : " (extra bytes after the last token)"));
  openLossMask();
}

void PreparedData::openLossMask() {
  const std::string path = lossMaskPath();
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return;
  lossMask_ = std::make_unique<formats::MappedFile>(path);
  const unsigned char* bytes = lossMask_->data();
  const uint64_t size = lossMask_->size();
  if (size < kLossMaskHeaderBytes || std::memcmp(bytes, kLossMaskMagic, 8) != 0)
    throw ConfigError(at(path, 0) + ": not a Strata loss mask (no magic \"STRLMASK\")");
  if (auto version = load<uint32_t>(bytes + 8); version != kLossMaskVersion)
    throw ConfigError(at(path, 8) + ": loss mask version " + std::to_string(version) +
                      ", this Strata reads version " + std::to_string(kLossMaskVersion));
  const uint64_t tokens = load<uint64_t>(bytes + 16);
  if (tokens != static_cast<uint64_t>(tokens_))
    throw ConfigError(at(path, 16) + ": a mask of " + std::to_string(tokens) + " tokens, but " +
                      indexPath() + " lists " + std::to_string(tokens_) +
                      " (from another preparation?)");
  if (size != kLossMaskHeaderBytes + tokens)
    throw ConfigError(path + ": " + std::to_string(size) + " bytes, expected " +
                      std::to_string(kLossMaskHeaderBytes + tokens) + " (truncated or corrupt)");
}

void PreparedData::readLossMask(int64_t begin, int64_t count, uint8_t* out) const {
  if (!lossMask_)
    throw ConfigError(prefix_ + ": no loss mask (" + lossMaskPath() + " is not there)");
  checkTokenRange(lossMaskPath(), begin, count, tokens_);
  const unsigned char* first = lossMask_->data() + kLossMaskHeaderBytes + begin;
  for (int64_t i = 0; i < count; ++i) {
    if (first[i] > 1)
      throw ConfigError(
          at(lossMaskPath(), kLossMaskHeaderBytes + static_cast<uint64_t>(begin + i)) + ": " +
          std::to_string(first[i]) + " is not 0 or 1 (a corrupt loss mask)");
    out[i] = first[i];
  }
}

PreparedData::~PreparedData() = default;

void PreparedData::checkIndex() {
  const std::string path = indexPath();
  const unsigned char* bytes = index_->data();
  const size_t size = index_->size();
  if (size < kIndexHeaderBytes)
    throw ConfigError(path + ": " + std::to_string(size) + " bytes, shorter than the " +
                      std::to_string(kIndexHeaderBytes) +
                      "-byte header of an index (truncated at byte offset " + std::to_string(size) +
                      ")");
  if (std::memcmp(bytes, kIndexMagic, 8) != 0)
    throw ConfigError(at(path, 0) + ": not a Strata token index (no magic \"STRTOKIX\")");
  if (auto version = load<uint32_t>(bytes + 8); version != kIndexVersion)
    throw ConfigError(at(path, 8) + ": index version " + std::to_string(version) +
                      ", this Strata reads version " + std::to_string(kIndexVersion));
  width_ = static_cast<int>(load<uint32_t>(bytes + 12));
  if (width_ != 2 && width_ != 4)
    throw ConfigError(at(path, 12) + ": token width " + std::to_string(width_) +
                      " bytes, expected 2 or 4");
  auto vocab = load<uint64_t>(bytes + 16);
  auto documents = load<uint64_t>(bytes + 24);
  auto tokens = load<uint64_t>(bytes + 32);
  if (vocab == 0 || vocab > (uint64_t{1} << (8 * width_)))
    throw ConfigError(at(path, 16) + ": vocabulary of " + std::to_string(vocab) +
                      " does not fit tokens of " + std::to_string(width_) + " bytes");
  if (documents > (size - kIndexHeaderBytes) / 8 || size != kIndexHeaderBytes + 8 * (documents + 1))
    throw ConfigError(path + ": " + std::to_string(size) + " bytes, but its header lists " +
                      std::to_string(documents) + " documents, which need " +
                      std::to_string(kIndexHeaderBytes) + " + 8 x " +
                      std::to_string(documents + 1) + " bytes (truncated or corrupt at byte " +
                      "offset 24)");
  Sha256 digest;
  digest.update(bytes, 40);
  digest.update(bytes + kIndexHeaderBytes, size - kIndexHeaderBytes);
  std::string expected = digest.hexDigest();
  std::string stored;
  static const char* hex = "0123456789abcdef";
  for (size_t i = 40; i < kIndexHeaderBytes; ++i) {
    stored += hex[bytes[i] >> 4];
    stored += hex[bytes[i] & 15];
  }
  if (stored != expected)
    throw ConfigError(at(path, 40) + ": checksum mismatch (stored " + stored.substr(0, 16) +
                      "..., contents hash to " + expected.substr(0, 16) +
                      "...): the index is corrupt");
  vocabSize_ = static_cast<int64_t>(vocab);
  documents_ = static_cast<int64_t>(documents);
  tokens_ = static_cast<int64_t>(tokens);
  // The checksum matched, so a bad start is a writer's bug; still named.
  uint64_t previous = 0;
  for (uint64_t d = 0; d <= documents; ++d) {
    uint64_t offset = kIndexHeaderBytes + 8 * d;
    auto start = load<uint64_t>(bytes + offset);
    bool bad = (d == 0 && start != 0) || start < previous || start > tokens ||
               (d == documents && start != tokens);
    if (bad)
      throw ConfigError(at(path, offset) + ": start " + std::to_string(start) + " of document " +
                        std::to_string(d) +
                        " breaks 0 = s_0 <= ... <= s_D = " + std::to_string(tokens));
    previous = start;
  }
}

int64_t PreparedData::documentStart(int64_t document) const {
  if (document < 0 || document > documents_)
    throw ConfigError(indexPath() + ": document " + std::to_string(document) + " is outside [0, " +
                      std::to_string(documents_) + "]");
  return static_cast<int64_t>(load<uint64_t>(index_->data() + kIndexHeaderBytes + 8 * document));
}

void PreparedData::read(int64_t begin, int64_t count, int64_t* out) const {
  checkTokenRange(tokenPath(), begin, count, tokens_);
  if (width_ == 2)
    copyTokens<uint16_t>(tokenFile_->data(), begin, count, vocabSize_, tokenPath(), out);
  else
    copyTokens<uint32_t>(tokenFile_->data(), begin, count, vocabSize_, tokenPath(), out);
}

std::shared_ptr<const PreparedData> openPrepared(const std::string& prefix,
                                                 const Tokenizer& tokenizer) {
  auto prepared = std::make_shared<const PreparedData>(prefix);
  if (prepared->vocabSize() != tokenizer.vocabSize())
    throw ConfigError(prepared->indexPath() + " was prepared with a vocabulary of " +
                      std::to_string(prepared->vocabSize()) + " ids, but the tokenizer has " +
                      std::to_string(tokenizer.vocabSize()) + " (" + tokenizer.describe() +
                      "): use the tokenizer it was prepared with");
  return prepared;
}

}  // namespace strata::train
