#include "data_command.h"

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>

#include "data_prepare_command.h"
#include "strata/data/sentencepiece_tokenizer.h"
#include "strata/data/tokenizer.h"
#include "strata/error.h"
#include "strata/util/cli_flags.h"
#include "strata/util/parse_number.h"

namespace strata {
namespace {

struct TokenizerOptions {
  bool train = false;
  train::SentencePieceTrainOptions trainOptions;
  std::string tokenizer, encodePath, decodePath;
};

void addFlags(CLI::App& command, TokenizerOptions& o) {
  addSwitch(command, "train", &o.train,
            "train a SentencePiece tokenizer on --input, written to --output.model and .vocab");
  command.add_option("--input", o.trainOptions.inputs,
                     "text files to train on (one sentence a line); repeat or list several");
  addTextFlag(command, "--output", &o.trainOptions.outputPrefix,
              "prefix of the trained model: writes PREFIX.model and PREFIX.vocab");
  addIntFlag(command, "--vocab-size", &o.trainOptions.vocabSize, "vocabulary size to train", 1,
             1 << 30);
  addTextFlag(command, "--model-type", &o.trainOptions.modelType,
              "SentencePiece model type: unigram, bpe, char or word");
  addRealFlag(command, "--character-coverage", &o.trainOptions.characterCoverage,
              "share of the input's characters the vocabulary must cover (1.0 for small "
              "alphabets, 0.9995 for large ones)");
  addSwitch(command, "byte-fallback", &o.trainOptions.byteFallback,
            "spell characters outside the vocabulary as byte tokens instead of <unk>");
  addTextFlag(command, "--tokenizer", &o.tokenizer,
              "the tokenizer to use: byte, a Hugging Face tokenizer.json (or a directory with "
              "one), a directory with GPT-2's encoder.json and vocab.bpe (or vocab.json and "
              "merges.txt), or a SentencePiece .model file");
  addTextFlag(command, "--encode", &o.encodePath,
              "print the token ids of this file's text (- for standard input), space-separated");
  addTextFlag(command, "--decode", &o.decodePath,
              "write the text of the whitespace-separated token ids in this file (- for "
              "standard input)");
}

void checkFlags(const CLI::App& command, const TokenizerOptions& o) {
  if (o.train) {
    for (const char* flag : {"--tokenizer", "--encode", "--decode"})
      if (command.count(flag) > 0)
        throw flagError(command, std::string(flag) + " does not go with --train");
    if (o.trainOptions.inputs.empty()) throw flagError(command, "--train needs --input FILES");
    if (o.trainOptions.outputPrefix.empty()) throw flagError(command, "--train needs --output");
    return;
  }
  for (const char* flag :
       {"--input", "--output", "--vocab-size", "--model-type", "--character-coverage"})
    if (command.count(flag) > 0) throw flagError(command, std::string(flag) + " needs --train");
  if (o.tokenizer.empty()) throw flagError(command, "give --train, or --tokenizer to use one");
  if (!o.encodePath.empty() && !o.decodePath.empty())
    throw flagError(command, "--encode and --decode exclude each other");
}

std::string readAll(const std::string& path) {
  if (path == "-") return {std::istreambuf_iterator<char>(std::cin), {}};
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open for reading");
  return {std::istreambuf_iterator<char>(in), {}};
}

int run(const TokenizerOptions& o, std::ostream& out) {
  if (o.train) {
    train::trainSentencePiece(o.trainOptions);
    out << "wrote " << o.trainOptions.outputPrefix << ".model and " << o.trainOptions.outputPrefix
        << ".vocab\n";
    return 0;
  }
  std::unique_ptr<train::Tokenizer> tokenizer = train::makeTokenizer(o.tokenizer);
  if (!o.encodePath.empty()) {
    const std::string text = readAll(o.encodePath);
    std::vector<int64_t> ids;
    try {
      ids = tokenizer->encode(text);
    } catch (const ConfigError& e) {
      throw ConfigError(o.encodePath + ": " + e.what());
    }
    for (size_t i = 0; i < ids.size(); ++i) out << (i ? " " : "") << ids[i];
    out << "\n";
  } else if (!o.decodePath.empty()) {
    std::istringstream words(readAll(o.decodePath));
    std::vector<int64_t> ids;
    std::string word;
    while (words >> word) {
      std::optional<int64_t> id = parseInteger(word);
      if (!id) throw ConfigError(o.decodePath + ": '" + word + "' is not a token id");
      ids.push_back(*id);
    }
    out << tokenizer->decode(ids);
  } else {
    out << tokenizer->describe() << "\nvocabulary size " << tokenizer->vocabSize() << "\n";
  }
  return 0;
}

}  // namespace

std::vector<Subcommand> addDataCommands(CLI::App& strata, std::ostream& out) {
  CLI::App* data = strata.add_subcommand(
      "data", "data tools: train and use tokenizers, prepare datasets larger than memory");
  data->require_subcommand(1);
  CLI::App* command = data->add_subcommand(
      "tokenizer", "train a SentencePiece tokenizer, or encode and decode text with a tokenizer");
  command->allow_extras();
  command->footer(
      "  strata data tokenizer --train --vocab-size 8000 --input a.txt b.txt --output tok\n"
      "  strata data tokenizer --tokenizer tok.model --encode text.txt > ids.txt\n"
      "  strata data tokenizer --tokenizer gpt2/ --decode ids.txt");
  auto options = std::make_shared<TokenizerOptions>();
  addFlags(*command, *options);
  Subcommand tokenizer{command, [command, options, &out] {
                         checkFlags(*command, *options);
                         return run(*options, out);
                       }};
  return {tokenizer, addDataPrepareCommand(*data)};
}

}  // namespace strata
