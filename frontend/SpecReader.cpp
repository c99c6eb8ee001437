//===- SpecReader.cpp - Structure and typed values of a spec --------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The first two of the spec reader's passes: structure (unknown sections
/// and keys, in document order) and the typed accessors that check each
/// value's type and range; and `SpecReader::read`, which runs the section
/// readers of SpecSections.cpp in turn.
///
//===----------------------------------------------------------------------===//

#include "frontend/SpecReader.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>
#include <utility>

namespace tfc::spec::detail {

Loc toLoc(const toml::source_position &position) {
  if (!position)
    return Loc{1, 1};
  return Loc{position.line, position.column};
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

Section SpecReader::section(const toml::table &root, const char *name) const {
  Section sec;
  sec.name = name;
  if (const toml::node *node = root.get(name)) {
    sec.table = node->as_table();
    sec.header = toLoc(node->source().begin);
  }
  return sec;
}

namespace {

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

} // namespace

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

} // namespace tfc::spec::detail
