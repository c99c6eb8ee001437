//===- JsonText.cpp - JSON text through nlohmann::json --------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/JsonText.h"

#include <cmath>
#include <cstdint>

namespace tfc::rt {

bool parseJson(const char *data, size_t size, Json &out, std::string &err,
               size_t &errorByte, const Json::parser_callback_t &callback) {
  errorByte = 0;
  try {
    out = Json::parse(data, data + size, callback);
    return true;
  } catch (const Json::parse_error &e) {
    errorByte = e.byte;
    err = e.what();
  } catch (const Json::exception &e) {
    err = e.what(); // A number too large for a double: no position.
  }
  // "[json.exception.parse_error.101] parse error at line 1, column 7: what"
  // becomes "what"; the callers name the position their own way.
  size_t at = err.find("] ");
  if (at != std::string::npos)
    err.erase(0, at + 2);
  if (err.compare(0, 12, "parse error ") == 0 &&
      (at = err.find(": ")) != std::string::npos)
    err.erase(0, at + 2);
  out = Json();
  return false;
}

Json jsonNumber(double value) {
  if (!std::isfinite(value))
    return nullptr;
  if (value == std::floor(value) && std::fabs(value) < 1e15)
    return int64_t(value);
  return value;
}

std::string jsonText(const Json &value) {
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

const char *jsonKindName(const Json &value) {
  switch (value.type()) {
  case Json::value_t::null:
    return "null";
  case Json::value_t::boolean:
    return "a boolean";
  case Json::value_t::number_integer:
  case Json::value_t::number_unsigned:
  case Json::value_t::number_float:
    return "a number";
  case Json::value_t::string:
    return "a string";
  case Json::value_t::array:
    return "an array";
  case Json::value_t::object:
    return "an object";
  default:
    return "?";
  }
}

} // namespace tfc::rt
