// Token streams from text, split into training and validation parts and cut
// into (input, target) windows for next-token prediction.
//
// readTextFiles() concatenates the named UTF-8 files in order, adding a
// newline between files that lack one; it throws ConfigError naming the file
// (and the byte offset for invalid UTF-8) when a file is missing, unreadable,
// empty or not UTF-8. Nothing here blocks or communicates.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/data/token_source.h"

namespace strata::train {

std::string readTextFiles(const std::vector<std::string>& paths);

// Byte offset of the first invalid UTF-8 sequence, or -1 when text is valid.
int64_t firstInvalidUtf8(std::string_view text);

// 1-D int64 token tensors. The validation part is the last
// ceil(n * validationFraction) tokens: a contiguous tail, so no training
// window overlaps a validation window.
struct TokenSplit {
  at::Tensor train;       // [n_train] int64
  at::Tensor validation;  // [n_val] int64
};
// Throws ConfigError unless 0 < validationFraction < 1.
TokenSplit splitTokens(const at::Tensor& tokens, double validationFraction);

// A target that counts in no loss: where a window with a loss mask has a
// token the mask leaves out (a prompt's, with data.loss_on = "assistant").
constexpr int64_t kIgnoredTarget = -1;

struct Batch {
  at::Tensor input;   // [B, S] int64
  at::Tensor target;  // [B, S] int64, input shifted left by one token (or kIgnoredTarget)
  // Packed documents: each input token's document within its window,
  // counting from 0 at the window's first token. Undefined when windows
  // are not packed.
  at::Tensor segments;  // [B, S] int64
};

struct WindowOptions {
  // The targets the source's loss mask leaves out are kIgnoredTarget
  // (ConfigError when the source has no mask).
  bool maskTargets = false;
  // The documents in a window are packed (data.pack): Batch::segments says
  // which tokens share one, and the target that crosses into the next
  // document, which its predecessor cannot see, is kIgnoredTarget
  // (ConfigError when the source has no documents).
  bool packDocuments = false;
  // Packed, a document that does not fit in the rest of a window continues
  // into the next as a document of its own there (data.split_across_windows),
  // instead of starting the next window whole with this one padded.
  bool splitAcrossWindows = false;
};

// How packing laid the documents out (PackingStats of a packed dataset).
struct PackingStats {
  int64_t documents = 0;
  int64_t cutDocuments = 0;   // split across windows: longer than one, or by choice
  double paddedFraction = 0;  // of the target positions, padding
};

// Non-overlapping windows: window i covers tokens [i*S, i*S + S], its input
// the first S of them and its target the last S. A window starts wherever
// the last one ended, so a document may begin in one window and end in the
// next. Packed, each window holds whole documents (document_windows.h: the
// rest of a window padded, a document longer than a window cut), or with
// splitAcrossWindows the windows are cut as unpacked and each part of a
// document is a document of its own window. Padding is token 0 in a
// document of its own, its targets kIgnoredTarget. The tokens come from a
// tensor or any TokenSource (a memory-mapped prepared file); copies of the
// dataset share the source.
class WindowDataset {
 public:
  // Throws ConfigError naming both sizes when tokens cannot fill one window.
  WindowDataset(at::Tensor tokens, int64_t sequenceLength, std::string name);
  WindowDataset(std::shared_ptr<const TokenSource> tokens, int64_t sequenceLength, std::string name,
                WindowOptions options = {});

  int64_t size() const { return windows_; }
  int64_t sequenceLength() const { return sequenceLength_; }
  const std::string& name() const { return name_; }
  // Meaningful only where options.packDocuments.
  const PackingStats& packing() const { return packing_; }
  // Stacks the windows at `indices` in order; throws ConfigError for an
  // index outside [0, size()).
  Batch gather(const std::vector<int64_t>& indices) const;

 private:
  std::shared_ptr<const TokenSource> tokens_;
  int64_t sequenceLength_;
  // Packed: the whole-document window table, or the count of documents the
  // windows split.
  void layOutDocuments();
  // Window `index`'s first token and how many tokens of the source it holds.
  std::pair<int64_t, int64_t> window(int64_t index) const;

  int64_t windows_;
  std::string name_;
  WindowOptions options_;
  // Whole documents: each window's first token and length (document_windows.h).
  std::vector<int64_t> windowBegin_;
  std::vector<int64_t> windowLength_;
  PackingStats packing_;
};

}  // namespace strata::train
