#include "sha256.h"

#include <openssl/evp.h>

#include "strata/error.h"

namespace strata {
namespace {

void check(int status, const char* call) {
  if (status != 1) throw Error(std::string("SHA-256: OpenSSL's ") + call + " failed");
}

std::string toHex(const unsigned char* bytes, unsigned int count) {
  constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < count; ++i) {
    hex += kDigits[bytes[i] >> 4];
    hex += kDigits[bytes[i] & 0xf];
  }
  return hex;
}

}  // namespace

void Sha256::FreeContext::operator()(evp_md_ctx_st* context) const { EVP_MD_CTX_free(context); }

Sha256::Sha256() : context_(EVP_MD_CTX_new()) {
  if (!context_) throw Error("SHA-256: OpenSSL's EVP_MD_CTX_new failed");
  check(EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr), "EVP_DigestInit_ex");
}

void Sha256::checkNotFinished(const char* what) const {
  if (finished_)
    throw Error(std::string("SHA-256: ") + what + " after the digest was taken; hash anew instead");
}

void Sha256::update(const void* data, std::size_t size) {
  checkNotFinished("update");
  check(EVP_DigestUpdate(context_.get(), data, size), "EVP_DigestUpdate");
}

std::string Sha256::hexDigest() {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  checkNotFinished("a second digest");
  check(EVP_DigestFinal_ex(context_.get(), digest, &size), "EVP_DigestFinal_ex");
  finished_ = true;
  return toHex(digest, size);
}

std::string sha256Hex(std::string_view data) {
  Sha256 hash;
  hash.update(data);
  return hash.hexDigest();
}

}  // namespace strata
