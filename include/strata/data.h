// strata/data/: text and tokens: tokenizers (byte, GPT-2 BPE, tiktoken, SentencePiece,
// Hugging Face tokenizer.json), corpus files, prepared (memory-mapped) datasets and the batch
// reader with a resumable position; conversations rendered by chat templates with the
// assistant's tokens marked.
//
// Includes every public header of the folder.
#pragma once

#include "strata/data/batch_reader.h"
#include "strata/data/byte_level_bpe.h"
#include "strata/data/chat.h"
#include "strata/data/chat_template.h"
#include "strata/data/corpus.h"
#include "strata/data/document_split.h"
#include "strata/data/gpt2_bpe.h"
#include "strata/data/hf_tokenizer.h"
#include "strata/data/prepare.h"
#include "strata/data/prepared_data.h"
#include "strata/data/sentencepiece_tokenizer.h"
#include "strata/data/text_dataset.h"
#include "strata/data/tiktoken_bpe.h"
#include "strata/data/tiktoken_hugging_face.h"
#include "strata/data/token_source.h"
#include "strata/data/tokenizer.h"
