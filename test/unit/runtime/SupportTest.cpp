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
#include <thread>

using namespace tfc::rt;
using tfc::rt::test::readText;
using tfc::rt::test::TempDir;
using tfc::rt::test::writeText;

namespace {

bool write(const std::string &path, const std::string &text, std::string &err) {
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

TEST(WriteFileAtomic, LeavesAnotherWritersTemporaryAlone) {
  // `<path>.tmp` may be a temporary of another program (or of an older
  // tfc): it is neither truncated nor renamed.
  TempDir dir;
  std::string path = dir.file("w.safetensors"), err;
  writeText(path + ".tmp", "someone else's");
  ASSERT_TRUE(write(path, "mine", err)) << err;
  EXPECT_EQ(readText(path), "mine");
  EXPECT_EQ(readText(path + ".tmp"), "someone else's");
}

TEST(WriteFileAtomic, ConcurrentWritersOfOnePathAllSucceed) {
  TempDir dir;
  std::string path = dir.file("shared");
  auto writer = [&](const std::string &text, int &failures) {
    for (int i = 0; i < 200; ++i) {
      std::string err;
      failures += !write(path, text, err);
    }
  };
  int failuresA = 0, failuresB = 0;
  std::thread a(writer, std::string(4096, 'a'), std::ref(failuresA));
  std::thread b(writer, std::string(4096, 'b'), std::ref(failuresB));
  a.join();
  b.join();
  EXPECT_EQ(failuresA + failuresB, 0);
  std::string last = readText(path);
  EXPECT_TRUE(last == std::string(4096, 'a') || last == std::string(4096, 'b'));
}

TEST(ReadFile, RefusesWhatIsNotARegularFile) {
  TempDir dir;
  std::string out, err;
  // /dev/null reads as empty and /dev/zero never ends: both are devices.
  EXPECT_FALSE(readFile("/dev/null", out, err));
  EXPECT_EQ(err, "/dev/null: is a character device, not a regular file");
  EXPECT_FALSE(readFile(dir.path(), out, err));
  EXPECT_EQ(err, dir.path() + ": is a directory");
  uint64_t size = 0;
  EXPECT_FALSE(regularFileSize("/dev/zero", size, err));
  EXPECT_EQ(err, "/dev/zero: is a character device, not a regular file");
  // A FIFO is refused without being opened (its open would wait for a
  // writer).
  std::string fifo = dir.file("fifo");
  ASSERT_EQ(0, mkfifo(fifo.c_str(), 0644));
  EXPECT_FALSE(regularFileSize(fifo, size, err));
  EXPECT_EQ(err, fifo + ": is a FIFO, not a regular file");
}

TEST(ReadFile, ReadsByTheSizeAndBoundsIt) {
  TempDir dir;
  std::string path = dir.file("a.txt"), out, err;
  writeText(path, "0123456789");
  ASSERT_TRUE(readFile(path, out, err)) << err;
  EXPECT_EQ(out, "0123456789");
  ASSERT_TRUE(readFile(path, out, err, 10)) << err;
  EXPECT_FALSE(readFile(path, out, err, 9));
  EXPECT_EQ(err, path + ": the file has 10 bytes, more than the 9 its format "
                        "allows");
  uint64_t size = 0;
  ASSERT_TRUE(regularFileSize(path, size, err)) << err;
  EXPECT_EQ(size, 10u);
  EXPECT_FALSE(readFile(dir.file("none"), out, err));
  EXPECT_EQ(err, dir.file("none") + ": cannot open: No such file or directory");
}

TEST(AppendFile, AppendsRecords) {
  TempDir dir;
  std::string path = dir.file("log.jsonl"), err;
  writeText(path, "{\"step\":1}\n");
  AppendFile log;
  ASSERT_TRUE(log.open(path, err)) << err;
  ASSERT_TRUE(log.append("{\"step\":2}\n", err)) << err;
  ASSERT_TRUE(log.close(err)) << err;
  EXPECT_EQ(readText(path), "{\"step\":1}\n{\"step\":2}\n");
}

TEST(AppendFile, RefusesWhatIsNotARegularFile) {
  AppendFile log;
  std::string err;
  EXPECT_FALSE(log.open("/dev/full", err));
  EXPECT_EQ(err, "/dev/full: is a character device, not a regular file");
}

TEST(AppendFile, AFailedWriteIsReportedAndCutOff) {
  // The file size limit stops the second record half way with EFBIG: the
  // error names the file, and the file ends after the first record.
  TempDir dir;
  std::string path = dir.file("log.jsonl"), err;
  writeText(path, "");
  AppendFile log;
  ASSERT_TRUE(log.open(path, err)) << err;
  std::string record(150, 'x');
  record += "\n";
  bool first = false, second = false;
  {
    tfc::rt::test::FileSizeLimit limit(200);
    ASSERT_TRUE(limit.limited());
    first = log.append(record, err);
    second = log.append(record, err);
  }
  EXPECT_TRUE(first);
  EXPECT_FALSE(second);
  EXPECT_EQ(err, path + ": write error: File too large");
  EXPECT_EQ(readText(path), record);
}

TEST(LockRunDirectory, ASecondLockIsRefused) {
  TempDir dir;
  std::string err;
  ASSERT_TRUE(lockRunDirectory(dir.path(), err)) << err;
  // flock locks belong to an open file description: a second open, even
  // in the same process, conflicts as another process would.
  EXPECT_FALSE(lockRunDirectory(dir.path(), err));
  EXPECT_EQ(err, dir.path() + ": another training run is writing to this "
                              "directory; wait for it to end or choose "
                              "another --out DIR");
}

} // namespace
