// Just enough of a PNG decoder to look at a browser's screenshot: 8-bit RGB or
// RGBA, not interlaced (what Chromium writes). Throws strata::Error naming
// what it does not support or what is malformed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::testing {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes a pixel, row by row

  // 0xRRGGBB of the pixel at index y * width + x.
  uint32_t colourAt(size_t pixel) const;
  // How many different colours the image holds.
  size_t distinctColours() const;
  // How many pixels are exactly the colour 0xRRGGBB.
  size_t pixelsOf(uint32_t colour) const;
};

RgbImage decodePng(const std::string& bytes);

}  // namespace strata::testing
