//===- JsonText.h - JSON text through nlohmann::json ------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The runtime reads and writes JSON (JSONL data lines, safetensors headers,
/// metrics lines) with nlohmann::json (Debian's nlohmann-json3-dev). This
/// file holds what its callers share: a parse that reports failure as one
/// line and a position instead of throwing, numbers written as the runtime
/// writes them, and kind names for messages.
///
/// Parsing follows RFC 8259: strings must be valid UTF-8 and surrogate
/// escapes must pair; duplicate object keys keep the last value. The parser
/// does not recurse, so deep nesting is not a stack overflow.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_JSONTEXT_H
#define TFC_RUNTIME_JSONTEXT_H

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

namespace tfc::rt {

/// A JSON value whose objects keep their members in the order written.
using Json = nlohmann::ordered_json;

/// Parses exactly one JSON value, with optional whitespace around it, from
/// [data, data + size). On failure sets `err` to what is wrong (one line)
/// and `errorByte` to the 1-based position of the last byte read, which
/// ends the offending token (0 when the parser does not say). `callback`,
/// when given, sees the parse events (nlohmann::json's parser_callback_t).
bool parseJson(const char *data, size_t size, Json &out, std::string &err,
               size_t &errorByte,
               const Json::parser_callback_t &callback = nullptr);

/// `value` as a JSON number: integral values below 1e15 in magnitude as
/// integers ("3", not "3.0"), NaN and infinities, which JSON cannot hold,
/// as null, others as doubles (written in their shortest round-trip form).
Json jsonNumber(double value);

/// `value` as compact JSON text. String bytes that are not UTF-8 become
/// U+FFFD.
std::string jsonText(const Json &value);

/// Kind names for messages: "null", "a boolean", "a number", "a string",
/// "an array", "an object".
const char *jsonKindName(const Json &value);

} // namespace tfc::rt

#endif // TFC_RUNTIME_JSONTEXT_H
