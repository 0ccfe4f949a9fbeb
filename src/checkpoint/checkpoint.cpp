#include "strata/checkpoint/checkpoint.h"

#include <torch/torch.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>

#include "checkpoint/agreed_problem.h"
#include "checkpoint/checkpoint_shard.h"
#include "checkpoint/file_digest.h"
#include "checkpoint/gather_text.h"
#include "checkpoint/save_stages.h"
#include "formats/atomic_file.h"
#include "runtime/sha256.h"
#include "strata/runtime/communicator.h"
#include "strata/util/parse_number.h"
#include "strata/util/toml.h"
#include "strata/version.h"

namespace strata::train {
namespace {

namespace fs = std::filesystem;

constexpr const char* kMetadataFile = "metadata.toml";
constexpr const char* kMarkerFile = "COMPLETE";
// 2: with the tensor index (tensor_index.h) and AdamW's state by parameter.
constexpr int64_t kFormatVersion = 2;
constexpr int64_t kDigestBytes = 32;

std::string shardFileName(int rank) {
  char name[32];
  std::snprintf(name, sizeof(name), "rank-%05d.pt", rank);
  return name;
}

std::string join(const std::string& dir, const std::string& file) {
  return (fs::path(dir) / file).string();
}

std::string shardTable(size_t rank) {
  char table[32];
  std::snprintf(table, sizeof(table), "shard-%05zu", rank);
  return table;
}

// strata_version is an added key, not a new format: readers look keys up by
// name, so Strata before 0.5.0 reads these checkpoints too.
std::string metadataText(const CheckpointInfo& info) {
  const ParallelDegrees& d = info.degrees;
  std::string text = util::tomlTable("checkpoint", {{"format", kFormatVersion},
                                                    {"strata_version", std::string(kVersion)},
                                                    {"step", info.step},
                                                    {"world_size", int64_t{info.worldSize}},
                                                    {"pp", int64_t{d.pp}},
                                                    {"dp", int64_t{d.dp}},
                                                    {"cp", int64_t{d.cp}},
                                                    {"tp", int64_t{d.tp}},
                                                    {"sharded_optimizers", info.shardedOptimizers},
                                                    {"fully_sharded", info.fullySharded},
                                                    {"config", info.configToml}});
  for (size_t rank = 0; rank < info.shards.size(); ++rank) {
    const ShardRecord& shard = info.shards[rank];
    text += "\n" + util::tomlTable(
                       shardTable(rank),
                       {{"file", shard.file}, {"bytes", shard.bytes}, {"sha256", shard.sha256}});
  }
  return text + tensorIndexToml(info.pieces);
}

// metadata.toml's entries by "table.key"; every lookup failure names the file.
class Metadata {
 public:
  Metadata(const std::string& text, const std::string& path) : path_(path) {
    try {
      for (util::TomlEntry& entry : util::readToml(text, path))
        values_[entry.name()] = std::move(entry.value);
    } catch (const ConfigError& error) {
      throw CheckpointError(std::string("corrupt checkpoint metadata: ") + error.what());
    }
  }
  template <typename T>
  T get(const std::string& key) const {
    std::optional<T> value = find<T>(key);
    if (!value)
      throw CheckpointError("checkpoint metadata '" + path_ + "' lacks a valid '" + key + "'");
    return *value;
  }
  // nullopt when absent; a present key of another type is still an error.
  template <typename T>
  std::optional<T> find(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    if (!std::holds_alternative<T>(it->second))
      throw CheckpointError("checkpoint metadata '" + path_ + "' lacks a valid '" + key + "'");
    return std::get<T>(it->second);
  }

 private:
  std::string path_;
  std::map<std::string, util::TomlValue> values_;
};

CheckpointInfo parseMetadata(const Metadata& m) {
  CheckpointInfo info;
  // Checkpoints written before Strata had a version lack the key; they load.
  info.strataVersion = m.find<std::string>("checkpoint.strata_version").value_or("");
  info.format = m.get<int64_t>("checkpoint.format");
  info.shardedOptimizers = m.find<int64_t>("checkpoint.sharded_optimizers").value_or(0);
  // Absent before ZeRO-3 existed.
  info.fullySharded = m.find<bool>("checkpoint.fully_sharded").value_or(false);
  info.step = m.get<int64_t>("checkpoint.step");
  info.worldSize = static_cast<int>(m.get<int64_t>("checkpoint.world_size"));
  info.degrees.pp = static_cast<int>(m.get<int64_t>("checkpoint.pp"));
  info.degrees.dp = static_cast<int>(m.get<int64_t>("checkpoint.dp"));
  info.degrees.cp = static_cast<int>(m.get<int64_t>("checkpoint.cp"));
  info.degrees.tp = static_cast<int>(m.get<int64_t>("checkpoint.tp"));
  info.configToml = m.get<std::string>("checkpoint.config");
  for (size_t rank = 0; rank < static_cast<size_t>(info.worldSize); ++rank) {
    std::string table = shardTable(rank);
    info.shards.push_back({m.get<std::string>(table + ".file"), m.get<int64_t>(table + ".bytes"),
                           m.get<std::string>(table + ".sha256")});
  }
  return info;
}

// A checksum as 32 int64 values (one per byte), for the all-gather.
std::vector<int64_t> digestValues(const std::string& hex) {
  std::vector<int64_t> values;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    std::optional<int64_t> byte = parseInteger(std::string_view(hex).substr(i, 2), 16);
    if (!byte || *byte < 0) throw CheckpointError("shard checksum '" + hex + "' is not hex");
    values.push_back(*byte);
  }
  return values;
}

std::string digestHex(const int64_t* values) {
  std::string hex;
  char pair[3];
  for (int64_t i = 0; i < kDigestBytes; ++i) {
    std::snprintf(pair, sizeof(pair), "%02x", static_cast<unsigned>(values[i]));
    hex += pair;
  }
  return hex;
}

// Every rank's ShardRecord, gathered as [bytes, digest bytes...] rows.
std::vector<ShardRecord> gatherShardRecords(const ShardRecord& mine, Communicator& world) {
  std::vector<int64_t> row = {mine.bytes};
  std::vector<int64_t> digest = digestValues(mine.sha256);
  row.insert(row.end(), digest.begin(), digest.end());
  at::Tensor input = torch::tensor(row, torch::kLong);                                  // [33]
  at::Tensor output = torch::empty({world.size() * (kDigestBytes + 1)}, torch::kLong);  // [W * 33]
  world.allGather(output, input);
  const int64_t* values = output.data_ptr<int64_t>();
  std::vector<ShardRecord> records;
  for (int r = 0; r < world.size(); ++r) {
    const int64_t* rowStart = values + r * (kDigestBytes + 1);
    records.push_back({shardFileName(r), rowStart[0], digestHex(rowStart + 1)});
  }
  return records;
}

void removeStaleMarker(const std::string& stepDir) {
  std::error_code ignored;
  if (fs::remove(join(stepDir, kMarkerFile), ignored)) formats::syncDirectory(stepDir);
}

bool parseStepName(const std::string& name, int64_t* step) {
  if (name.size() < 6 || name.rfind("step-", 0) != 0) return false;
  std::string digits = name.substr(5);
  if (digits.find_first_not_of("0123456789") != std::string::npos) return false;
  // Too many digits for a step: not a directory Strata wrote, so skipped like any other.
  std::optional<int64_t> value = parseInteger(digits);
  if (value) *step = *value;
  return value.has_value();
}

void checkLayout(const CheckpointInfo& info, const ParallelLayout& layout, const std::string& dir) {
  const ParallelDegrees& d = info.degrees;
  const ParallelDegrees& mine = layout.degrees();
  if (info.worldSize == layout.worldSize() && d.pp == mine.pp && d.dp == mine.dp &&
      d.cp == mine.cp && d.tp == mine.tp)
    return;
  ParallelLayout saved(info.worldSize, d);
  throw CheckpointError("checkpoint '" + dir + "' was saved with layout " + saved.describe() +
                        " on " + std::to_string(info.worldSize) + " ranks; this job runs " +
                        layout.describe() + " on " + std::to_string(layout.worldSize()) +
                        (info.format < 2
                             ? " (a format-1 checkpoint, from before Strata resharded checkpoints, "
                               "loads only into its own layout)"
                             : ""));
}

}  // namespace

std::string stepDirectory(const std::string& dir, int64_t step) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%06lld", static_cast<long long>(step));
  return join(dir, name);
}

// Hashed while written, so the shard is never whole in memory.
ShardRecord writeShard(const std::string& stepDir, int rank, const RankState& state) {
  ShardRecord record{shardFileName(rank), 0, ""};
  formats::AtomicFileWriter file(join(stepDir, record.file));
  Sha256 hash;
  serializeShard(state, [&](const void* data, size_t size) {
    file.write(data, size);
    hash.update(data, size);
    record.bytes += static_cast<int64_t>(size);
  });
  file.commit();
  record.sha256 = hash.hexDigest();
  return record;
}

ShardRecord copyShard(const std::string& stepDir, const ShardRecord& from, int rank) {
  ShardRecord record{shardFileName(rank), 0, ""};
  formats::AtomicFileWriter file(join(stepDir, record.file));
  FileDigest copied = digestFile(join(stepDir, from.file),
                                 [&](const char* data, size_t size) { file.write(data, size); });
  if (copied.sha256 != from.sha256 || copied.bytes != from.bytes)
    throw CheckpointError("'" + join(stepDir, from.file) + "' changed while it was copied to '" +
                          record.file + "' (" + std::to_string(copied.bytes) + " bytes, SHA-256 " +
                          copied.sha256 + "; written as " + std::to_string(from.bytes) +
                          " bytes, " + from.sha256 + ")");
  file.commit();
  record.bytes = copied.bytes;
  record.sha256 = copied.sha256;
  return record;
}

void writeMetadataAndMarker(const std::string& stepDir, const CheckpointInfo& info) {
  std::string metadata = metadataText(info);
  formats::writeFileAtomically(join(stepDir, kMetadataFile), metadata);
  formats::writeFileAtomically(join(stepDir, kMarkerFile),
                               util::tomlTable("", {{"metadata_sha256", sha256Hex(metadata)}}));
}

namespace {

void createStepDirectory(const std::string& stepDir) {
  std::error_code error;
  fs::create_directories(stepDir, error);
  if (!fs::is_directory(stepDir))
    throw CheckpointError("cannot create checkpoint directory '" + stepDir +
                          "': " + error.message());
}

// Called by every rank once all know the save failed: nothing of it stays.
// Each rank's unfinished file is gone already (atomic_file.h); rank 0 removes
// the step directory once every rank has stopped writing.
void discardFailedSave(const std::string& stepDir, Communicator& world) {
  world.barrier();
  std::error_code ignored;
  if (world.rank() == 0) fs::remove_all(stepDir, ignored);
}

[[noreturn]] void throwSaveFailure(const std::string& dir, int64_t step,
                                   const std::string& problem) {
  std::optional<std::string> latest = findLatestComplete(dir);
  throw CheckpointError("the checkpoint of step " + std::to_string(step) + " in '" + dir +
                        "' was not saved: " + problem + "; its partial files are removed, and " +
                        (latest ? "the latest complete checkpoint, '" + *latest + "', is intact"
                                : std::string("there is no earlier complete checkpoint")));
}

}  // namespace

SaveTicket beginSave(const std::string& dir, int64_t step, const ParallelLayout& layout,
                     const std::string& configToml, const RankState& state, Communicator& world) {
  SaveTicket ticket;
  ticket.dir = dir;
  ticket.step = step;
  ticket.stepDir = stepDirectory(dir, step);
  ticket.worldSize = layout.worldSize();
  ticket.degrees = layout.degrees();
  ticket.configToml = configToml;
  ticket.shardedOptimizers = static_cast<int64_t>(state.shardedOptimizers.size());
  ticket.fullySharded = state.fullySharded;
  ticket.indexToml = tensorIndexToml(indexShard(state, shardFileName(world.rank())));
  // The all-gather in firstProblem also keeps any shard from being overwritten
  // while an old COMPLETE still vouches for it.
  std::string problem = firstProblem(world, attempt([&] {
                                       createStepDirectory(ticket.stepDir);
                                       if (world.rank() == 0) removeStaleMarker(ticket.stepDir);
                                     }));
  if (!problem.empty()) throwSaveFailure(dir, step, problem);
  return ticket;
}

ShardRecord unwrittenShard(int rank) {
  return {shardFileName(rank), 0, std::string(2 * kDigestBytes, '0')};
}

void completeSave(const SaveTicket& ticket, const ShardRecord& mine,
                  const std::string& writeProblem, Communicator& world) {
  std::string problem = firstProblem(world, writeProblem);
  if (problem.empty()) {
    std::vector<ShardRecord> shards = gatherShardRecords(mine, world);
    std::vector<std::string> indexes = allGatherText(world, ticket.indexToml);
    std::string metadataProblem;
    if (world.rank() == 0) {
      metadataProblem = attempt([&] {
        CheckpointInfo info{ticket.step, ticket.worldSize, ticket.degrees, ticket.configToml,
                            shards};
        info.shardedOptimizers = ticket.shardedOptimizers;
        info.fullySharded = ticket.fullySharded;
        for (const std::string& text : indexes) {
          std::vector<TensorPiece> pieces = parseTensorIndex(text, "the index of a rank");
          info.pieces.insert(info.pieces.end(), pieces.begin(), pieces.end());
        }
        writeMetadataAndMarker(ticket.stepDir, info);
      });
    }
    // Nobody returns before the checkpoint is complete, or all know it is not.
    problem = firstProblem(world, metadataProblem);
  }
  if (problem.empty()) return;
  discardFailedSave(ticket.stepDir, world);
  throwSaveFailure(ticket.dir, ticket.step, problem);
}

void saveCheckpoint(const std::string& dir, int64_t step, const ParallelLayout& layout,
                    const std::string& configToml, const RankState& state, Communicator& world) {
  SaveTicket ticket = beginSave(dir, step, layout, configToml, state, world);
  ShardRecord mine = unwrittenShard(world.rank());
  std::string problem = attempt([&] { mine = writeShard(ticket.stepDir, world.rank(), state); });
  completeSave(ticket, mine, problem, world);
}

void checkCheckpointDirectory(const std::string& dir, Communicator& world) {
  std::string problem =
      firstProblem(world, attempt([&] {
                     std::error_code error;
                     fs::create_directories(dir, error);
                     if (!fs::is_directory(dir))
                       throw CheckpointError("cannot create it: " + error.message());
                     std::string probe = join(dir, ".write-test-" + shardFileName(world.rank()));
                     formats::writeFileAtomically(probe, "strata");
                     fs::remove(probe, error);
                   }));
  if (!problem.empty()) {
    throw CheckpointError("the checkpoint directory '" + dir + "' is not writable: " + problem);
  }
}

std::vector<std::string> pruneCheckpoints(const std::string& dir, int64_t keep) {
  std::vector<std::pair<int64_t, fs::path>> steps;  // every step directory, complete or not
  std::vector<int64_t> complete;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    int64_t step = 0;
    if (!entry.is_directory() || !parseStepName(entry.path().filename().string(), &step)) continue;
    steps.emplace_back(step, entry.path());
    if (fs::exists(entry.path() / kMarkerFile)) complete.push_back(step);
  }
  std::vector<std::string> removed;
  if (keep <= 0 || static_cast<int64_t>(complete.size()) <= keep) return removed;
  std::sort(complete.rbegin(), complete.rend());
  int64_t oldestKept = complete[static_cast<size_t>(keep - 1)];
  std::sort(steps.begin(), steps.end());
  for (const auto& [step, path] : steps) {
    if (step >= oldestKept) break;
    fs::remove_all(path, error);
    if (error)
      throw CheckpointError("cannot remove old checkpoint '" + path.string() +
                            "': " + error.message());
    removed.push_back(path.string());
  }
  return removed;
}

std::optional<std::string> findLatestComplete(const std::string& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) return std::nullopt;
  std::optional<std::string> latest;
  int64_t latestStep = -1;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error)) {
    int64_t step = 0;
    if (!entry.is_directory() || !parseStepName(entry.path().filename().string(), &step)) continue;
    if (step > latestStep && fs::exists(entry.path() / kMarkerFile)) {
      latestStep = step;
      latest = entry.path().string();
    }
  }
  return latest;
}

CheckpointInfo readCheckpointInfo(const std::string& stepDir) {
  std::string markerPath = join(stepDir, kMarkerFile);
  std::string metadataPath = join(stepDir, kMetadataFile);
  if (!fs::exists(markerPath))
    throw CheckpointError("checkpoint '" + stepDir + "' is incomplete: no " + kMarkerFile +
                          " marker (the save did not finish)");
  std::string metadata = formats::readWholeFile(metadataPath);
  std::string expected =
      Metadata(formats::readWholeFile(markerPath), markerPath).get<std::string>("metadata_sha256");
  std::string actual = sha256Hex(metadata);
  if (actual != expected)
    throw CheckpointError("checkpoint metadata '" + metadataPath +
                          "' is corrupt: sha256 expected " + expected + ", actual " + actual);
  CheckpointInfo info = parseMetadata(Metadata(metadata, metadataPath));
  info.pieces = parseTensorIndex(metadata, metadataPath);
  return info;
}

void verifyShard(const std::string& stepDir, const ShardRecord& record) {
  std::string path = join(stepDir, record.file);
  FileDigest actual = digestFile(path);
  if (actual.bytes != record.bytes)
    throw CheckpointError("checkpoint shard '" + path + "' is truncated or padded: expected " +
                          std::to_string(record.bytes) + " bytes, found " +
                          std::to_string(actual.bytes));
  if (actual.sha256 != record.sha256)
    throw CheckpointError("checkpoint shard '" + path + "' is corrupt: sha256 expected " +
                          record.sha256 + ", actual " + actual.sha256);
}

CheckpointInfo loadCheckpoint(const std::string& stepDir, const ParallelLayout& layout, int rank,
                              RankState& state, bool sameHoldings) {
  CheckpointInfo info = readCheckpointInfo(stepDir);
  const ParallelDegrees& d = info.degrees;
  const ParallelDegrees& mine = layout.degrees();
  bool sameLayout = info.worldSize == layout.worldSize() && d.pp == mine.pp && d.dp == mine.dp &&
                    d.cp == mine.cp && d.tp == mine.tp;
  // Format 1 did not record ZeRO; its shard says, and refuses a mismatch.
  bool sameOptimizer =
      info.format < 2 || (!state.optimizer && state.shardedOptimizers.empty()) ||
      (info.shardedOptimizers == static_cast<int64_t>(state.shardedOptimizers.size()) &&
       info.fullySharded == state.fullySharded);
  if (sameLayout && sameOptimizer && sameHoldings) {
    const ShardRecord& record = info.shards.at(static_cast<size_t>(rank));
    verifyShard(stepDir, record);
    readShardFile(join(stepDir, record.file), state);
    return info;
  }
  if (info.format < 2 || state.parameters.empty()) checkLayout(info, layout, stepDir);
  if (!sameHoldings && (info.format < 2 || state.parameters.empty()))
    throw CheckpointError("checkpoint '" + stepDir +
                          "' was saved by ranks that held other pipeline layers or experts than "
                          "this run's, and " +
                          (info.format < 2 ? "it has no tensor index (format 1)"
                                           : "this load has no parameter index") +
                          ": resume with the virtual stages and ep it was saved with");
  if (state.parameters.empty())
    throw CheckpointError("checkpoint '" + stepDir + "' was saved " +
                          (info.shardedOptimizers > 0 ? "with" : "without") +
                          " ZeRO and this run is the other way: resume with the same --zero");
  loadResharded(stepDir, info, state);
  return info;
}

}  // namespace strata::train
