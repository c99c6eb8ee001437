//===- TokenizerTest.cpp - Tests of the word vocabulary -------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tokenizer.h"
#include "TestUtil.h"

#include <gtest/gtest.h>

using namespace tfc::rt;
using tfc::rt::test::readText;
using tfc::rt::test::TempDir;
using tfc::rt::test::writeText;

namespace {

std::vector<std::string> words(const std::string &text) {
  std::vector<std::string> out;
  splitWords(text, out);
  return out;
}

TEST(Tokenizer, SplitsWordsAndPunctuation) {
  EXPECT_EQ(words("Hello, World!  It's 42."),
            (std::vector<std::string>{"hello", ",", "world", "!", "it", "'",
                                      "s", "42", "."}));
  EXPECT_EQ(
      words("line\nbreak\ttab<br />"),
      (std::vector<std::string>{"line", "break", "tab", "<", "br", "/", ">"}));
  // UTF-8 letters stay inside words; only ASCII is lowercased.
  EXPECT_EQ(words("Caf\xc3\xa9 \xc3\x89T\xc3\x89"),
            (std::vector<std::string>{"caf\xc3\xa9", "\xc3\x89t\xc3\x89"}));
  EXPECT_EQ(words(""), std::vector<std::string>{});
  EXPECT_EQ(words(" \x01\x7f "), std::vector<std::string>{});
}

std::vector<Example> corpus() {
  // Counts: "the" 4, "a" 3, "." 3, "cat" 2, "dog" 2, "bird" 1, "fish" 1.
  return {{"The cat. The dog.", 0},
          {"the cat, a dog", 1},
          {"A bird; a fish.", 0},
          {"THE", 1}};
}

TEST(Tokenizer, VocabularyOrderAndLimits) {
  Vocab v = buildVocab(corpus(), 100, 1);
  // Specials, then by count (descending), ties in byte order:
  // the(4); "."(3) < "a"(3); "cat"(2) < "dog"(2); ","(1) < ";"(1) < "bird"(1)
  // < "fish"(1).
  EXPECT_EQ(v.tokens, (std::vector<std::string>{"<pad>", "<unk>", "<cls>",
                                                "the", ".", "a", "cat", "dog",
                                                ",", ";", "bird", "fish"}));
  EXPECT_EQ(v.id("the"), 3);
  EXPECT_EQ(v.id("zebra"), kUnkId);
  // min_freq 2 drops the singletons.
  v = buildVocab(corpus(), 100, 2);
  EXPECT_EQ(v.size(), 8);
  EXPECT_EQ(v.tokens.back(), "dog");
  // The cap counts the specials.
  v = buildVocab(corpus(), 5, 1);
  EXPECT_EQ(v.tokens,
            (std::vector<std::string>{"<pad>", "<unk>", "<cls>", "the", "."}));
}

TEST(Tokenizer, SaveAndLoad) {
  TempDir dir;
  std::string path = dir.file("w.safetensors.vocab");
  Vocab v = buildVocab(corpus(), 100, 1);
  std::string err;
  ASSERT_TRUE(saveVocab(path, v, err)) << err;
  EXPECT_EQ(readText(path).substr(0, 33),
            "tfc-vocab 1 12\n<pad>\n<unk>\n<cls>\n");
  Vocab back;
  ASSERT_TRUE(loadVocab(path, 100, back, err)) << err;
  EXPECT_EQ(back.tokens, v.tokens);
  EXPECT_EQ(back.id("cat"), v.id("cat"));
  // Larger than the model's vocabulary.
  EXPECT_FALSE(loadVocab(path, 11, back, err));
  EXPECT_EQ(err, path + ": 12 tokens, more than the model's vocabulary of 11");
}

/// The error of loading a vocabulary file that holds `text`, after the
/// file's name.
std::string vocabError(const std::string &text) {
  return tfc::rt::test::fileLoadError(
      "v.vocab", text, [](const std::string &path, std::string &err) {
        Vocab vocab;
        return loadVocab(path, 100, vocab, err);
      });
}

TEST(Tokenizer, LoadErrors) {
  tfc::rt::test::expectErrors(
      vocabError,
      {
          {"", ": file is empty"},
          {"vocab\n", ":1: expected 'tfc-vocab 1 <size>'"},
          {"tfc-vocab 1 4\n<pad>\n<unk>\n<cls>\n",
           ": header says 4 tokens, the file has 3"},
          {"tfc-vocab 1 4\n<pad>\n<unk>\n<cls>\nword",
           ":5: missing newline at the end (file truncated?)"},
          {"tfc-vocab 1 4\n<pad>\n<cls>\n<unk>\nx\n",
           ":3: expected special token <unk>"},
          {"tfc-vocab 1 5\n<pad>\n<unk>\n<cls>\nx\nx\n",
           ":6: token 'x' repeated"},
          {"tfc-vocab 1 4\n<pad>\n<unk>\n<cls>\n\n", ":5: empty token"},
      });
}

TEST(Tokenizer, EncodeWithClsPaddingAndTruncation) {
  Vocab v = buildVocab(corpus(), 100, 1);
  int32_t ids[8];
  float mask[8];
  // "The zebra." -> CLS the UNK . PAD PAD PAD PAD
  encode(v, "The zebra.", 8, ids, mask);
  const int32_t expected[8] = {kClsId, 3,      kUnkId, 4,
                               kPadId, kPadId, kPadId, kPadId};
  const float expectedMask[8] = {1, 1, 1, 1, 0, 0, 0, 0};
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(ids[i], expected[i]) << i;
    EXPECT_EQ(mask[i], expectedMask[i]) << i;
  }
  // Truncation keeps CLS and the first S - 1 tokens.
  encode(v, "a cat a dog a fish", 4, ids, mask);
  EXPECT_EQ(ids[0], kClsId);
  EXPECT_EQ(ids[1], v.id("a"));
  EXPECT_EQ(ids[2], v.id("cat"));
  EXPECT_EQ(ids[3], v.id("a"));
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(mask[i], 1.0f);
  // An empty text is CLS and padding.
  encode(v, "", 3, ids, mask);
  EXPECT_EQ(ids[0], kClsId);
  EXPECT_EQ(ids[1], kPadId);
  EXPECT_EQ(mask[0], 1.0f);
  EXPECT_EQ(mask[2], 0.0f);
}

} // namespace
