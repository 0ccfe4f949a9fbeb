// A prepared dataset split into training and validation by whole documents.
//
// Document d of D is held out for validation when
//   ceil((d + 1) * f) > ceil(d * f),      f = data.validation_fraction,
// which picks exactly ceil(D * f) documents spread evenly over the corpus
// (document 0 always among them), the same ones for every seed, layout and
// run. f is taken in millionths and the test done in integers, so no
// rounding decides a document (f = 0.2 holds out exactly every fifth). Each part is the
// concatenation, in document order, of its documents' tokens: a view onto the memory-mapped file
// (runs of adjacent documents), nothing copied. Windows of the training part may cross from one
// training document into the next, never into a validation document's tokens.
//
// Throws ConfigError unless 1e-6 <= f <= 1 - 1e-6, and naming the index when either
// part would have no document. Nothing blocks.
#pragma once

#include <cstdint>
#include <memory>

#include "strata/data/prepared_data.h"
#include "strata/data/token_source.h"

namespace strata::train {

bool isValidationDocument(int64_t document, double validationFraction);

struct DocumentSplit {
  std::shared_ptr<const TokenSource> train;
  std::shared_ptr<const TokenSource> validation;
  int64_t trainDocuments = 0;
  int64_t validationDocuments = 0;
};

DocumentSplit splitDocuments(std::shared_ptr<const PreparedData> data, double validationFraction);

// Every document of `data`, in order (what `strata eval` measures on).
std::shared_ptr<const TokenSource> allDocuments(std::shared_ptr<const PreparedData> data);

}  // namespace strata::train
