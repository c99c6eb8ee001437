//===- BuildOptimizer.cpp - The tfc-build-optimizer pass ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Generates the optimizer step over the flat parameter, gradient and Adam
/// moment buffers: gradient norm and clipping, the learning-rate schedule
/// and the Adam/AdamW update, from the module's `tfc.training` settings.
/// The base learning rate, the schedule's length and its warm-up are inputs,
/// so that a run may override the spec's `lr`, `steps` and `warmup` without
/// recompiling.
///
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/Utils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>

namespace mlir::tfc {
#define GEN_PASS_DEF_TFCBUILDOPTIMIZER
#include "passes/Passes.h.inc"
} // namespace mlir::tfc

using namespace mlir;
using namespace mlir::tfc;

namespace {

/// The optimizer settings read from `tfc.training`.
struct OptimizerSettings {
  bool decoupledDecay = false; ///< AdamW.
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weightDecay = 0, clip = 0;
  std::string schedule = "constant";
};

/// A half-open range of the flat buffer holding trained tensors.
struct Run {
  int64_t begin, end;
};

OptimizerSettings readSettings(DictionaryAttr dict) {
  OptimizerSettings s;
  auto real = [&](StringRef key, double &out) {
    if (auto attr = dict.getAs<FloatAttr>(key))
      out = attr.getValueAsDouble();
  };
  if (auto opt = dict.getAs<StringAttr>("optimizer"))
    s.decoupledDecay = opt.getValue() == "adamw";
  if (auto schedule = dict.getAs<StringAttr>("schedule"))
    s.schedule = schedule.getValue().str();
  real("beta1", s.beta1);
  real("beta2", s.beta2);
  real("eps", s.eps);
  real("weight_decay", s.weightDecay);
  real("clip", s.clip);
  return s;
}

/// The ranges of trained tensors, merged across alignment gaps.
SmallVector<Run> trainedRuns(ArrayAttr manifest) {
  SmallVector<Run> runs;
  SmallVector<std::pair<int64_t, int64_t>> ranges;
  for (Attribute attr : manifest) {
    auto entry = cast<DictionaryAttr>(attr);
    if (entry.getAs<StringAttr>("kind").getValue() != "param")
      continue;
    int64_t count = 1;
    for (int64_t extent :
         cast<DenseI64ArrayAttr>(entry.get("shape")).asArrayRef())
      count *= extent;
    int64_t offset = entry.getAs<IntegerAttr>("offset").getInt();
    ranges.push_back({offset, offset + count});
  }
  llvm::sort(ranges);
  for (auto [begin, end] : ranges) {
    // Gaps of alignment padding hold zeros with zero gradients: updating
    // them changes nothing, so neighbouring tensors share one run.
    if (!runs.empty() && begin - runs.back().end < 16)
      runs.back().end = std::max(runs.back().end, end);
    else
      runs.push_back({begin, end});
  }
  return runs;
}

Value scalarConstant(OpBuilder &b, Location loc, Type type, double value) {
  return floatConstant(b, loc, type, value);
}

/// The learning rate at (1-based, float) step `t` of a run of `steps`
/// updates whose base rate is `baseRate`, warming up linearly over the first
/// `warmup` steps (all scalars of `type`; `warmup` 0: none).
Value learningRate(OpBuilder &b, Location loc, const OptimizerSettings &s,
                   Value t, Value baseRate, Value steps, Value warmup,
                   Type type) {
  auto c = [&](double v) { return scalarConstant(b, loc, type, v); };
  Value one = c(1.0);
  // min(1, t / warmup) = t / max(t, warmup) for t >= 1, and 1 when there
  // is no warm-up, without dividing by zero.
  Value factor = b.create<arith::DivFOp>(
      loc, t, b.create<arith::MaximumFOp>(loc, t, warmup));
  Value span = b.create<arith::MaximumFOp>(
      loc, one, b.create<arith::SubFOp>(loc, steps, warmup));
  Value progress = b.create<arith::DivFOp>(
      loc, b.create<arith::SubFOp>(loc, t, warmup), span);
  progress = b.create<arith::MaximumFOp>(loc, progress, c(0.0));
  progress = b.create<arith::MinimumFOp>(loc, progress, one);
  Value decay = one;
  if (s.schedule == "linear") {
    decay = b.create<arith::SubFOp>(loc, one, progress);
  } else if (s.schedule == "cosine") {
    Value angle = b.create<arith::MulFOp>(loc, progress, c(M_PI));
    decay = b.create<arith::MulFOp>(
        loc, c(0.5),
        b.create<arith::AddFOp>(loc, one, b.create<math::CosOp>(loc, angle)));
  } else if (s.schedule == "inverse_sqrt") {
    Value floor = b.create<arith::MaximumFOp>(loc, one, warmup);
    Value tt = b.create<arith::MaximumFOp>(loc, t, floor);
    decay =
        b.create<math::SqrtOp>(loc, b.create<arith::DivFOp>(loc, floor, tt));
  }
  return b.create<arith::MulFOp>(loc, baseRate,
                                 b.create<arith::MulFOp>(loc, factor, decay));
}

Value sliceOf(OpBuilder &b, Location loc, Value flat, Run run) {
  Type element = elementOf(flat);
  return b.create<tensor::ExtractSliceOp>(
      loc, RankedTensorType::get({run.end - run.begin}, element), flat,
      ArrayRef<OpFoldResult>{b.getIndexAttr(run.begin)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(run.end - run.begin)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

Value insertInto(OpBuilder &b, Location loc, Value part, Value flat, Run run) {
  return b.create<tensor::InsertSliceOp>(
      loc, part, flat, ArrayRef<OpFoldResult>{b.getIndexAttr(run.begin)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(run.end - run.begin)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
}

struct TfcBuildOptimizerPass
    : public tfc::impl::TfcBuildOptimizerBase<TfcBuildOptimizerPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto training = module->getAttrOfType<DictionaryAttr>("tfc.training");
    auto manifest = module->getAttrOfType<ArrayAttr>("tfc.manifest");
    auto count = module->getAttrOfType<IntegerAttr>("tfc.param_count");
    if (!training || !manifest || !count)
      return;
    if (module.lookupSymbol("optimizer_step")) {
      module.emitError() << "tfc-build-optimizer: @optimizer_step exists";
      return signalPassFailure();
    }
    OptimizerSettings s = readSettings(training);
    SmallVector<Run> runs = trainedRuns(manifest);

    OpBuilder b(module.getContext());
    b.setInsertionPointToEnd(module.getBody());
    Location loc = module.getLoc();
    Type element = b.getF32Type();
    if (auto forward = module.lookupSymbol<func::FuncOp>("forward"))
      element = cast<RankedTensorType>(forward.getArgumentTypes()[0])
                    .getElementType();
    auto flatType = RankedTensorType::get({count.getInt()}, element);
    auto stepType = RankedTensorType::get({}, b.getI64Type());
    auto pairType = RankedTensorType::get({2}, element);
    auto scheduleType = RankedTensorType::get({3}, element);
    auto func = b.create<func::FuncOp>(
        loc, "optimizer_step",
        b.getFunctionType(
            {flatType, flatType, flatType, flatType, stepType, scheduleType},
            {flatType, flatType, flatType, pairType}));
    Block *body = func.addEntryBlock();
    b.setInsertionPointToStart(body);
    Value params = body->getArgument(0), grads = body->getArgument(1);
    Value moment1 = body->getArgument(2), moment2 = body->getArgument(3);
    auto c = [&](double v) { return scalarConstant(b, loc, element, v); };

    // Global gradient norm and the clipping factor.
    Value squares = reduceLastDim(
        b, loc, grads, 0.0,
        [](OpBuilder &nb, Location l, Value acc, Value g) -> Value {
          return nb.create<arith::AddFOp>(l, acc,
                                          nb.create<arith::MulFOp>(l, g, g));
        });
    Value norm = b.create<math::SqrtOp>(
        loc, b.create<tensor::ExtractOp>(loc, squares, ValueRange{}));
    Value clipScale = c(1.0);
    if (s.clip > 0)
      clipScale = b.create<arith::MinimumFOp>(
          loc, c(1.0),
          b.create<arith::DivFOp>(loc, c(s.clip),
                                  b.create<arith::AddFOp>(loc, norm, c(1e-6))));

    // Step, learning rate and bias corrections.
    Value step =
        b.create<tensor::ExtractOp>(loc, body->getArgument(4), ValueRange{});
    Value t = b.create<arith::SIToFPOp>(loc, element, step);
    Value schedule = body->getArgument(5);
    auto scheduleEntry = [&](int64_t i) -> Value {
      Value index = b.create<arith::ConstantIndexOp>(loc, i);
      return b.create<tensor::ExtractOp>(loc, schedule, ValueRange{index});
    };
    Value lr = learningRate(b, loc, s, t, scheduleEntry(0), scheduleEntry(1),
                            scheduleEntry(2), element);
    Value correction1 = b.create<arith::SubFOp>(
        loc, c(1.0), b.create<math::PowFOp>(loc, c(s.beta1), t));
    Value correction2 = b.create<arith::SubFOp>(
        loc, c(1.0), b.create<math::PowFOp>(loc, c(s.beta2), t));

    Value newParams = params, newMoment1 = moment1, newMoment2 = moment2;
    for (Run run : runs) {
      int64_t size = run.end - run.begin;
      SmallVector<Value> inputs = {
          sliceOf(b, loc, params, run), sliceOf(b, loc, grads, run),
          sliceOf(b, loc, moment1, run), sliceOf(b, loc, moment2, run)};
      SmallVector<Value> inits(3, emptyTensor(b, loc, {size}, element));
      AffineMap identity = b.getMultiDimIdentityMap(1);
      auto update = b.create<linalg::GenericOp>(
          loc,
          TypeRange{inits[0].getType(), inits[0].getType(), inits[0].getType()},
          inputs, inits, SmallVector<AffineMap>(7, identity),
          parallelIterators(1),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            auto k = [&](double v) { return floatConstant(nb, l, element, v); };
            Value p = args[0], m = args[2], v = args[3];
            Value g = nb.create<arith::MulFOp>(l, args[1], clipScale);
            if (!s.decoupledDecay && s.weightDecay > 0)
              g = nb.create<arith::AddFOp>(
                  l, g, nb.create<arith::MulFOp>(l, p, k(s.weightDecay)));
            Value m2 = nb.create<arith::AddFOp>(
                l, nb.create<arith::MulFOp>(l, m, k(s.beta1)),
                nb.create<arith::MulFOp>(l, g, k(1.0 - s.beta1)));
            Value v2 = nb.create<arith::AddFOp>(
                l, nb.create<arith::MulFOp>(l, v, k(s.beta2)),
                nb.create<arith::MulFOp>(l, nb.create<arith::MulFOp>(l, g, g),
                                         k(1.0 - s.beta2)));
            Value mHat = nb.create<arith::DivFOp>(l, m2, correction1);
            Value vHat = nb.create<arith::DivFOp>(l, v2, correction2);
            Value denom = nb.create<arith::AddFOp>(
                l, nb.create<math::SqrtOp>(l, vHat), k(s.eps));
            Value direction = nb.create<arith::DivFOp>(l, mHat, denom);
            if (s.decoupledDecay && s.weightDecay > 0)
              direction = nb.create<arith::AddFOp>(
                  l, direction,
                  nb.create<arith::MulFOp>(l, p, k(s.weightDecay)));
            Value p2 = nb.create<arith::SubFOp>(
                l, p, nb.create<arith::MulFOp>(l, lr, direction));
            nb.create<linalg::YieldOp>(l, ValueRange{p2, m2, v2});
          });
      newParams = insertInto(b, loc, update.getResult(0), newParams, run);
      newMoment1 = insertInto(b, loc, update.getResult(1), newMoment1, run);
      newMoment2 = insertInto(b, loc, update.getResult(2), newMoment2, run);
    }
    Value stats =
        b.create<tensor::FromElementsOp>(loc, pairType, ValueRange{norm, lr});
    b.create<func::ReturnOp>(
        loc, ValueRange{newParams, newMoment1, newMoment2, stats});
  }
};
} // namespace
