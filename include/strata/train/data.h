// strata/train/data/: training data: corpus files, tokenizers, prepared (memory-mapped)
// datasets and the batch reader with a resumable position.
//
// Includes every public header of the folder.
#pragma once

#include "strata/train/data/batch_reader.h"
#include "strata/train/data/byte_level_bpe.h"
#include "strata/train/data/corpus.h"
#include "strata/train/data/data_source.h"
#include "strata/train/data/document_split.h"
#include "strata/train/data/gpt2_bpe.h"
#include "strata/train/data/hf_tokenizer.h"
#include "strata/train/data/prepare.h"
#include "strata/train/data/prepared_data.h"
#include "strata/train/data/sentencepiece_tokenizer.h"
#include "strata/train/data/text_dataset.h"
#include "strata/train/data/tiktoken_bpe.h"
#include "strata/train/data/tiktoken_hugging_face.h"
#include "strata/train/data/token_source.h"
#include "strata/train/data/tokenizer.h"
