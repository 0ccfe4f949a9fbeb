#include "strata/data/byte_level_bpe.h"

#include <unicode/utf8.h>

#include <sstream>

#include "strata/error.h"

namespace strata::train {
namespace {

// GPT-2's map from bytes to printable characters (bytes_to_unicode() in
// encoder.py): the printable Latin-1 bytes stand for themselves, the other 68
// take code points 256, 257, ... in byte order. The files spell every token
// in these characters.
std::vector<char32_t> byteToCharTable() {
  std::vector<char32_t> table(256);
  char32_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    table[b] = printable ? static_cast<char32_t>(b) : next++;
  }
  return table;
}

uint64_t pairKey(int32_t left, int32_t right) {
  return static_cast<uint64_t>(left) << 32 | static_cast<uint32_t>(right);
}

}  // namespace

std::optional<std::string> byteLevelBytes(std::string_view spelled) {
  static const std::vector<int> charToByte = [] {
    std::vector<int> inverse(512, -1);
    const std::vector<char32_t> table = byteToCharTable();
    for (int b = 0; b < 256; ++b) inverse[table[b]] = b;
    return inverse;
  }();
  std::string bytes;
  const auto* s = reinterpret_cast<const uint8_t*>(spelled.data());
  const auto length = static_cast<int32_t>(spelled.size());
  for (int32_t pos = 0; pos < length;) {
    UChar32 c;
    U8_NEXT(s, pos, length, c);
    if (c < 0 || static_cast<size_t>(c) >= charToByte.size() || charToByte[c] < 0)
      return std::nullopt;
    bytes.push_back(static_cast<char>(charToByte[c]));
  }
  return bytes;
}

std::string byteLevelSpelling(std::string_view bytes) {
  static const std::vector<char32_t> table = byteToCharTable();
  std::string spelled;
  spelled.reserve(bytes.size() * 2);
  for (char byte : bytes) {
    // Every character of the alphabet is below U+0144: two bytes at most.
    uint8_t utf8[U8_MAX_LENGTH];
    int32_t length = 0;
    U8_APPEND_UNSAFE(utf8, length, static_cast<UChar32>(table[static_cast<uint8_t>(byte)]));
    spelled.append(reinterpret_cast<const char*>(utf8), length);
  }
  return spelled;
}

ByteLevelBpe::ByteLevelBpe(int64_t vocabSize) : tokenBytes_(vocabSize), known_(vocabSize, false) {}

bool ByteLevelBpe::give(int32_t id, std::string bytes) {
  if (known_[id]) return false;
  known_[id] = true;
  tokenBytes_[id] = std::move(bytes);
  ++given_;
  return true;
}

bool ByteLevelBpe::addToken(int32_t id, std::string bytes) {
  if (!give(id, bytes)) return false;
  ids_.emplace(std::move(bytes), id);
  return true;
}

bool ByteLevelBpe::addVerbatimToken(int32_t id, std::string text) {
  return give(id, std::move(text));
}

bool ByteLevelBpe::addSpelledToken(int32_t id, const std::string& spelled) {
  std::optional<std::string> bytes = byteLevelBytes(spelled);
  return bytes ? addToken(id, std::move(*bytes)) : addVerbatimToken(id, spelled);
}

void ByteLevelBpe::findByteTokens(const std::string& vocabulary) {
  for (int b = 0; b < 256; ++b) {
    std::optional<int32_t> id = find(std::string(1, static_cast<char>(b)));
    if (!id) {
      std::ostringstream hex;
      hex << std::hex << b;
      throw ConfigError(vocabulary + ": no token for byte 0x" + hex.str() +
                        " (a byte-level BPE vocabulary has one for each of the 256 bytes)");
    }
    byteIds_[b] = *id;
  }
}

int32_t ByteLevelBpe::spelledId(const std::string& spelled, const std::string& where,
                                const std::string& vocabulary) const {
  std::optional<std::string> bytes = byteLevelBytes(spelled);
  if (!bytes)
    throw ConfigError(where + ": \"" + spelled +
                      "\" is not spelled in GPT-2's byte-level alphabet");
  std::optional<int32_t> id = find(*bytes);
  if (!id) throw ConfigError(where + ": \"" + spelled + "\" is not in " + vocabulary);
  return *id;
}

void ByteLevelBpe::addMerge(int32_t left, int32_t right, int32_t merged) {
  merges_[pairKey(left, right)] = {nextRank_++, merged};
}

void ByteLevelBpe::addMergeAtRank(int32_t left, int32_t right, int32_t merged, int32_t rank) {
  merges_[pairKey(left, right)] = {rank, merged};
}

std::optional<int32_t> ByteLevelBpe::find(std::string_view bytes) const {
  auto it = ids_.find(std::string(bytes));
  if (it == ids_.end()) return std::nullopt;
  return it->second;
}

void ByteLevelBpe::encodePiece(std::string_view piece, std::vector<int64_t>& out) const {
  std::vector<int32_t> word(piece.size());
  for (size_t i = 0; i < piece.size(); ++i)
    word[i] = byteIds_[static_cast<unsigned char>(piece[i])];
  std::vector<int32_t> next;
  next.reserve(word.size());
  while (word.size() > 1) {
    // The lowest-ranked adjacent pair; none left: done.
    const Merge* best = nullptr;
    int32_t left = 0, right = 0;
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      auto it = merges_.find(pairKey(word[i], word[i + 1]));
      if (it != merges_.end() && (!best || it->second.rank < best->rank)) {
        best = &it->second;
        left = word[i];
        right = word[i + 1];
      }
    }
    if (!best) break;
    // Merge every occurrence, left to right.
    next.clear();
    for (size_t i = 0; i < word.size();) {
      if (i + 1 < word.size() && word[i] == left && word[i + 1] == right) {
        next.push_back(best->merged);
        i += 2;
      } else {
        next.push_back(word[i++]);
      }
    }
    word.swap(next);
  }
  out.insert(out.end(), word.begin(), word.end());
}

std::string ByteLevelBpe::decode(const std::vector<int64_t>& ids,
                                 std::string_view vocabulary) const {
  std::string text;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocabSize() || !known_[id])
      throw ConfigError("token id " + std::to_string(id) + " is not in the " +
                        std::string(vocabulary) + " vocabulary of " + std::to_string(vocabSize()) +
                        " ids");
    text += tokenBytes_[id];
  }
  return text;
}

}  // namespace strata::train
