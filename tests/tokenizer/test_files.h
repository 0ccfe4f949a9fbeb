// Helpers of the tokenizer tests: a fresh temporary directory and files in
// it, GPT-2's spelling of bytes, and the message of a ConfigError.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "strata/error.h"

namespace strata::test {

// An empty directory of its own under the system's temporary directory.
inline std::filesystem::path freshDir(const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir =
      fs::temp_directory_path() / ("strata_tok_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

inline void writeFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// GPT-2's spelling of bytes (bytes_to_unicode() of encoder.py), as the
// vocabulary files write tokens, written here from its definition rather
// than taken from Strata.
inline std::string spell(const std::string& bytes) {
  std::string out;
  for (unsigned char b : bytes) {
    int cp = b;
    if (!((b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE)) {
      cp = 256;
      for (int c = 0; c < b; ++c)
        if (!((c >= '!' && c <= '~') || (c >= 0xA1 && c <= 0xAC) || c >= 0xAE)) ++cp;
    }
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }
  return out;
}

// The message of the ConfigError f throws, or "no ConfigError".
template <typename F>
std::string errorOf(F f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no ConfigError";
}

}  // namespace strata::test
