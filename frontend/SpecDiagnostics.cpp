//===- SpecDiagnostics.cpp - Text of the spec parser's messages -----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// How the spec parser's diagnostics show keys, strings and numbers, and the
/// edit distance behind its "did you mean" hints.
///
//===----------------------------------------------------------------------===//

#include "frontend/SpecDiagnostics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace tfc::spec::detail {

/// Escapes control characters so that a diagnostic always stays on one line.
std::string oneLine(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

/// Quotes a user-provided string for a message, shortened to a readable
/// length without splitting a UTF-8 sequence.
std::string quote(std::string_view text) {
  constexpr size_t kMaxShown = 64;
  if (text.size() > kMaxShown) {
    size_t cut = kMaxShown;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80)
      --cut;
    return "\"" + std::string(text.substr(0, cut)) + "...\"";
  }
  return "\"" + std::string(text) + "\"";
}

/// A key as TOML would write it: bare when it only has [A-Za-z0-9_-],
/// otherwise quoted (control characters are escaped later by oneLine).
std::string keyName(std::string_view key) {
  bool bare = !key.empty();
  for (char c : key)
    bare = bare && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                    (c >= '0' && c <= '9') || c == '_' || c == '-');
  if (bare)
    return std::string(key);
  std::string out = "\"";
  for (char c : key) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

/// Shortest decimal rendering of a double that reads back to the same value.
std::string formatDouble(double value) {
  char buf[32];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, value);
    if (std::strtod(buf, nullptr) == value)
      return buf;
  }
  return buf;
}

/// A floating-point value as a TOML literal would show it: always with a
/// decimal point or exponent, so that 2.0 is not mistaken for the integer 2.
std::string formatFloatLiteral(double value) {
  std::string text = formatDouble(value);
  if (std::isfinite(value) && text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

namespace {

/// Edit distance counting insertions, deletions, substitutions and swaps of
/// neighbours (optimal string alignment), for "did you mean" hints.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1,
                                     std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

} // namespace

/// Counts the code points of a UTF-8 byte range (toml++ columns count code
/// points).
uint32_t codePoints(std::string_view text) {
  uint32_t count = 0;
  for (char c : text)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
      ++count;
  return count;
}

/// Suggests the closest known name for a misspelt one, if any is close.
std::string suggestion(std::string_view given,
                       const std::vector<const char *> &known) {
  if (given.size() > 64)
    return {};
  // One edit for short names, two for longer ones.
  size_t best = given.size() <= 4 ? 2 : 3;
  const char *bestName = nullptr;
  for (const char *name : known) {
    size_t distance = editDistance(given, name);
    if (distance < best) {
      best = distance;
      bestName = name;
    }
  }
  return bestName ? std::string(bestName) : std::string();
}

std::string joinNames(const std::vector<const char *> &names,
                      const char *prefix, const char *suffix) {
  std::string out;
  for (const char *name : names) {
    if (!out.empty())
      out += ", ";
    out += prefix;
    out += name;
    out += suffix;
  }
  return out;
}

} // namespace tfc::spec::detail
