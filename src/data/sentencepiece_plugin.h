// The C interface of libstrata_sentencepiece.so, the plugin that wraps
// Debian's libsentencepiece (see strata/data/sentencepiece_tokenizer.h
// for why it is a plugin). Plain C types only, so nothing of either side's
// C++ library crosses it.
//
// Each function that can fail returns NULL on success or an error message
// allocated with malloc, which the caller releases with
// strata_spm_release(). Buffers the plugin returns are released the same
// way. Nothing blocks but strata_spm_train.
#pragma once

#include <stddef.h>

extern "C" {

// Bumped when any signature below changes.
#define STRATA_SPM_ABI 1
int strata_spm_abi(void);

// Trains with SentencePiece's flags as name/value pairs (without "--").
char* strata_spm_train(const char* const* names, const char* const* values, size_t count);

// Loads a .model file into *processor.
char* strata_spm_load(const char* path, void** processor);
void strata_spm_free(void* processor);
// The vocabulary size; the id of </s>, or -1 when the model has none.
int strata_spm_piece_count(const void* processor);
int strata_spm_eos_id(const void* processor);

// *ids gets *count ids (released with strata_spm_release).
char* strata_spm_encode(const void* processor, const char* text, size_t length, int** ids,
                        size_t* count);
// *text gets *length bytes (released with strata_spm_release).
char* strata_spm_decode(const void* processor, const int* ids, size_t count, char** text,
                        size_t* length);

void strata_spm_release(void* buffer);
}
