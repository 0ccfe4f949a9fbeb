#include "strata/train/checkpoint/inspect.h"

#include <filesystem>
#include <map>

#include "strata/error.h"
#include "strata/runtime/layout.h"
#include "strata/train/checkpoint/checkpoint.h"
#include "strata/util/toml.h"

namespace strata::train {
namespace {

int64_t elementBytes(const std::string& dtype) {
  if (dtype == "float64") return 8;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  return 4;
}

// The [model] table of the run's configuration, as written.
void printModel(const CheckpointInfo& info, std::ostream& out) {
  out << "model:";
  for (const util::TomlEntry& entry : util::readToml(info.configToml, "the checkpoint's config"))
    if (entry.table == "model") out << " " << entry.key << " " << util::tomlLiteral(entry.value);
  out << "\n";
}

// One line per global tensor: kind, shape, bytes, how many pieces hold it.
void printTensors(const CheckpointInfo& info, std::ostream& out) {
  struct Summary {
    std::vector<int64_t> shape;
    std::string dtype;
    int pieces = 0;
    int64_t step = 0;
  };
  std::map<std::pair<std::string, std::string>, Summary> tensors;
  for (const TensorPiece& p : info.pieces) {
    Summary& s = tensors[{p.tensor, p.kind}];
    s.shape = p.shape;
    s.dtype = p.dtype;
    s.step = p.step;
    ++s.pieces;
  }
  int64_t total = 0;
  out << "tensors (" << tensors.size() << "):\n";
  for (const auto& [key, s] : tensors) {
    int64_t bytes = elementBytes(s.dtype);
    for (int64_t n : s.shape) bytes *= n;
    total += bytes;
    out << "  " << key.first << " " << key.second << " " << shapeText(s.shape) << " " << s.dtype
        << " " << bytes << " bytes in " << s.pieces << (s.pieces == 1 ? " piece" : " pieces");
    if (key.second != kParameterKind) out << ", step " << s.step;
    out << "\n";
  }
  out << "tensor bytes: " << total << "\n";
}

}  // namespace

std::string completeStepDirectory(const std::string& path) {
  if (std::filesystem::exists(path + "/COMPLETE")) return path;
  std::optional<std::string> latest = findLatestComplete(path);
  if (!latest) throw CheckpointError("no complete checkpoint under '" + path + "'");
  return *latest;
}

bool inspectCheckpoint(const std::string& path, bool verify, std::ostream& out) {
  std::string stepDir = completeStepDirectory(path);
  CheckpointInfo info = readCheckpointInfo(stepDir);
  out << "checkpoint: " << stepDir << "\n"
      << "step: " << info.step << "\n"
      << "format: " << info.format
      << (info.format < 2 ? " (no tensor index: loads only into its own layout)" : "") << "\n"
      << "written by: strata " << (info.strataVersion.empty() ? "before 0.5.0" : info.strataVersion)
      << "\n"
      << "layout: " << ParallelLayout(info.worldSize, info.degrees).describe() << " on "
      << info.worldSize << (info.worldSize == 1 ? " rank" : " ranks")
      << (info.shardedOptimizers > 0 ? ", ZeRO" : "") << "\n";
  printModel(info, out);
  if (info.format >= 2) printTensors(info, out);
  int64_t bytes = 0;
  for (const ShardRecord& shard : info.shards) bytes += shard.bytes;
  out << "shards: " << info.shards.size() << " files, " << bytes << " bytes\n";
  if (!verify) {
    out << "checksums: metadata matches COMPLETE; shards not reread (--verify rereads them)\n";
    return true;
  }
  bool ok = true;
  for (const ShardRecord& shard : info.shards) {
    try {
      verifyShard(stepDir, shard);
    } catch (const CheckpointError& error) {
      out << "  FAILED " << error.what() << "\n";
      ok = false;
    }
  }
  out << "checksums: " << (ok ? "every shard matches its size and SHA-256" : "FAILED") << "\n";
  return ok;
}

}  // namespace strata::train
