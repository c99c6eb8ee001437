//===- SpecParser.cpp - TOML model spec parser and validator --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reads a TOML model spec with toml++, checks every key against the schema
/// documented in docs/spec.md and fills the plain structs of Spec.h.
///
/// This file is compiled with C++ exceptions (toml++ reports syntax errors by
/// throwing). Every exception is caught here: the public entry points never
/// throw and never abort, whatever the input bytes. Each problem is reported
/// as exactly one Diagnostic naming the line and column of the offending
/// value, the dotted key and what was expected.
///
/// Checking runs in three passes: structure (unknown sections and keys, in
/// document order), values (types and ranges, section by section) and
/// consistency between keys (divisibility, per-layer arrays, data layout).
///
//===----------------------------------------------------------------------===//

#include "frontend/Spec.h"

#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <string_view>
#include <utility>

namespace tfc::spec {
namespace {

//===----------------------------------------------------------------------===//
// Limits
//===----------------------------------------------------------------------===//

/// Upper bounds on sizes. They are far above any model this compiler targets
/// and keep every product the later stages form (parameter counts, buffer
/// sizes) well inside 64 bits.
constexpr int64_t kMaxVocab = int64_t(1) << 24;
constexpr int64_t kMaxDModel = int64_t(1) << 16;
constexpr int64_t kMaxHeads = int64_t(1) << 12;
constexpr int64_t kMaxDFF = int64_t(1) << 20;
constexpr int64_t kMaxLayers = 1024;
constexpr int64_t kMaxClasses = int64_t(1) << 20;
constexpr int64_t kMaxFeatures = int64_t(1) << 16;
constexpr int64_t kMaxSteps = int64_t(1) << 40;
constexpr int64_t kMaxDConvKernel = 1024;
constexpr int64_t kMaxMinFreq = int64_t(1) << 30;
constexpr int64_t kMaxInt = std::numeric_limits<int64_t>::max();
constexpr size_t kMaxFileBytes = size_t(16) << 20;
constexpr size_t kMaxNameLength = 128;

//===----------------------------------------------------------------------===//
// Text helpers
//===----------------------------------------------------------------------===//

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

/// Counts the code points of a UTF-8 byte range (toml++ columns count code
/// points).
uint32_t codePoints(std::string_view text) {
  uint32_t count = 0;
  for (char c : text)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80)
      ++count;
  return count;
}

/// Human name of a TOML value type, with its article.
const char *typeName(toml::node_type type) {
  switch (type) {
  case toml::node_type::none:
    return "nothing";
  case toml::node_type::table:
    return "a table";
  case toml::node_type::array:
    return "an array";
  case toml::node_type::string:
    return "a string";
  case toml::node_type::integer:
    return "an integer";
  case toml::node_type::floating_point:
    return "a floating-point number";
  case toml::node_type::boolean:
    return "a boolean";
  case toml::node_type::date:
    return "a date";
  case toml::node_type::time:
    return "a time";
  case toml::node_type::date_time:
    return "a date-time";
  }
  return "an unknown value";
}

/// Describes an integer range in words.
std::string describeIntRange(int64_t min, int64_t max) {
  if (max == kMaxInt) {
    if (min == 1)
      return "a positive integer";
    if (min == 0)
      return "a non-negative integer";
    return "an integer >= " + std::to_string(min);
  }
  return "an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
         "]";
}

/// A range of real numbers with open or closed ends; infinite bounds are
/// left out of the description.
struct FloatRange {
  double min;
  bool minOpen;
  double max;
  bool maxOpen;
  /// Why the bounds are where they are, when that is not obvious.
  const char *why = nullptr;

  bool contains(double value) const {
    if (minOpen ? !(value > min) : !(value >= min))
      return false;
    if (maxOpen ? !(value < max) : !(value <= max))
      return false;
    return true;
  }

  std::string describe() const {
    if (why)
      return bounds() + " (" + why + ")";
    return bounds();
  }

  std::string bounds() const {
    bool hasMin = std::isfinite(min);
    bool hasMax = std::isfinite(max);
    if (hasMin && hasMax)
      return std::string("a number in ") + (minOpen ? "(" : "[") +
             formatDouble(min) + ", " + formatDouble(max) +
             (maxOpen ? ")" : "]");
    if (hasMin)
      return std::string("a number ") + (minOpen ? "> " : ">= ") +
             formatDouble(min);
    if (hasMax)
      return std::string("a number ") + (maxOpen ? "< " : "<= ") +
             formatDouble(max);
    return "a finite number";
  }
};

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr FloatRange kUnitOpen{0.0, true, 1.0, true};
constexpr FloatRange kUnitLeftOpen{0.0, true, 1.0, false};

// The model computes in float32 (unless compiled with --f64), so the keys it
// reads there keep clear of what float32 turns into 0, 1 or infinity.

/// The largest float32 below 1: a decay rate or probability above it rounds
/// to 1 (1 - beta^t becomes 0 and the bias correction divides by it).
constexpr double kFloat32BelowOne = 0.99999994;
/// A positive float32 that is normal (not flushed to zero), and one well
/// below float32's largest (3.4e38).
constexpr double kFloat32Tiny = 1.2e-38;
constexpr double kFloat32Huge = 1e38;
constexpr FloatRange kFloat32Fraction{0.0, false, kFloat32BelowOne, false,
                                      "larger values round to 1 in float32"};
constexpr FloatRange kFloat32Epsilon{
    kFloat32Tiny, false, kFloat32Huge, false,
    "smaller values are 0 in float32, and a zero epsilon divides by zero"};
constexpr FloatRange kFloat32NormEpsilon{
    kFloat32Tiny, false, 1.0, true,
    "smaller values are 0 in float32, and a zero epsilon divides by zero"};
constexpr FloatRange kFloat32NonNegative{0.0, false, kFloat32Huge, false,
                                         "larger values overflow float32"};
/// Adam moves a weight by about the learning rate per step; below 1e-9 that
/// is less than half the float32 spacing of a weight of 0.02 (the usual
/// initial scale, spacing 1.9e-9), so such weights would not change at all.
constexpr FloatRange kLearningRate{
    1e-9, false, kFloat32Huge, false,
    "a smaller step leaves float32 weights of the usual scale unchanged"};

//===----------------------------------------------------------------------===//
// Schema
//===----------------------------------------------------------------------===//

/// The known sections and their keys, in the order docs/spec.md lists them.
struct SectionSchema {
  const char *name;
  std::vector<const char *> keys;
};

const std::vector<SectionSchema> &schema() {
  static const std::vector<SectionSchema> sections = {
      {"model",
       {"name", "task", "vocab", "d_model", "heads", "d_ff", "layers",
        "dropout", "norm_eps", "positions", "classes", "loss",
        "tie_embeddings"}},
      {"attention",
       {"kind", "causal", "features", "redraw", "orthogonal", "window",
        "dilation", "global_tokens", "dconv", "dconv_kernel"}},
      {"ffn", {"activation"}},
      {"hourglass",
       {"layout", "shortening_factors", "layers_per_level", "shortening",
        "upsampling"}},
      {"training",
       {"optimizer", "lr", "beta1", "beta2", "eps", "weight_decay", "schedule",
        "warmup", "clip", "precision", "batch", "seq_len", "steps",
        "eval_every", "eval_batches", "checkpoint_every", "patience",
        "seed"}},
      {"data",
       {"format", "train", "val", "test", "train_fraction", "val_fraction",
        "min_freq"}},
  };
  return sections;
}

/// One accepted spelling of an enum value.
template <typename E> struct EnumName {
  const char *name;
  E value;
};

const EnumName<Task> kTasks[] = {{"lm", Task::LanguageModel},
                                 {"classify", Task::Classify}};
const EnumName<Positions> kPositions[] = {{"none", Positions::None},
                                          {"sinusoidal", Positions::Sinusoidal},
                                          {"learned", Positions::Learned},
                                          {"rotary", Positions::Rotary}};
const EnumName<ClassifyLoss> kLosses[] = {
    {"ce", ClassifyLoss::CrossEntropy},
    {"bce", ClassifyLoss::BinaryCrossEntropy}};
const EnumName<AttentionKind> kAttentionKinds[] = {
    {"softmax", AttentionKind::Softmax},
    {"performer", AttentionKind::Performer},
    {"longformer", AttentionKind::Longformer}};
const EnumName<Activation> kActivations[] = {
    {"relu", Activation::Relu},
    {"gelu", Activation::Gelu},
    {"squared_relu", Activation::SquaredRelu}};
const EnumName<ShortenKind> kShortenKinds[] = {
    {"avg", ShortenKind::Avg},
    {"linear", ShortenKind::Linear},
    {"attention", ShortenKind::Attention}};
const EnumName<UpsampleKind> kUpsampleKinds[] = {
    {"naive", UpsampleKind::Naive},
    {"linear", UpsampleKind::Linear},
    {"attention", UpsampleKind::Attention}};
const EnumName<Precision> kPrecisions[] = {{"f32", Precision::F32},
                                           {"bf16", Precision::BF16}};
const EnumName<Optimizer> kOptimizers[] = {{"adam", Optimizer::Adam},
                                           {"adamw", Optimizer::AdamW}};
const EnumName<Schedule> kSchedules[] = {
    {"constant", Schedule::Constant},
    {"linear", Schedule::Linear},
    {"cosine", Schedule::Cosine},
    {"inverse_sqrt", Schedule::InverseSqrt}};
const EnumName<DataFormat> kFormats[] = {{"bytes", DataFormat::Bytes},
                                         {"jsonl", DataFormat::Jsonl}};

//===----------------------------------------------------------------------===//
// Lexical pre-check
//===----------------------------------------------------------------------===//

/// The result of the lexical pre-check: empty when the text may go to
/// toml++, otherwise where and what the problem is.
struct LexicalError {
  bool found = false;
  Loc loc;
  std::string message;
};

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
LexicalError precheck(std::string_view text) {
  enum class State {
    Normal,
    Comment,
    Basic,
    Literal,
    MultiBasic,
    MultiLiteral,
    BareValue
  };
  State state = State::Normal;
  uint32_t line = 1, column = 1;
  size_t pos = 0;
  // A UTF-8 byte order mark is allowed at the very start.
  if (text.substr(0, 3) == "\xEF\xBB\xBF")
    pos = 3;
  auto fail = [&](const std::string &message) {
    LexicalError error;
    error.found = true;
    error.loc = Loc{line, column};
    error.message = message;
    return error;
  };
  auto startsWith = [&](size_t at, std::string_view what) {
    return text.substr(at, what.size()) == what;
  };
  auto isSpace = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
  };
  // The last character outside strings and comments that is not a space or
  // a tab; a line break at the start.
  char previous = '\n';
  // Whether the scan is inside a value (after '=', or in an array) rather
  // than in a key or a table header; whether a value may start here (right
  // after the '=' of a key, or after '[' or ',' in an array); and the open
  // arrays ('['), inline tables ('{') and table headers ('h').
  bool inValue = false;
  bool atValueStart = false;
  std::vector<char> nesting;
  auto trackStructure = [&](char c) {
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
  };
  // After a line-ending backslash in a multi-line basic string: skipping
  // whitespace and line breaks up to the next character.
  bool trimming = false;
  while (pos < text.size()) {
    uint32_t codePoint = 0;
    size_t length = utf8Length(text, pos, codePoint);
    if (length == 0) {
      char buf[64];
      std::snprintf(
          buf, sizeof(buf), "invalid UTF-8 (byte 0x%02x)",
          static_cast<unsigned>(static_cast<unsigned char>(text[pos])));
      return fail(buf);
    }
    char c = text[pos];
    size_t advance = length;
    bool escapeAt = false; // A backslash escape starts here.
    switch (state) {
    case State::Normal:
      if (codePoint >= 0x80)
        return fail("unexpected character '" +
                    std::string(text.substr(pos, length)) +
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
      } else if ((c == '"' || c == '\'') &&
                 (inValue ? atValueStart
                          : std::string_view("\n[{,.").find(previous) !=
                                std::string_view::npos)) {
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
      break;
    case State::BareValue:
      if (std::string_view(" \t\r\n]},#").find(c) != std::string_view::npos) {
        state = State::Normal; // The terminator is handled as structure.
        advance = 0;
      } else if (codePoint >= 0x80 || codePoint < 0x20 || codePoint == 0x7F) {
        state = State::Normal; // Reported there.
        advance = 0;
      }
      if (state == State::BareValue)
        previous = c;
      break;
    case State::Comment:
      // The line break ends the comment and is handled as structure.
      if (c == '\n') {
        state = State::Normal;
        advance = 0;
      }
      break;
    case State::Basic:
      if (c == '\\' && pos + 1 < text.size() && text[pos + 1] != '\n') {
        escapeAt = true;
      } else if (c == '"') {
        state = State::Normal;
        previous = c;
      } else if (c == '\n') {
        state = State::Normal; // Unterminated: toml++ reports it.
        advance = 0;
      }
      break;
    case State::Literal:
      if (c == '\'') {
        state = State::Normal;
        previous = c;
      } else if (c == '\n') {
        state = State::Normal;
        advance = 0;
      }
      break;
    case State::MultiBasic:
      if (trimming) {
        if (isSpace(c))
          break;
        trimming = false;
        if (codePoint >= 0x80) {
          char hex[16];
          std::snprintf(hex, sizeof(hex), "%04X", codePoint);
          return fail("unsupported character '" +
                      std::string(text.substr(pos, length)) +
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
      break;
    case State::MultiLiteral:
      if (startsWith(pos, "'''")) {
        advance = 3;
        while (advance < 5 && startsWith(pos + advance, "'"))
          ++advance;
        state = State::Normal;
        previous = '\'';
      }
      break;
    }
    if (escapeAt) {
      // Escapes are ASCII: a backslash followed by anything else is an
      // invalid escape sequence. Report it at the escaped character.
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
    }
    // Keep line and column (in code points) in step with toml++.
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
  return LexicalError();
}

//===----------------------------------------------------------------------===//
// Spec reader
//===----------------------------------------------------------------------===//

Loc toLoc(const toml::source_position &position) {
  if (!position)
    return Loc{1, 1};
  return Loc{position.line, position.column};
}

/// A top-level section as found in the document (possibly absent).
struct Section {
  std::string name;
  const toml::table *table = nullptr;
  /// The `[name]` header, or 1:1 when the section is missing.
  Loc header{1, 1};

  const toml::node *get(const char *key) const {
    return table ? table->get(key) : nullptr;
  }
  bool has(const char *key) const { return get(key) != nullptr; }
  std::string dotted(const char *key) const { return name + "." + key; }
};

/// An integer read from the spec together with where it was written.
struct LocatedInt {
  int64_t value = 0;
  Loc loc;
};

/// Walks the parsed TOML tree, fills a Spec and reports the first problem.
class SpecReader {
public:
  SpecReader(const std::string &text, const std::string &path, Diagnostic &diag,
             const Overrides &overrides)
      : text(text), path(path), diag(diag), overrides(overrides) {}

  bool read(const toml::table &root, Spec &spec);

private:
  /// Records the first error and returns false, so checks can
  /// `return error(...)`.
  bool error(Loc loc, const std::string &key, const std::string &message) {
    diag.path = path;
    diag.loc = loc;
    diag.key = oneLine(key);
    diag.message = oneLine(message);
    return false;
  }

  /// Records an error in a command-line override and returns false.
  bool flagError(const char *flag, const std::string &message) {
    diag.path = path;
    diag.loc = Loc();
    diag.key.clear();
    diag.flag = flag;
    diag.message = oneLine(message);
    return false;
  }

  /// What to call the sequence length in messages: the key or the flag that
  /// set it.
  const char *seqLenName() const {
    return overrides.seqLen ? "--seq-len" : "training.seq_len";
  }

  bool checkStructure(const toml::table &root);
  Section section(const toml::table &root, const char *name) const;

  // Typed accessors. Each returns true when the key is absent (leaving `out`
  // untouched) or valid; `required` turns absence into an error at the
  // section header.
  bool readInt(const Section &sec, const char *key, int64_t &out, int64_t min,
               int64_t max, bool required = false);
  bool readFloat(const Section &sec, const char *key, double &out,
                 const FloatRange &range);
  bool readBool(const Section &sec, const char *key, bool &out);
  bool readString(const Section &sec, const char *key, std::string &out,
                  bool required = false);
  bool readPath(const Section &sec, const char *key, std::string &out,
                bool required = false);
  template <typename E, size_t N>
  bool readEnum(const Section &sec, const char *key,
                const EnumName<E> (&names)[N], E &out);
  bool readIntList(const Section &sec, const char *key,
                   std::vector<LocatedInt> &out, int64_t min, int64_t max,
                   bool allowScalar);
  bool missing(const Section &sec, const char *key, const std::string &what) {
    return error(sec.header, sec.dotted(key),
                 "missing required key; expected " + what);
  }
  bool onlyWhen(const Section &sec, const char *key,
                const std::string &condition) {
    return error(locOf(sec, key), sec.dotted(key),
                 "only valid when " + condition);
  }

  /// Where a key's value was written, or the section header if it was not.
  Loc locOf(const Section &sec, const char *key) const {
    if (const toml::node *node = sec.get(key))
      return toLoc(node->source().begin);
    return sec.header;
  }

  bool readModel(const Section &sec, bool hasHourglass, Spec &spec);
  bool readHourglass(const Section &sec, Spec &spec);
  bool parseLayout(const toml::node &node, std::vector<HourglassLevel> &levels);
  bool readTraining(const Section &sec, const Section &hourglassSec,
                    Spec &spec);
  bool readData(const Section &sec, Spec &spec);
  bool readAttention(const Section &sec, Spec &spec);
  bool checkVocab(const Section &modelSec, const Spec &spec);

  /// Column of byte `offset` inside the string value `node`, when the value
  /// is written on one line without escapes; otherwise the value's start.
  Loc locInString(const toml::node &node, size_t offset) const;

  const std::string &text;
  const std::string &path;
  Diagnostic &diag;
  const Overrides &overrides;
};

Section SpecReader::section(const toml::table &root, const char *name) const {
  Section sec;
  sec.name = name;
  if (const toml::node *node = root.get(name)) {
    sec.table = node->as_table();
    sec.header = toLoc(node->source().begin);
  }
  return sec;
}

/// Entries of a table in the order they appear in the document.
std::vector<std::pair<const toml::key *, const toml::node *>>
inDocumentOrder(const toml::table &table) {
  std::vector<std::pair<const toml::key *, const toml::node *>> entries;
  for (auto &&[key, node] : table)
    entries.emplace_back(&key, &node);
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto &a, const auto &b) {
                     const toml::source_position &pa = a.first->source().begin;
                     const toml::source_position &pb = b.first->source().begin;
                     if (pa.line != pb.line)
                       return pa.line < pb.line;
                     return pa.column < pb.column;
                   });
  return entries;
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
                      const char *prefix = "", const char *suffix = "") {
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

bool SpecReader::checkStructure(const toml::table &root) {
  std::vector<const char *> sectionNames;
  for (const SectionSchema &s : schema())
    sectionNames.push_back(s.name);

  for (const auto &[key, node] : inDocumentOrder(root)) {
    const std::string name = keyName(key->str());
    const SectionSchema *known = nullptr;
    for (const SectionSchema &s : schema())
      if (name == s.name)
        known = &s;
    Loc keyLoc = toLoc(key->source().begin);
    if (!known) {
      std::string hint = suggestion(name, sectionNames);
      if (!node->is_table())
        return error(keyLoc, name,
                     "unknown top-level key; keys belong in a section: " +
                         joinNames(sectionNames, "[", "]"));
      return error(keyLoc, name,
                   hint.empty()
                       ? "unknown section; expected one of " +
                             joinNames(sectionNames, "[", "]")
                       : "unknown section (did you mean [" + hint + "]?)");
    }
    if (!node->is_table())
      return error(toLoc(node->source().begin), name,
                   std::string("expected a table [") + known->name + "], got " +
                       typeName(node->type()));
    for (const auto &[subKey, subNode] : inDocumentOrder(*node->as_table())) {
      const std::string subName = keyName(subKey->str());
      bool isKnown = false;
      for (const char *k : known->keys)
        if (subName == k)
          isKnown = true;
      if (isKnown)
        continue;
      std::string hint = suggestion(subName, known->keys);
      return error(toLoc(subKey->source().begin), name + "." + subName,
                   hint.empty()
                       ? "unknown key; valid keys in [" + name + "] are " +
                             joinNames(known->keys)
                       : "unknown key (did you mean \"" + hint + "\"?)");
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Typed accessors
//===----------------------------------------------------------------------===//

bool SpecReader::readInt(const Section &sec, const char *key, int64_t &out,
                         int64_t min, int64_t max, bool required) {
  const toml::node *node = sec.get(key);
  if (!node)
    return required ? missing(sec, key, describeIntRange(min, max)) : true;
  Loc loc = toLoc(node->source().begin);
  if (const auto *f = node->as_floating_point())
    return error(loc, sec.dotted(key),
                 "expected " + describeIntRange(min, max) +
                     ", got the floating-point number " +
                     formatFloatLiteral(f->get()));
  const auto *i = node->as_integer();
  if (!i)
    return error(loc, sec.dotted(key),
                 "expected " + describeIntRange(min, max) + ", got " +
                     typeName(node->type()));
  int64_t value = i->get();
  if (value < min || value > max)
    return error(loc, sec.dotted(key),
                 "expected " + describeIntRange(min, max) + ", got " +
                     std::to_string(value));
  out = value;
  return true;
}

bool SpecReader::readFloat(const Section &sec, const char *key, double &out,
                           const FloatRange &range) {
  const toml::node *node = sec.get(key);
  if (!node)
    return true;
  Loc loc = toLoc(node->source().begin);
  double value;
  if (const auto *f = node->as_floating_point())
    value = f->get();
  else if (const auto *i = node->as_integer())
    value = static_cast<double>(i->get());
  else
    return error(loc, sec.dotted(key),
                 "expected " + range.describe() + ", got " +
                     typeName(node->type()));
  if (!std::isfinite(value))
    return error(loc, sec.dotted(key),
                 "expected " + range.describe() + ", got " +
                     formatDouble(value));
  if (!range.contains(value))
    return error(loc, sec.dotted(key),
                 "expected " + range.describe() + ", got " +
                     formatDouble(value));
  out = value;
  return true;
}

bool SpecReader::readBool(const Section &sec, const char *key, bool &out) {
  const toml::node *node = sec.get(key);
  if (!node)
    return true;
  const auto *b = node->as_boolean();
  if (!b) {
    std::string got = typeName(node->type());
    if (const auto *s = node->as_string())
      got += " " + quote(s->get()) + " (write true or false without quotes)";
    return error(toLoc(node->source().begin), sec.dotted(key),
                 "expected a boolean (true or false), got " + got);
  }
  out = b->get();
  return true;
}

bool SpecReader::readString(const Section &sec, const char *key,
                            std::string &out, bool required) {
  const toml::node *node = sec.get(key);
  if (!node)
    return required ? missing(sec, key, "a string") : true;
  const auto *s = node->as_string();
  if (!s)
    return error(toLoc(node->source().begin), sec.dotted(key),
                 std::string("expected a string, got ") +
                     typeName(node->type()));
  out = s->get();
  return true;
}

bool SpecReader::readPath(const Section &sec, const char *key, std::string &out,
                          bool required) {
  const toml::node *node = sec.get(key);
  if (!node)
    return required ? missing(sec, key, "a file path (a string)") : true;
  const auto *s = node->as_string();
  if (!s)
    return error(toLoc(node->source().begin), sec.dotted(key),
                 std::string("expected a file path (a string), got ") +
                     typeName(node->type()));
  const std::string &value = s->get();
  if (value.empty())
    return error(toLoc(node->source().begin), sec.dotted(key),
                 "expected a file path, got an empty string");
  if (value.find('\0') != std::string::npos)
    return error(toLoc(node->source().begin), sec.dotted(key),
                 "expected a file path, got a string with a NUL character");
  // The executable records the path on a line of its own (its manifest).
  for (char c : value)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof(code), "0x%02x",
                    static_cast<unsigned>(static_cast<unsigned char>(c)));
      return error(toLoc(node->source().begin), sec.dotted(key),
                   std::string("expected a file path, got a string with the "
                               "control character ") +
                       code);
    }
  out = value;
  return true;
}

template <typename E, size_t N>
bool SpecReader::readEnum(const Section &sec, const char *key,
                          const EnumName<E> (&names)[N], E &out) {
  const toml::node *node = sec.get(key);
  if (!node)
    return true;
  std::string allowed;
  for (size_t i = 0; i < N; ++i) {
    if (i)
      allowed += i + 1 == N ? " or " : ", ";
    allowed += std::string("\"") + names[i].name + "\"";
  }
  const auto *s = node->as_string();
  if (!s)
    return error(toLoc(node->source().begin), sec.dotted(key),
                 "expected one of " + allowed + ", got " +
                     typeName(node->type()));
  for (const EnumName<E> &entry : names) {
    if (s->get() == entry.name) {
      out = entry.value;
      return true;
    }
  }
  return error(toLoc(node->source().begin), sec.dotted(key),
               "expected one of " + allowed + ", got " + quote(s->get()));
}

bool SpecReader::readIntList(const Section &sec, const char *key,
                             std::vector<LocatedInt> &out, int64_t min,
                             int64_t max, bool allowScalar) {
  const toml::node *node = sec.get(key);
  if (!node)
    return true;
  std::string what = describeIntRange(min, max);
  std::string expected = allowScalar
                             ? what + " or an array of them"
                             : "an array of integers (each " + what + ")";
  Loc loc = toLoc(node->source().begin);
  if (const auto *i = node->as_integer()) {
    if (!allowScalar)
      return error(loc, sec.dotted(key),
                   "expected " + expected + ", got an integer");
    if (i->get() < min || i->get() > max)
      return error(loc, sec.dotted(key),
                   "expected " + what + ", got " + std::to_string(i->get()));
    out.push_back({i->get(), loc});
    return true;
  }
  const auto *array = node->as_array();
  if (!array)
    return error(loc, sec.dotted(key),
                 "expected " + expected + ", got " + typeName(node->type()));
  for (size_t index = 0; index < array->size(); ++index) {
    const toml::node &element = *array->get(index);
    std::string elementKey =
        sec.dotted(key) + "[" + std::to_string(index) + "]";
    Loc elementLoc = toLoc(element.source().begin);
    const auto *i = element.as_integer();
    if (!i) {
      std::string got = typeName(element.type());
      if (const auto *f = element.as_floating_point())
        got = "the floating-point number " + formatFloatLiteral(f->get());
      return error(elementLoc, elementKey, "expected " + what + ", got " + got);
    }
    if (i->get() < min || i->get() > max)
      return error(elementLoc, elementKey,
                   "expected " + what + ", got " + std::to_string(i->get()));
    out.push_back({i->get(), elementLoc});
  }
  return true;
}

Loc SpecReader::locInString(const toml::node &node, size_t offset) const {
  Loc start = toLoc(node.source().begin);
  const auto *s = node.as_string();
  if (!s)
    return start;
  // Find the line the value starts on.
  size_t lineStart = 0;
  for (uint32_t line = 1; line < start.line; ++line) {
    size_t next = text.find('\n', lineStart);
    if (next == std::string::npos)
      return start;
    lineStart = next + 1;
  }
  size_t lineEnd = text.find('\n', lineStart);
  std::string_view line(text.data() + lineStart,
                        (lineEnd == std::string::npos ? text.size() : lineEnd) -
                            lineStart);
  // Advance to the value's column (in code points).
  size_t byte = 0;
  for (uint32_t column = 1; column < start.column && byte < line.size();) {
    ++byte;
    while (byte < line.size() &&
           (static_cast<unsigned char>(line[byte]) & 0xC0) == 0x80)
      ++byte;
    ++column;
  }
  if (byte >= line.size())
    return start;
  char quoteChar = line[byte];
  if (quoteChar != '"' && quoteChar != '\'')
    return start;
  const std::string &value = s->get();
  std::string_view raw = line.substr(byte + 1);
  // The raw text must be exactly the value followed by the closing quote:
  // no escapes, not a multi-line string.
  if (raw.size() <= value.size() || raw.compare(0, value.size(), value) != 0 ||
      raw[value.size()] != quoteChar || offset > value.size())
    return start;
  return Loc{start.line,
             start.column + 1 +
                 codePoints(std::string_view(value).substr(0, offset))};
}

//===----------------------------------------------------------------------===//
// Sections
//===----------------------------------------------------------------------===//

bool isNameCharacter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
}

/// Model names become file names: 1 to 128 characters from [A-Za-z0-9_.-],
/// not starting with '.' or '-'.
bool isValidName(const std::string &name) {
  if (name.empty() || name.size() > kMaxNameLength || name[0] == '.' ||
      name[0] == '-')
    return false;
  return std::all_of(name.begin(), name.end(), isNameCharacter);
}

/// A default model name from the spec's file name: the stem, with characters
/// outside [A-Za-z0-9_.-] replaced by '_' ("model" if that is not a valid
/// name).
std::string defaultName(const std::string &path) {
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  size_t dot = base.rfind('.');
  if (dot != std::string::npos && dot > 0)
    base = base.substr(0, dot);
  std::string name;
  for (char c : base)
    name += isNameCharacter(c) ? c : '_';
  if (!isValidName(name))
    return "model";
  return name;
}

bool SpecReader::readModel(const Section &sec, bool hasHourglass, Spec &spec) {
  Model &m = spec.model;
  m.name = defaultName(path);
  if (sec.has("name")) {
    if (!readString(sec, "name", m.name))
      return false;
    if (!isValidName(m.name))
      return error(locOf(sec, "name"), "model.name",
                   "expected 1 to 128 characters from [A-Za-z0-9_.-], not "
                   "starting with '.' or '-', got " +
                       quote(m.name));
  }
  if (!readEnum(sec, "task", kTasks, m.task))
    return false;
  bool classify = m.task == Task::Classify;
  if (!readInt(sec, "vocab", m.vocab, 2, kMaxVocab, /*required=*/classify) ||
      !readInt(sec, "d_model", m.dModel, 1, kMaxDModel, true) ||
      !readInt(sec, "heads", m.heads, 1, kMaxHeads, true) ||
      !readInt(sec, "d_ff", m.dFF, 1, kMaxDFF, true))
    return false;
  if (hasHourglass) {
    if (sec.has("layers"))
      return error(locOf(sec, "layers"), "model.layers",
                   "not allowed together with [hourglass]; the hourglass "
                   "layout gives the layer count");
  } else if (!readInt(sec, "layers", m.layers, 1, kMaxLayers, true)) {
    return false;
  }
  if (!readFloat(sec, "dropout", m.dropout, kFloat32Fraction) ||
      !readFloat(sec, "norm_eps", m.normEps, kFloat32NormEpsilon) ||
      !readEnum(sec, "positions", kPositions, m.positions))
    return false;

  if (!classify) {
    if (sec.has("classes"))
      return onlyWhen(sec, "classes", "model.task = \"classify\"");
    if (sec.has("loss"))
      return onlyWhen(sec, "loss", "model.task = \"classify\"");
  }
  if (classify && sec.has("tie_embeddings"))
    return onlyWhen(sec, "tie_embeddings",
                    "model.task = \"lm\" (a classifier's output layer has "
                    "model.classes rows, not model.vocab)");
  if (!readInt(sec, "classes", m.classes, 2, kMaxClasses) ||
      !readEnum(sec, "loss", kLosses, m.loss) ||
      !readBool(sec, "tie_embeddings", m.tieEmbeddings))
    return false;
  if (classify && m.loss == ClassifyLoss::BinaryCrossEntropy && m.classes != 2)
    return error(locOf(sec, "loss"), "model.loss",
                 "\"bce\" needs model.classes = 2, got " +
                     std::to_string(m.classes));

  if (m.dModel % m.heads != 0)
    return error(locOf(sec, "heads"), "model.heads",
                 "expected a divisor of model.d_model (" +
                     std::to_string(m.dModel) + "), got " +
                     std::to_string(m.heads));
  int64_t headDim = m.dModel / m.heads;
  if (m.positions == Positions::Rotary && headDim % 2 != 0)
    return error(locOf(sec, "positions"), "model.positions",
                 "\"rotary\" needs an even head size (model.d_model / "
                 "model.heads), got " +
                     std::to_string(headDim));
  if (m.positions == Positions::Sinusoidal && m.dModel % 2 != 0)
    return error(locOf(sec, "positions"), "model.positions",
                 "\"sinusoidal\" needs an even model.d_model, got " +
                     std::to_string(m.dModel));
  return true;
}

/// One `layers@factor` item of a layout string, with its byte offset.
struct LayoutItem {
  std::string text;
  size_t offset = 0;
  int64_t layers = 0;
  int64_t factor = 0;
};

/// Parses a run of decimal digits into `value`, rejecting overflow past
/// `limit`. Returns false for empty or non-digit text.
bool parseDigits(std::string_view digits, int64_t limit, int64_t &value,
                 bool &tooLarge) {
  if (digits.empty())
    return false;
  value = 0;
  tooLarge = false;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return false;
    if (!tooLarge) {
      value = value * 10 + (c - '0');
      if (value > limit)
        tooLarge = true;
    }
  }
  return true;
}

bool SpecReader::parseLayout(const toml::node &node,
                             std::vector<HourglassLevel> &levels) {
  const std::string key = "hourglass.layout";
  const auto *s = node.as_string();
  if (!s)
    return error(toLoc(node.source().begin), key,
                 std::string("expected a layout string like \"2@1 4@3 2@1\", "
                             "got ") +
                     typeName(node.type()));
  const std::string &layout = s->get();

  std::vector<LayoutItem> items;
  for (size_t pos = 0; pos < layout.size();) {
    if (layout[pos] == ' ' || layout[pos] == '\t') {
      ++pos;
      continue;
    }
    size_t end = pos;
    while (end < layout.size() && layout[end] != ' ' && layout[end] != '\t')
      ++end;
    LayoutItem item;
    item.text = layout.substr(pos, end - pos);
    item.offset = pos;
    items.push_back(std::move(item));
    pos = end;
  }
  if (items.empty())
    return error(toLoc(node.source().begin), key,
                 "expected a layout like \"2@1 4@3 2@1\" (layers@factor per "
                 "level), got an empty string");

  for (LayoutItem &item : items) {
    Loc loc = locInString(node, item.offset);
    size_t at = item.text.find('@');
    bool layersTooLarge = false, factorTooLarge = false;
    if (at == std::string::npos ||
        !parseDigits(std::string_view(item.text).substr(0, at), kMaxLayers,
                     item.layers, layersTooLarge) ||
        !parseDigits(std::string_view(item.text).substr(at + 1), kMaxSeqLen,
                     item.factor, factorTooLarge))
      return error(loc, key,
                   "expected items of the form layers@factor with "
                   "non-negative integers (e.g. \"4@3\"), got " +
                       quote(item.text));
    if (layersTooLarge)
      return error(loc, key,
                   "expected at most " + std::to_string(kMaxLayers) +
                       " layers in an item, got " + quote(item.text));
    if (factorTooLarge || item.factor < 1)
      return error(loc, key,
                   "expected a shortening factor in [1, " +
                       std::to_string(kMaxSeqLen) + "], got " +
                       quote(item.text));
  }

  size_t n = items.size();
  if (n % 2 == 0)
    return error(toLoc(node.source().begin), key,
                 "expected a palindrome with one centre level (an odd number "
                 "of items), got " +
                     std::to_string(n) + " items");
  size_t middle = n / 2;
  for (size_t i = 0; i < middle; ++i) {
    const LayoutItem &down = items[i];
    const LayoutItem &up = items[n - 1 - i];
    if (down.layers != up.layers || down.factor != up.factor)
      return error(locInString(node, up.offset), key,
                   "expected a palindrome: item " + quote(up.text) +
                       " must mirror " + quote(down.text));
  }
  // Trax's rule: every factor up to the centre is a multiple of the one
  // before it (so each level shortens the previous level by a whole factor).
  for (size_t i = 1; i <= middle; ++i) {
    const LayoutItem &prev = items[i - 1];
    const LayoutItem &item = items[i];
    if (item.factor % prev.factor != 0)
      return error(locInString(node, item.offset), key,
                   "expected the factor of " + quote(item.text) +
                       " to be a multiple of the factor of the level before "
                       "it (" +
                       quote(prev.text) + ")");
    if (item.factor == prev.factor)
      return error(locInString(node, item.offset), key,
                   "expected the factor of " + quote(item.text) +
                       " to be larger than the factor of the level before it "
                       "(" +
                       quote(prev.text) + ")");
  }
  if (items[0].factor != 1)
    return error(locInString(node, items[0].offset), key,
                 "expected the first level to run at factor 1 (full "
                 "resolution), got " +
                     quote(items[0].text));
  if (n == 1)
    return error(toLoc(node.source().begin), key,
                 "expected at least one shortened level, e.g. \"2@1 4@3 "
                 "2@1\", got " +
                     quote(layout));
  if (items[middle].layers < 1)
    return error(locInString(node, items[middle].offset), key,
                 "expected at least one layer in the centre level, got " +
                     quote(items[middle].text));
  int64_t total = 0;
  for (const LayoutItem &item : items)
    total += item.layers; // At most 1024 per item: no overflow.
  if (total > kMaxLayers)
    return error(toLoc(node.source().begin), key,
                 "expected at most " + std::to_string(kMaxLayers) +
                     " layers in total, got " + std::to_string(total));
  for (const LayoutItem &item : items)
    levels.push_back(HourglassLevel{item.layers, item.factor});
  return true;
}

bool SpecReader::readHourglass(const Section &sec, Spec &spec) {
  Hourglass &h = spec.hourglass;
  h.enabled = true;
  const toml::node *layout = sec.get("layout");
  const toml::node *factors = sec.get("shortening_factors");
  if (layout && factors)
    return error(locOf(sec, "shortening_factors"),
                 "hourglass.shortening_factors",
                 "give either hourglass.layout or "
                 "hourglass.shortening_factors, not both");
  if (!layout && !factors)
    return error(sec.header, "hourglass.layout",
                 "missing required key; expected a layout like \"2@1 4@3 "
                 "2@1\" or hourglass.shortening_factors = [2, 2]");
  if (layout) {
    if (sec.has("layers_per_level"))
      return onlyWhen(sec, "layers_per_level",
                      "hourglass.shortening_factors is given");
    if (!parseLayout(*layout, h.levels))
      return false;
  } else {
    int64_t perLevel = 1;
    if (!readInt(sec, "layers_per_level", perLevel, 1, kMaxLayers))
      return false;
    if (!factors->is_array())
      return error(toLoc(factors->source().begin),
                   "hourglass.shortening_factors",
                   std::string("expected an array of integers >= 2, got ") +
                       typeName(factors->type()));
    std::vector<LocatedInt> relative;
    if (!readIntList(sec, "shortening_factors", relative, 2, kMaxSeqLen,
                     /*allowScalar=*/false))
      return false;
    if (relative.empty())
      return error(locOf(sec, "shortening_factors"),
                   "hourglass.shortening_factors",
                   "expected at least one factor, got an empty array");
    // labml's HourGlass: one block of layers per level on the way down,
    // the innermost level in the centre, and one block per level back up;
    // relative factors multiply into absolute ones.
    std::vector<HourglassLevel> down{{perLevel, 1}};
    int64_t absolute = 1;
    for (size_t i = 0; i < relative.size(); ++i) {
      if (absolute > kMaxSeqLen / relative[i].value)
        return error(relative[i].loc,
                     "hourglass.shortening_factors[" + std::to_string(i) + "]",
                     "expected the product of the factors to be at most " +
                         std::to_string(kMaxSeqLen));
      absolute *= relative[i].value;
      down.push_back({perLevel, absolute});
    }
    int64_t levels = static_cast<int64_t>(down.size()) * 2 - 1;
    if (perLevel * levels > kMaxLayers)
      return error(locOf(sec, "layers_per_level"), "hourglass.layers_per_level",
                   "expected at most " + std::to_string(kMaxLayers) +
                       " layers in total, got " +
                       std::to_string(perLevel * levels));
    h.levels = down;
    for (size_t i = down.size() - 1; i-- > 0;)
      h.levels.push_back(down[i]);
  }
  return readEnum(sec, "shortening", kShortenKinds, h.shortening) &&
         readEnum(sec, "upsampling", kUpsampleKinds, h.upsampling);
}

bool SpecReader::readTraining(const Section &sec, const Section &hourglassSec,
                              Spec &spec) {
  Training &t = spec.training;
  int64_t seed = 0;
  if (!readEnum(sec, "optimizer", kOptimizers, t.optimizer) ||
      !readFloat(sec, "lr", t.lr, kLearningRate) ||
      !readFloat(sec, "beta1", t.beta1, kFloat32Fraction) ||
      !readFloat(sec, "beta2", t.beta2, kFloat32Fraction) ||
      !readFloat(sec, "eps", t.eps, kFloat32Epsilon) ||
      !readFloat(sec, "weight_decay", t.weightDecay, kFloat32NonNegative) ||
      !readEnum(sec, "schedule", kSchedules, t.schedule) ||
      !readInt(sec, "warmup", t.warmup, 0, kMaxSteps) ||
      !readFloat(sec, "clip", t.clip, kFloat32NonNegative) ||
      !readEnum(sec, "precision", kPrecisions, t.precision) ||
      !readInt(sec, "batch", t.batch, 1, kMaxBatch) ||
      !readInt(sec, "seq_len", t.seqLen, 1, kMaxSeqLen) ||
      !readInt(sec, "steps", t.steps, 1, kMaxSteps) ||
      !readInt(sec, "eval_every", t.evalEvery, 1, kMaxSteps) ||
      !readInt(sec, "eval_batches", t.evalBatches, 1, kMaxBatch) ||
      !readInt(sec, "checkpoint_every", t.checkpointEvery, 0, kMaxSteps) ||
      !readInt(sec, "patience", t.patience, 0, kMaxSteps) ||
      !readInt(sec, "seed", seed, 0, kMaxInt))
    return false;
  t.seed = static_cast<uint64_t>(seed);
  t.batchLoc = locOf(sec, "batch");
  t.seqLenLoc = locOf(sec, "seq_len");
  // Command-line overrides take the keys' ranges; the checks below and in
  // readAttention then run on the new values.
  if (overrides.batch) {
    if (*overrides.batch < 1 || *overrides.batch > kMaxBatch)
      return flagError("--batch", "expected " + describeIntRange(1, kMaxBatch) +
                                      " (the range of training.batch), got " +
                                      std::to_string(*overrides.batch));
    t.batch = *overrides.batch;
  }
  if (overrides.seqLen) {
    if (*overrides.seqLen < 1 || *overrides.seqLen > kMaxSeqLen)
      return flagError("--seq-len", "expected " +
                                        describeIntRange(1, kMaxSeqLen) +
                                        " (the range of training.seq_len), "
                                        "got " +
                                        std::to_string(*overrides.seqLen));
    t.seqLen = *overrides.seqLen;
  }
  if (t.warmup > t.steps)
    return error(locOf(sec, "warmup"), "training.warmup",
                 "expected at most training.steps (" + std::to_string(t.steps) +
                     "), got " + std::to_string(t.warmup));
  if (t.schedule == Schedule::InverseSqrt && t.warmup < 1)
    return error(sec.has("warmup") ? locOf(sec, "warmup")
                                   : locOf(sec, "schedule"),
                 sec.has("warmup") ? "training.warmup" : "training.schedule",
                 "schedule \"inverse_sqrt\" needs training.warmup >= 1");
  if (spec.hourglass.enabled) {
    int64_t largest = 1;
    for (const HourglassLevel &level : spec.hourglass.levels)
      largest = std::max(largest, level.factor);
    const char *layoutKey =
        hourglassSec.has("layout") ? "layout" : "shortening_factors";
    if (t.seqLen % largest != 0 && overrides.seqLen)
      return flagError("--seq-len", "expected a multiple of " +
                                        std::to_string(largest) +
                                        " (the largest factor of " +
                                        hourglassSec.dotted(layoutKey) +
                                        "), got " + std::to_string(t.seqLen));
    if (t.seqLen % largest != 0 && sec.has("seq_len"))
      return error(locOf(sec, "seq_len"), "training.seq_len",
                   "expected a multiple of " + std::to_string(largest) +
                       " (the largest hourglass factor), got " +
                       std::to_string(t.seqLen));
    if (t.seqLen % largest != 0)
      return error(locOf(hourglassSec, layoutKey),
                   hourglassSec.dotted(layoutKey),
                   "expected the largest factor (" + std::to_string(largest) +
                       ") to divide training.seq_len (" +
                       std::to_string(t.seqLen) + ", the default)");
  }
  return true;
}

bool SpecReader::readData(const Section &sec, Spec &spec) {
  Data &d = spec.data;
  bool classify = spec.model.task == Task::Classify;
  d.format = classify ? DataFormat::Jsonl : DataFormat::Bytes;
  if (!readEnum(sec, "format", kFormats, d.format))
    return false;
  if (!classify && d.format != DataFormat::Bytes)
    return error(locOf(sec, "format"), "data.format",
                 "expected \"bytes\" for model.task = \"lm\", got \"jsonl\"");
  if (classify && d.format != DataFormat::Jsonl)
    return error(locOf(sec, "format"), "data.format",
                 "expected \"jsonl\" for model.task = \"classify\", got "
                 "\"bytes\"");
  if (!readPath(sec, "train", d.train, /*required=*/true) ||
      !readPath(sec, "val", d.val) || !readPath(sec, "test", d.test))
    return false;

  if (d.format == DataFormat::Bytes) {
    bool split = !sec.has("val") && !sec.has("test");
    if (!split) {
      if (!sec.has("val"))
        return error(sec.header, "data.val",
                     "missing; with data.test given, give data.val too (or "
                     "neither, to split data.train)");
      if (!sec.has("test"))
        return error(sec.header, "data.test",
                     "missing; with data.val given, give data.test too (or "
                     "neither, to split data.train)");
      for (const char *key : {"train_fraction", "val_fraction"})
        if (sec.has(key))
          return onlyWhen(sec, key,
                          "data.train is split (no data.val and data.test)");
    }
    if (!readFloat(sec, "train_fraction", d.trainFraction, kUnitLeftOpen) ||
        !readFloat(sec, "val_fraction", d.valFraction, kUnitOpen))
      return false;
    if (split && d.trainFraction + d.valFraction > 1.0 + 1e-9)
      return error(sec.has("val_fraction") ? locOf(sec, "val_fraction")
                                           : locOf(sec, "train_fraction"),
                   sec.has("val_fraction") ? "data.val_fraction"
                                           : "data.train_fraction",
                   "expected data.train_fraction + data.val_fraction <= 1, "
                   "got " +
                       formatDouble(d.trainFraction) + " + " +
                       formatDouble(d.valFraction));
    if (sec.has("min_freq"))
      return onlyWhen(sec, "min_freq", "data.format = \"jsonl\"");
  } else {
    if (sec.has("train_fraction"))
      return onlyWhen(sec, "train_fraction", "data.format = \"bytes\"");
    if (sec.has("val") && sec.has("val_fraction"))
      return onlyWhen(sec, "val_fraction",
                      "no data.val file is given (it holds out that fraction "
                      "of data.train)");
    if (!readFloat(sec, "val_fraction", d.valFraction, kUnitOpen) ||
        !readInt(sec, "min_freq", d.minFreq, 1, kMaxMinFreq))
      return false;
  }
  return true;
}

bool SpecReader::checkVocab(const Section &modelSec, const Spec &spec) {
  if (spec.data.format == DataFormat::Bytes && spec.model.vocab < 256)
    return error(locOf(modelSec, "vocab"), "model.vocab",
                 "expected at least 256 for byte data (data.format = "
                 "\"bytes\"), got " +
                     std::to_string(spec.model.vocab));
  // The executable's word vocabulary starts with PAD, UNK and CLS.
  if (spec.model.task == Task::Classify && spec.model.vocab < 4)
    return error(locOf(modelSec, "vocab"), "model.vocab",
                 "expected at least 4 for a classify model (PAD, UNK, CLS "
                 "and one word), got " +
                     std::to_string(spec.model.vocab));
  return true;
}

bool SpecReader::readAttention(const Section &sec, Spec &spec) {
  Attention &a = spec.attention;
  bool lm = spec.model.task == Task::LanguageModel;
  a.causal = lm;
  if (!readEnum(sec, "kind", kAttentionKinds, a.kind) ||
      !readBool(sec, "causal", a.causal))
    return false;
  if (lm && !a.causal)
    return error(locOf(sec, "causal"), "attention.causal",
                 "expected true for model.task = \"lm\" (a language model "
                 "must not see the tokens it predicts)");

  bool performer = a.kind == AttentionKind::Performer;
  bool longformer = a.kind == AttentionKind::Longformer;
  for (const char *key : {"features", "redraw", "orthogonal"})
    if (!performer && sec.has(key))
      return onlyWhen(sec, key, "attention.kind = \"performer\"");
  for (const char *key : {"window", "dilation", "global_tokens"})
    if (!longformer && sec.has(key))
      return onlyWhen(sec, key, "attention.kind = \"longformer\"");
  if (!readInt(sec, "features", a.features, 1, kMaxFeatures) ||
      !readInt(sec, "redraw", a.redraw, 0, kMaxSteps) ||
      !readBool(sec, "orthogonal", a.orthogonal))
    return false;

  const int64_t seqLen = spec.training.seqLen;
  const std::vector<int64_t> factors = spec.layerFactors();
  const int64_t layers = static_cast<int64_t>(factors.size());
  auto layerSeqText = [&](size_t layer) {
    if (!spec.hourglass.enabled || factors[layer] == 1)
      return std::to_string(seqLen) + " (" + seqLenName() + ")";
    return std::to_string(seqLen / factors[layer]) + " of layer " +
           std::to_string(layer) + " (" + seqLenName() + " " +
           std::to_string(seqLen) + " / hourglass factor " +
           std::to_string(factors[layer]) + ")";
  };

  if (longformer) {
    // window and dilation: one integer for every layer, or one per layer.
    struct PerLayer {
      const char *key;
      std::vector<int64_t> *out;
      bool required;
    };
    for (PerLayer field : {PerLayer{"window", &a.window, true},
                           PerLayer{"dilation", &a.dilation, false}}) {
      std::vector<LocatedInt> values;
      if (!readIntList(sec, field.key, values, 1, kMaxSeqLen,
                       /*allowScalar=*/true))
        return false;
      if (!sec.has(field.key)) {
        if (field.required)
          return missing(sec, field.key,
                         "a positive integer or one per layer (needed by "
                         "attention.kind = \"longformer\")");
        values.push_back({1, sec.header});
      }
      bool isArray = sec.get(field.key) && sec.get(field.key)->is_array();
      if (isArray && static_cast<int64_t>(values.size()) != layers)
        return error(locOf(sec, field.key), sec.dotted(field.key),
                     "expected one entry per layer (" + std::to_string(layers) +
                         "), got " + std::to_string(values.size()));
      field.out->clear();
      for (int64_t layer = 0; layer < layers; ++layer) {
        const LocatedInt &v = values[isArray ? layer : 0];
        int64_t layerSeq = seqLen / factors[layer];
        // A shorter --seq-len than the spec's keeps the spec's windows: a
        // window that spans the whole sequence is full attention.
        if (v.value > layerSeq && !overrides.seqLen) {
          std::string key = sec.dotted(field.key);
          if (isArray)
            key += "[" + std::to_string(layer) + "]";
          return error(v.loc, key,
                       "expected a " + std::string(field.key) +
                           " no larger than the sequence length " +
                           layerSeqText(layer) + ", got " +
                           std::to_string(v.value));
        }
        field.out->push_back(v.value);
      }
    }

    std::vector<LocatedInt> globals;
    if (!readIntList(sec, "global_tokens", globals, 0, kMaxSeqLen,
                     /*allowScalar=*/false))
      return false;
    if (!sec.has("global_tokens") && !lm && !a.causal)
      globals.push_back({0, sec.header});
    a.globalTokens.clear();
    for (size_t i = 0; i < globals.size(); ++i) {
      std::string key = "attention.global_tokens[" + std::to_string(i) + "]";
      if (globals[i].value >= seqLen)
        return error(globals[i].loc, key,
                     "expected a token position below " +
                         std::string(seqLenName()) + " (" +
                         std::to_string(seqLen) + "), got " +
                         std::to_string(globals[i].value));
      for (size_t j = 0; j < i; ++j)
        if (globals[j].value == globals[i].value)
          return error(globals[i].loc, key,
                       "expected distinct positions, got " +
                           std::to_string(globals[i].value) + " twice");
      a.globalTokens.push_back(globals[i].value);
    }
    if (a.causal && !a.globalTokens.empty())
      return error(toLoc(sec.get("global_tokens")->source().begin),
                   "attention.global_tokens",
                   "expected an empty array with attention.causal = true (a "
                   "global token attends to the whole sequence, future "
                   "included)");
  }

  if (!readBool(sec, "dconv", a.dconv))
    return false;
  if (a.dconv && !a.causal)
    return error(locOf(sec, "dconv"), "attention.dconv",
                 "needs attention.causal = true (Primer's depth-wise "
                 "convolution looks only at earlier positions)");
  if (!a.dconv && sec.has("dconv_kernel"))
    return onlyWhen(sec, "dconv_kernel", "attention.dconv = true");
  if (!readInt(sec, "dconv_kernel", a.dconvKernel, 1, kMaxDConvKernel))
    return false;
  if (a.dconv) {
    int64_t shortest = seqLen;
    for (int64_t factor : factors)
      shortest = std::min(shortest, seqLen / factor);
    if (a.dconvKernel > shortest)
      return error(locOf(sec, "dconv_kernel"), "attention.dconv_kernel",
                   "expected a kernel no larger than the shortest sequence "
                   "length (" +
                       std::to_string(shortest) + "), got " +
                       std::to_string(a.dconvKernel));
  }
  return true;
}

bool SpecReader::read(const toml::table &root, Spec &spec) {
  if (!checkStructure(root))
    return false;
  Section model = section(root, "model");
  Section attention = section(root, "attention");
  Section ffn = section(root, "ffn");
  Section hourglass = section(root, "hourglass");
  Section training = section(root, "training");
  Section data = section(root, "data");

  if (!model.table)
    return error(Loc{1, 1}, "model", "missing required section [model]");
  if (!readModel(model, hourglass.table != nullptr, spec))
    return false;
  if (hourglass.table) {
    if (!readHourglass(hourglass, spec))
      return false;
    spec.model.layers = spec.totalLayers();
  }
  if (!readEnum(ffn, "activation", kActivations, spec.ffn.activation))
    return false;
  if (!readTraining(training, hourglass, spec))
    return false;
  if (!data.table)
    return error(Loc{1, 1}, "data",
                 "missing required section [data] (at least data.train)");
  if (!readData(data, spec) || !checkVocab(model, spec))
    return false;
  return readAttention(attention, spec);
}

} // namespace

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

namespace {

/// Fills `diag` for a failure outside the schema checks. Never throws: if
/// even that runs out of memory, `diag` keeps what it had.
void setFailure(Diagnostic &diag, const std::string &path, Loc loc,
                const char *key, const std::string &message) noexcept {
  try {
    diag.path = path;
    diag.loc = loc;
    diag.key = key;
    diag.message = oneLine(message);
  } catch (...) {
  }
}

} // namespace

std::optional<Spec> parseSpecString(const std::string &text,
                                    const std::string &path, Diagnostic &diag,
                                    const Overrides &overrides) {
  try {
    diag = Diagnostic();
    diag.path = path;
    LexicalError lexical = precheck(text);
    if (lexical.found) {
      setFailure(diag, path, lexical.loc, "syntax", lexical.message);
      return std::nullopt;
    }
    toml::table root;
    try {
      root = toml::parse(std::string_view(text), std::string_view(path));
    } catch (const toml::parse_error &e) {
      setFailure(diag, path, toLoc(e.source().begin), "syntax",
                 std::string(e.description()));
      return std::nullopt;
    }
    Spec spec;
    spec.path = path;
    SpecReader reader(text, path, diag, overrides);
    if (!reader.read(root, spec))
      return std::nullopt;
    return spec;
  } catch (const std::bad_alloc &) {
    setFailure(diag, path, Loc{1, 1}, "spec",
               "out of memory while reading the spec");
  } catch (const std::exception &e) {
    setFailure(diag, path, Loc{1, 1}, "spec",
               std::string("cannot read the spec: ") + e.what());
  } catch (...) {
    setFailure(diag, path, Loc{1, 1}, "spec", "cannot read the spec");
  }
  return std::nullopt;
}

std::optional<Spec> parseSpecFile(const std::string &path, Diagnostic &diag,
                                  const Overrides &overrides) {
  try {
    diag = Diagnostic();
    diag.path = path;
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
      setFailure(diag, path, Loc(), "file",
                 "cannot read the spec: it is a directory");
      return std::nullopt;
    }
    // A FIFO would block until something writes it; a device never ends.
    std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (!ec && std::filesystem::exists(status) &&
        !std::filesystem::is_regular_file(status)) {
      const char *kind =
          std::filesystem::is_fifo(status)             ? "a FIFO"
          : std::filesystem::is_character_file(status) ? "a character device"
          : std::filesystem::is_block_file(status)     ? "a block device"
          : std::filesystem::is_socket(status)         ? "a socket"
                                                       : "a special file";
      setFailure(diag, path, Loc(), "file",
                 std::string("cannot read the spec: it is ") + kind +
                     ", not a regular file");
      return std::nullopt;
    }
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      int err = errno;
      setFailure(diag, path, Loc(), "file",
                 std::string("cannot open the spec: ") +
                     (err ? std::strerror(err) : "unknown error"));
      return std::nullopt;
    }
    std::string text;
    char buffer[65536];
    while (in.read(buffer, sizeof(buffer)) || in.gcount() > 0) {
      text.append(buffer, static_cast<size_t>(in.gcount()));
      if (text.size() > kMaxFileBytes) {
        setFailure(diag, path, Loc(), "file",
                   "cannot read the spec: it is larger than 16 MiB");
        return std::nullopt;
      }
    }
    if (in.bad()) {
      setFailure(diag, path, Loc(), "file", "cannot read the spec");
      return std::nullopt;
    }
    return parseSpecString(text, path, diag, overrides);
  } catch (...) {
    setFailure(diag, path, Loc(), "file", "cannot read the spec");
  }
  return std::nullopt;
}

} // namespace tfc::spec
