//===- Plot.cpp - Loss curves as an SVG file ------------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Plot.h"
#include "runtime/Support.h"

#include <algorithm>
#include <cmath>

namespace tfc::rt {

std::vector<double> niceTicks(double lo, double hi, int target) {
  std::vector<double> ticks;
  if (!(hi > lo) || target < 1)
    return {lo};
  double raw = (hi - lo) / target;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  double step = power;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw) {
      step = m * power;
      break;
    }
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

/// Escapes text for an SVG text node.
static std::string escapeXml(const std::string &text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

/// Averages consecutive points into at most `maxPoints` buckets of equal
/// step ranges.
static std::vector<CurvePoint> downsample(const std::vector<CurvePoint> &in,
                                          size_t maxPoints) {
  if (in.size() <= maxPoints)
    return in;
  std::vector<CurvePoint> out;
  size_t per = (in.size() + maxPoints - 1) / maxPoints;
  for (size_t i = 0; i < in.size(); i += per) {
    size_t end = std::min(in.size(), i + per);
    double steps = 0, loss = 0;
    for (size_t k = i; k < end; ++k) {
      steps += double(in[k].step);
      loss += in[k].loss;
    }
    out.push_back({int64_t(std::llround(steps / double(end - i))),
                   loss / double(end - i)});
  }
  return out;
}

std::string lossCurvesSvg(const LossHistory &history,
                          const std::string &title) {
  const double width = 720, height = 420;
  const double left = 64, right = 24, top = 44, bottom = 52;
  const double plotW = width - left - right, plotH = height - top - bottom;
  auto finite = [](const std::vector<CurvePoint> &in) {
    std::vector<CurvePoint> out;
    for (const CurvePoint &p : in)
      if (std::isfinite(p.loss))
        out.push_back(p);
    return out;
  };
  std::vector<CurvePoint> train = downsample(finite(history.train), 500);
  std::vector<CurvePoint> val = finite(history.val);

  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool any = false;
  for (const auto *curve : {&train, &val})
    for (const CurvePoint &p : *curve) {
      if (!any) {
        x0 = x1 = double(p.step);
        y0 = y1 = p.loss;
        any = true;
      }
      x0 = std::min(x0, double(p.step));
      x1 = std::max(x1, double(p.step));
      y0 = std::min(y0, p.loss);
      y1 = std::max(y1, p.loss);
    }
  if (x1 <= x0)
    x1 = x0 + 1;
  double pad = (y1 - y0) * 0.05;
  if (pad <= 0)
    pad = std::max(std::fabs(y0) * 0.05, 0.05);
  y0 -= pad;
  y1 += pad;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * plotW; };
  auto py = [&](double y) { return top + (y1 - y) / (y1 - y0) * plotH; };

  std::string svg = format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" "
      "font-size=\"12\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.1f\" y=\"24\" text-anchor=\"middle\" "
      "font-size=\"15\">%s</text>\n",
      width, height, width, height, width / 2, escapeXml(title).c_str());
  // Grid and ticks.
  for (double t : niceTicks(y0, y1, 6)) {
    double y = py(t);
    svg += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#e5e5e5\"/>\n"
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n",
                  left, y, left + plotW, y, left - 6, y + 4, t);
  }
  for (double t : niceTicks(x0, x1, 8)) {
    double x = px(t);
    svg += format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                  "stroke=\"#e5e5e5\"/>\n"
                  "<text x=\"%.1f\" y=\"%.1f\" "
                  "text-anchor=\"middle\">%.0f</text>\n",
                  x, top, x, top + plotH, x, top + plotH + 16, t);
  }
  svg +=
      format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
             "fill=\"none\" stroke=\"#444\"/>\n"
             "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">step</text>\n"
             "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" "
             "transform=\"rotate(-90 16 %.1f)\">loss</text>\n",
             left, top, plotW, plotH, left + plotW / 2, height - 12,
             top + plotH / 2, top + plotH / 2);
  auto polyline = [&](const std::vector<CurvePoint> &curve, const char *color,
                      const char *id) {
    if (curve.empty())
      return;
    svg += format("<polyline id=\"%s\" fill=\"none\" stroke=\"%s\" "
                  "stroke-width=\"1.5\" points=\"",
                  id, color);
    for (size_t i = 0; i < curve.size(); ++i)
      svg += format("%s%.1f,%.1f", i ? " " : "", px(double(curve[i].step)),
                    py(curve[i].loss));
    svg += "\"/>\n";
  };
  polyline(train, "#1f77b4", "train");
  polyline(val, "#d62728", "val");
  for (const CurvePoint &p : val)
    svg +=
        format("<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#d62728\"/>\n",
               px(double(p.step)), py(p.loss));
  // Legend, top right.
  double lx = left + plotW - 150, ly = top + 14;
  svg += format("<rect x=\"%.1f\" y=\"%.1f\" width=\"140\" height=\"44\" "
                "fill=\"white\" stroke=\"#ccc\"/>\n"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#1f77b4\" stroke-width=\"2\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\">train</text>\n"
                "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                "stroke=\"#d62728\" stroke-width=\"2\"/>\n"
                "<text x=\"%.1f\" y=\"%.1f\">validation</text>\n",
                lx, ly - 10, lx + 8, ly + 2, lx + 32, ly + 2, lx + 40, ly + 6,
                lx + 8, ly + 22, lx + 32, ly + 22, lx + 40, ly + 26);
  svg += "</svg>\n";
  return svg;
}

} // namespace tfc::rt
