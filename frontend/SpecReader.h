//===- SpecReader.h - Reads the sections of a parsed spec -------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Private to the spec parser (frontend/Spec*.cpp): SpecReader walks the
/// TOML tree toml++ parsed, checks it against the schema and fills a Spec.
/// SpecReader.cpp holds the structure check and the typed accessors,
/// SpecSections.cpp the readers of the sections and the checks between
/// their keys.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_FRONTEND_SPECREADER_H
#define TFC_FRONTEND_SPECREADER_H

#include "frontend/Spec.h"
#include "frontend/SpecDiagnostics.h"
#include "frontend/SpecSchema.h"

#include <toml++/toml.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfc::spec::detail {

/// A toml++ source position as a Loc; 1:1 when toml++ has none.
Loc toLoc(const toml::source_position &position);

/// Human name of a TOML value type, with its article.
const char *typeName(toml::node_type type);

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

/// One `layers@factor` item of an hourglass layout string.
struct LayoutItem;

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

  // The sections (SpecSections.cpp), in the order `read` reads them.
  bool readModel(const Section &sec, bool hasHourglass, Spec &spec);
  bool readHourglass(const Section &sec, Spec &spec);
  bool parseLayout(const toml::node &node, std::vector<HourglassLevel> &levels);
  bool splitLayout(const toml::node &node, std::vector<LayoutItem> &items);
  bool checkLayoutShape(const toml::node &node,
                        const std::vector<LayoutItem> &items);
  bool expandShorteningFactors(const Section &sec, const toml::node &factors,
                               std::vector<HourglassLevel> &levels);
  bool readTraining(const Section &sec, const Section &hourglassSec,
                    Spec &spec);
  bool applyOverrides(Training &training);
  bool checkHourglassSeqLen(const Section &sec, const Section &hourglassSec,
                            const Spec &spec);
  bool readData(const Section &sec, Spec &spec);
  bool checkVocab(const Section &modelSec, const Spec &spec);
  bool readAttention(const Section &sec, Spec &spec);
  bool readLongformer(const Section &sec, Spec &spec,
                      const std::vector<int64_t> &factors);
  bool readPerLayer(const Section &sec, const char *key, bool required,
                    const Spec &spec, const std::vector<int64_t> &factors,
                    std::vector<int64_t> &out);
  bool readGlobalTokens(const Section &sec, Spec &spec);
  bool readDConv(const Section &sec, Spec &spec,
                 const std::vector<int64_t> &factors);
  std::string layerSeqText(const Spec &spec,
                           const std::vector<int64_t> &factors,
                           size_t layer) const;

  /// Column of byte `offset` inside the string value `node`, when the value
  /// is written on one line without escapes; otherwise the value's start.
  Loc locInString(const toml::node &node, size_t offset) const;

  const std::string &text;
  const std::string &path;
  Diagnostic &diag;
  const Overrides &overrides;
};

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

} // namespace tfc::spec::detail

#endif // TFC_FRONTEND_SPECREADER_H
