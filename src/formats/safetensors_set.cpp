#include "strata/formats/safetensors_set.h"

#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "formats/atomic_file.h"

namespace strata::formats {
namespace fs = std::filesystem;
namespace {

constexpr const char* kIndexSuffix = ".safetensors.index.json";

bool endsWith(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

[[noreturn]] void refuseSet(const std::string& path, const std::string& problem) {
  throw SafetensorsError("safetensors index '" + path + "': " + problem);
}

// A directory's model: its single file, else its index.
std::string resolve(const std::string& path) {
  if (!fs::is_directory(path)) return path;
  for (const char* name : {"model.safetensors", "model.safetensors.index.json"}) {
    fs::path candidate = fs::path(path) / name;
    if (fs::exists(candidate)) return candidate.string();
  }
  throw SafetensorsError("directory '" + path +
                         "' holds neither model.safetensors nor model.safetensors.index.json");
}

// name -> shard file, as the index maps them.
std::map<std::string, std::string> weightMap(const std::string& indexPath) {
  nlohmann::json index;
  try {
    index = nlohmann::json::parse(readWholeFile(indexPath));
  } catch (const nlohmann::json::exception& e) {
    refuseSet(indexPath, std::string("is not JSON (") + e.what() + ")");
  }
  if (!index.is_object() || !index.contains("weight_map") || !index["weight_map"].is_object())
    refuseSet(indexPath, "has no \"weight_map\" object of tensor name -> shard file");
  std::map<std::string, std::string> map;
  for (const auto& [name, file] : index["weight_map"].items()) {
    if (!file.is_string()) refuseSet(indexPath, "maps '" + name + "' to something not a file name");
    map[name] = file.get<std::string>();
  }
  return map;
}

int64_t bytesOf(const at::Tensor& t) {
  return static_cast<int64_t>(t.numel()) * static_cast<int64_t>(t.element_size());
}

std::string shardName(const std::string& stem, size_t index, size_t count) {
  char text[64];
  std::snprintf(text, sizeof(text), "-%05zu-of-%05zu.safetensors", index + 1, count);
  return stem + text;
}

}  // namespace

SafetensorsSet::SafetensorsSet(const std::string& path) : path_(resolve(path)) {
  if (endsWith(path_, ".json"))
    openIndex(path_);
  else
    add(std::make_unique<SafetensorsFile>(path_));
}

SafetensorsSet::~SafetensorsSet() = default;

void SafetensorsSet::openIndex(const std::string& indexPath) {
  std::map<std::string, std::string> map = weightMap(indexPath);
  std::map<std::string, std::vector<std::string>> byShard;
  for (const auto& [name, file] : map) byShard[file].push_back(name);
  fs::path folder = fs::path(indexPath).parent_path();
  for (const auto& [file, names] : byShard) {
    fs::path shard = folder / file;
    if (!fs::exists(shard)) refuseSet(indexPath, "names shard '" + file + "', which is missing");
    add(std::make_unique<SafetensorsFile>(shard.string()));
    for (const std::string& name : names) {
      auto held = holder_.find(name);
      if (held == holder_.end() || held->second->path() != shard.string())
        refuseSet(indexPath, "maps '" + name + "' to '" + file + "', which does not hold it");
    }
  }
  for (const auto& [name, entry] : entries_)
    if (!map.count(name))
      refuseSet(indexPath,
                "does not map '" + name + "', which " + holder_.at(name)->path() + " holds");
}

void SafetensorsSet::add(std::unique_ptr<SafetensorsFile> file) {
  for (const auto& [name, entry] : file->entries()) {
    if (holder_.count(name))
      throw SafetensorsError("tensor '" + name + "' is in both '" + holder_.at(name)->path() +
                             "' and '" + file->path() + "'");
    entries_[name] = entry;
    holder_[name] = file.get();
  }
  files_.push_back(std::move(file));
}

const std::string& SafetensorsSet::fileOf(const std::string& name) const {
  auto found = holder_.find(name);
  return found == holder_.end() ? path_ : found->second->path();
}

at::Tensor SafetensorsSet::view(const std::string& name) const {
  auto found = holder_.find(name);
  if (found == holder_.end())
    throw SafetensorsError("'" + path_ + "' holds no tensor '" + name + "'");
  return found->second->view(name);
}

std::vector<std::string> writeShardedSafetensors(
    const std::string& out, const std::vector<std::pair<std::string, at::Tensor>>& tensors,
    const std::map<std::string, std::string>& metadata, int64_t maxShardBytes) {
  int64_t total = 0;
  for (const auto& [name, t] : tensors) total += bytesOf(t);
  if (maxShardBytes <= 0 || total <= maxShardBytes) {
    writeSafetensors(out, tensors, metadata);
    return {out};
  }
  // Greedy in model order, as transformers shards: a shard closes when the
  // next tensor would take it past the limit.
  std::vector<std::vector<std::pair<std::string, at::Tensor>>> shards(1);
  int64_t filled = 0;
  for (const auto& item : tensors) {
    int64_t size = bytesOf(item.second);
    if (!shards.back().empty() && filled + size > maxShardBytes) {
      shards.emplace_back();
      filled = 0;
    }
    shards.back().push_back(item);
    filled += size;
  }
  std::string stem = endsWith(out, ".safetensors")
                         ? out.substr(0, out.size() - std::string(".safetensors").size())
                         : out;
  nlohmann::ordered_json index;
  index["metadata"] = {{"total_size", total}};
  index["weight_map"] = nlohmann::ordered_json::object();
  std::vector<std::string> written;
  for (size_t i = 0; i < shards.size(); ++i) {
    std::string path = shardName(stem, i, shards.size());
    writeSafetensors(path, shards[i], metadata);
    written.push_back(path);
    for (const auto& [name, t] : shards[i])
      index["weight_map"][name] = fs::path(path).filename().string();
  }
  std::string indexPath = stem + kIndexSuffix;
  writeFileAtomically(indexPath, index.dump(2) + "\n");
  written.push_back(indexPath);
  return written;
}

}  // namespace strata::formats
