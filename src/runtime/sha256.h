// SHA-256 through OpenSSL's libcrypto: the job token's key prefix and public
// fingerprint (without ever putting the token itself on the wire), cache
// keys, and the checksums of checkpoint files, hashed while they stream.
//
// Sha256 hashes incrementally: update() with pieces of any size in order,
// then hexDigest() once; an update or digest after that is an Error. Nothing
// blocks; Error too if libcrypto fails (out of memory, or a FIPS policy that
// forbids the digest).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX, kept out of this header

namespace strata {

class Sha256 {
 public:
  Sha256();

  void update(const void* data, std::size_t size);
  void update(std::string_view data) { update(data.data(), data.size()); }
  // Lower-case hex of the digest of everything passed to update().
  std::string hexDigest();

 private:
  struct FreeContext {
    void operator()(evp_md_ctx_st* context) const;
  };
  void checkNotFinished(const char* what) const;

  std::unique_ptr<evp_md_ctx_st, FreeContext> context_;
  bool finished_ = false;
};

// Lower-case hex digest of `data`, in one piece.
std::string sha256Hex(std::string_view data);

}  // namespace strata
