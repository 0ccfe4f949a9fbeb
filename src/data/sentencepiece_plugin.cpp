// libstrata_sentencepiece.so: the C interface of sentencepiece_plugin.h over
// Debian's libsentencepiece. Built as a module that links only that library,
// never LibTorch.
#include "sentencepiece_plugin.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

char* copyText(const std::string& s) {
  char* copy = static_cast<char*>(std::malloc(s.size() + 1));
  if (copy) std::memcpy(copy, s.c_str(), s.size() + 1);
  return copy;
}

char* errorOf(const sentencepiece::util::Status& status) {
  return status.ok() ? nullptr : copyText(status.ToString());
}

const sentencepiece::SentencePieceProcessor& processorOf(const void* p) {
  return *static_cast<const sentencepiece::SentencePieceProcessor*>(p);
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int strata_spm_abi(void) { return STRATA_SPM_ABI; }

__attribute__((visibility("default"))) char* strata_spm_train(const char* const* names,
                                                              const char* const* values,
                                                              size_t count) {
  try {
    std::unordered_map<std::string, std::string> flags;
    for (size_t i = 0; i < count; ++i) flags[names[i]] = values[i];
    return errorOf(sentencepiece::SentencePieceTrainer::Train(flags));
  } catch (const std::exception& e) {
    return copyText(e.what());
  }
}

__attribute__((visibility("default"))) char* strata_spm_load(const char* path, void** processor) {
  try {
    auto sp = std::make_unique<sentencepiece::SentencePieceProcessor>();
    if (char* error = errorOf(sp->Load(path))) return error;
    *processor = sp.release();
    return nullptr;
  } catch (const std::exception& e) {
    return copyText(e.what());
  }
}

__attribute__((visibility("default"))) void strata_spm_free(void* processor) {
  delete static_cast<sentencepiece::SentencePieceProcessor*>(processor);
}

__attribute__((visibility("default"))) int strata_spm_piece_count(const void* processor) {
  return processorOf(processor).GetPieceSize();
}

__attribute__((visibility("default"))) int strata_spm_eos_id(const void* processor) {
  return processorOf(processor).eos_id();
}

__attribute__((visibility("default"))) char* strata_spm_encode(const void* processor,
                                                               const char* text, size_t length,
                                                               int** ids, size_t* count) {
  try {
    std::vector<int> out;
    if (char* error = errorOf(processorOf(processor).Encode(std::string_view(text, length), &out)))
      return error;
    *ids = static_cast<int*>(std::malloc(std::max<size_t>(out.size(), 1) * sizeof(int)));
    if (!*ids) return copyText("out of memory");
    std::memcpy(*ids, out.data(), out.size() * sizeof(int));
    *count = out.size();
    return nullptr;
  } catch (const std::exception& e) {
    return copyText(e.what());
  }
}

__attribute__((visibility("default"))) char* strata_spm_decode(const void* processor,
                                                               const int* ids, size_t count,
                                                               char** text, size_t* length) {
  try {
    std::string out;
    if (char* error =
            errorOf(processorOf(processor).Decode(std::vector<int>(ids, ids + count), &out)))
      return error;
    *text = static_cast<char*>(std::malloc(std::max<size_t>(out.size(), 1)));
    if (!*text) return copyText("out of memory");
    std::memcpy(*text, out.data(), out.size());
    *length = out.size();
    return nullptr;
  } catch (const std::exception& e) {
    return copyText(e.what());
  }
}

__attribute__((visibility("default"))) void strata_spm_release(void* buffer) { std::free(buffer); }
}
