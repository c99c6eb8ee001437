//===- Data.h - Byte corpora and JSONL classification data ------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Language modelling reads one raw byte file (enwik8-style) and splits it by
/// byte position: train = [0, round(n * train)), val = [train end,
/// round(n * (train + val))), test = the rest; 90/5/5 by default, which
/// gives enwik8's 90M/5M/5M.
///
/// Training batches are B windows of S + 1 bytes at random starts (inputs
/// are the first S bytes, targets the last S); window b of step t starts at
/// uniformInt(seed, streamId("batches"), t * B + b, size - S), see Random.h.
/// Evaluation walks the split in order: window w covers bytes
/// [w * S, w * S + S + 1), so consecutive windows do not overlap in their
/// targets and every byte after the first is predicted once.
///
/// Classification reads JSONL, one object per line (blank lines skipped):
///   {"text": "...", "label": 1}                     label: integer >= 0
///   {"rating": 4.0, "text": "...", ...}             Amazon Reviews 2023:
///                                                   rating 1-3 -> 0, 4-5 -> 1
/// Other members (title, images, ...) are ignored; "label" wins when both
/// are present.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DATA_H
#define TFC_RUNTIME_DATA_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

enum class Split { Train, Val, Test };

/// "train", "val" or "test".
bool parseSplit(const std::string &text, Split &split);
const char *toString(Split split);

struct SplitBounds {
  int64_t trainEnd = 0;
  int64_t valEnd = 0;
  int64_t size = 0;
};

SplitBounds splitBounds(int64_t size, double trainFraction, double valFraction);

/// A range of bytes.
struct ByteSpan {
  const uint8_t *data = nullptr;
  int64_t size = 0;
};

ByteSpan splitSpan(const std::string &bytes, const SplitBounds &bounds,
                   Split split);

/// Reads a byte corpus. An empty file is an error.
bool loadBytes(const std::string &path, std::string &bytes, std::string &err);

/// A random training batch: tokens and targets are [batch, seqLen]. Returns
/// false (and writes nothing) when data holds fewer than seqLen + 1 bytes.
bool sampleBatch(ByteSpan data, int64_t batch, int64_t seqLen, uint64_t seed,
                 uint64_t step, int32_t *tokens, int32_t *targets);

/// Number of evaluation windows of S + 1 bytes with stride S.
int64_t evalWindowCount(ByteSpan data, int64_t seqLen);

/// Evaluation batch `index`: windows index*batch .. index*batch + batch - 1,
/// which must all exist (index < evalWindowCount / batch).
void evalBatch(ByteSpan data, int64_t batch, int64_t seqLen, int64_t index,
               int32_t *tokens, int32_t *targets);

/// One classification example.
struct Example {
  std::string text;
  int32_t label = 0;
};

/// Amazon Reviews rating to a binary label: 1, 2, 3 -> 0 and 4, 5 -> 1.
/// Returns false for anything else (0, 6, 3.5, ...).
bool ratingToLabel(double rating, int32_t &label);

/// Parses one JSONL line (RFC 8259 JSON, so valid UTF-8). On failure `why`
/// says what is wrong, with the column where the JSON parser stopped for
/// syntax errors: "column 6: syntax error while parsing object separator -
/// unexpected number literal; expected ':'".
bool parseExampleLine(const char *line, size_t size, Example &example,
                      std::string &why);

/// Reads a JSONL file. When `classes` > 0, labels must be below it. Errors
/// are `path:line: what`; an empty file or one without records is an error.
bool loadJsonl(const std::string &path, int64_t classes,
               std::vector<Example> &examples, std::string &err);

} // namespace tfc::rt

#endif // TFC_RUNTIME_DATA_H
