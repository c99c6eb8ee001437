//===- TestUtil.h - Helpers for the runtime unit tests ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// A scratch directory removed at the end of a test, small file helpers,
/// and a file size limit for making writes fail.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_TEST_UNIT_RUNTIME_TESTUTIL_H
#define TFC_TEST_UNIT_RUNTIME_TESTUTIL_H

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <ftw.h>
#include <initializer_list>
#include <string>
#include <sys/resource.h>
#include <unistd.h>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace tfc::rt::test {

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *base = getenv("TMPDIR");
    std::string pattern =
        std::string(base && *base ? base : "/tmp") + "/tfc-rt-test-XXXXXX";
    char *made = mkdtemp(&pattern[0]);
    path_ = made ? made : "";
  }
  ~TempDir() {
    if (!path_.empty())
      nftw(path_.c_str(), removeEntry, 16, FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::string &path() const { return path_; }
  /// A path inside the directory.
  std::string file(const std::string &name) const { return path_ + "/" + name; }

private:
  static int removeEntry(const char *path, const struct stat *, int,
                         struct FTW *) {
    ::remove(path);
    return 0;
  }
  std::string path_;
};

inline void writeText(const std::string &path, const std::string &text) {
  FILE *f = fopen(path.c_str(), "wb");
  if (!f)
    return;
  fwrite(text.data(), 1, text.size(), f);
  fclose(f);
}

inline std::string readText(const std::string &path) {
  std::string out;
  FILE *f = fopen(path.c_str(), "rb");
  if (!f)
    return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
    out.append(buf, n);
  fclose(f);
  return out;
}

/// The names of the temporary files (`*.tmp`) in `dir`.
inline std::vector<std::string> temporaries(const std::string &dir) {
  std::vector<std::string> names;
  DIR *d = opendir(dir.c_str());
  if (!d)
    return names;
  while (dirent *entry = readdir(d)) {
    std::string name = entry->d_name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0)
      names.push_back(name);
  }
  closedir(d);
  return names;
}

/// The error of `load(path, err)`, which must fail, on a file called
/// `name` that holds `text`: what follows the file's name in it.
template <typename Load>
std::string fileLoadError(const std::string &name, const std::string &text,
                          Load load) {
  TempDir dir;
  std::string path = dir.file(name);
  writeText(path, text);
  std::string err;
  EXPECT_FALSE(load(path, err)) << text;
  return err.substr(err.find(name) + name.size());
}

/// Expects `errorOf(input)` to be `error` for each {input, error}.
template <typename ErrorOf>
void expectErrors(
    ErrorOf errorOf,
    std::initializer_list<std::pair<std::string, std::string>> cases) {
  for (const auto &[input, error] : cases)
    EXPECT_EQ(errorOf(input), error) << input.substr(0, 80);
}

/// Lowers the file size limit (RLIMIT_FSIZE) to `bytes` and ignores
/// SIGXFSZ, so that a write past `bytes` fails with EFBIG; both are
/// restored when it goes out of scope.
class FileSizeLimit {
public:
  explicit FileSizeLimit(rlim_t bytes) {
    if (getrlimit(RLIMIT_FSIZE, &old_) != 0)
      return;
    oldHandler_ = signal(SIGXFSZ, SIG_IGN);
    handlerSet_ = true;
    struct rlimit small = old_;
    small.rlim_cur = bytes;
    limited_ = setrlimit(RLIMIT_FSIZE, &small) == 0;
  }
  ~FileSizeLimit() {
    if (limited_)
      setrlimit(RLIMIT_FSIZE, &old_);
    if (handlerSet_)
      signal(SIGXFSZ, oldHandler_);
  }
  FileSizeLimit(const FileSizeLimit &) = delete;
  FileSizeLimit &operator=(const FileSizeLimit &) = delete;

  /// The limit is in force.
  bool limited() const { return limited_; }

private:
  struct rlimit old_ = {};
  void (*oldHandler_)(int) = nullptr;
  bool handlerSet_ = false;
  bool limited_ = false;
};

} // namespace tfc::rt::test

#endif // TFC_TEST_UNIT_RUNTIME_TESTUTIL_H
