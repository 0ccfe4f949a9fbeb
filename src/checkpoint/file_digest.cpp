#include "checkpoint/file_digest.h"

#include <fstream>
#include <vector>

#include "runtime/sha256.h"
#include "strata/checkpoint/checkpoint.h"

namespace strata::train {

FileDigest digestFile(const std::string& path,
                      const std::function<void(const char*, std::size_t)>& eachPiece) {
  constexpr std::size_t kPieceBytes = 1 << 20;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw CheckpointError("cannot open '" + path + "'");
  std::vector<char> piece(kPieceBytes);
  Sha256 hash;
  FileDigest digest;
  while (in) {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    hash.update(piece.data(), static_cast<std::size_t>(in.gcount()));
    if (eachPiece) eachPiece(piece.data(), static_cast<std::size_t>(in.gcount()));
    digest.bytes += in.gcount();
  }
  if (in.bad()) throw CheckpointError("cannot read '" + path + "'");
  digest.sha256 = hash.hexDigest();
  return digest;
}

}  // namespace strata::train
