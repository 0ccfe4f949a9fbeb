// Training windows that keep packed documents whole (data.pack without
// data.split_across_windows), as a table the dataset reads by index.
//
// Documents are taken in order and a window holds as many whole ones as fit
// in its S + 1 tokens (S inputs, the last input's target one further). A
// document that does not fit in the rest of a window starts the next, and
// the rest is padding. A document longer than S + 1 tokens cannot be whole
// anywhere: it is cut into windows of its own, S + 1 tokens each, the next
// starting at the last one's final token (its target there, an input
// here, as unpacked windows overlap), and its remainder begins a window
// that later documents may share. A document of one token has no target
// and takes no place.
// Nothing blocks; the table is built once, in one pass over the starts.
#pragma once

#include <cstdint>
#include <vector>

namespace strata::train {

struct DocumentWindows {
  std::vector<int64_t> begin;   // each window's first token in the source
  std::vector<int64_t> length;  // its source tokens, 2 to S + 1; the rest is padding
  int64_t documents = 0;
  int64_t cutDocuments = 0;   // longer than S + 1 tokens
  int64_t paddedTargets = 0;  // target positions that hold padding, over all windows
};

// `starts`: where each document starts (increasing, the first 0), the last
// ending at `size`.
DocumentWindows wholeDocumentWindows(const std::vector<int64_t>& starts, int64_t size,
                                     int64_t sequenceLength);

}  // namespace strata::train
