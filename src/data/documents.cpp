#include "data/documents.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "strata/data/text_dataset.h"
#include "strata/error.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

bool hidden(const fs::path& path) {
  std::string name = path.filename().string();
  return !name.empty() && name[0] == '.';
}

std::vector<std::string> filesUnder(const std::string& dir) {
  std::vector<std::string> files;
  std::error_code error;
  fs::recursive_directory_iterator it(dir, error), end;
  for (; !error && it != end; it.increment(error)) {
    if (hidden(it->path())) {
      if (it->is_directory()) it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path().string());
  }
  if (error) throw ConfigError(dir + ": cannot list: " + error.message());
  std::sort(files.begin(), files.end());
  return files;
}

bool isJsonLines(const std::string& path) {
  std::string extension = fs::path(path).extension().string();
  return extension == ".jsonl" || extension == ".ndjson";
}

std::string readWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open for reading");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read");
  return bytes.str();
}

std::vector<JsonLine> splitLines(const std::string& content) {
  std::vector<JsonLine> lines;
  size_t start = 0;
  for (int64_t line = 1; start < content.size(); ++line) {
    size_t end = content.find('\n', start);
    if (end == std::string::npos) end = content.size();
    std::string_view text(content.data() + start, end - start);
    if (text.find_first_not_of(" \t\r") != std::string_view::npos)
      lines.push_back({std::string(text), line, static_cast<int64_t>(start)});
    start = end + 1;
  }
  return lines;
}

std::string readChecked(const std::string& path, size_t* bytes) {
  std::string content = readWhole(path);
  if (bytes != nullptr) *bytes = content.size();
  if (content.empty()) throw ConfigError(path + ": empty file");
  if (int64_t bad = firstInvalidUtf8(content); bad >= 0)
    throw ConfigError(path + " at byte offset " + std::to_string(bad) + ": not UTF-8");
  return content;
}

std::string documentText(const std::string& path, const JsonLine& line) {
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(line.text);
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(line.where(path) + ": not a JSON line: " + e.what());
  }
  auto field = object.is_object() ? object.find("text") : object.end();
  if (!object.is_object() || field == object.end() || !field->is_string())
    throw ConfigError(line.where(path) + ": expected an object with a \"text\" string");
  return field->get<std::string>();
}

}  // namespace

std::vector<std::string> listInputFiles(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code error;
    if (fs::is_directory(input, error)) {
      std::vector<std::string> under = filesUnder(input);
      files.insert(files.end(), under.begin(), under.end());
    } else if (fs::exists(input, error)) {
      files.push_back(input);
    } else {
      throw ConfigError(input + ": no such file or directory");
    }
  }
  if (files.empty()) throw ConfigError("no input files: the inputs hold no files to prepare");
  return files;
}

std::string JsonLine::where(const std::string& path) const {
  return path + ":" + std::to_string(line) + " (byte offset " + std::to_string(offset) + ")";
}

std::vector<JsonLine> readJsonLines(const std::string& path, const std::string& what,
                                    size_t* bytes) {
  if (!isJsonLines(path))
    throw ConfigError(path + ": expected a JSON-lines file (*.jsonl or *.ndjson) of " + what);
  std::vector<JsonLine> lines = splitLines(readChecked(path, bytes));
  if (lines.empty()) throw ConfigError(path + ": no JSON lines (only blank lines)");
  return lines;
}

std::vector<std::string> readDocuments(const std::string& path, size_t* bytes) {
  std::string content = readChecked(path, bytes);
  if (!isJsonLines(path)) return {std::move(content)};
  std::vector<std::string> documents;
  for (const JsonLine& line : splitLines(content)) documents.push_back(documentText(path, line));
  if (documents.empty()) throw ConfigError(path + ": no JSON lines (only blank lines)");
  return documents;
}

}  // namespace strata::train
