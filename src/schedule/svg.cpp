#include "strata/schedule/svg.h"

#include <cmath>
#include <sstream>
#include <vector>

#include "escape.h"

namespace strata::schedule {
namespace {

struct Layout {
  double left = 70, top = 40, plotWidth = 960, rowHeight = 28, rowGap = 6;
  double unitWidth = 1;  // pixels per time unit

  double rowTop(int rank) const { return top + rank * (rowHeight + rowGap); }
  double plotBottom(int ranks) const { return rowTop(ranks) - rowGap; }
  double x(double time) const { return left + time * unitWidth; }
};

struct KindStyle {
  const char* kind;
  const char* name;
  const char* colour;
};

// Colour-blind-safe hues that stay apart in greyscale print.
constexpr KindStyle kStyles[] = {{"F", "forward", "#4c78a8"},
                                 {"B", "backward", "#e45756"},
                                 {"I", "backward (input)", "#f58518"},
                                 {"W", "backward (weight)", "#54a24b"}};
constexpr const char* kOtherColour = "#9d9d9d";

const char* colourOf(const std::string& kind) {
  for (const KindStyle& style : kStyles) {
    if (kind == style.kind) return style.colour;
  }
  return kOtherColour;
}

// A round tick spacing (1, 2 or 5 times a power of ten) giving about ten ticks.
double tickSpacing(double end) {
  const double raw = end / 10;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (factor * magnitude >= raw) return factor * magnitude;
  }
  return 10 * magnitude;
}

void drawRows(std::ostream& out, const Layout& layout, int ranks) {
  for (int rank = 0; rank < ranks; ++rank) {
    const double y = layout.rowTop(rank);
    out << "<rect class=\"row\" x=\"" << layout.left << "\" y=\"" << y << "\" width=\""
        << layout.plotWidth << "\" height=\"" << layout.rowHeight << "\" fill=\"#f4f4f4\"/>\n"
        << "<text x=\"" << layout.left - 8 << "\" y=\"" << y + layout.rowHeight / 2 + 4
        << "\" text-anchor=\"end\">rank " << rank << "</text>\n";
  }
}

std::vector<std::string> splitOn(const std::string& text, char separator) {
  std::vector<std::string> parts{""};
  for (const char c : text) {
    if (c == separator) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

struct Band {
  double y, height;
  std::string kind, label;
};

void drawBlock(std::ostream& out, const Layout& layout, const TimelineItem& item,
               const Band& band) {
  const double x = layout.x(item.start);
  const double width = (item.end - item.start) * layout.unitWidth;
  out << "<rect class=\"action\" x=\"" << x << "\" y=\"" << band.y << "\" width=\"" << width
      << "\" height=\"" << band.height << "\" fill=\"" << colourOf(band.kind)
      << "\" stroke=\"#ffffff\" stroke-width=\"1\"><title>" << escapeXml(item.label) << " "
      << item.start << "-" << item.end << "</title></rect>\n";
  // Labels only where they fit; the tooltip still names every block.
  if (width >= 7.0 * static_cast<double>(band.label.size()) + 4 && band.height >= 14) {
    out << "<text x=\"" << x + width / 2 << "\" y=\"" << band.y + band.height / 2 + 4
        << "\" text-anchor=\"middle\" fill=\"#ffffff\">" << escapeXml(band.label) << "</text>\n";
  }
}

// An item whose kind joins kinds with '+' is an overlapped pair, both passes
// running at once: one band per pass, stacked in the rank's row.
void drawItems(std::ostream& out, const Layout& layout, const Timeline& timeline) {
  for (const TimelineItem& item : timeline.items) {
    const std::vector<std::string> kinds = splitOn(item.kind, '+');
    std::vector<std::string> labels = splitOn(item.label, '+');
    if (labels.size() != kinds.size()) labels.assign(kinds.size(), item.label);
    const double height = layout.rowHeight / static_cast<double>(kinds.size());
    for (std::size_t i = 0; i < kinds.size(); ++i) {
      const double y = layout.rowTop(item.rank) + static_cast<double>(i) * height;
      drawBlock(out, layout, item, {y, height, kinds[i], labels[i]});
    }
  }
}

void drawAxis(std::ostream& out, const Layout& layout, const Timeline& timeline, double end) {
  const double y = layout.plotBottom(timeline.ranks) + 8;
  out << "<line x1=\"" << layout.left << "\" y1=\"" << y << "\" x2=\""
      << layout.left + layout.plotWidth << "\" y2=\"" << y << "\" stroke=\"#333333\"/>\n";
  const double spacing = tickSpacing(end);
  for (double t = 0; t <= end * (1 + 1e-9); t += spacing) {
    out << "<line x1=\"" << layout.x(t) << "\" y1=\"" << y << "\" x2=\"" << layout.x(t)
        << "\" y2=\"" << y + 5 << "\" stroke=\"#333333\"/>\n"
        << "<text x=\"" << layout.x(t) << "\" y=\"" << y + 18 << "\" text-anchor=\"middle\">" << t
        << "</text>\n";
  }
  out << "<text x=\"" << layout.left + layout.plotWidth << "\" y=\"" << y + 34
      << "\" text-anchor=\"end\">time"
      << (timeline.timeUnit.empty() ? "" : " (" + escapeXml(timeline.timeUnit) + ")")
      << "</text>\n";
}

void drawLegend(std::ostream& out, const Layout& layout, double y) {
  double x = layout.left;
  for (const KindStyle& style : kStyles) {
    out << "<rect class=\"legend\" x=\"" << x << "\" y=\"" << y << "\" width=\"14\" height=\"14\""
        << " fill=\"" << style.colour << "\"/>\n"
        << "<text x=\"" << x + 20 << "\" y=\"" << y + 12 << "\">" << style.kind << " " << style.name
        << "</text>\n";
    x += 190;
  }
  out << "<text x=\"" << x << "\" y=\"" << y + 12 << "\">empty = idle (bubble)</text>\n";
}

}  // namespace

std::string renderSvg(const Timeline& timeline, const std::string& title) {
  timeline.check();
  Layout layout;
  const double end = timeline.end() > 0 ? timeline.end() : 1;
  layout.unitWidth = layout.plotWidth / end;
  const double legendTop = layout.plotBottom(timeline.ranks) + 56;
  const double width = layout.left + layout.plotWidth + 20;
  const double height = legendTop + 30;
  std::ostringstream out;
  out.precision(10);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
      << "<rect x=\"0\" y=\"0\" width=\"" << width << "\" height=\"" << height
      << "\" fill=\"#ffffff\"/>\n"
      << "<text x=\"" << layout.left << "\" y=\"24\" font-size=\"15\" font-weight=\"bold\">"
      << escapeXml(title) << "</text>\n";
  drawRows(out, layout, timeline.ranks);
  drawItems(out, layout, timeline);
  drawAxis(out, layout, timeline, end);
  drawLegend(out, layout, legendTop);
  out << "</svg>\n";
  return out.str();
}

}  // namespace strata::schedule
