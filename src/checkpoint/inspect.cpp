#include "strata/checkpoint/inspect.h"

#include <filesystem>
#include <map>

#include "strata/checkpoint/checkpoint.h"
#include "strata/error.h"
#include "strata/runtime/layout.h"
#include "strata/util/toml.h"

namespace strata::train {
namespace {

int64_t elementBytes(const std::string& dtype) {
  if (dtype == "float64") return 8;
  if (dtype == "float16" || dtype == "bfloat16") return 2;
  return 4;
}

std::vector<util::TomlEntry> savedConfig(const CheckpointInfo& info) {
  return util::readToml(info.configToml, "the checkpoint's config");
}

// The value of `table`.`key` in the run's configuration: a string as it is,
// anything else as written ("" when it has none).
std::string savedValue(const std::vector<util::TomlEntry>& config, const std::string& table,
                       const std::string& key) {
  for (const util::TomlEntry& entry : config) {
    if (entry.table != table || entry.key != key) continue;
    if (const auto* text = std::get_if<std::string>(&entry.value)) return *text;
    return util::tomlLiteral(entry.value);
  }
  return "";
}

// What the layout's degrees leave out: the schedule, virtual stages, ep and
// the ZeRO stage the run trained with.
std::string trainedWith(const CheckpointInfo& info, const std::vector<util::TomlEntry>& config) {
  std::string text;
  std::string schedule = savedValue(config, "parallel", "schedule");
  if (!schedule.empty()) text += ", schedule " + schedule;
  std::string virtualStages = savedValue(config, "parallel", "virtual_stages");
  if (!virtualStages.empty() && virtualStages != "1") text += " x " + virtualStages + " virtual";
  std::string ep = savedValue(config, "parallel", "ep");
  if (!ep.empty() && ep != "1") text += ", ep " + ep;
  std::string zero = savedValue(config, "parallel", "zero");
  if (!zero.empty() && zero != "0")
    text += ", ZeRO-" + zero;
  else if (zero.empty() && info.shardedOptimizers > 0)
    text += ", ZeRO";
  return text;
}

// The [model] table of the run's configuration, as written, and its
// [model.moe] and [model.rope_scaling] tables on lines of their own when the
// model has experts or scaled rotary frequencies.
void printModel(const std::vector<util::TomlEntry>& config, std::ostream& out) {
  auto printTable = [&](const std::string& table, const std::string& label) {
    out << label << ":";
    for (const util::TomlEntry& entry : config)
      if (entry.table == table) out << " " << entry.key << " " << util::tomlLiteral(entry.value);
    out << "\n";
  };
  printTable("model", "model");
  std::string experts = savedValue(config, "model.moe", "experts");
  if (!experts.empty() && experts != "0") printTable("model.moe", "experts");
  std::string scaling = savedValue(config, "model.rope_scaling", "type");
  if (!scaling.empty() && scaling != "none") printTable("model.rope_scaling", "rope scaling");
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
  std::vector<util::TomlEntry> config = savedConfig(info);
  out << "checkpoint: " << stepDir << "\n"
      << "step: " << info.step << "\n"
      << "format: " << info.format
      << (info.format < 2 ? " (no tensor index: loads only into its own layout)" : "") << "\n"
      << "written by: strata " << (info.strataVersion.empty() ? "before 0.5.0" : info.strataVersion)
      << "\n"
      << "layout: " << ParallelLayout(info.worldSize, info.degrees).describe() << " on "
      << info.worldSize << (info.worldSize == 1 ? " rank" : " ranks") << trainedWith(info, config)
      << "\n";
  printModel(config, out);
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
