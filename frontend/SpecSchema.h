//===- SpecSchema.h - The keys, enums and ranges of a spec ------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Private to the spec parser (frontend/Spec*.cpp): the sections and keys
/// docs/spec.md documents, the accepted spellings of every enum value and
/// the ranges that sizes and numbers must keep to.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_SPECSCHEMA_H
#define TFC_FRONTEND_SPECSCHEMA_H

#include "frontend/Spec.h"

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace tfc::spec::detail {

//===----------------------------------------------------------------------===//
// Limits
//===----------------------------------------------------------------------===//

/// Upper bounds on sizes. They are far above any model this compiler targets
/// and keep every product the later stages form (parameter counts, buffer
/// sizes) well inside 64 bits.
inline constexpr int64_t kMaxVocab = int64_t(1) << 24;
inline constexpr int64_t kMaxDModel = int64_t(1) << 16;
inline constexpr int64_t kMaxHeads = int64_t(1) << 12;
inline constexpr int64_t kMaxDFF = int64_t(1) << 20;
inline constexpr int64_t kMaxLayers = 1024;
inline constexpr int64_t kMaxClasses = int64_t(1) << 20;
inline constexpr int64_t kMaxFeatures = int64_t(1) << 16;
inline constexpr int64_t kMaxSteps = int64_t(1) << 40;
inline constexpr int64_t kMaxDConvKernel = 1024;
inline constexpr int64_t kMaxMinFreq = int64_t(1) << 30;
inline constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
inline constexpr size_t kMaxFileBytes = size_t(16) << 20;
inline constexpr size_t kMaxNameLength = 128;

//===----------------------------------------------------------------------===//
// Ranges
//===----------------------------------------------------------------------===//

/// Describes an integer range in words.
std::string describeIntRange(int64_t min, int64_t max);

/// A range of real numbers with open or closed ends; infinite bounds are
/// left out of the description.
struct FloatRange {
  double min;
  bool minOpen;
  double max;
  bool maxOpen;
  /// Why the bounds are where they are, when that is not obvious.
  const char *why = nullptr;

  /// Whether `value` lies in the range.
  bool contains(double value) const;
  /// The range in words, with the reason for its bounds.
  std::string describe() const;
  /// The range in words.
  std::string bounds() const;
};

inline constexpr FloatRange kUnitOpen{0.0, true, 1.0, true};
inline constexpr FloatRange kUnitLeftOpen{0.0, true, 1.0, false};

// The model computes in float32 (unless compiled with --f64), so the keys it
// reads there keep clear of what float32 turns into 0, 1 or infinity.

/// The largest float32 below 1: a decay rate or probability above it rounds
/// to 1 (1 - beta^t becomes 0 and the bias correction divides by it).
inline constexpr double kFloat32BelowOne = 0.99999994;
/// A positive float32 that is normal (not flushed to zero), and one well
/// below float32's largest (3.4e38).
inline constexpr double kFloat32Tiny = 1.2e-38;
inline constexpr double kFloat32Huge = 1e38;
inline constexpr FloatRange kFloat32Fraction{
    0.0, false, kFloat32BelowOne, false, "larger values round to 1 in float32"};
inline constexpr FloatRange kFloat32Epsilon{
    kFloat32Tiny, false, kFloat32Huge, false,
    "smaller values are 0 in float32, and a zero epsilon divides by zero"};
inline constexpr FloatRange kFloat32NormEpsilon{
    kFloat32Tiny, false, 1.0, true,
    "smaller values are 0 in float32, and a zero epsilon divides by zero"};
inline constexpr FloatRange kFloat32NonNegative{
    0.0, false, kFloat32Huge, false, "larger values overflow float32"};
/// Adam moves a weight by about the learning rate per step; below 1e-9 that
/// is less than half the float32 spacing of a weight of 0.02 (the usual
/// initial scale, spacing 1.9e-9), so such weights would not change at all.
inline constexpr FloatRange kLearningRate{
    1e-9, false, kFloat32Huge, false,
    "a smaller step leaves float32 weights of the usual scale unchanged"};

//===----------------------------------------------------------------------===//
// Schema
//===----------------------------------------------------------------------===//

/// The known sections and their keys, in the order docs/spec.md lists them.
struct SectionSchema {
  const char *name;
  std::vector<const char *> keys;
};

/// Every section a spec may have.
const std::vector<SectionSchema> &schema();

/// One accepted spelling of an enum value.
template <typename E>
struct EnumName {
  const char *name;
  E value;
};

inline constexpr EnumName<Task> kTasks[] = {{"lm", Task::LanguageModel},
                                            {"classify", Task::Classify}};
inline constexpr EnumName<Positions> kPositions[] = {
    {"none", Positions::None},
    {"sinusoidal", Positions::Sinusoidal},
    {"learned", Positions::Learned},
    {"rotary", Positions::Rotary}};
inline constexpr EnumName<ClassifyLoss> kLosses[] = {
    {"ce", ClassifyLoss::CrossEntropy},
    {"bce", ClassifyLoss::BinaryCrossEntropy}};
inline constexpr EnumName<AttentionKind> kAttentionKinds[] = {
    {"softmax", AttentionKind::Softmax},
    {"performer", AttentionKind::Performer},
    {"longformer", AttentionKind::Longformer}};
inline constexpr EnumName<Activation> kActivations[] = {
    {"relu", Activation::Relu},
    {"gelu", Activation::Gelu},
    {"squared_relu", Activation::SquaredRelu}};
inline constexpr EnumName<ShortenKind> kShortenKinds[] = {
    {"avg", ShortenKind::Avg},
    {"linear", ShortenKind::Linear},
    {"attention", ShortenKind::Attention}};
inline constexpr EnumName<UpsampleKind> kUpsampleKinds[] = {
    {"naive", UpsampleKind::Naive},
    {"linear", UpsampleKind::Linear},
    {"attention", UpsampleKind::Attention}};
inline constexpr EnumName<Precision> kPrecisions[] = {
    {"f32", Precision::F32}, {"bf16", Precision::BF16}};
inline constexpr EnumName<Optimizer> kOptimizers[] = {
    {"adam", Optimizer::Adam}, {"adamw", Optimizer::AdamW}};
inline constexpr EnumName<Schedule> kSchedules[] = {
    {"constant", Schedule::Constant},
    {"linear", Schedule::Linear},
    {"cosine", Schedule::Cosine},
    {"inverse_sqrt", Schedule::InverseSqrt}};
inline constexpr EnumName<DataFormat> kFormats[] = {
    {"bytes", DataFormat::Bytes}, {"jsonl", DataFormat::Jsonl}};

} // namespace tfc::spec::detail

#endif // TFC_FRONTEND_SPECSCHEMA_H
