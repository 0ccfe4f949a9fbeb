// The training and validation data a TrainConfig names, ready to read.
//
// Text comes from data.files (concatenated by readTextFiles) or, when none
// are named, from generateCorpus(data.corpus_seed, data.corpus_bytes). It is
// tokenised with data.tokenizer (byte by byte unless it names another), its
// last data.validation_fraction held out, and both parts cut into windows of
// train.seq_len. A model.vocab smaller than the tokenizer's is a ConfigError.
//
// With data.prepared, the tokens come instead from that prepared dataset
// (prepared_data.h) through a memory map shared by every process on the
// host, split by whole documents (document_split.h); its vocabulary must be
// data.tokenizer's.
//
// Every rank builds the same split from the same config, before any
// communication, so errors (a missing file, too little text for one global
// batch) are raised on every rank alike: ConfigError naming the file or the
// sizes. Reads files; never communicates.
#pragma once

#include <memory>
#include <string>

#include "strata/config/config.h"
#include "strata/data/batch_reader.h"
#include "strata/data/prepared_data.h"
#include "strata/data/text_dataset.h"
#include "strata/data/tokenizer.h"

namespace strata::train {

struct DataSplit {
  WindowDataset train;
  WindowDataset validation;
  // Whether targets outside the loss mask are kIgnoredTarget (data.loss_on).
  bool lossMasked = false;
  // Whether batches carry their documents (Batch::segments, data.pack).
  bool packed = false;
};

DataSplit makeDataSplit(const TrainConfig& config);

// Replica `dpRank` of parallel.dp: shuffled training batches seeded by
// train.seed (shuffle per data.shuffle), starting at the beginning; seek()
// to resume.
BatchReader makeTrainReader(const DataSplit& data, const TrainConfig& config, int dpRank);
// The same global batch size and sharding over the validation windows, in
// order, so every evaluation sees the same batches.
BatchReader makeValidationReader(const DataSplit& data, const TrainConfig& config, int dpRank);

}  // namespace strata::train
