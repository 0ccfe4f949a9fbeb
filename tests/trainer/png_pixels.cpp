#include "png_pixels.h"

#include <zlib.h>

#include <cstdlib>
#include <unordered_set>

#include "strata/error.h"

namespace strata::testing {
namespace {

constexpr char kSignature[] = "\x89PNG\r\n\x1a\n";
constexpr size_t kSignatureSize = 8;

uint32_t bigEndian32(const std::string& bytes, size_t at) {
  if (at + 4 > bytes.size()) throw Error("PNG ends inside a chunk header");
  auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<uint8_t>(bytes[at + i])); };
  return byte(0) << 24 | byte(1) << 16 | byte(2) << 8 | byte(3);
}

struct Header {
  int width = 0;
  int height = 0;
  int channels = 0;  // 3 (RGB) or 4 (RGBA)
};

Header parseHeader(const std::string& chunk) {
  if (chunk.size() != 13) throw Error("PNG IHDR chunk is not 13 bytes");
  Header header{static_cast<int>(bigEndian32(chunk, 0)), static_cast<int>(bigEndian32(chunk, 4))};
  int depth = static_cast<uint8_t>(chunk[8]), colourType = static_cast<uint8_t>(chunk[9]);
  int interlace = static_cast<uint8_t>(chunk[12]);
  if (depth != 8 || (colourType != 2 && colourType != 6) || interlace != 0) {
    throw Error("PNG of bit depth " + std::to_string(depth) + ", colour type " +
                std::to_string(colourType) + ", interlace " + std::to_string(interlace) +
                " is not supported (only 8-bit RGB/RGBA, not interlaced)");
  }
  header.channels = colourType == 2 ? 3 : 4;
  return header;
}

std::string inflateAll(const std::string& compressed, size_t expectedSize) {
  std::string out(expectedSize, '\0');
  uLongf size = expectedSize;
  int result = uncompress(reinterpret_cast<Bytef*>(out.data()), &size,
                          reinterpret_cast<const Bytef*>(compressed.data()), compressed.size());
  if (result != Z_OK || size != expectedSize) throw Error("PNG image data does not inflate");
  return out;
}

uint8_t paeth(int left, int up, int upLeft) {
  int estimate = left + up - upLeft;
  int toLeft = std::abs(estimate - left), toUp = std::abs(estimate - up);
  int toUpLeft = std::abs(estimate - upLeft);
  if (toLeft <= toUp && toLeft <= toUpLeft) return static_cast<uint8_t>(left);
  return static_cast<uint8_t>(toUp <= toUpLeft ? up : upLeft);
}

int predictor(int filter, int left, int up, int upLeft) {
  switch (filter) {
    case 0:
      return 0;
    case 1:
      return left;
    case 2:
      return up;
    case 3:
      return (left + up) / 2;
    case 4:
      return paeth(left, up, upLeft);
  }
  throw Error("PNG row filter " + std::to_string(filter) + " does not exist");
}

// Undoes one row's filter in place; `previous` is the row above, already
// unfiltered (all zeros for the first row).
void unfilterRow(int filter, uint8_t* row, const uint8_t* previous, size_t size,
                 size_t pixelBytes) {
  for (size_t i = 0; i < size; ++i) {
    int left = i >= pixelBytes ? row[i - pixelBytes] : 0;
    int upLeft = i >= pixelBytes ? previous[i - pixelBytes] : 0;
    row[i] = static_cast<uint8_t>(row[i] + predictor(filter, left, previous[i], upLeft));
  }
}

RgbImage unfilter(const Header& header, std::string raw) {
  size_t rowSize = static_cast<size_t>(header.width) * header.channels;
  std::vector<uint8_t> zeros(rowSize, 0);
  RgbImage image{header.width, header.height, {}};
  image.rgb.reserve(static_cast<size_t>(header.width) * header.height * 3);
  const uint8_t* previous = zeros.data();
  for (int y = 0; y < header.height; ++y) {
    auto* line = reinterpret_cast<uint8_t*>(raw.data()) + y * (rowSize + 1);
    uint8_t* row = line + 1;
    unfilterRow(line[0], row, previous, rowSize, header.channels);
    for (size_t i = 0; i < rowSize; i += header.channels)
      image.rgb.insert(image.rgb.end(), row + i, row + i + 3);
    previous = row;
  }
  return image;
}

}  // namespace

uint32_t RgbImage::colourAt(size_t pixel) const {
  const uint8_t* p = &rgb[pixel * 3];
  return static_cast<uint32_t>(p[0]) << 16 | p[1] << 8 | p[2];
}

size_t RgbImage::distinctColours() const {
  std::unordered_set<uint32_t> colours;
  for (size_t i = 0; i < rgb.size() / 3; ++i) colours.insert(colourAt(i));
  return colours.size();
}

size_t RgbImage::pixelsOf(uint32_t colour) const {
  size_t count = 0;
  for (size_t i = 0; i < rgb.size() / 3; ++i) count += colourAt(i) == colour;
  return count;
}

RgbImage decodePng(const std::string& bytes) {
  if (bytes.compare(0, kSignatureSize, kSignature, kSignatureSize) != 0)
    throw Error("not a PNG file");
  Header header;
  std::string compressed;
  for (size_t at = kSignatureSize; at < bytes.size();) {
    uint32_t length = bigEndian32(bytes, at);
    std::string type = bytes.substr(at + 4, 4);
    if (at + 12 + length > bytes.size()) throw Error("PNG chunk " + type + " runs past the file");
    std::string data = bytes.substr(at + 8, length);
    if (type == "IHDR") header = parseHeader(data);
    if (type == "IDAT") compressed += data;
    if (type == "IEND") break;
    at += 12 + length;  // length, type, data, CRC
  }
  if (header.channels == 0) throw Error("PNG has no IHDR chunk");
  size_t rawSize = static_cast<size_t>(header.height) * (1 + header.width * header.channels);
  return unfilter(header, inflateAll(compressed, rawSize));
}

}  // namespace strata::testing
