//===- SpecDiagnostics.h - Text of the spec parser's messages ---*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Private to the spec parser (frontend/Spec*.cpp): how its diagnostics
/// show keys, strings and numbers, and the "did you mean" hints.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_SPECDIAGNOSTICS_H
#define TFC_FRONTEND_SPECDIAGNOSTICS_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tfc::spec::detail {

/// Escapes control characters so that a diagnostic always stays on one line.
std::string oneLine(std::string_view text);

/// Quotes a user-provided string for a message, shortened to a readable
/// length without splitting a UTF-8 sequence.
std::string quote(std::string_view text);

/// A key as TOML would write it: bare when it only has [A-Za-z0-9_-],
/// otherwise quoted (control characters are escaped later by oneLine).
std::string keyName(std::string_view key);

/// Shortest decimal rendering of a double that reads back to the same value.
std::string formatDouble(double value);

/// A floating-point value as a TOML literal would show it: always with a
/// decimal point or exponent, so that 2.0 is not mistaken for the integer 2.
std::string formatFloatLiteral(double value);

/// Counts the code points of a UTF-8 byte range (toml++ columns count code
/// points).
uint32_t codePoints(std::string_view text);

/// Suggests the closest known name for a misspelt one, if any is close.
std::string suggestion(std::string_view given,
                       const std::vector<const char *> &known);

/// The names separated by commas, each between `prefix` and `suffix`.
std::string joinNames(const std::vector<const char *> &names,
                      const char *prefix = "", const char *suffix = "");

} // namespace tfc::spec::detail

#endif // TFC_FRONTEND_SPECDIAGNOSTICS_H
