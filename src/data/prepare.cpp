#include "strata/data/prepare.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "data/documents.h"
#include "data/prepare_progress.h"
#include "data/token_file_writer.h"
#include "strata/data/prepared_data.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"

namespace strata::train {
namespace {

// One input file, tokenized and packed to the output's width.
struct FileTokens {
  std::vector<std::vector<unsigned char>> documents;
  int64_t tokens = 0;
  std::exception_ptr error;
};

FileTokens tokenizeFile(const std::string& path, const Tokenizer& tokenizer, int width) {
  FileTokens result;
  try {
    std::optional<int64_t> begin = tokenizer.beginOfTextId(), end = tokenizer.endOfTextId();
    std::vector<std::string> documents = readDocuments(path);
    for (size_t d = 0; d < documents.size(); ++d) {
      std::vector<int64_t> ids;
      try {
        if (begin) ids.push_back(*begin);
        const std::vector<int64_t> text = tokenizer.encode(documents[d]);
        ids.insert(ids.end(), text.begin(), text.end());
        if (end) ids.push_back(*end);
        result.documents.push_back(packTokens(ids, width, tokenizer.vocabSize()));
      } catch (const ConfigError& e) {
        throw ConfigError(path + ": document " + std::to_string(d) + ": " + e.what());
      }
      result.tokens += static_cast<int64_t>(ids.size());
      documents[d] = std::string();  // free the text early
    }
  } catch (...) {
    result.error = std::current_exception();
  }
  return result;
}

// Hands out file indices to the workers, at most `window` ahead of the
// writer, and holds each result until the writer takes it in order.
class OrderedResults {
 public:
  OrderedResults(size_t files, size_t window) : slots_(files), window_(window) {}

  // The next file to tokenize, or nothing when all are taken or we stop.
  std::optional<size_t> take() {
    std::unique_lock<std::mutex> lock(mutex_);
    room_.wait(lock, [&] { return stopped_ || next_ < written_ + window_; });
    if (stopped_ || next_ >= slots_.size()) return std::nullopt;
    return next_++;
  }
  void put(size_t index, FileTokens tokens) {
    std::lock_guard<std::mutex> lock(mutex_);
    slots_[index] = std::move(tokens);
    ready_.notify_all();
  }
  // Waits for file `index` (the next in order) and frees its slot.
  FileTokens get(size_t index) {
    std::unique_lock<std::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return slots_[index].has_value(); });
    FileTokens tokens = std::move(*slots_[index]);
    slots_[index].reset();
    written_ = index + 1;
    room_.notify_all();
    return tokens;
  }
  void stop() {
    std::lock_guard<std::mutex> lock(mutex_);
    stopped_ = true;
    room_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable room_, ready_;
  std::vector<std::optional<FileTokens>> slots_;
  size_t window_;
  size_t next_ = 0, written_ = 0;
  bool stopped_ = false;
};

int chooseWidth(const PrepareOptions& options, const Tokenizer& tokenizer) {
  int64_t vocab = tokenizer.vocabSize();
  if (options.tokenWidth == 0) return tokenWidthFor(vocab);
  if (options.tokenWidth != 2 && options.tokenWidth != 4)
    throw ConfigError("token width must be 2 or 4 bytes (or 0 for the smallest that fits), got " +
                      std::to_string(options.tokenWidth));
  if (options.tokenWidth < tokenWidthFor(vocab))
    throw ConfigError("the vocabulary of " + tokenizer.describe() + " has " +
                      std::to_string(vocab) + " ids, too many for " +
                      std::to_string(options.tokenWidth) + "-byte tokens (at most 65536)");
  return options.tokenWidth;
}

int64_t totalBytes(const std::vector<std::string>& files) {
  int64_t total = 0;
  for (const std::string& file : files) {
    std::error_code error;
    auto size = std::filesystem::file_size(file, error);
    if (!error) total += static_cast<int64_t>(size);
  }
  return total;
}

}  // namespace

PrepareSummary prepareData(const PrepareOptions& options) {
  auto start = std::chrono::steady_clock::now();
  if (options.output.empty()) throw ConfigError("no output prefix given");
  std::unique_ptr<Tokenizer> tokenizer = makeTokenizer(options.tokenizer);
  const int width = chooseWidth(options, *tokenizer);
  const std::vector<std::string> files = listInputFiles(options.inputs);
  const int threads = std::max(
      1, std::min<int>(options.threads > 0 ? options.threads
                                           : static_cast<int>(std::thread::hardware_concurrency()),
                       static_cast<int>(files.size())));

  PrepareSummary summary;
  summary.files = static_cast<int64_t>(files.size());
  summary.tokenWidth = width;
  PrepareProgress progress(options.progress, options.terminal, summary.files, totalBytes(files));
  TokenFileWriter writer(options.output, width, tokenizer->vocabSize());
  OrderedResults results(files.size(), 2 * static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      while (std::optional<size_t> index = results.take())
        results.put(*index, tokenizeFile(files[*index], *tokenizer, width));
    });
  try {
    for (size_t i = 0; i < files.size(); ++i) {
      FileTokens tokens = results.get(i);
      if (tokens.error) std::rethrow_exception(tokens.error);
      for (const std::vector<unsigned char>& document : tokens.documents)
        writer.appendPacked(document.data(), document.size());
      summary.tokens += tokens.tokens;
      progress.fileDone(files[i]);
    }
    writer.finish();
  } catch (...) {
    results.stop();
    for (std::thread& thread : pool) thread.join();
    std::remove((options.output + ".bin.partial").c_str());
    std::remove((options.output + ".idx.partial").c_str());
    throw;
  }
  for (std::thread& thread : pool) thread.join();
  summary.documents = writer.documents();
  summary.bytes = progress.bytesDone();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish(summary.documents, summary.tokens, width, options.output);
  return summary;
}

}  // namespace strata::train
