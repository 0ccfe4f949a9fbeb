// A tiktoken tokenizer written as Hugging Face's tokenizer.json and
// tokenizer_config.json, so that transformers (and Strata) load an exported
// model's tokenizer from the folder alone, as they load Llama 3's published
// one.
//
// The tokenizer.json is laid out as Llama 3's: a byte-level BPE whose vocab
// is the ranks spelled in GPT-2's byte alphabet and whose merges are every
// cut of each token in two tokens, in the token's rank order (tiktoken joins
// any two adjacent parts whose join is a token, lowest rank first; with every
// cut listed a merge-list BPE joins the same), with ignore_merges (a piece
// that is a token is taken whole, as tiktoken does); the family's pattern
// split before a byte-level pre-tokenizer; the special tokens as added
// tokens at their ids. No post-processor: encoding adds no begin-of-text
// token, as TiktokenBpe::encode adds none. Pure functions; nothing blocks.
#pragma once

#include <string>

#include "strata/data/tiktoken_bpe.h"

namespace strata::train {

// tokenizer.json's text.
std::string tiktokenTokenizerJson(const TiktokenBpe& tokenizer);

// tokenizer_config.json's text: the tokenizer class and the begin and end of
// text tokens.
std::string tiktokenTokenizerConfigJson(const TiktokenBpe& tokenizer);

}  // namespace strata::train
