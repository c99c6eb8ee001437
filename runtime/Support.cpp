//===- Support.cpp - Small helpers shared by the runtime ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Support.h"

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tfc::rt {

std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string out;
  if (n > 0) {
    out.resize(size_t(n) + 1);
    vsnprintf(&out[0], out.size(), fmt, args);
    out.resize(size_t(n));
  }
  va_end(args);
  return out;
}

/// "a directory", "a character device", ... for a file that is not regular.
static const char *fileKind(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

/// The one-line error for a path that is not a regular file.
static std::string notRegularError(const std::string &path, mode_t mode) {
  if (S_ISDIR(mode))
    return path + ": is a directory";
  return path + ": is " + fileKind(mode) + ", not a regular file";
}

bool sameFile(const std::string &a, const std::string &b) {
  struct stat sa, sb;
  return stat(a.c_str(), &sa) == 0 && stat(b.c_str(), &sb) == 0 &&
         sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

bool regularFileSize(const std::string &path, uint64_t &size,
                     std::string &err) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    err = path + ": cannot open: " + strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    err = notRegularError(path, st.st_mode);
    return false;
  }
  size = uint64_t(st.st_size);
  return true;
}

bool readFile(const std::string &path, std::string &out, std::string &err,
              uint64_t maxBytes) {
  uint64_t size = 0;
  if (!regularFileSize(path, size, err))
    return false;
  // O_NONBLOCK: should a FIFO have taken the file's place since the check,
  // open returns at once and fstat refuses it.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    err = path + ": cannot open: " + strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    err = path + ": cannot stat: " + strerror(errno);
    close(fd);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    err = notRegularError(path, st.st_mode);
    close(fd);
    return false;
  }
  size = uint64_t(st.st_size);
  if (size > maxBytes) {
    err = format("%s: the file has %llu bytes, more than the %llu its format "
                 "allows",
                 path.c_str(), (unsigned long long)size,
                 (unsigned long long)maxBytes);
    close(fd);
    return false;
  }
  out.clear();
  try {
    out.resize(size_t(size));
  } catch (const std::exception &) {
    err = format("%s: cannot allocate %llu bytes to read the file",
                 path.c_str(), (unsigned long long)size);
    close(fd);
    return false;
  }
  // Exactly the bytes the size promised: what a writer appends meanwhile is
  // not read; a file cut shorter meanwhile is an error.
  size_t done = 0;
  while (done < out.size()) {
    ssize_t n = read(fd, &out[done], out.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      err = path + ": read error: " + strerror(errno);
      close(fd);
      return false;
    }
    if (n == 0) {
      err = format("%s: read error: the file shrank from %llu to %zu bytes "
                   "while being read",
                   path.c_str(), (unsigned long long)size, done);
      close(fd);
      return false;
    }
    done += size_t(n);
  }
  close(fd);
  return true;
}

/// Writes all `size` bytes, retrying on short writes and EINTR.
static bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = write(fd, p, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n == 0)
      errno = ENOSPC;
    if (n <= 0)
      return false;
    p += n;
    size -= size_t(n);
  }
  return true;
}

/// Creates a temporary file beside `path` that no other writer (thread or
/// process) uses: `<path>.<pid>-<n>.tmp`, created exclusively.
static int createTemporary(const std::string &path, std::string &tmp) {
  static std::atomic<unsigned> counter{0};
  for (int attempt = 0; attempt < 100; ++attempt) {
    tmp = format("%s.%ld-%u.tmp", path.c_str(), (long)getpid(),
                 counter.fetch_add(1));
    int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0 || errno != EEXIST)
      return fd;
  }
  errno = EEXIST;
  return -1;
}

bool writeFileAtomic(const std::string &path, const std::vector<Chunk> &chunks,
                     std::string &err) {
  // Only a regular file (or nothing) may be replaced: renaming over a
  // device or a FIFO would take its place in the file system.
  struct stat st;
  if (stat(path.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      err = notRegularError(path, st.st_mode) + "; refusing to replace it";
      return false;
    }
  } else if (errno != ENOENT) {
    err = path + ": cannot write: " + strerror(errno);
    return false;
  }
  std::string tmp;
  int fd = createTemporary(path, tmp);
  if (fd < 0) {
    err = path + ": cannot create a temporary file beside it (" + tmp +
          "): " + strerror(errno);
    return false;
  }
  for (const Chunk &chunk : chunks) {
    if (!writeAll(fd, chunk.data, chunk.size)) {
      err = path + ": write error: " + strerror(errno);
      close(fd);
      unlink(tmp.c_str());
      return false;
    }
  }
  if (fsync(fd) != 0) {
    err = path + ": fsync failed: " + strerror(errno);
    close(fd);
    unlink(tmp.c_str());
    return false;
  }
  if (close(fd) != 0) {
    err = path + ": close failed: " + strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    err = path + ": cannot rename " + tmp + " over it: " + strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  // Make the rename itself durable. Best effort: some file systems refuse
  // fsync on directories.
  size_t slash = path.rfind('/');
  std::string dir =
      slash == std::string::npos ? "." : path.substr(0, slash + 1);
  int dirFd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    fsync(dirFd);
    close(dirFd);
  }
  return true;
}

AppendFile::~AppendFile() {
  std::string ignored;
  close(ignored);
}

bool AppendFile::open(const std::string &path, std::string &err) {
  std::string ignored;
  close(ignored);
  path_ = path;
  uint64_t size = 0;
  if (!regularFileSize(path, size, err))
    return false;
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NONBLOCK);
  if (fd_ < 0) {
    err = path + ": cannot open for appending: " + strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    err = path + ": not a regular file";
    ::close(fd_);
    fd_ = -1;
    return false;
  }
  return true;
}

bool AppendFile::append(const std::string &text, std::string &err) {
  if (fd_ < 0) {
    err = path_ + ": write error: the file is not open";
    return false;
  }
  off_t end = lseek(fd_, 0, SEEK_END);
  size_t written = 0;
  while (written < text.size()) {
    ssize_t n = write(fd_, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      err = path_ + ": write error: " + strerror(n == 0 ? ENOSPC : errno);
      // Cut off the part of the record that was written, so that the file
      // ends after a whole record.
      if (written > 0 && (end < 0 || ftruncate(fd_, end) != 0))
        err += " (and the partial record could not be cut off)";
      return false;
    }
    written += size_t(n);
  }
  return true;
}

bool AppendFile::close(std::string &err) {
  if (fd_ < 0)
    return true;
  int rc = ::close(fd_);
  fd_ = -1;
  if (rc != 0) {
    err = path_ + ": close failed: " + strerror(errno);
    return false;
  }
  return true;
}

bool lockRunDirectory(const std::string &dir, std::string &err) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    err = dir + ": cannot open the directory to lock it: " + strerror(errno);
    return false;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    int error = errno;
    close(fd);
    err = error == EWOULDBLOCK
              ? dir + ": another training run is writing to this directory; "
                      "wait for it to end or choose another --out DIR"
              : dir + ": cannot lock the directory: " + strerror(error);
    return false;
  }
  // The descriptor stays open: the lock lasts until the process exits.
  return true;
}

bool parseInt64(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  size_t i = 0;
  bool negative = text[0] == '-';
  if (negative)
    i = 1;
  if (i == text.size())
    return false;
  uint64_t magnitude = 0;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c < '0' || c > '9')
      return false;
    uint64_t digit = uint64_t(c - '0');
    if (magnitude > (UINT64_MAX - digit) / 10)
      return false;
    magnitude = magnitude * 10 + digit;
  }
  if (negative) {
    if (magnitude > uint64_t(INT64_MAX) + 1)
      return false;
    value =
        magnitude == uint64_t(INT64_MAX) + 1 ? INT64_MIN : -int64_t(magnitude);
  } else {
    if (magnitude > uint64_t(INT64_MAX))
      return false;
    value = int64_t(magnitude);
  }
  return true;
}

bool parseUInt64(const std::string &text, uint64_t &value) {
  if (text.empty())
    return false;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return false;
    uint64_t digit = uint64_t(c - '0');
    if (v > (UINT64_MAX - digit) / 10)
      return false;
    v = v * 10 + digit;
  }
  value = v;
  return true;
}

bool parseDouble(const std::string &text, double &value) {
  if (text.empty() || isspace(static_cast<unsigned char>(text[0])))
    return false;
  errno = 0;
  char *end = nullptr;
  double v = strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v))
    return false;
  value = v;
  return true;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

} // namespace tfc::rt
