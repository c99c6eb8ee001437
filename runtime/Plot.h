//===- Plot.h - Loss curves as an SVG file ----------------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A small self-contained SVG line plot of the training and validation loss
/// against the step, written beside the metrics log (DIR/curves.svg) and
/// viewable in any browser. The training curve is averaged into at most
/// 500 buckets of consecutive steps; validation points are drawn as they
/// are. Non-finite losses are left out.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_PLOT_H
#define TFC_RUNTIME_PLOT_H

#include "runtime/TrainState.h"

#include <string>

namespace tfc::rt {

/// The SVG document of `history`, titled `title`.
std::string lossCurvesSvg(const LossHistory &history, const std::string &title);

/// Tick values covering [lo, hi]: multiples of 1, 2 or 5 times a power of
/// ten, about `target` of them.
std::vector<double> niceTicks(double lo, double hi, int target);

} // namespace tfc::rt

#endif // TFC_RUNTIME_PLOT_H
