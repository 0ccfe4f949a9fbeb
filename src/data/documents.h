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

#include <string>
#include <vector>

namespace strata::train {

std::vector<std::string> listInputFiles(const std::vector<std::string>& inputs);

// `bytes` receives the file's size.
std::vector<std::string> readDocuments(const std::string& path, size_t* bytes = nullptr);

}  // namespace strata::train
