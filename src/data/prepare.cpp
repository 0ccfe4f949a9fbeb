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
#include "strata/data/chat.h"
#include "strata/data/hf_tokenizer.h"
#include "strata/data/prepared_data.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"

namespace strata::train {
namespace {

// One input file, tokenized and packed to the output's width.
struct FileTokens {
  std::vector<std::vector<unsigned char>> documents;
  std::vector<std::vector<uint8_t>> lossMasks;  // with chat, one per document
  int64_t tokens = 0;
  int64_t truncated = 0, dropped = 0, assistantTokens = 0;
  std::vector<std::string> tooLong;  // "FILE:LINE (N tokens)"
  std::exception_ptr error;
};

constexpr size_t kTooLongExamples = 3;

// Applies options.maxTokens to one conversation; false when it is dropped.
bool fitConversation(ChatTokens& conversation, const PrepareOptions& options,
                     const std::string& where, FileTokens& result) {
  const int64_t size = static_cast<int64_t>(conversation.ids.size());
  if (options.maxTokens <= 0 || size <= options.maxTokens) return true;
  if (result.tooLong.size() < kTooLongExamples)
    result.tooLong.push_back(where + " (" + std::to_string(size) + " tokens)");
  if (options.tooLong == TooLong::kTruncate) {
    conversation.ids.resize(static_cast<size_t>(options.maxTokens));
    conversation.assistant.resize(static_cast<size_t>(options.maxTokens));
    if (std::count(conversation.assistant.begin(), conversation.assistant.end(), 1) > 0) {
      ++result.truncated;
      return true;
    }
  }
  ++result.dropped;
  return false;
}

FileTokens encodeConversations(const std::string& path, const ChatEncoder& encoder, int width,
                               const PrepareOptions& options) {
  FileTokens result;
  try {
    for (const JsonLine& line : readJsonLines(path, "conversations")) {
      const std::string where = line.where(path);
      ChatTokens conversation = encoder.encode(line.text, where);
      if (!fitConversation(conversation, options, path + ":" + std::to_string(line.line), result))
        continue;
      try {
        result.documents.push_back(
            packTokens(conversation.ids, width, encoder.tokenizer().vocabSize()));
      } catch (const ConfigError& e) {
        throw ConfigError(where + ": " + e.what());
      }
      result.tokens += static_cast<int64_t>(conversation.ids.size());
      result.assistantTokens +=
          std::count(conversation.assistant.begin(), conversation.assistant.end(), 1);
      result.lossMasks.push_back(std::move(conversation.assistant));
    }
  } catch (...) {
    result.error = std::current_exception();
  }
  return result;
}

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

void reportConversations(const PrepareSummary& summary, const PrepareOptions& options,
                         std::ostream& out) {
  out << "conversations: " << summary.documents << ", " << summary.assistantTokens << " of "
      << summary.tokens << " tokens the assistant's (" << options.output << ".mask)\n";
  if (summary.truncated + summary.dropped == 0) return;
  out << "longer than " << options.maxTokens << " tokens: " << summary.truncated << " truncated, "
      << summary.dropped << " dropped; the first:";
  for (const std::string& example : summary.tooLongExamples) out << " " << example;
  out << "\n";
}

}  // namespace

PrepareSummary prepareData(const PrepareOptions& options) {
  auto start = std::chrono::steady_clock::now();
  if (options.output.empty()) throw ConfigError("no output prefix given");
  if (options.maxTokens < 0)
    throw ConfigError("max tokens must be 0 (no limit) or more, got " +
                      std::to_string(options.maxTokens));
  if (!options.chat &&
      (options.maxTokens > 0 || !options.chatTemplate.empty() || !options.chatDate.empty()))
    throw ConfigError(
        "a chat template and a conversation's largest size apply to conversations (--chat) only");
  std::unique_ptr<const ChatEncoder> encoder;
  std::unique_ptr<Tokenizer> tokenizer;
  if (options.chat)
    encoder = std::make_unique<const ChatEncoder>(options.tokenizer, options.chatTemplate,
                                                  options.chatDate);
  else
    tokenizer = makeTokenizer(options.tokenizer);
  const Tokenizer& vocabulary =
      encoder ? static_cast<const Tokenizer&>(encoder->tokenizer()) : *tokenizer;
  const int width = chooseWidth(options, vocabulary);
  const std::vector<std::string> files = listInputFiles(options.inputs);
  const int threads = std::max(
      1, std::min<int>(options.threads > 0 ? options.threads
                                           : static_cast<int>(std::thread::hardware_concurrency()),
                       static_cast<int>(files.size())));

  PrepareSummary summary;
  summary.files = static_cast<int64_t>(files.size());
  summary.tokenWidth = width;
  PrepareProgress progress(options.progress, options.terminal, summary.files, totalBytes(files));
  TokenFileWriter writer(options.output, width, vocabulary.vocabSize(), options.chat);
  OrderedResults results(files.size(), 2 * static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&] {
      while (std::optional<size_t> index = results.take())
        results.put(*index, encoder ? encodeConversations(files[*index], *encoder, width, options)
                                    : tokenizeFile(files[*index], *tokenizer, width));
    });
  try {
    for (size_t i = 0; i < files.size(); ++i) {
      FileTokens tokens = results.get(i);
      if (tokens.error) std::rethrow_exception(tokens.error);
      for (size_t d = 0; d < tokens.documents.size(); ++d) {
        writer.appendPacked(tokens.documents[d].data(), tokens.documents[d].size());
        if (options.chat) writer.appendLossMask(tokens.lossMasks[d]);
      }
      summary.tokens += tokens.tokens;
      summary.truncated += tokens.truncated;
      summary.dropped += tokens.dropped;
      summary.assistantTokens += tokens.assistantTokens;
      for (std::string& example : tokens.tooLong)
        if (summary.tooLongExamples.size() < kTooLongExamples)
          summary.tooLongExamples.push_back(std::move(example));
      progress.fileDone(files[i]);
    }
    if (options.chat && writer.documents() == 0)
      throw ConfigError(
          "every conversation is longer than " + std::to_string(options.maxTokens) +
          " tokens (--max-tokens) and was dropped (or truncated before any answer), so none is "
          "left to write; the first: " +
          (summary.tooLongExamples.empty() ? std::string("-") : summary.tooLongExamples[0]));
    writer.finish();
  } catch (...) {
    results.stop();
    for (std::thread& thread : pool) thread.join();
    std::remove((options.output + ".bin.partial").c_str());
    std::remove((options.output + ".idx.partial").c_str());
    std::remove((options.output + ".mask.partial").c_str());
    throw;
  }
  for (std::thread& thread : pool) thread.join();
  summary.documents = writer.documents();
  summary.bytes = progress.bytesDone();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  progress.finish(summary.documents, summary.tokens, width, options.output);
  if (options.chat && options.progress) reportConversations(summary, options, *options.progress);
  return summary;
}

}  // namespace strata::train
