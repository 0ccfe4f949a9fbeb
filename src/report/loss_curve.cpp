#include "strata/report/loss_curve.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "strata/error.h"

namespace strata::train {
namespace {

constexpr double kWidth = 720, kHeight = 440;
constexpr double kLeft = 70, kRight = 150, kTop = 40, kBottom = 60;  // margins
constexpr const char* kTrainColour = "#1f77b4";
constexpr const char* kValidationColour = "#d62728";

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}

std::string escapeXml(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

// Maps data coordinates to pixels inside the plot area.
struct Frame {
  double xMin, xMax, yMin, yMax;
  double x(double step) const {
    return kLeft + (step - xMin) / (xMax - xMin) * (kWidth - kLeft - kRight);
  }
  double y(double loss) const {
    return kHeight - kBottom - (loss - yMin) / (yMax - yMin) * (kHeight - kTop - kBottom);
  }
};

Frame frameFor(const LossCurve& curve) {
  Frame f{0, 1, 0, 1};
  bool any = false;
  for (const auto* points : {&curve.train, &curve.validation})
    for (const CurvePoint& p : *points) {
      if (!std::isfinite(p.loss)) continue;
      if (!any) f = {double(p.step), double(p.step), p.loss, p.loss};
      f = {std::min(f.xMin, double(p.step)), std::max(f.xMax, double(p.step)),
           std::min(f.yMin, p.loss), std::max(f.yMax, p.loss)};
      any = true;
    }
  if (f.xMax <= f.xMin) f.xMax = f.xMin + 1;
  if (f.yMax <= f.yMin) f.yMax = f.yMin + 1;
  // Start the loss axis at a round value at or below the minimum.
  std::vector<double> ticks = niceTicks(f.yMin, f.yMax, 6);
  f.yMin = std::min(f.yMin, ticks.front());
  f.yMax = std::max(f.yMax, ticks.back());
  return f;
}

void drawAxes(std::ostringstream& svg, const Frame& f) {
  double x0 = kLeft, x1 = kWidth - kRight, y0 = kHeight - kBottom, y1 = kTop;
  svg << "<rect x='" << x0 << "' y='" << y1 << "' width='" << x1 - x0 << "' height='" << y0 - y1
      << "' fill='none' stroke='#333'/>\n";
  for (double tick : niceTicks(f.xMin, f.xMax, 8)) {
    if (tick < f.xMin || tick > f.xMax) continue;
    double x = f.x(tick);
    svg << "<line x1='" << x << "' y1='" << y0 << "' x2='" << x << "' y2='" << y1
        << "' stroke='#eee'/><text x='" << x << "' y='" << y0 + 18 << "' text-anchor='middle'>"
        << number(tick) << "</text>\n";
  }
  for (double tick : niceTicks(f.yMin, f.yMax, 6)) {
    if (tick < f.yMin || tick > f.yMax) continue;
    double y = f.y(tick);
    svg << "<line x1='" << x0 << "' y1='" << y << "' x2='" << x1 << "' y2='" << y
        << "' stroke='#eee'/><text x='" << x0 - 8 << "' y='" << y + 4 << "' text-anchor='end'>"
        << number(tick) << "</text>\n";
  }
  svg << "<text x='" << (x0 + x1) / 2 << "' y='" << kHeight - 15
      << "' text-anchor='middle'>step</text>\n"
      << "<text x='18' y='" << (y0 + y1) / 2 << "' text-anchor='middle' transform='rotate(-90 18 "
      << (y0 + y1) / 2 << ")'>loss (nats per token)</text>\n";
}

void drawSeries(std::ostringstream& svg, const Frame& f, const std::vector<CurvePoint>& points,
                const char* colour, bool markers) {
  std::ostringstream path;
  for (const CurvePoint& p : points)
    if (std::isfinite(p.loss))
      path << (path.tellp() == 0 ? "" : " ") << f.x(double(p.step)) << "," << f.y(p.loss);
  if (path.tellp() == 0) return;
  svg << "<polyline fill='none' stroke='" << colour << "' stroke-width='2' points='" << path.str()
      << "'/>\n";
  if (!markers) return;
  for (const CurvePoint& p : points)
    if (std::isfinite(p.loss))
      svg << "<circle cx='" << f.x(double(p.step)) << "' cy='" << f.y(p.loss) << "' r='3' fill='"
          << colour << "'/>\n";
}

void drawLegend(std::ostringstream& svg, const LossCurve& curve) {
  double x = kWidth - kRight + 15, y = kTop + 10;
  auto entry = [&](const char* label, const char* colour) {
    svg << "<line x1='" << x << "' y1='" << y << "' x2='" << x + 25 << "' y2='" << y << "' stroke='"
        << colour << "' stroke-width='2'/><text x='" << x + 32 << "' y='" << y + 4 << "'>" << label
        << "</text>\n";
    y += 22;
  };
  if (!curve.train.empty()) entry("train", kTrainColour);
  if (!curve.validation.empty()) entry("validation", kValidationColour);
}

}  // namespace

std::vector<double> niceTicks(double low, double high, int count) {
  if (!(high > low) || count < 2) return {low};
  double rough = (high - low) / (count - 1);
  double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  double step = magnitude * 10;
  for (double factor : {1.0, 2.0, 5.0})
    if (magnitude * factor >= rough) {
      step = magnitude * factor;
      break;
    }
  // Integer multiples of step, from at or below low to at or above high.
  auto first = static_cast<int64_t>(std::floor(low / step + 1e-9));
  auto last = static_cast<int64_t>(std::ceil(high / step - 1e-9));
  std::vector<double> ticks;
  for (int64_t i = first; i <= last; ++i) ticks.push_back(static_cast<double>(i) * step);
  return ticks;
}

std::string renderLossCurveSvg(const LossCurve& curve) {
  Frame frame = frameFor(curve);
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << kWidth << "' height='" << kHeight
      << "' font-family='sans-serif' font-size='12'>\n"
      << "<rect width='100%' height='100%' fill='white'/>\n"
      << "<text x='" << kLeft << "' y='24' font-size='16'>" << escapeXml(curve.title)
      << "</text>\n";
  drawAxes(svg, frame);
  drawSeries(svg, frame, curve.train, kTrainColour, false);
  drawSeries(svg, frame, curve.validation, kValidationColour, true);
  drawLegend(svg, curve);
  svg << "</svg>\n";
  return svg.str();
}

void writeLossCurveSvg(const std::string& path, const LossCurve& curve) {
  std::ofstream out(path, std::ios::trunc);
  out << renderLossCurveSvg(curve);
  if (!out) throw Error("cannot write loss curve '" + path + "'");
}

}  // namespace strata::train
