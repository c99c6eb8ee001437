//===- SpecLexer.h - Lexical pre-check of a spec's TOML text ----*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Private to the spec parser (frontend/Spec*.cpp): the scan that runs over
/// a spec's bytes before toml++ does, to report what toml++ 3.3 does not
/// handle safely (see precheck).
///
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_SPECLEXER_H
#define TFC_FRONTEND_SPECLEXER_H

#include "frontend/Spec.h"

#include <string>
#include <string_view>

namespace tfc::spec::detail {

/// The result of the lexical pre-check: empty when the text may go to
/// toml++, otherwise where and what the problem is.
struct LexicalError {
  bool found = false;
  Loc loc;
  std::string message;
};

/// Checks what toml++ 3.3 does not handle safely before handing it the text.
///
/// That release classifies some non-ASCII code points through tables with
/// gaps that end in "unreachable" (toml++ issues #190 and #295): it happens
/// when the parser asks whether a non-ASCII character outside a string is
/// whitespace, after a backslash in a multi-line basic string, and after a
/// line-ending backslash. TOML allows non-ASCII text only inside strings and
/// comments, and escapes are ASCII, so each such character is a syntax error
/// anyway; this scan reports it (and malformed UTF-8) itself.
///
/// It tracks just enough of TOML's lexical structure (comments and the four
/// string forms) to know where text is free-form. A quote opens a string only
/// where TOML allows one -- in a key or table header at the start of a line
/// or after '[', '{', ',' or '.'; as a value right after the key's '=' or
/// after '[' or ',' in an array -- since anywhere else toml++ reads it as
/// part of a malformed value and goes on classifying the characters after
/// it. Likewise a value that is not a string, array or inline table is read
/// by toml++ up to the next terminator (whitespace, ']', '}', ',' or '#')
/// before anything else, quotes and brackets included, and so is it here.
/// Valid TOML is never rejected here: its strings all start at such places.
LexicalError precheck(std::string_view text);

} // namespace tfc::spec::detail

#endif // TFC_FRONTEND_SPECLEXER_H
