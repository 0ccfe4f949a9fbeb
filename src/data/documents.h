// The documents of `strata data prepare`'s input files.
//
// listInputFiles(): the named files in the order given; a named directory
// stands for every regular file under it, recursively, sorted by path
// (bytewise), skipping names that start with a dot. Throws ConfigError for
// a path that does not exist and when no file is found at all.
//
// readDocuments(): one file's documents, in file order.
//  - A file named *.jsonl or *.ndjson holds JSON lines: each non-blank line
//    is an object whose "text" string is one document (other fields are
//    ignored).
//  - Any other file is plain text and is one document, byte for byte.
// Throws ConfigError naming the file for: a file that cannot be read, an
// empty file, bytes that are not UTF-8 (with the byte offset), and a JSON
// line that does not parse or has no "text" string (with the line number
// and the byte offset of the line's start).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::train {

std::vector<std::string> listInputFiles(const std::vector<std::string>& inputs);

// One non-blank line of a JSON-lines file, not yet parsed.
struct JsonLine {
  std::string text;
  int64_t line = 0;    // 1-based
  int64_t offset = 0;  // of the line's first byte
  // "PATH:LINE (byte offset N)", for errors.
  std::string where(const std::string& path) const;
};

// The non-blank lines of a *.jsonl / *.ndjson file. Throws ConfigError
// naming the file for one that cannot be read, is empty, is not UTF-8, has
// another extension (`what` says what the lines should hold), or has only
// blank lines.
std::vector<JsonLine> readJsonLines(const std::string& path, const std::string& what,
                                    size_t* bytes = nullptr);

// `bytes` receives the file's size.
std::vector<std::string> readDocuments(const std::string& path, size_t* bytes = nullptr);

}  // namespace strata::train
