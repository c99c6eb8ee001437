//===- PlotTest.cpp - Loss curves as SVG ----------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Plot.h"

#include <cmath>
#include <gtest/gtest.h>

using namespace tfc::rt;

namespace {

size_t count(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos;
       at = text.find(what, at + 1))
    ++n;
  return n;
}

TEST(Plot, NiceTicks) {
  std::vector<double> ticks = niceTicks(0.3, 5.6, 6);
  ASSERT_FALSE(ticks.empty());
  EXPECT_DOUBLE_EQ(ticks.front(), 1.0);
  EXPECT_DOUBLE_EQ(ticks.back(), 5.0);
  EXPECT_EQ(ticks.size(), 5u);
  ticks = niceTicks(0, 1000, 8);
  EXPECT_DOUBLE_EQ(ticks[1] - ticks[0], 200.0);
  EXPECT_EQ(niceTicks(2, 2, 5).size(), 1u); // Degenerate range.
}

TEST(Plot, CurvesAreAWellFormedDocument) {
  LossHistory h;
  for (int s = 1; s <= 50; ++s)
    h.train.push_back({s, 5.0 / s});
  h.val = {{10, 0.9}, {20, 0.5}, {30, 0.45}};
  std::string svg = lossCurvesSvg(h, "tiny <lm> & co");
  EXPECT_EQ(svg.rfind("<svg ", 0), 0u);
  EXPECT_NE(svg.find("</svg>\n"), std::string::npos);
  EXPECT_NE(svg.find("tiny &lt;lm&gt; &amp; co"), std::string::npos);
  EXPECT_EQ(count(svg, "<polyline id=\"train\""), 1u);
  EXPECT_EQ(count(svg, "<polyline id=\"val\""), 1u);
  EXPECT_EQ(count(svg, "<circle "), 3u);
  // 50 training points: 49 separating spaces in the train polyline.
  size_t begin = svg.find("points=\"", svg.find("id=\"train\"")) + 8;
  std::string points = svg.substr(begin, svg.find('"', begin) - begin);
  EXPECT_EQ(count(points, " "), 49u);
}

TEST(Plot, ManyStepsAreAveragedAndNonFiniteLeftOut) {
  LossHistory h;
  for (int s = 1; s <= 5000; ++s)
    h.train.push_back({s, s == 7 ? NAN : 1.0});
  std::string svg = lossCurvesSvg(h, "t");
  size_t begin = svg.find("points=\"", svg.find("id=\"train\"")) + 8;
  std::string points = svg.substr(begin, svg.find('"', begin) - begin);
  EXPECT_LE(count(points, " ") + 1, 500u);
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("id=\"val\""), std::string::npos);
  // An empty history is still a document.
  EXPECT_NE(lossCurvesSvg(LossHistory(), "t").find("</svg>"),
            std::string::npos);
}

} // namespace
