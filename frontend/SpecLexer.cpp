//===- SpecLexer.cpp - Lexical pre-check of a spec's TOML text ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A scan of a spec's bytes, character by character, that follows TOML's
/// comments, strings and values just far enough to find the non-ASCII text
/// and the malformed UTF-8 that toml++ 3.3 must not see (see precheck).
///
//===----------------------------------------------------------------------===//

#include "frontend/SpecLexer.h"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace tfc::spec::detail {
namespace {

/// Length of the UTF-8 sequence starting at `text[pos]`, or 0 if it is not a
/// well-formed sequence (overlong forms, surrogates and code points past
/// U+10FFFF included).
size_t utf8Length(std::string_view text, size_t pos, uint32_t &codePoint) {
  unsigned char lead = static_cast<unsigned char>(text[pos]);
  size_t length;
  uint32_t min;
  if (lead < 0x80) {
    codePoint = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2;
    min = 0x80;
    codePoint = lead & 0x1F;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3;
    min = 0x800;
    codePoint = lead & 0x0F;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4;
    min = 0x10000;
    codePoint = lead & 0x07;
  } else {
    return 0;
  }
  if (pos + length > text.size())
    return 0;
  for (size_t i = 1; i < length; ++i) {
    unsigned char next = static_cast<unsigned char>(text[pos + i]);
    if ((next & 0xC0) != 0x80)
      return 0;
    codePoint = (codePoint << 6) | (next & 0x3F);
  }
  if (codePoint < min || codePoint > 0x10FFFF ||
      (codePoint >= 0xD800 && codePoint <= 0xDFFF))
    return 0;
  return length;
}

/// Whether `c` is a space, a tab or a line break.
bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// The walk of precheck over the text: one character at a time, in the state
/// that the characters before it left.
class LexicalScanner {
public:
  explicit LexicalScanner(std::string_view text) : text(text) {}

  /// Scans the whole text; the first problem found, if any.
  LexicalError scan();

private:
  /// What the scan is in: free text, a comment, one of the four string
  /// forms, or a value that is not a string, array or inline table.
  enum class State {
    Normal,
    Comment,
    Basic,
    Literal,
    MultiBasic,
    MultiLiteral,
    BareValue
  };

  /// The character at the scan position: its first byte, its code point and
  /// its length in bytes.
  struct Character {
    char first;
    uint32_t codePoint;
    size_t length;
  };

  LexicalError fail(const std::string &message) const;
  bool startsWith(size_t at, std::string_view what) const;
  bool opensString(char c) const;
  void trackStructure(char c);
  LexicalError scanCharacter(const Character &ch);
  LexicalError scanNormal(const Character &ch);
  void scanBareValue(const Character &ch);
  void scanComment(const Character &ch);
  void scanBasic(const Character &ch);
  void scanLiteral(const Character &ch);
  LexicalError scanMultiBasic(const Character &ch);
  void scanMultiLiteral(const Character &ch);
  LexicalError scanEscape();
  void moveOn();

  std::string_view text;
  State state = State::Normal;
  /// The scan position, and its line and column (in code points, in step
  /// with toml++).
  size_t pos = 0;
  uint32_t line = 1, column = 1;
  /// The last character outside strings and comments that is not a space or
  /// a tab; a line break at the start.
  char previous = '\n';
  /// Whether the scan is inside a value (after '=', or in an array) rather
  /// than in a key or a table header; whether a value may start here (right
  /// after the '=' of a key, or after '[' or ',' in an array); and the open
  /// arrays ('['), inline tables ('{') and table headers ('h').
  bool inValue = false;
  bool atValueStart = false;
  std::vector<char> nesting;
  /// After a line-ending backslash in a multi-line basic string: skipping
  /// whitespace and line breaks up to the next character.
  bool trimming = false;
  /// Set while scanning a character: the bytes to move on by, and whether a
  /// backslash escape starts at the character.
  size_t advance = 0;
  bool escapeAt = false;
};

/// The problem `message` at the scan position.
LexicalError LexicalScanner::fail(const std::string &message) const {
  LexicalError error;
  error.found = true;
  error.loc = Loc{line, column};
  error.message = message;
  return error;
}

/// Whether the text at byte `at` starts with `what`.
bool LexicalScanner::startsWith(size_t at, std::string_view what) const {
  return text.substr(at, what.size()) == what;
}

/// Whether the quote `c` opens a string where the scan is: where a value may
/// start, or in a key at the start of a line or after '[', '{', ',' or '.'.
bool LexicalScanner::opensString(char c) const {
  if (c != '"' && c != '\'')
    return false;
  return inValue ? atValueStart
                 : std::string_view("\n[{,.").find(previous) !=
                       std::string_view::npos;
}

/// Follows keys, values, arrays, inline tables and table headers through the
/// structural character `c`.
void LexicalScanner::trackStructure(char c) {
  char top = nesting.empty() ? '\0' : nesting.back();
  switch (c) {
  case '=':
    atValueStart = !inValue && (top == '\0' || top == '{');
    inValue = true;
    break;
  case '[':
    if (inValue)
      nesting.push_back('[');
    else if (top == '\0')
      nesting.push_back('h');
    atValueStart = inValue;
    break;
  case ']':
    if (top == '[' || top == 'h')
      nesting.pop_back();
    atValueStart = false;
    break;
  case '{':
    if (inValue) {
      nesting.push_back('{');
      inValue = false;
    }
    atValueStart = false;
    break;
  case '}':
    if (top == '{') {
      nesting.pop_back();
      inValue = true;
    }
    atValueStart = false;
    break;
  case ',':
    if (top == '{')
      inValue = false;
    atValueStart = top == '[';
    break;
  case '\n':
    // Arrays may span lines; everything else ends with the line.
    if (top == 'h')
      nesting.pop_back();
    if (nesting.empty()) {
      inValue = false;
      atValueStart = false;
    }
    break;
  default:
    atValueStart = false;
    break;
  }
}

LexicalError LexicalScanner::scan() {
  // A UTF-8 byte order mark is allowed at the very start.
  if (text.substr(0, 3) == "\xEF\xBB\xBF")
    pos = 3;
  while (pos < text.size()) {
    Character ch;
    ch.codePoint = 0;
    ch.length = utf8Length(text, pos, ch.codePoint);
    if (ch.length == 0) {
      char buf[64];
      std::snprintf(
          buf, sizeof(buf), "invalid UTF-8 (byte 0x%02x)",
          static_cast<unsigned>(static_cast<unsigned char>(text[pos])));
      return fail(buf);
    }
    ch.first = text[pos];
    advance = ch.length;
    escapeAt = false;
    LexicalError error = scanCharacter(ch);
    if (!error.found && escapeAt)
      error = scanEscape();
    if (error.found)
      return error;
    moveOn();
  }
  return LexicalError();
}

/// Scans one character in the current state: it may change the state,
/// `advance` and `escapeAt`.
LexicalError LexicalScanner::scanCharacter(const Character &ch) {
  switch (state) {
  case State::Normal:
    return scanNormal(ch);
  case State::BareValue:
    scanBareValue(ch);
    break;
  case State::Comment:
    scanComment(ch);
    break;
  case State::Basic:
    scanBasic(ch);
    break;
  case State::Literal:
    scanLiteral(ch);
    break;
  case State::MultiBasic:
    return scanMultiBasic(ch);
  case State::MultiLiteral:
    scanMultiLiteral(ch);
    break;
  }
  return LexicalError();
}

LexicalError LexicalScanner::scanNormal(const Character &ch) {
  char c = ch.first;
  uint32_t codePoint = ch.codePoint;
  if (codePoint >= 0x80)
    return fail("unexpected character '" +
                std::string(text.substr(pos, ch.length)) +
                "'; non-ASCII text is only allowed in strings and "
                "comments");
  if ((codePoint < 0x20 && c != '\t' && c != '\n' && c != '\r') ||
      codePoint == 0x7F) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "unexpected control character U+%04X",
                  codePoint);
    return fail(buf);
  }
  if (c == '#') {
    state = State::Comment;
  } else if (opensString(c)) {
    std::string_view triple = c == '"' ? "\"\"\"" : "'''";
    if (startsWith(pos, triple)) {
      state = c == '"' ? State::MultiBasic : State::MultiLiteral;
      advance = 3;
    } else {
      state = c == '"' ? State::Basic : State::Literal;
    }
    atValueStart = false;
  } else if (inValue && atValueStart &&
             std::string_view(" \t\r\n[]{},").find(c) ==
                 std::string_view::npos) {
    // A number, boolean, date or garbage: toml++ first reads up to the
    // next value terminator, classifying every character on the way.
    state = State::BareValue;
    atValueStart = false;
  } else if (c != ' ' && c != '\t' && c != '\r') {
    trackStructure(c);
  }
  if (c != ' ' && c != '\t' && c != '\r')
    previous = c;
  return LexicalError();
}

void LexicalScanner::scanBareValue(const Character &ch) {
  char c = ch.first;
  if (std::string_view(" \t\r\n]},#").find(c) != std::string_view::npos) {
    state = State::Normal; // The terminator is handled as structure.
    advance = 0;
  } else if (ch.codePoint >= 0x80 || ch.codePoint < 0x20 ||
             ch.codePoint == 0x7F) {
    state = State::Normal; // Reported there.
    advance = 0;
  }
  if (state == State::BareValue)
    previous = c;
}

void LexicalScanner::scanComment(const Character &ch) {
  // The line break ends the comment and is handled as structure.
  if (ch.first == '\n') {
    state = State::Normal;
    advance = 0;
  }
}

void LexicalScanner::scanBasic(const Character &ch) {
  char c = ch.first;
  if (c == '\\' && pos + 1 < text.size() && text[pos + 1] != '\n') {
    escapeAt = true;
  } else if (c == '"') {
    state = State::Normal;
    previous = c;
  } else if (c == '\n') {
    state = State::Normal; // Unterminated: toml++ reports it.
    advance = 0;
  }
}

void LexicalScanner::scanLiteral(const Character &ch) {
  char c = ch.first;
  if (c == '\'') {
    state = State::Normal;
    previous = c;
  } else if (c == '\n') {
    state = State::Normal;
    advance = 0;
  }
}

LexicalError LexicalScanner::scanMultiBasic(const Character &ch) {
  char c = ch.first;
  if (trimming) {
    if (isSpace(c))
      return LexicalError();
    trimming = false;
    if (ch.codePoint >= 0x80) {
      char hex[16];
      std::snprintf(hex, sizeof(hex), "%04X", ch.codePoint);
      return fail("unsupported character '" +
                  std::string(text.substr(pos, ch.length)) +
                  "' right after a line-ending backslash; put an ASCII "
                  "character or the escape \\u" +
                  hex + " first");
    }
  }
  if (c == '\\' && pos + 1 < text.size()) {
    if (isSpace(text[pos + 1]))
      trimming = true;
    else
      escapeAt = true;
  } else if (startsWith(pos, "\"\"\"")) {
    // Up to two quotes may directly precede the closing delimiter.
    advance = 3;
    while (advance < 5 && startsWith(pos + advance, "\""))
      ++advance;
    state = State::Normal;
    previous = '"';
  }
  return LexicalError();
}

void LexicalScanner::scanMultiLiteral(const Character &ch) {
  if (startsWith(pos, "'''")) {
    advance = 3;
    while (advance < 5 && startsWith(pos + advance, "'"))
      ++advance;
    state = State::Normal;
    previous = '\'';
  }
}

/// A backslash escape at the scan position. Escapes are ASCII: a backslash
/// followed by anything else is an invalid escape sequence, reported at the
/// escaped character.
LexicalError LexicalScanner::scanEscape() {
  if (static_cast<unsigned char>(text[pos + 1]) >= 0x80) {
    ++column;
    uint32_t escaped = 0;
    size_t escapedLength = utf8Length(text, pos + 1, escaped);
    if (escapedLength == 0)
      return fail("invalid UTF-8 after a backslash");
    return fail("invalid escape sequence '\\" +
                std::string(text.substr(pos + 1, escapedLength)) + "'");
  }
  advance = 2;
  return LexicalError();
}

/// Moves the scan position on by `advance` bytes, keeping line and column
/// (in code points) in step with toml++.
void LexicalScanner::moveOn() {
  for (size_t i = 0; i < advance && pos < text.size(); ++i, ++pos) {
    unsigned char b = static_cast<unsigned char>(text[pos]);
    if (b == '\n') {
      ++line;
      column = 1;
    } else if ((b & 0xC0) != 0x80) {
      ++column;
    }
  }
}

} // namespace

LexicalError precheck(std::string_view text) {
  return LexicalScanner(text).scan();
}

} // namespace tfc::spec::detail
