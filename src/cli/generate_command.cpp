#include "generate_command.h"

#include <iostream>

#include "strata/error.h"
#include "strata/train/loop/generate.h"
#include "strata/util/flags.h"

namespace strata {

int generateCommand(const std::vector<std::string>& args) {
  train::GenerateOptions o;
  long long tokens = o.tokens, topK = o.topK, seed = o.seed;
  FlagSet flags("strata generate",
                "Sample text from a checkpoint written by strata train (any layout).\n\n"
                "  strata generate --checkpoint DIR --prompt \"the old dog\" [--temperature 0.8 "
                "--top-k 20]");
  flags.addString("checkpoint", &o.checkpoint, "checkpoint directory (its latest complete step)");
  flags.addString("prompt", &o.prompt, "text to continue");
  flags.addInt("tokens", &tokens, "bytes to generate", 0);
  flags.addDouble("temperature", &o.temperature, "sampling temperature; 0 is greedy");
  flags.addInt("top-k", &topK, "sample among the k likeliest bytes (k >= 1); unset: all", 1);
  flags.addInt("seed", &seed, "sampling seed", 0);
  try {
    ParsedArgs parsed = flags.parse(args);
    if (parsed.helpRequested) {
      std::cout << flags.help();
      return 0;
    }
    if (!parsed.positional.empty())
      throw FlagError("strata generate: unexpected '" + parsed.positional[0] + "'");
    o.tokens = tokens;
    o.topK = topK;
    o.seed = seed;
    if (o.checkpoint.empty()) throw FlagError("strata generate: --checkpoint DIR is required");
    std::cout << train::generateText(o) << std::endl;
    return 0;
  } catch (const FlagError& e) {
    std::cerr << e.what() << std::endl;
    return 2;
  } catch (const ConfigError& e) {
    std::cerr << "strata generate: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "strata generate: " << e.what() << std::endl;
    return 1;
  }
}

}  // namespace strata
