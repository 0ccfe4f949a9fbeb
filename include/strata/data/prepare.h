// `strata data prepare`: tokenizes documents into a prepared dataset
// (PREFIX.bin + PREFIX.idx, format in prepared_data.h).
//
// Documents: a plain-text file is one document; a *.jsonl / *.ndjson file
// holds one document per line, its "text" field (documents.h has the
// rules). Directories are walked recursively in sorted order. Each document
// is encoded with the tokenizer and, when the tokenizer has an end-of-text
// id (GPT-2's <|endoftext|>, SentencePiece's </s>), followed by it, so
// windows that cross a document boundary see it; the byte tokenizer has
// none.
//
// Files are tokenized by a pool of `threads` std::threads, each file whole
// by one thread; the output is written in input order whatever the threads'
// timing, so the files are the same for every thread count. At most
// 2 x threads files wait in memory to be written: the corpus can be larger
// than memory, one file cannot.
//
// With `chat`, the lines are conversations instead (see PrepareOptions and
// strata/data/chat.h for their rules and errors, each naming the file and
// line).
//
// Blocks until done. Throws ConfigError naming the file (and byte offset)
// for every bad input (documents.h), for a token width too small for the
// tokenizer's vocabulary, and for an output that cannot be written; the
// earlier PREFIX.bin/.idx, if any, then stay as they were.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace strata::train {

// What `--chat` does with a conversation longer than maxTokens.
enum class TooLong { kDrop, kTruncate };

struct PrepareOptions {
  std::string tokenizer = "byte";    // makeTokenizer()'s spec
  std::vector<std::string> inputs;   // files and directories
  std::string output;                // PREFIX
  int threads = 0;                   // 0: the hardware's thread count
  int tokenWidth = 0;                // bytes per token: 2, 4, or 0 for the smallest that fits
  std::ostream* progress = nullptr;  // progress and summary (stderr); null: silent
  bool terminal = false;             // redraw one bar in place instead of printing lines
  // Conversations instead of documents (strata/data/chat.h): every line of
  // the *.jsonl inputs is one, rendered with the tokenizer's chat template
  // (or `chatTemplate`, a Jinja file); PREFIX.mask records which tokens are
  // the assistant's. No BOS/EOS is added: the template writes its own.
  bool chat = false;
  std::string chatTemplate;
  std::string chatDate;  // "YYYY-MM-DD" for the template's strftime_now; empty: today
  // Conversations of more tokens are dropped or truncated to it, counted and
  // named in the summary (0: no limit). One left without an assistant token
  // by truncation is dropped.
  int64_t maxTokens = 0;
  TooLong tooLong = TooLong::kDrop;
};

struct PrepareSummary {
  int64_t files = 0;
  int64_t documents = 0;
  int64_t tokens = 0;
  int64_t bytes = 0;  // of input read
  int tokenWidth = 2;
  double seconds = 0;
  int64_t truncated = 0, dropped = 0;        // conversations over maxTokens
  std::vector<std::string> tooLongExamples;  // the first few, "FILE:LINE (N tokens)"
  int64_t assistantTokens = 0;               // with chat: tokens in the loss
};

PrepareSummary prepareData(const PrepareOptions& options);

}  // namespace strata::train
