#include "strata/data/document_split.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "strata/error.h"

namespace strata::train {
namespace {

// The tokens of some documents of a prepared file, concatenated: runs of
// adjacent documents, each a range of the file.
class DocumentRuns : public TokenSource {
 public:
  DocumentRuns(std::shared_ptr<const PreparedData> data, std::string name)
      : data_(std::move(data)), name_(std::move(name)) {}

  // Appends file tokens [begin, end), one document, merging with the last
  // run when adjacent.
  void add(int64_t begin, int64_t end) {
    if (end == begin) return;
    documentStart_.push_back(size_);
    if (!fileBegin_.empty() && fileBegin_.back() + length_.back() == begin) {
      length_.back() += end - begin;
    } else {
      start_.push_back(size_);
      fileBegin_.push_back(begin);
      length_.push_back(end - begin);
    }
    size_ += end - begin;
  }

  int64_t size() const override { return size_; }

  void read(int64_t begin, int64_t count, int64_t* out) const override {
    forEachRun(begin, count, [&](int64_t fileBegin, int64_t take) {
      data_->read(fileBegin, take, out);
      out += take;
    });
  }

  bool hasDocuments() const override { return true; }
  // A document's number is its index among this source's documents.
  void readDocumentIds(int64_t begin, int64_t count, int64_t* out) const override {
    checkTokenRange(data_->prefix() + " (" + name_ + " documents)", begin, count, size_);
    auto next = std::upper_bound(documentStart_.begin(), documentStart_.end(), begin);
    int64_t document = (next - documentStart_.begin()) - 1;
    for (int64_t t = begin; t < begin + count; ++t) {
      if (next != documentStart_.end() && *next == t) {
        ++next;
        ++document;
      }
      *out++ = document;
    }
  }

  std::vector<int64_t> documentStarts() const override { return documentStart_; }

  bool hasLossMask() const override { return data_->hasLossMask(); }
  void readLossMask(int64_t begin, int64_t count, uint8_t* out) const override {
    forEachRun(begin, count, [&](int64_t fileBegin, int64_t take) {
      data_->readLossMask(fileBegin, take, out);
      out += take;
    });
  }

 private:
  // Calls read(fileBegin, take) for the file's pieces of [begin, begin + count).
  template <typename Read>
  void forEachRun(int64_t begin, int64_t count, Read read) const {
    checkTokenRange(data_->prefix() + " (" + name_ + " documents)", begin, count, size_);
    // The run holding `begin`: the last one starting at or before it.
    size_t run = static_cast<size_t>(std::upper_bound(start_.begin(), start_.end(), begin) -
                                     start_.begin()) -
                 1;
    while (count > 0) {
      int64_t offset = begin - start_[run];
      int64_t take = std::min(count, length_[run] - offset);
      read(fileBegin_[run] + offset, take);
      begin += take;
      count -= take;
      ++run;
    }
  }

  std::shared_ptr<const PreparedData> data_;
  std::string name_;
  std::vector<int64_t> start_;      // where each run starts in this source
  std::vector<int64_t> fileBegin_;  // where it starts in the file
  std::vector<int64_t> length_;
  std::vector<int64_t> documentStart_;  // where each document starts in this source
  int64_t size_ = 0;
};

}  // namespace

bool isValidationDocument(int64_t document, double validationFraction) {
  // In integers, so no rounding of (d + 1) * f decides a document.
  constexpr int64_t kMillion = 1000000;
  const int64_t parts = std::llround(validationFraction * kMillion);
  auto ceilMillionths = [&](int64_t n) { return (n * parts + kMillion - 1) / kMillion; };
  return ceilMillionths(document + 1) > ceilMillionths(document);
}

DocumentSplit splitDocuments(std::shared_ptr<const PreparedData> data, double validationFraction) {
  if (!(validationFraction >= 1e-6 && validationFraction <= 1 - 1e-6))
    throw ConfigError(
        "validation fraction must be in [1e-6, 1 - 1e-6] to split by documents, got " +
        std::to_string(validationFraction));
  auto train = std::make_shared<DocumentRuns>(data, "training");
  auto validation = std::make_shared<DocumentRuns>(data, "validation");
  DocumentSplit split;
  int64_t begin = data->documentStart(0);
  for (int64_t d = 0; d < data->documents(); ++d) {
    int64_t end = data->documentStart(d + 1);
    if (isValidationDocument(d, validationFraction)) {
      validation->add(begin, end);
      ++split.validationDocuments;
    } else {
      train->add(begin, end);
      ++split.trainDocuments;
    }
    begin = end;
  }
  if (split.trainDocuments == 0 || split.validationDocuments == 0)
    throw ConfigError(data->indexPath() + ": " + std::to_string(data->documents()) +
                      " documents split into " + std::to_string(split.trainDocuments) +
                      " for training and " + std::to_string(split.validationDocuments) +
                      " for validation (data.validation_fraction " +
                      std::to_string(validationFraction) + "); each part needs at least one");
  split.train = train;
  split.validation = validation;
  return split;
}

std::shared_ptr<const TokenSource> allDocuments(std::shared_ptr<const PreparedData> data) {
  auto all = std::make_shared<DocumentRuns>(data, "all");
  for (int64_t d = 0; d < data->documents(); ++d)
    all->add(data->documentStart(d), data->documentStart(d + 1));
  return all;
}

}  // namespace strata::train
