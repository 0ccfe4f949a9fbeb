// The loss-curve picture: training and validation loss against step, as a
// standalone SVG with axes, tick labels, axis titles and a legend.
//
// renderLossCurveSvg never blocks or throws; an empty curve draws empty axes.
// writeLossCurveSvg throws Error naming the path when it cannot write.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::train {

struct CurvePoint {
  int64_t step = 0;
  double loss = 0;
};

struct LossCurve {
  std::string title = "Training loss";
  std::vector<CurvePoint> train;
  std::vector<CurvePoint> validation;
};

std::string renderLossCurveSvg(const LossCurve& curve);
void writeLossCurveSvg(const std::string& path, const LossCurve& curve);

// Round tick values covering [low, high]: steps of 1, 2 or 5 x 10^k, about
// `count` of them.
std::vector<double> niceTicks(double low, double high, int count);

}  // namespace strata::train
