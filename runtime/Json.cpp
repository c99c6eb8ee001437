//===- Json.cpp - A small JSON reader and writer helpers ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Json.h"
#include "runtime/Support.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tfc::rt {

const JsonValue *JsonValue::find(const std::string &key) const {
  if (kind != Object)
    return nullptr;
  for (size_t i = members.size(); i-- > 0;)
    if (members[i].first == key)
      return &members[i].second;
  return nullptr;
}

const char *jsonKindName(JsonValue::Kind kind) {
  switch (kind) {
  case JsonValue::Null:
    return "null";
  case JsonValue::Bool:
    return "a boolean";
  case JsonValue::Number:
    return "a number";
  case JsonValue::String:
    return "a string";
  case JsonValue::Array:
    return "an array";
  case JsonValue::Object:
    return "an object";
  }
  return "?";
}

namespace {

/// Recursive-descent parser state.
struct Parser {
  const char *p;
  const char *begin;
  const char *end;
  std::string err;
  const char *errAt = nullptr;
  static const int kMaxDepth = 512;

  bool fail(const char *at, const std::string &message) {
    if (!errAt) {
      errAt = at;
      err = message;
    }
    return false;
  }

  void skipSpace() {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      ++p;
  }

  bool literal(const char *word, size_t n) {
    if (size_t(end - p) < n || std::string(p, n) != word)
      return fail(p, "invalid literal");
    p += n;
    return true;
  }

  static int hexValue(char c) {
    if (c >= '0' && c <= '9')
      return c - '0';
    if (c >= 'a' && c <= 'f')
      return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
      return c - 'A' + 10;
    return -1;
  }

  /// Reads the 4 hex digits after "\u"; p points at the first digit.
  bool hex4(uint32_t &value) {
    if (end - p < 4)
      return fail(p, "truncated \\u escape");
    value = 0;
    for (int i = 0; i < 4; ++i) {
      int h = hexValue(p[i]);
      if (h < 0)
        return fail(p + i, "invalid hex digit in \\u escape");
      value = value * 16 + uint32_t(h);
    }
    p += 4;
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }

  /// p points at the opening quote.
  bool parseString(std::string &out) {
    const char *open = p;
    ++p;
    out.clear();
    while (true) {
      // Copy a run of plain bytes at once.
      const char *run = p;
      while (p < end && *p != '"' && *p != '\\' &&
             static_cast<unsigned char>(*p) >= 0x20)
        ++p;
      out.append(run, size_t(p - run));
      if (p == end)
        return fail(open, "unterminated string");
      char c = *p;
      if (c == '"') {
        ++p;
        return true;
      }
      if (c != '\\')
        return fail(p, "raw control character in string (must be escaped)");
      ++p;
      if (p == end)
        return fail(open, "unterminated string");
      char e = *p++;
      switch (e) {
      case '"':
        out += '"';
        break;
      case '\\':
        out += '\\';
        break;
      case '/':
        out += '/';
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp = 0;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          // A high surrogate: a low one must follow to make a pair.
          uint32_t low = 0;
          if (end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
            const char *save = p;
            p += 2;
            if (!hex4(low))
              return false;
            if (low >= 0xDC00 && low <= 0xDFFF) {
              cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
            } else {
              cp = 0xFFFD;
              p = save; // Decode the second escape on its own.
            }
          } else {
            cp = 0xFFFD;
          }
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          cp = 0xFFFD;
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return fail(p - 2, std::string("invalid escape '\\") + e + "'");
      }
    }
  }

  bool parseNumber(JsonValue &out) {
    const char *start = p;
    if (p < end && *p == '-')
      ++p;
    if (p == end || !(*p >= '0' && *p <= '9'))
      return fail(start, "invalid number");
    if (*p == '0') {
      ++p;
    } else {
      while (p < end && *p >= '0' && *p <= '9')
        ++p;
    }
    bool integral = true;
    if (p < end && *p == '.') {
      integral = false;
      ++p;
      if (p == end || !(*p >= '0' && *p <= '9'))
        return fail(start, "invalid number: digits expected after '.'");
      while (p < end && *p >= '0' && *p <= '9')
        ++p;
    }
    if (p < end && (*p == 'e' || *p == 'E')) {
      integral = false;
      ++p;
      if (p < end && (*p == '+' || *p == '-'))
        ++p;
      if (p == end || !(*p >= '0' && *p <= '9'))
        return fail(start, "invalid number: digits expected in exponent");
      while (p < end && *p >= '0' && *p <= '9')
        ++p;
    }
    std::string text(start, size_t(p - start));
    out.kind = JsonValue::Number;
    out.number = strtod(text.c_str(), nullptr);
    if (!std::isfinite(out.number))
      return fail(start, "number out of range");
    out.isInteger = integral && parseInt64(text, out.integer);
    return true;
  }

  bool parseValue(JsonValue &out, int depth) {
    if (depth > kMaxDepth)
      return fail(p, "nesting too deep");
    skipSpace();
    if (p == end)
      return fail(p, "unexpected end of input, expected a value");
    char c = *p;
    if (c == '{') {
      out.kind = JsonValue::Object;
      ++p;
      skipSpace();
      if (p < end && *p == '}') {
        ++p;
        return true;
      }
      while (true) {
        skipSpace();
        if (p == end || *p != '"')
          return fail(p, "expected a string key in object");
        std::string key;
        if (!parseString(key))
          return false;
        skipSpace();
        if (p == end || *p != ':')
          return fail(p, "expected ':' after object key");
        ++p;
        out.members.emplace_back(std::move(key), JsonValue());
        if (!parseValue(out.members.back().second, depth + 1))
          return false;
        skipSpace();
        if (p < end && *p == ',') {
          ++p;
          continue;
        }
        if (p < end && *p == '}') {
          ++p;
          return true;
        }
        return fail(p, "expected ',' or '}' in object");
      }
    }
    if (c == '[') {
      out.kind = JsonValue::Array;
      ++p;
      skipSpace();
      if (p < end && *p == ']') {
        ++p;
        return true;
      }
      while (true) {
        out.items.emplace_back();
        if (!parseValue(out.items.back(), depth + 1))
          return false;
        skipSpace();
        if (p < end && *p == ',') {
          ++p;
          continue;
        }
        if (p < end && *p == ']') {
          ++p;
          return true;
        }
        return fail(p, "expected ',' or ']' in array");
      }
    }
    if (c == '"') {
      out.kind = JsonValue::String;
      return parseString(out.string);
    }
    if (c == 't') {
      out.kind = JsonValue::Bool;
      out.boolean = true;
      return literal("true", 4);
    }
    if (c == 'f') {
      out.kind = JsonValue::Bool;
      out.boolean = false;
      return literal("false", 5);
    }
    if (c == 'n') {
      out.kind = JsonValue::Null;
      return literal("null", 4);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    return fail(p,
                format("unexpected character '%s'",
                       std::isprint(static_cast<unsigned char>(c))
                           ? std::string(1, c).c_str()
                           : format("\\x%02x", unsigned(uint8_t(c))).c_str()));
  }
};

} // namespace

bool parseJson(const char *data, size_t size, JsonValue &out, std::string &err,
               size_t &errorOffset) {
  out = JsonValue();
  Parser parser{data, data, data + size, "", nullptr};
  bool ok = parser.parseValue(out, 0);
  if (ok) {
    parser.skipSpace();
    if (parser.p != parser.end)
      ok = parser.fail(parser.p, "unexpected text after the JSON value");
  }
  if (!ok) {
    err = parser.err;
    errorOffset = size_t(parser.errAt - data);
  }
  return ok;
}

std::string jsonQuote(const std::string &text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (u < 0x20) {
      out += format("\\u%04x", unsigned(u));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string jsonNumber(double value) {
  if (!std::isfinite(value))
    return "null";
  if (value == std::floor(value) && std::fabs(value) < 1e15)
    return format("%.0f", value);
  // The shortest of %.15g..%.17g that reads back exactly.
  for (int digits = 15; digits <= 17; ++digits) {
    std::string s = format("%.*g", digits, value);
    if (strtod(s.c_str(), nullptr) == value)
      return s;
  }
  return format("%.17g", value);
}

} // namespace tfc::rt
