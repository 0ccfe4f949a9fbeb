#include "strata/data/text_dataset.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "document_windows.h"
#include "strata/error.h"

namespace strata::train {
namespace {

// Length of the UTF-8 sequence starting at text[i], or 0 when it is invalid
// (bad lead byte, bad continuation byte, overlong form, surrogate, > U+10FFFF).
size_t utf8SequenceLength(std::string_view text, size_t i) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  size_t length = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  if (length == 0 || lead > 0xF4 || i + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  unsigned char second = byte(i + 1);
  if (lead == 0xE0 && second < 0xA0) return 0;  // overlong
  if (lead == 0xED && second > 0x9F) return 0;  // UTF-16 surrogate
  if (lead == 0xF0 && second < 0x90) return 0;  // overlong
  if (lead == 0xF4 && second > 0x8F) return 0;  // above U+10FFFF
  return length;
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError("data file '" + path + "' cannot be opened");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) throw ConfigError("data file '" + path + "' cannot be read");
  return bytes.str();
}

}  // namespace

int64_t firstInvalidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t length = utf8SequenceLength(text, i);
    if (length == 0) return static_cast<int64_t>(i);
    i += length;
  }
  return -1;
}

std::string readTextFiles(const std::vector<std::string>& paths) {
  if (paths.empty()) throw ConfigError("no data files given");
  std::string text;
  for (const std::string& path : paths) {
    std::string content = readFile(path);
    if (content.empty()) throw ConfigError("data file '" + path + "' is empty");
    if (int64_t bad = firstInvalidUtf8(content); bad >= 0)
      throw ConfigError("data file '" + path + "' is not UTF-8: invalid byte at offset " +
                        std::to_string(bad));
    if (!text.empty() && text.back() != '\n') text += '\n';
    text += content;
  }
  return text;
}

TokenSplit splitTokens(const at::Tensor& tokens, double validationFraction) {
  if (!(validationFraction > 0 && validationFraction < 1))
    throw ConfigError("validation fraction must be in (0, 1), got " +
                      std::to_string(validationFraction));
  int64_t n = tokens.size(0);
  auto validation = static_cast<int64_t>(std::ceil(static_cast<double>(n) * validationFraction));
  return {tokens.narrow(0, 0, n - validation), tokens.narrow(0, n - validation, validation)};
}

WindowDataset::WindowDataset(at::Tensor tokens, int64_t sequenceLength, std::string name)
    : WindowDataset(tensorTokens(std::move(tokens)), sequenceLength, std::move(name)) {}

WindowDataset::WindowDataset(std::shared_ptr<const TokenSource> tokens, int64_t sequenceLength,
                             std::string name, WindowOptions options)
    : tokens_(std::move(tokens)),
      sequenceLength_(sequenceLength),
      name_(std::move(name)),
      options_(options) {
  if (options_.maskTargets && !tokens_->hasLossMask())
    throw ConfigError(name_ +
                      " data has no loss mask to leave targets out by (a dataset prepared with "
                      "`strata data prepare --chat` has one)");
  if (options_.packDocuments && !tokens_->hasDocuments())
    throw ConfigError(name_ +
                      " data has no document boundaries to pack by (data.pack needs "
                      "data.prepared, a dataset made by `strata data prepare`)");
  if (sequenceLength_ < 1)
    throw ConfigError("sequence length must be >= 1, got " + std::to_string(sequenceLength_));
  // Window i needs tokens up to index i*S + S (the last target).
  windows_ = std::max<int64_t>(tokens_->size() - 1, 0) / sequenceLength_;
  if (options_.packDocuments) layOutDocuments();
  if (windows_ < 1)
    throw ConfigError(name_ + " data has " + std::to_string(tokens_->size()) +
                      " tokens, too few for one window of sequence length " +
                      std::to_string(sequenceLength_) + " (needs " +
                      std::to_string(sequenceLength_ + 1) + ")");
}

void WindowDataset::layOutDocuments() {
  const std::vector<int64_t> starts = tokens_->documentStarts();
  const int64_t size = tokens_->size();
  packing_.documents = static_cast<int64_t>(starts.size());
  if (options_.splitAcrossWindows) {
    // A document's inputs, tokens [begin, end - 1), all in one window or not.
    for (size_t d = 0; d < starts.size(); ++d) {
      const int64_t end = d + 1 < starts.size() ? starts[d + 1] : size;
      if (end - starts[d] >= 2 && starts[d] / sequenceLength_ != (end - 2) / sequenceLength_)
        ++packing_.cutDocuments;
    }
    return;
  }
  DocumentWindows table = wholeDocumentWindows(starts, size, sequenceLength_);
  windowBegin_ = std::move(table.begin);
  windowLength_ = std::move(table.length);
  windows_ = static_cast<int64_t>(windowBegin_.size());
  packing_.documents = table.documents;
  packing_.cutDocuments = table.cutDocuments;
  if (windows_ > 0)
    packing_.paddedFraction =
        static_cast<double>(table.paddedTargets) / static_cast<double>(windows_ * sequenceLength_);
}

std::pair<int64_t, int64_t> WindowDataset::window(int64_t index) const {
  if (index < 0 || index >= windows_)
    throw ConfigError(name_ + " window " + std::to_string(index) + " is outside [0, " +
                      std::to_string(windows_) + ")");
  if (windowBegin_.empty()) return {index * sequenceLength_, sequenceLength_ + 1};
  const auto at = static_cast<size_t>(index);
  return {windowBegin_[at], windowLength_[at]};
}

Batch WindowDataset::gather(const std::vector<int64_t>& indices) const {
  const auto rows = static_cast<int64_t>(indices.size());
  const int64_t span = sequenceLength_ + 1;  // a window's tokens, its last target's included
  torch::Tensor stacked = torch::zeros({rows, span}, torch::kLong);  // [B, S + 1], padded with 0
  torch::Tensor mask =
      options_.maskTargets ? torch::zeros({rows, span}, torch::kUInt8) : torch::Tensor();
  torch::Tensor documents =
      options_.packDocuments ? torch::empty({rows, span}, torch::kLong) : torch::Tensor();
  std::vector<int64_t> filled(static_cast<size_t>(rows));  // each row's tokens before padding
  for (int64_t row = 0; row < rows; ++row) {
    const auto [begin, length] = window(indices[static_cast<size_t>(row)]);
    filled[static_cast<size_t>(row)] = length;
    tokens_->read(begin, length, stacked.data_ptr<int64_t>() + row * span);
    if (mask.defined()) tokens_->readLossMask(begin, length, mask.data_ptr<uint8_t>() + row * span);
    if (documents.defined()) {
      int64_t* ids = documents.data_ptr<int64_t>() + row * span;
      tokens_->readDocumentIds(begin, length, ids);
      // The padding is a document of its own, after the window's last.
      std::fill(ids + length, ids + span, ids[length - 1] + 1);
    }
  }
  Batch batch;
  // Copies: with one row, contiguous() would return views sharing `stacked`,
  // and the targets left out below would overwrite the inputs.
  batch.input = stacked.narrow(1, 0, sequenceLength_).clone(at::MemoryFormat::Contiguous);
  batch.target = stacked.narrow(1, 1, sequenceLength_).clone(at::MemoryFormat::Contiguous);
  // Target j of a window is its token j + 1, which counts where its mask is 1.
  if (mask.defined())
    batch.target.masked_fill_(mask.narrow(1, 1, sequenceLength_).eq(0), kIgnoredTarget);
  // Targets from token `filled` on are padding.
  for (int64_t row = 0; row < rows; ++row)
    if (int64_t length = filled[static_cast<size_t>(row)]; length < span)
      batch.target[row].narrow(0, length - 1, span - length).fill_(kIgnoredTarget);
  if (documents.defined()) {
    torch::Tensor inputs = documents.narrow(1, 0, sequenceLength_);  // [B, S]
    // Token j + 1 opens another document: token j, whose document ends
    // there, has nothing of its own to predict.
    batch.target.masked_fill_(documents.narrow(1, 1, sequenceLength_).ne(inputs), kIgnoredTarget);
    batch.segments = (inputs - inputs.narrow(1, 0, 1)).contiguous();
  }
  return batch;
}

}  // namespace strata::train
