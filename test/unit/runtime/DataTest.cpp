//===- DataTest.cpp - Tests of the data loaders ---------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Data.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

#include <set>
#include <sys/stat.h>

using namespace tfc::rt;
using tfc::rt::test::TempDir;
using tfc::rt::test::writeText;

namespace {

TEST(Data, Enwik8SplitSizes) {
  // enwik8: 100,000,000 bytes -> 90M / 5M / 5M.
  SplitBounds b = splitBounds(100000000, 0.9, 0.05);
  EXPECT_EQ(b.trainEnd, 90000000);
  EXPECT_EQ(b.valEnd - b.trainEnd, 5000000);
  EXPECT_EQ(b.size - b.valEnd, 5000000);
  // Small files round to the nearest byte: 1234 * 0.9 = 1110.6 -> 1111,
  // 1234 * 0.95 = 1172.3 -> 1172.
  b = splitBounds(1234, 0.9, 0.05);
  EXPECT_EQ(b.trainEnd, 1111);
  EXPECT_EQ(b.valEnd, 1172);
  b = splitBounds(1000, 0.8, 0.2);
  EXPECT_EQ(b.trainEnd, 800);
  EXPECT_EQ(b.valEnd, 1000);
  std::string bytes = "0123456789";
  b = splitBounds(10, 0.6, 0.2);
  ByteSpan train = splitSpan(bytes, b, Split::Train);
  ByteSpan val = splitSpan(bytes, b, Split::Val);
  ByteSpan test = splitSpan(bytes, b, Split::Test);
  EXPECT_EQ(train.size, 6);
  EXPECT_EQ(val.size, 2);
  EXPECT_EQ(test.size, 2);
  EXPECT_EQ(val.data[0], '6');
  EXPECT_EQ(test.data[0], '8');
}

TEST(Data, SplitNames) {
  Split s;
  EXPECT_TRUE(parseSplit("val", s));
  EXPECT_EQ(s, Split::Val);
  EXPECT_STREQ(toString(Split::Test), "test");
  EXPECT_FALSE(parseSplit("valid", s));
}

TEST(Data, RandomBatchesAreSeededWindows) {
  std::string bytes;
  for (int i = 0; i < 1000; ++i)
    bytes += char(i % 251);
  ByteSpan span{reinterpret_cast<const uint8_t *>(bytes.data()), 1000};
  const int B = 4, S = 16;
  std::vector<int32_t> t1(B * S), y1(B * S), t2(B * S), y2(B * S);
  ASSERT_TRUE(sampleBatch(span, B, S, 1, 0, t1.data(), y1.data()));
  ASSERT_TRUE(sampleBatch(span, B, S, 1, 0, t2.data(), y2.data()));
  EXPECT_EQ(t1, t2);
  EXPECT_EQ(y1, y2);
  sampleBatch(span, B, S, 1, 1, t2.data(), y2.data());
  EXPECT_NE(t1, t2); // Next step, other windows.
  sampleBatch(span, B, S, 2, 0, t2.data(), y2.data());
  EXPECT_NE(t1, t2); // Other seed, other windows.
  for (int b = 0; b < B; ++b) {
    for (int s = 0; s < S; ++s) {
      // Contiguous bytes; targets are the inputs shifted by one.
      if (s + 1 < S) {
        EXPECT_EQ(y1[b * S + s], t1[b * S + s + 1]);
      }
      EXPECT_EQ(y1[b * S + s], (t1[b * S + s] + 1) % 251);
    }
  }
  // Every valid start is reachable, none past the end: with 18 bytes and
  // S = 16 the starts are 0 and 1.
  ByteSpan tiny{span.data, 18};
  std::set<int32_t> starts;
  for (uint64_t step = 0; step < 64; ++step) {
    int32_t t[16], y[16];
    ASSERT_TRUE(sampleBatch(tiny, 1, 16, 9, step, t, y));
    starts.insert(t[0]);
  }
  EXPECT_EQ(starts, (std::set<int32_t>{0, 1}));
  // Too short for one window of S + 1 bytes.
  int32_t t[16], y[16];
  EXPECT_FALSE(sampleBatch(ByteSpan{span.data, 16}, 1, 16, 9, 0, t, y));
}

TEST(Data, EvaluationWindowsAreSequential) {
  std::string bytes = "abcdefghijklmnopq"; // 17 bytes.
  ByteSpan span{reinterpret_cast<const uint8_t *>(bytes.data()), 17};
  // S = 4: windows [0, 5), [4, 9), [8, 13), [12, 17).
  EXPECT_EQ(evalWindowCount(span, 4), 4);
  EXPECT_EQ(evalWindowCount(span, 16), 1);
  EXPECT_EQ(evalWindowCount(span, 17), 0);
  int32_t t[8], y[8];
  evalBatch(span, 2, 4, 1, t, y); // Windows 2 and 3.
  EXPECT_EQ(t[0], 'i');
  EXPECT_EQ(y[3], 'm');
  EXPECT_EQ(t[4], 'm');
  EXPECT_EQ(y[7], 'q');
}

TEST(Data, ByteFileErrors) {
  TempDir dir;
  std::string bytes, err;
  EXPECT_FALSE(loadBytes(dir.file("none.txt"), bytes, err));
  EXPECT_EQ(err, dir.file("none.txt") + ": cannot open: No such file or "
                                        "directory");
  writeText(dir.file("empty.txt"), "");
  EXPECT_FALSE(loadBytes(dir.file("empty.txt"), bytes, err));
  EXPECT_EQ(err, dir.file("empty.txt") + ": file is empty");
  EXPECT_FALSE(loadBytes(dir.path(), bytes, err));
  EXPECT_EQ(err, dir.path() + ": is a directory");
  writeText(dir.file("ok.txt"), std::string("a\0b", 3));
  ASSERT_TRUE(loadBytes(dir.file("ok.txt"), bytes, err)) << err;
  EXPECT_EQ(bytes, std::string("a\0b", 3));
}

TEST(Data, AmazonRatingMapping) {
  int32_t label = -1;
  for (double r : {1.0, 2.0, 3.0}) {
    ASSERT_TRUE(ratingToLabel(r, label)) << r;
    EXPECT_EQ(label, 0) << r;
  }
  for (double r : {4.0, 5.0}) {
    ASSERT_TRUE(ratingToLabel(r, label)) << r;
    EXPECT_EQ(label, 1) << r;
  }
  for (double r : {0.0, 3.5, 6.0, -1.0})
    EXPECT_FALSE(ratingToLabel(r, label)) << r;
}

TEST(Data, JsonlBothFormats) {
  TempDir dir;
  std::string path = dir.file("d.jsonl");
  writeText(path,
            "{\"text\": \"good \\u00e9\", \"label\": 1}\n"
            "\n"
            "{\"rating\": 2.0, \"title\": \"meh\", \"text\": \"bad\", "
            "\"images\": [{\"url\": \"u\"}], \"helpful_vote\": 0}\r\n"
            "{\"rating\": 5.0, \"text\": \"great\", \"verified_purchase\": "
            "true}\n"
            "{\"label\": 0, \"rating\": 5, \"text\": \"label wins\"}");
  std::vector<Example> ex;
  std::string err;
  ASSERT_TRUE(loadJsonl(path, 2, ex, err)) << err;
  ASSERT_EQ(ex.size(), 4u);
  EXPECT_EQ(ex[0].text, "good \xc3\xa9");
  EXPECT_EQ(ex[0].label, 1);
  EXPECT_EQ(ex[1].text, "bad");
  EXPECT_EQ(ex[1].label, 0);
  EXPECT_EQ(ex[2].label, 1);
  EXPECT_EQ(ex[3].label, 0);
}

/// The error for a one-line JSONL file holding `line` as its third line.
std::string jsonlError(const std::string &line, int64_t classes = 2) {
  std::string afterName = tfc::rt::test::fileLoadError(
      "d.jsonl", "{\"text\": \"a\", \"label\": 0}\n\n" + line + "\n",
      [&](const std::string &path, std::string &err) {
        std::vector<Example> examples;
        return loadJsonl(path, classes, examples, err);
      });
  return afterName.substr(1); // After the ':'.
}

TEST(Data, JsonlErrorsNamePathAndLine) {
  tfc::rt::test::expectErrors(
      [](const std::string &line) { return jsonlError(line); },
      {
          {"{\"text\": \"a\" \"label\": 0}",
           "3: column 20: syntax error while parsing object - unexpected "
           "string literal; expected '}'"},
          // JSON text is UTF-8 (RFC 8259).
          {"{\"text\": \"caf\xe9\", \"label\": 0}",
           "3: column 15: syntax error while parsing value - invalid string: "
           "ill-formed UTF-8 byte; last read: '\"caf\xe9\"'"},
          {"{\"text\": \"a\", \"label\": 1e999}",
           "3: number overflow parsing '1e999'"},
          // Deep nesting is an error, not a crash.
          {std::string(100000, '[') + std::string(100000, ']'),
           "3: expected a JSON object, found an array"},
          {"[1]", "3: expected a JSON object, found an array"},
          {"{\"label\": 0}", "3: missing \"text\""},
          {"{\"text\": 5, \"label\": 0}",
           "3: \"text\" is a number, expected a string"},
          {"{\"text\": \"a\"}",
           "3: missing \"label\" (or \"rating\" for Amazon reviews)"},
          {"{\"text\": \"a\", \"label\": 0.5}",
           "3: \"label\" must be an integer >= 0"},
          {"{\"text\": \"a\", \"label\": \"1\"}",
           "3: \"label\" must be an integer >= 0"},
          {"{\"text\": \"a\", \"rating\": 3.5}",
           "3: \"rating\" must be one of 1, 2, 3, 4, 5"},
          {"{\"text\": \"a\", \"label\": 2}",
           "3: label 2 is out of range for 2 classes"},
      });
}

TEST(Data, JsonlFileErrors) {
  TempDir dir;
  std::vector<Example> ex;
  std::string err;
  writeText(dir.file("empty.jsonl"), "");
  EXPECT_FALSE(loadJsonl(dir.file("empty.jsonl"), 2, ex, err));
  EXPECT_EQ(err, dir.file("empty.jsonl") + ": file is empty");
  writeText(dir.file("blank.jsonl"), "\n  \n\r\n");
  EXPECT_FALSE(loadJsonl(dir.file("blank.jsonl"), 2, ex, err));
  EXPECT_EQ(err, dir.file("blank.jsonl") + ": no records (only blank lines)");
  EXPECT_FALSE(loadJsonl(dir.file("none.jsonl"), 2, ex, err));
  EXPECT_EQ(err, dir.file("none.jsonl") + ": cannot open: No such file or "
                                          "directory");
}

TEST(Data, RealFineFoodsFile) {
  // The shared corpus, when present beside the project.
  std::string path =
      std::string(TFC_SHARED_DATA_DIR) + "/fine_foods_test.jsonl";
  struct stat st;
  if (stat(path.c_str(), &st) != 0)
    GTEST_SKIP() << path << " not present";
  std::vector<Example> ex;
  std::string err;
  ASSERT_TRUE(loadJsonl(path, 2, ex, err)) << err;
  // 1,000 lines: 658 of label 1 (5 stars) and 342 of label 0.
  ASSERT_EQ(ex.size(), 1000u);
  int ones = 0;
  for (const Example &e : ex)
    ones += e.label;
  EXPECT_EQ(ones, 658);
}

} // namespace
