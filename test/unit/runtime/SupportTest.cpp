//===- SupportTest.cpp - Tests of file reads, writes and locks ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Support.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>

using namespace tfc::rt;
using tfc::rt::test::readText;
using tfc::rt::test::TempDir;
using tfc::rt::test::writeText;

namespace {

bool write(const std::string &path, const std::string &text,
           std::string &err) {
  return writeFileAtomic(path, {{text.data(), text.size()}}, err);
}

TEST(WriteFileAtomic, ReplacesARegularFile) {
  TempDir dir;
  std::string path = dir.file("a.txt"), err;
  ASSERT_TRUE(write(path, "one", err)) << err;
  ASSERT_TRUE(write(path, "two", err)) << err;
  EXPECT_EQ(readText(path), "two");
}

TEST(WriteFileAtomic, RefusesAFifo) {
  TempDir dir;
  std::string path = dir.file("fifo"), err;
  ASSERT_EQ(0, mkfifo(path.c_str(), 0644));
  EXPECT_FALSE(write(path, "data", err));
  EXPECT_EQ(err, path + ": is a FIFO, not a regular file; refusing to replace "
                        "it");
  struct stat st;
  ASSERT_EQ(0, lstat(path.c_str(), &st));
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST(WriteFileAtomic, RefusesALinkToAFifo) {
  TempDir dir;
  std::string fifo = dir.file("fifo"), link = dir.file("link"), err;
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0644));
  ASSERT_EQ(0, symlink(fifo.c_str(), link.c_str()));
  EXPECT_FALSE(write(link, "data", err));
  EXPECT_EQ(err, link + ": is a FIFO, not a regular file; refusing to replace "
                        "it");
  struct stat st;
  ASSERT_EQ(0, lstat(link.c_str(), &st));
  EXPECT_TRUE(S_ISLNK(st.st_mode));
}

TEST(WriteFileAtomic, RefusesACharacterDevice) {
  if (geteuid() != 0)
    GTEST_SKIP() << "making a device node needs root";
  TempDir dir;
  std::string path = dir.file("full"), err;
  if (mknod(path.c_str(), S_IFCHR | 0666, makedev(1, 7)) != 0)
    GTEST_SKIP() << "mknod is not allowed here";
  EXPECT_FALSE(write(path, "data", err));
  EXPECT_EQ(err, path + ": is a character device, not a regular file; "
                        "refusing to replace it");
  struct stat st;
  ASSERT_EQ(0, lstat(path.c_str(), &st));
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(WriteFileAtomic, RefusesADirectory) {
  TempDir dir;
  std::string err;
  EXPECT_FALSE(write(dir.path(), "data", err));
  EXPECT_EQ(err, dir.path() + ": is a directory; refusing to replace it");
}

} // namespace
