//===- Support.h - Small helpers shared by the runtime ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// printf-style formatting, whole-file reads, atomic file writes, checked
/// appends and the lock of a run directory.
///
/// Error convention of the whole runtime: a function that can fail returns
/// `bool` and, on failure, sets `err` to one line `<path>: <reason>` (or
/// `<what>: <reason>` where there is no file). The command line prints it as
/// `tfc: <err>` and exits with status 1. Nothing in the runtime throws or
/// aborts on bad input: the one library that throws, nlohmann::json, is
/// called through JsonText.h, which catches what it throws.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_SUPPORT_H
#define TFC_RUNTIME_SUPPORT_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

/// printf into a std::string.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/// Whether `a` and `b` name the same existing file (links included).
bool sameFile(const std::string &a, const std::string &b);

/// Sets `size` to the size of the regular file at `path`. Fails, without
/// opening it, on a missing file and on anything that is not a regular file
/// (a directory, a device such as /dev/zero, a FIFO, a socket), whose reads
/// might never end or whose open might never return.
bool regularFileSize(const std::string &path, uint64_t &size, std::string &err);

/// Reads the whole regular file at `path` into `out`: the bytes its size
/// says, read once. Fails on what regularFileSize refuses, on a file larger
/// than `maxBytes`, on a file that cannot be held in memory, and on a read
/// error.
bool readFile(const std::string &path, std::string &out, std::string &err,
              uint64_t maxBytes = UINT64_MAX);

/// One piece of a file to write.
struct Chunk {
  const void *data;
  size_t size;
};

/// Writes the concatenation of `chunks` to `path` atomically: the bytes go to
/// a temporary file of a name no other writer uses, `<path>.<pid>-<n>.tmp`,
/// which is fsync'ed, closed and renamed over `path`; then the directory is
/// fsync'ed. `path` must be a regular file or not exist: a directory, a
/// device, a FIFO or a socket there is refused, not replaced (a symbolic
/// link is judged by what it points to, and replaced by the new file). On
/// any failure the temporary file is removed and whatever was at `path`
/// before is left untouched.
bool writeFileAtomic(const std::string &path, const std::vector<Chunk> &chunks,
                     std::string &err);

/// A regular file that grows by whole records (metrics.jsonl), each write
/// checked: a record that cannot be written in full is cut off again, so
/// the file ends after the last record written.
class AppendFile {
public:
  AppendFile() = default;
  AppendFile(const AppendFile &) = delete;
  AppendFile &operator=(const AppendFile &) = delete;
  ~AppendFile();

  /// Opens the existing regular file `path` for appending.
  bool open(const std::string &path, std::string &err);
  /// Appends `text`; on failure `err` is `<path>: write error: <reason>`.
  bool append(const std::string &text, std::string &err);
  /// Closes the file (nothing to do when it is not open).
  bool close(std::string &err);

private:
  int fd_ = -1;
  std::string path_;
};

/// Takes an exclusive lock (flock) on the run directory `dir` for the rest
/// of the process, so that two training runs cannot write into one
/// directory. Fails, naming `dir`, when another process holds it.
bool lockRunDirectory(const std::string &dir, std::string &err);

/// Parses a whole string as a decimal integer (optional leading '-').
/// Rejects empty strings, trailing characters and overflow.
bool parseInt64(const std::string &text, int64_t &value);
bool parseUInt64(const std::string &text, uint64_t &value);

/// Parses a whole string as a finite decimal floating-point number.
bool parseDouble(const std::string &text, double &value);

/// "[2, 3, 4]"; "[]" for a scalar.
std::string shapeString(const std::vector<int64_t> &shape);

} // namespace tfc::rt

#endif // TFC_RUNTIME_SUPPORT_H
