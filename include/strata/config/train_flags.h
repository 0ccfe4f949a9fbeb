// The flags of `strata train`: `--config FILE` plus one flag per option of
// configOptions() (`--pp 2 --tp 2 --lr 3e-4 ...`), so a new option gets its
// flag with it. Defaults come from TrainConfig, then the file, then the flags
// that were given, so a flag always wins over the file.
//
// Nothing blocks. A malformed value throws FlagError naming the flag and the
// value during the parse (cli_flags.h). config() reads the file after the
// parse and throws whatever readConfigFile throws. Values are not checked
// against each other or the world size: that is validateConfig()
// (validate_config.h).
#pragma once

#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "strata/config/config.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace strata::train {

class TrainFlags {
 public:
  // Declares the flags on `command`; the parse writes into this object, so it
  // stays where it is until the parse is over.
  explicit TrainFlags(CLI::App& command);
  TrainFlags(const TrainFlags&) = delete;
  TrainFlags& operator=(const TrainFlags&) = delete;

  // After the parse: the defaults, then the --config file, then the flags
  // given (--architecture without --tied-embeddings takes the architecture's
  // default for it, as a file does).
  TrainConfig config() const;
  // After the parse: "table.key" of every option the --config file or a flag
  // set (the others hold TrainConfig's defaults).
  std::set<std::string> optionsSet() const;

 private:
  // Whether --FLAG was on the command line.
  bool given(const std::string& flag) const;

  std::string configPath_;
  TrainConfig flagValues_;  // each flag's value; only those given are used
  // A list option's flag takes its items comma-separated ("a.txt,b.txt"):
  // the text as given, per option (std::map: stable addresses for the parse).
  std::map<const ConfigOption*, std::string> listTexts_;
  std::vector<std::pair<const ConfigOption*, const CLI::Option*>> flags_;
};

}  // namespace strata::train
