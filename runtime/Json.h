//===- Json.h - A small JSON reader and writer helpers ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A strict RFC 8259 JSON parser into a small tree, used for JSONL data lines
/// and safetensors headers, and helpers to write JSON text.
///
/// Strings: all escapes, including \uXXXX and surrogate pairs, are decoded
/// to UTF-8; an unpaired surrogate becomes U+FFFD; raw control characters
/// inside strings are errors; other bytes are copied as they are. Numbers
/// follow the JSON grammar; integers without fraction or exponent that fit
/// in int64 are also kept exactly. Duplicate object keys are kept;
/// `find` returns the last one (as Python's json does). Nesting deeper than
/// 512 levels is an error rather than a stack overflow.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_JSON_H
#define TFC_RUNTIME_JSON_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tfc::rt {

struct JsonValue {
  enum Kind { Null, Bool, Number, String, Array, Object };
  Kind kind = Null;
  bool boolean = false;
  double number = 0;
  bool isInteger = false; ///< Number written as an integer that fits int64.
  int64_t integer = 0;    ///< Valid when isInteger.
  std::string string;
  std::vector<JsonValue> items;                           ///< Array.
  std::vector<std::pair<std::string, JsonValue>> members; ///< Object.

  /// Member `key` of an object (the last if repeated), or nullptr.
  const JsonValue *find(const std::string &key) const;
};

/// Parses exactly one JSON value from [data, data + size), surrounded by
/// optional whitespace. On failure sets `err` to what is wrong and
/// `errorOffset` to the 0-based byte offset where it was found.
bool parseJson(const char *data, size_t size, JsonValue &out, std::string &err,
               size_t &errorOffset);

/// "kind" names for messages: "null", "a boolean", "a number", ...
const char *jsonKindName(JsonValue::Kind kind);

/// `text` as a quoted JSON string (escapes '"', '\\' and control characters;
/// other bytes are copied).
std::string jsonQuote(const std::string &text);

/// A number as JSON text: shortest round-trip form; NaN and infinities,
/// which JSON cannot hold, become null.
std::string jsonNumber(double value);

} // namespace tfc::rt

#endif // TFC_RUNTIME_JSON_H
