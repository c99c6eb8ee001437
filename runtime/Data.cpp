//===- Data.cpp - Byte corpora and JSONL classification data -------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Data.h"
#include "runtime/JsonText.h"
#include "runtime/Random.h"
#include "runtime/Support.h"

#include <cmath>

namespace tfc::rt {

bool parseSplit(const std::string &text, Split &split) {
  if (text == "train")
    split = Split::Train;
  else if (text == "val")
    split = Split::Val;
  else if (text == "test")
    split = Split::Test;
  else
    return false;
  return true;
}

const char *toString(Split split) {
  switch (split) {
  case Split::Train:
    return "train";
  case Split::Val:
    return "val";
  case Split::Test:
    return "test";
  }
  return "?";
}

SplitBounds splitBounds(int64_t size, double trainFraction,
                        double valFraction) {
  SplitBounds b;
  b.size = size;
  b.trainEnd = int64_t(std::llround(double(size) * trainFraction));
  b.valEnd =
      int64_t(std::llround(double(size) * (trainFraction + valFraction)));
  if (b.trainEnd > size)
    b.trainEnd = size;
  if (b.valEnd > size)
    b.valEnd = size;
  if (b.valEnd < b.trainEnd)
    b.valEnd = b.trainEnd;
  return b;
}

ByteSpan splitSpan(const std::string &bytes, const SplitBounds &bounds,
                   Split split) {
  const uint8_t *base = reinterpret_cast<const uint8_t *>(bytes.data());
  switch (split) {
  case Split::Train:
    return {base, bounds.trainEnd};
  case Split::Val:
    return {base + bounds.trainEnd, bounds.valEnd - bounds.trainEnd};
  case Split::Test:
    return {base + bounds.valEnd, bounds.size - bounds.valEnd};
  }
  return {};
}

bool loadBytes(const std::string &path, std::string &bytes, std::string &err) {
  if (!readFile(path, bytes, err))
    return false;
  if (bytes.empty()) {
    err = path + ": file is empty";
    return false;
  }
  return true;
}

/// Copies window [start, start + S + 1) into one row of tokens and targets.
static void copyWindow(const uint8_t *window, int64_t seqLen, int32_t *tokens,
                       int32_t *targets) {
  for (int64_t s = 0; s < seqLen; ++s) {
    tokens[s] = window[s];
    targets[s] = window[s + 1];
  }
}

bool sampleBatch(ByteSpan data, int64_t batch, int64_t seqLen, uint64_t seed,
                 uint64_t step, int32_t *tokens, int32_t *targets) {
  static const uint64_t stream = streamId("batches");
  if (data.size <= seqLen)
    return false;
  uint64_t starts = uint64_t(data.size - seqLen); // Valid starts: [0, starts).
  for (int64_t b = 0; b < batch; ++b) {
    uint64_t start =
        uniformInt(seed, stream, step * uint64_t(batch) + uint64_t(b), starts);
    copyWindow(data.data + start, seqLen, tokens + b * seqLen,
               targets + b * seqLen);
  }
  return true;
}

int64_t evalWindowCount(ByteSpan data, int64_t seqLen) {
  return data.size > seqLen ? (data.size - 1) / seqLen : 0;
}

void evalBatch(ByteSpan data, int64_t batch, int64_t seqLen, int64_t index,
               int32_t *tokens, int32_t *targets) {
  for (int64_t b = 0; b < batch; ++b) {
    int64_t window = index * batch + b;
    copyWindow(data.data + window * seqLen, seqLen, tokens + b * seqLen,
               targets + b * seqLen);
  }
}

bool ratingToLabel(double rating, int32_t &label) {
  if (rating != std::floor(rating) || rating < 1 || rating > 5)
    return false;
  label = rating >= 4 ? 1 : 0;
  return true;
}

bool parseExampleLine(const char *line, size_t size, Example &example,
                      std::string &why) {
  Json value;
  std::string jsonErr;
  size_t column = 0;
  if (!parseJson(line, size, value, jsonErr, column)) {
    why = column ? format("column %zu: %s", column, jsonErr.c_str()) : jsonErr;
    return false;
  }
  if (!value.is_object()) {
    why = std::string("expected a JSON object, found ") + jsonKindName(value);
    return false;
  }
  auto text = value.find("text");
  if (text == value.end()) {
    why = "missing \"text\"";
    return false;
  }
  if (!text->is_string()) {
    why = std::string("\"text\" is ") + jsonKindName(*text) +
          ", expected a string";
    return false;
  }
  auto label = value.find("label");
  auto rating = value.find("rating");
  if (label != value.end()) {
    double number = label->is_number() ? label->get<double>() : -1;
    if (number != std::floor(number) || number < 0 || number > 2147483647.0) {
      why = "\"label\" must be an integer >= 0";
      return false;
    }
    example.label = int32_t(number);
  } else if (rating != value.end()) {
    if (!rating->is_number() ||
        !ratingToLabel(rating->get<double>(), example.label)) {
      why = "\"rating\" must be one of 1, 2, 3, 4, 5";
      return false;
    }
  } else {
    why = "missing \"label\" (or \"rating\" for Amazon reviews)";
    return false;
  }
  example.text = text->get<std::string>();
  return true;
}

bool loadJsonl(const std::string &path, int64_t classes,
               std::vector<Example> &examples, std::string &err) {
  examples.clear();
  std::string content;
  if (!readFile(path, content, err))
    return false;
  if (content.empty()) {
    err = path + ": file is empty";
    return false;
  }
  size_t pos = 0;
  int64_t lineNo = 0;
  while (pos < content.size()) {
    size_t eol = content.find('\n', pos);
    if (eol == std::string::npos)
      eol = content.size();
    const char *line = content.data() + pos;
    size_t size = eol - pos;
    pos = eol + 1;
    ++lineNo;
    bool blank = true;
    for (size_t i = 0; i < size && blank; ++i)
      blank = line[i] == ' ' || line[i] == '\t' || line[i] == '\r';
    if (blank)
      continue;
    Example example;
    std::string why;
    if (!parseExampleLine(line, size, example, why)) {
      err = format("%s:%lld: %s", path.c_str(), (long long)lineNo, why.c_str());
      return false;
    }
    if (classes > 0 && example.label >= classes) {
      err = format("%s:%lld: label %d is out of range for %lld classes",
                   path.c_str(), (long long)lineNo, example.label,
                   (long long)classes);
      return false;
    }
    examples.push_back(std::move(example));
  }
  if (examples.empty()) {
    err = path + ": no records (only blank lines)";
    return false;
  }
  return true;
}

} // namespace tfc::rt
