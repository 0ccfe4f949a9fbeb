#include "document_windows.h"

namespace strata::train {
namespace {

class WindowTable {
 public:
  WindowTable(int64_t sequenceLength) : sequenceLength_(sequenceLength) {}

  // A window of tokens [begin, end); one without a target (a lone token)
  // trains nothing and is left out.
  void add(int64_t begin, int64_t end) {
    if (end - begin < 2) return;
    windows_.begin.push_back(begin);
    windows_.length.push_back(end - begin);
    windows_.paddedTargets += sequenceLength_ + 1 - (end - begin);
  }
  DocumentWindows& windows() { return windows_; }

 private:
  int64_t sequenceLength_;
  DocumentWindows windows_;
};

}  // namespace

DocumentWindows wholeDocumentWindows(const std::vector<int64_t>& starts, int64_t size,
                                     int64_t sequenceLength) {
  const int64_t span = sequenceLength + 1;  // a window's tokens, its last target's included
  WindowTable table(sequenceLength);
  int64_t open = starts.empty() ? size : starts.front();  // the open window's first token
  for (size_t d = 0; d < starts.size(); ++d) {
    const int64_t begin = starts[d];
    const int64_t end = d + 1 < starts.size() ? starts[d + 1] : size;
    if (end == begin) continue;
    ++table.windows().documents;
    if (end - open <= span) continue;  // fits beside the window's earlier documents
    if (begin > open) {                // it does not: the window closes before it
      table.add(open, begin);
      open = begin;
    }
    if (end - begin > span) ++table.windows().cutDocuments;
    while (end - open > span) {
      table.add(open, open + span);
      open += sequenceLength;
    }
    // One token left, nothing to train: a cut document's last (the last
    // window's final target already), or a document of one token.
    if (end - open == 1) open = end;
  }
  table.add(open, size);
  return std::move(table.windows());
}

}  // namespace strata::train
