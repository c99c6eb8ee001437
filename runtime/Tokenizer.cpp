//===- Tokenizer.cpp - Byte and word tokenizers ---------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Tokenizer.h"
#include "runtime/Support.h"

#include <algorithm>

namespace tfc::rt {

static const char *const kSpecialNames[kSpecialCount] = {"<pad>", "<unk>",
                                                         "<cls>"};

static bool isWordByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c >= 0x80;
}

void splitWords(const std::string &text, std::vector<std::string> &out) {
  size_t i = 0;
  const size_t n = text.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (isWordByte(c)) {
      std::string word;
      while (i < n && isWordByte(static_cast<unsigned char>(text[i]))) {
        char w = text[i++];
        word += (w >= 'A' && w <= 'Z') ? char(w - 'A' + 'a') : w;
      }
      out.push_back(std::move(word));
    } else {
      if (c > 0x20 && c < 0x7f)
        out.emplace_back(1, char(c));
      ++i;
    }
  }
}

int32_t Vocab::id(const std::string &token) const {
  auto it = ids.find(token);
  return it == ids.end() ? kUnkId : it->second;
}

/// Sets `ids` from `tokens`.
static void indexVocab(Vocab &vocab) {
  vocab.ids.clear();
  for (size_t i = 0; i < vocab.tokens.size(); ++i)
    vocab.ids.emplace(vocab.tokens[i], int32_t(i));
}

Vocab buildVocab(const std::vector<Example> &examples, int64_t maxSize,
                 int64_t minFreq) {
  std::unordered_map<std::string, int64_t> counts;
  std::vector<std::string> words;
  for (const Example &example : examples) {
    words.clear();
    splitWords(example.text, words);
    for (const std::string &w : words)
      ++counts[w];
  }
  std::vector<std::pair<std::string, int64_t>> sorted;
  for (const auto &kv : counts)
    if (kv.second >= minFreq)
      sorted.push_back(kv);
  std::sort(sorted.begin(), sorted.end(),
            [](const std::pair<std::string, int64_t> &a,
               const std::pair<std::string, int64_t> &b) {
              if (a.second != b.second)
                return a.second > b.second;
              return a.first < b.first;
            });
  Vocab vocab;
  for (const char *name : kSpecialNames)
    vocab.tokens.push_back(name);
  for (const auto &kv : sorted) {
    if (vocab.size() >= maxSize)
      break;
    vocab.tokens.push_back(kv.first);
  }
  indexVocab(vocab);
  return vocab;
}

bool saveVocab(const std::string &path, const Vocab &vocab, std::string &err) {
  std::string text = format("tfc-vocab 1 %lld\n", (long long)vocab.size());
  for (const std::string &token : vocab.tokens)
    text += token + "\n";
  return writeFileAtomic(path, {{text.data(), text.size()}}, err);
}

bool loadVocab(const std::string &path, int64_t maxSize, Vocab &vocab,
               std::string &err) {
  vocab = Vocab();
  std::string text;
  if (!readFile(path, text, err))
    return false;
  if (text.empty()) {
    err = path + ": file is empty";
    return false;
  }
  std::vector<std::string> lines;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) {
      err = format("%s:%zu: missing newline at the end (file truncated?)",
                   path.c_str(), lines.size() + 1);
      return false;
    }
    lines.push_back(text.substr(pos, eol - pos));
    pos = eol + 1;
  }
  int64_t size = 0;
  const std::string prefix = "tfc-vocab 1 ";
  if (lines[0].compare(0, prefix.size(), prefix) != 0 ||
      !parseInt64(lines[0].substr(prefix.size()), size) ||
      size < kSpecialCount) {
    err = path + ":1: expected 'tfc-vocab 1 <size>'";
    return false;
  }
  if (int64_t(lines.size()) - 1 != size) {
    err = format("%s: header says %lld tokens, the file has %zu", path.c_str(),
                 (long long)size, lines.size() - 1);
    return false;
  }
  if (size > maxSize) {
    err = format("%s: %lld tokens, more than the model's vocabulary of %lld",
                 path.c_str(), (long long)size, (long long)maxSize);
    return false;
  }
  for (int64_t i = 0; i < size; ++i) {
    const std::string &token = lines[size_t(i + 1)];
    int64_t lineNo = i + 2;
    if (i < kSpecialCount && token != kSpecialNames[i]) {
      err = format("%s:%lld: expected special token %s", path.c_str(),
                   (long long)lineNo, kSpecialNames[i]);
      return false;
    }
    if (token.empty()) {
      err = format("%s:%lld: empty token", path.c_str(), (long long)lineNo);
      return false;
    }
    if (!vocab.ids.emplace(token, int32_t(i)).second) {
      err = format("%s:%lld: token '%s' repeated", path.c_str(),
                   (long long)lineNo, token.c_str());
      return false;
    }
    vocab.tokens.push_back(token);
  }
  return true;
}

void encode(const Vocab &vocab, const std::string &text, int64_t seqLen,
            int32_t *ids, float *mask) {
  std::vector<std::string> words;
  splitWords(text, words);
  int64_t n = 0;
  if (n < seqLen)
    ids[n++] = kClsId;
  for (size_t i = 0; i < words.size() && n < seqLen; ++i)
    ids[n++] = vocab.id(words[i]);
  for (int64_t s = 0; s < seqLen; ++s)
    mask[s] = s < n ? 1.0f : 0.0f;
  for (; n < seqLen; ++n)
    ids[n] = kPadId;
}

} // namespace tfc::rt
