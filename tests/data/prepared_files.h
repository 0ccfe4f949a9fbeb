// Helpers of the prepared-data tests: a fresh folder, a small corpus whose
// documents the test knows, and an independent reader of PREFIX.bin and
// PREFIX.idx written here from the format's definition (prepared_data.h's
// table), not Strata's reader.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace strata::test {

inline std::filesystem::path freshDir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir =
      fs::temp_directory_path() / ("strata_prep_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline void writeFile(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// Documents of varied text (ASCII, accents, CJK, emoji, white-space runs),
// some of them several kilobytes, made from `seed`.
inline std::string documentText(int seed) {
  const char* words[] = {"pipeline", "parallel", " tensor", "données", "模型",  "🚀",       "  ",
                         "\n\n",     "rank's",   "42",      "3.14",    "naïve", "Ελληνικά"};
  std::string text;
  int length = 5 + (seed * 37) % 60 + (seed % 7 == 0 ? 900 : 0);
  for (int i = 0; i < length; ++i) text += words[(seed * 11 + i * 7 + i / 3) % 13];
  return text + "\n";
}

// A JSON string literal of UTF-8 text (escapes quotes, backslashes, control
// characters).
inline std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// A corpus folder of `files` files: every third a JSON-lines file of 3
// documents (with a blank line and an extra field), the others plain text of
// one document each; files from the tenth on in a subfolder, and a hidden
// file that must be skipped. Named so their sorted order is the order
// written. With `bigBytes`, every seventh plain-text file (from the fourth)
// repeats its text to at least that many bytes, so files take very
// different times to tokenize. Returns the documents in that order.
inline std::vector<std::string> writeCorpus(const std::filesystem::path& dir, int files,
                                            size_t bigBytes = 0) {
  std::vector<std::string> documents;
  int seed = 1;
  char name[32];
  writeFile(dir / ".hidden.txt", "not a document");
  for (int f = 0; f < files; ++f) {
    bool json = f % 3 == 2;
    std::snprintf(name, sizeof name, "%s%03d.%s", f < 10 ? "" : "sub/", f, json ? "jsonl" : "txt");
    if (!json) {
      documents.push_back(documentText(seed++));
      if (bigBytes > 0 && f % 7 == 3)
        for (std::string text = documents.back(); documents.back().size() < bigBytes;)
          documents.back() += text;
      writeFile(dir / name, documents.back());
      continue;
    }
    std::string lines;
    for (int d = 0; d < 3; ++d) {
      documents.push_back(documentText(seed++));
      lines += "{\"id\": " + std::to_string(d) + ", \"text\": " + jsonString(documents.back()) +
               "}\n" + (d == 0 ? "\n" : "");
    }
    writeFile(dir / name, lines);
  }
  return documents;
}

// PREFIX.idx and PREFIX.bin read by the format's table.
struct RawPrepared {
  uint32_t version = 0, width = 0;
  uint64_t vocab = 0, documents = 0, tokens = 0;
  std::vector<uint64_t> starts;  // D + 1
  std::vector<int64_t> ids;      // N
};

template <typename T>
T field(const std::string& bytes, size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

inline RawPrepared readRaw(const std::string& prefix) {
  RawPrepared raw;
  std::string idx = readFile(prefix + ".idx");
  if (idx.size() < 72 || idx.compare(0, 8, "STRTOKIX") != 0) return raw;
  raw.version = field<uint32_t>(idx, 8);
  raw.width = field<uint32_t>(idx, 12);
  raw.vocab = field<uint64_t>(idx, 16);
  raw.documents = field<uint64_t>(idx, 24);
  raw.tokens = field<uint64_t>(idx, 32);
  for (size_t at = 72; at + 8 <= idx.size(); at += 8)
    raw.starts.push_back(field<uint64_t>(idx, at));
  std::string bin = readFile(prefix + ".bin");
  for (size_t at = 0; at + raw.width <= bin.size() && raw.width > 0; at += raw.width)
    raw.ids.push_back(raw.width == 2 ? int64_t(field<uint16_t>(bin, at))
                                     : int64_t(field<uint32_t>(bin, at)));
  return raw;
}

}  // namespace strata::test
