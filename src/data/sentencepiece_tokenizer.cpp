#include "strata/data/sentencepiece_tokenizer.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "sentencepiece_plugin.h"
#include "strata/data/text_dataset.h"
#include "strata/error.h"

// Where the build and the install put the plugin (set by CMake for this file
// only).
#ifndef STRATA_SENTENCEPIECE_BUILD_PATH
#define STRATA_SENTENCEPIECE_BUILD_PATH ""
#endif
#ifndef STRATA_SENTENCEPIECE_INSTALL_PATH
#define STRATA_SENTENCEPIECE_INSTALL_PATH ""
#endif
#ifndef STRATA_INSTALL_LIBDIR
#define STRATA_INSTALL_LIBDIR "lib"
#endif

namespace strata::train {
namespace {

namespace fs = std::filesystem;
constexpr const char* kPluginName = "libstrata_sentencepiece.so";

// The plugin's functions, resolved once.
struct Plugin {
  decltype(&strata_spm_train) train;
  decltype(&strata_spm_load) load;
  decltype(&strata_spm_free) free;
  decltype(&strata_spm_piece_count) pieceCount;
  decltype(&strata_spm_eos_id) eosId;
  decltype(&strata_spm_encode) encode;
  decltype(&strata_spm_decode) decode;
  decltype(&strata_spm_release) release;
};

std::vector<std::string> pluginCandidates() {
  std::vector<std::string> paths;
  if (const char* env = std::getenv("STRATA_SENTENCEPIECE_LIBRARY"); env && *env)
    paths.push_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    paths.push_back((exe.parent_path() / kPluginName).string());
    // An installed strata command: PREFIX/bin/strata, PREFIX/LIBDIR/strata/.
    paths.push_back(
        (exe.parent_path().parent_path() / STRATA_INSTALL_LIBDIR / "strata" / kPluginName)
            .string());
  }
  for (const char* built : {STRATA_SENTENCEPIECE_BUILD_PATH, STRATA_SENTENCEPIECE_INSTALL_PATH})
    if (*built) paths.push_back(built);
  return paths;
}

template <typename F>
void resolve(void* handle, const std::string& path, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(handle, name));
  if (!f) throw ConfigError(path + ": has no symbol " + name + " (a stale plugin?)");
}

const Plugin& plugin() {
  static std::once_flag once;
  static Plugin p;
  static std::string failure;
  std::call_once(once, [] {
    std::string tried;
    for (const std::string& path : pluginCandidates()) {
      if (!fs::exists(path)) {
        tried += "\n  " + path + ": not there";
        continue;
      }
      // Its own symbol scope first: see the header.
      void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
      if (!handle) {
        tried += "\n  " + path + ": " + dlerror();
        continue;
      }
      try {
        decltype(&strata_spm_abi) abi;
        resolve(handle, path, "strata_spm_abi", abi);
        if (abi() != STRATA_SPM_ABI)
          throw ConfigError(path + ": plugin interface " + std::to_string(abi()) + ", expected " +
                            std::to_string(STRATA_SPM_ABI) + " (a stale plugin?)");
        resolve(handle, path, "strata_spm_train", p.train);
        resolve(handle, path, "strata_spm_load", p.load);
        resolve(handle, path, "strata_spm_free", p.free);
        resolve(handle, path, "strata_spm_piece_count", p.pieceCount);
        resolve(handle, path, "strata_spm_eos_id", p.eosId);
        resolve(handle, path, "strata_spm_encode", p.encode);
        resolve(handle, path, "strata_spm_decode", p.decode);
        resolve(handle, path, "strata_spm_release", p.release);
        return;
      } catch (const ConfigError& e) {
        tried += "\n  " + std::string(e.what());
        p = Plugin{};
      }
    }
    failure = "SentencePiece support needs Strata's plugin " + std::string(kPluginName) +
              ", not found or not loadable (set STRATA_SENTENCEPIECE_LIBRARY to its path):" + tried;
  });
  if (!failure.empty()) throw ConfigError(failure);
  return p;
}

// Throws ConfigError(prefix + the plugin's message + suffix) when `error` is
// set.
void check(char* error, const std::string& prefix, const std::string& suffix = "") {
  if (!error) return;
  std::string message = prefix + error + suffix;
  plugin().release(error);
  throw ConfigError(message);
}

}  // namespace

void trainSentencePiece(const SentencePieceTrainOptions& opt) {
  if (opt.inputs.empty()) throw ConfigError("SentencePiece training needs at least one input file");
  if (opt.outputPrefix.empty()) throw ConfigError("SentencePiece training needs an output prefix");
  std::string inputs;
  for (const std::string& input : opt.inputs) {
    // SentencePiece joins its inputs with commas and names a missing one
    // vaguely: check them here.
    if (input.find(',') != std::string::npos)
      throw ConfigError(input + ": SentencePiece cannot read a file whose name has a comma");
    if (!std::ifstream(input)) throw ConfigError(input + ": cannot open for reading");
    inputs += (inputs.empty() ? "" : ",") + input;
  }
  std::ostringstream coverage;
  coverage << opt.characterCoverage;
  const std::vector<std::pair<std::string, std::string>> flags = {
      {"input", inputs},
      {"model_prefix", opt.outputPrefix},
      {"vocab_size", std::to_string(opt.vocabSize)},
      {"model_type", opt.modelType},
      {"character_coverage", coverage.str()},
      {"byte_fallback", opt.byteFallback ? "true" : "false"},
      // Warnings and errors only, not the progress of every step.
      {"minloglevel", "1"},
  };
  std::vector<const char*> names, values;
  for (const auto& [name, value] : flags) {
    names.push_back(name.c_str());
    values.push_back(value.c_str());
  }
  check(plugin().train(names.data(), values.data(), flags.size()),
        "SentencePiece training on " + inputs + " failed: ");
}

struct SentencePieceTokenizer::Impl {
  void* processor = nullptr;
};

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& modelPath)
    : impl_(std::make_unique<Impl>()) {
  if (!fs::is_regular_file(modelPath))
    throw ConfigError(modelPath + ": no such SentencePiece model file");
  const Plugin& p = plugin();
  check(p.load(modelPath.c_str(), &impl_->processor), modelPath + ": not a SentencePiece model (",
        ")");
  vocabSize_ = p.pieceCount(impl_->processor);
  if (vocabSize_ <= 0) {
    p.free(impl_->processor);
    throw ConfigError(modelPath + ": not a SentencePiece model (it has no pieces)");
  }
  if (const int eos = p.eosId(impl_->processor); eos >= 0) endOfText_ = eos;
  description_ = "SentencePiece (" + modelPath + ": " + std::to_string(vocabSize_) + " pieces)";
}

SentencePieceTokenizer::~SentencePieceTokenizer() {
  if (impl_->processor) plugin().free(impl_->processor);
}

std::vector<int64_t> SentencePieceTokenizer::encode(std::string_view text) const {
  if (int64_t bad = firstInvalidUtf8(std::string(text)); bad >= 0)
    throw ConfigError("text is not UTF-8: byte offset " + std::to_string(bad) +
                      " does not start a valid UTF-8 sequence");
  const Plugin& p = plugin();
  int* ids = nullptr;
  size_t count = 0;
  check(p.encode(impl_->processor, text.data(), text.size(), &ids, &count),
        "SentencePiece encoding failed: ");
  std::vector<int64_t> out(ids, ids + count);
  p.release(ids);
  return out;
}

std::string SentencePieceTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::vector<int> narrow;
  narrow.reserve(ids.size());
  for (int64_t id : ids) {
    if (id < 0 || id >= vocabSize_)
      throw ConfigError("token id " + std::to_string(id) +
                        " is not in the SentencePiece vocabulary of " + std::to_string(vocabSize_) +
                        " ids");
    narrow.push_back(static_cast<int>(id));
  }
  const Plugin& p = plugin();
  char* text = nullptr;
  size_t length = 0;
  check(p.decode(impl_->processor, narrow.data(), narrow.size(), &text, &length),
        "SentencePiece decoding failed: ");
  std::string out(text, length);
  p.release(text);
  return out;
}

}  // namespace strata::train
