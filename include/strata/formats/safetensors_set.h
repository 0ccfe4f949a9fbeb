// Hugging Face's sharded safetensors: one model's tensors over several files
// model-00001-of-00003.safetensors ... beside an index,
// model.safetensors.index.json:
//
//   {"metadata": {"total_size": BYTES}, "weight_map": {"NAME": "FILE", ...}}
//
// SafetensorsSet reads a model whatever way it was saved: a .safetensors
// file, an index (each shard it names mapped read-only), or a directory
// holding model.safetensors or model.safetensors.index.json. Construction
// checks every shard's header and that each shard holds exactly the tensors
// the index maps to it. writeShardedSafetensors writes the other way round.
//
// Blocks on disk I/O only. Every problem throws SafetensorsError naming the
// file: a missing shard or index, an index that is not JSON of that shape, a
// tensor mapped to a shard that lacks it or in two shards.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "strata/formats/safetensors.h"

namespace strata::formats {

class SafetensorsSet {
 public:
  explicit SafetensorsSet(const std::string& path);
  ~SafetensorsSet();

  // What was opened: the file, or the index.
  const std::string& path() const { return path_; }
  // Every tensor of every shard.
  const std::map<std::string, SafetensorsEntry>& entries() const { return entries_; }
  // The file that holds `name`, for messages.
  const std::string& fileOf(const std::string& name) const;
  // A read-only view of the tensor, valid while the set lives (as
  // SafetensorsFile::view); throws SafetensorsError for an unknown name.
  at::Tensor view(const std::string& name) const;

 private:
  void openIndex(const std::string& indexPath);
  void add(std::unique_ptr<SafetensorsFile> file);

  std::string path_;
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, const SafetensorsFile*> holder_;
};

// Writes `tensors` (in order) as `out` when they fit in maxShardBytes (or
// maxShardBytes is 0), else as shards STEM-0000N-of-0000M.safetensors of at
// most maxShardBytes each (a tensor larger than that alone in its shard) and
// STEM.safetensors.index.json, STEM being `out` without ".safetensors".
// Returns the files written, the index last. Atomic per file; throws as
// writeSafetensors.
std::vector<std::string> writeShardedSafetensors(
    const std::string& out, const std::vector<std::pair<std::string, at::Tensor>>& tensors,
    const std::map<std::string, std::string>& metadata, int64_t maxShardBytes);

}  // namespace strata::formats
