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
/// The parser is compiled with C++ exceptions (toml++ reports syntax errors
/// by throwing). Every exception is caught here: the public entry points
/// never throw and never abort, whatever the input bytes. Each problem is
/// reported as exactly one Diagnostic naming the line and column of the
/// offending value, the dotted key and what was expected.
///
/// The text first goes through a lexical pre-check (SpecLexer.cpp), then
/// through toml++, then through SpecReader, whose checks run in three
/// passes: structure (unknown sections and keys, in document order), values
/// (types and ranges, section by section) and consistency between keys
/// (divisibility, per-layer arrays, data layout); SpecSchema.h has the
/// schema they check against.
///
//===----------------------------------------------------------------------===//

#include "frontend/Spec.h"
#include "frontend/SpecDiagnostics.h"
#include "frontend/SpecLexer.h"
#include "frontend/SpecReader.h"
#include "frontend/SpecSchema.h"

#include <toml++/toml.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <new>
#include <string_view>

namespace tfc::spec {

using detail::LexicalError;
using detail::oneLine;
using detail::toLoc;

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
    LexicalError lexical = detail::precheck(text);
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
    detail::SpecReader reader(text, path, diag, overrides);
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
      if (text.size() > detail::kMaxFileBytes) {
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
