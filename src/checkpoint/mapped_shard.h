// A checkpoint shard opened without reading its tensors: the file is mapped
// into memory and the archive's object tree unpickled with every tensor a
// view of its record in the mapping. A reader that copies out some tensors
// reads only their pages from disk, and holds only those in memory.
//
// Why: `strata export`, `strata generate`, `strata checkpoint convert` and a
// resharded resume each need a few tensors of a shard (a one-process
// checkpoint's parameters are a third of it beside AdamW's two moments),
// and LibTorch's archive loader reads every record into memory first.
//
// The shard is the archive serializeShard writes (checkpoint_shard.h):
// LibTorch's zip container, whose records are stored uncompressed and
// aligned, so a record's bytes are the tensor's. The tensors are read-only
// views: writing to one faults. Reads the file; nothing else blocks. Throws
// CheckpointError naming the file when it cannot be opened or is not such
// an archive.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/core/ivalue.h>

#include <memory>
#include <optional>
#include <string>

namespace strata::formats {
class MappedFile;
}

namespace strata::train {

class MappedShard {
 public:
  explicit MappedShard(const std::string& path);

  // The tensor at a '/'-separated key ("model/block0/attention/q/weight",
  // "lr_step"), or nothing when the shard has no tensor there.
  std::optional<at::Tensor> tensor(const std::string& key) const;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::shared_ptr<formats::MappedFile> file_;  // kept alive by every tensor's storage too
  c10::IValue root_;                           // the archive's top-level object
};

}  // namespace strata::train
