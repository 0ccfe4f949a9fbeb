#include "strata/checkpoint/tensor_index.h"

#include <cstdio>
#include <map>

#include "strata/checkpoint/checkpoint.h"
#include "strata/error.h"
#include "strata/util/toml.h"

namespace strata::train {
namespace {

int64_t product(const std::vector<int64_t>& values, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < values.size(); ++i) p *= values[i];
  return p;
}

// The run [begin, end) of the sub-tensor at `prefix` (its first dims fixed),
// whose first element is `base` in the whole tensor.
void split(const std::vector<int64_t>& shape, std::vector<int64_t> prefix, int64_t begin,
           int64_t end, int64_t base, std::vector<RunBlock>& out) {
  size_t dim = prefix.size();
  auto block = [&](int64_t first, int64_t count, int64_t start) {
    RunBlock b{prefix, std::vector<int64_t>(dim, 1), start};
    b.offset.push_back(first);
    b.shape.push_back(count);
    for (size_t d = dim + 1; d < shape.size(); ++d) {
      b.offset.push_back(0);
      b.shape.push_back(shape[d]);
    }
    out.push_back(std::move(b));
  };
  int64_t inner = product(shape, dim + 1);
  if (dim + 1 == shape.size()) return block(begin, end - begin, base + begin);
  int64_t firstRow = begin / inner, lastRow = (end - 1) / inner;
  auto partialRow = [&](int64_t row, int64_t from, int64_t to) {
    std::vector<int64_t> inRow = prefix;
    inRow.push_back(row);
    split(shape, inRow, from - row * inner, to - row * inner, base + row * inner, out);
  };
  if (firstRow == lastRow && (begin % inner != 0 || end % inner != 0))
    return partialRow(firstRow, begin, end);
  int64_t wholeFrom = begin % inner == 0 ? firstRow : firstRow + 1;
  int64_t wholeTo = end % inner == 0 ? lastRow + 1 : lastRow;
  if (begin % inner != 0) partialRow(firstRow, begin, (firstRow + 1) * inner);
  if (wholeFrom < wholeTo) block(wholeFrom, wholeTo - wholeFrom, base + wholeFrom * inner);
  if (end % inner != 0) partialRow(lastRow, lastRow * inner, end);
}

util::TomlArray array(const std::vector<int64_t>& values) {
  util::TomlArray out;
  out.reserve(values.size());
  for (int64_t v : values) out.emplace_back(std::in_place_type<int64_t>, v);
  return out;
}

std::string tableName(size_t piece) {
  char name[32];
  std::snprintf(name, sizeof(name), "piece-%07zu", piece);
  return name;
}

// A piece's entries by key while it is being read.
struct PieceFields {
  std::map<std::string, util::TomlValue> values;
  std::string where;
};

template <typename T>
T field(const PieceFields& f, const std::string& key, const std::string& table) {
  auto it = f.values.find(key);
  if (it == f.values.end() || !std::holds_alternative<T>(it->second))
    throw CheckpointError("checkpoint metadata '" + f.where + "' lacks a valid '" + table + "." +
                          key + "'");
  return std::get<T>(it->second);
}

std::vector<int64_t> integers(const PieceFields& f, const std::string& key,
                              const std::string& table) {
  std::vector<int64_t> out;
  for (const util::TomlScalar& v : field<util::TomlArray>(f, key, table)) {
    if (!std::holds_alternative<int64_t>(v))
      throw CheckpointError("checkpoint metadata '" + f.where + "': '" + table + "." + key +
                            "' must hold integers");
    out.push_back(std::get<int64_t>(v));
  }
  return out;
}

}  // namespace

std::vector<RunBlock> splitRun(const std::vector<int64_t>& shape, int64_t begin, int64_t end) {
  std::vector<RunBlock> blocks;
  if (begin >= end) return blocks;
  if (shape.empty()) return {RunBlock{{}, {}, 0}};
  split(shape, {}, begin, end, 0, blocks);
  return blocks;
}

std::string tensorIndexToml(const std::vector<TensorPiece>& pieces) {
  std::string text;
  for (size_t i = 0; i < pieces.size(); ++i) {
    const TensorPiece& p = pieces[i];
    util::TomlPairs pairs = {{"tensor", p.tensor},
                             {"kind", p.kind},
                             {"shape", array(p.shape)},
                             {"dtype", p.dtype},
                             {"file", p.file},
                             {"key", p.key},
                             {"offset", array(p.offset)},
                             {"length", array(p.length)},
                             {"flat", p.flat}};
    if (p.kind != kParameterKind) pairs.push_back({"step", p.step});
    if (p.flat) {
      pairs.push_back({"key_offset", p.keyOffset});
      pairs.push_back({"block", array(p.block)});
    }
    text += "\n" + util::tomlTable(tableName(i), pairs);
  }
  return text;
}

std::vector<TensorPiece> parseTensorIndex(const std::string& metadata, const std::string& path) {
  std::map<std::string, PieceFields> tables;  // ordered by name: rank, then piece
  try {
    for (util::TomlEntry& entry : util::readToml(metadata, path)) {
      if (entry.table.rfind("piece-", 0) != 0) continue;
      PieceFields& f = tables[entry.table];
      f.where = path;
      f.values[entry.key] = std::move(entry.value);
    }
  } catch (const ConfigError& error) {
    throw CheckpointError(std::string("corrupt checkpoint metadata: ") + error.what());
  }
  std::vector<TensorPiece> pieces;
  for (const auto& [table, f] : tables) {
    TensorPiece p;
    p.tensor = field<std::string>(f, "tensor", table);
    p.kind = field<std::string>(f, "kind", table);
    p.shape = integers(f, "shape", table);
    p.dtype = field<std::string>(f, "dtype", table);
    p.file = field<std::string>(f, "file", table);
    p.key = field<std::string>(f, "key", table);
    p.offset = integers(f, "offset", table);
    p.length = integers(f, "length", table);
    p.flat = field<bool>(f, "flat", table);
    if (p.kind != kParameterKind) p.step = field<int64_t>(f, "step", table);
    if (p.flat) {
      p.keyOffset = field<int64_t>(f, "key_offset", table);
      p.block = integers(f, "block", table);
    }
    if (p.offset.size() != p.shape.size() || p.length.size() != p.shape.size() ||
        (p.flat && p.block.size() != p.shape.size()))
      throw CheckpointError("checkpoint metadata '" + path + "': '" + table +
                            "' has offsets, lengths or block of another rank than its shape");
    pieces.push_back(std::move(p));
  }
  return pieces;
}

std::string shapeText(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace strata::train
