//===- Tokenizer.h - Byte and word tokenizers -------------------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Language models read bytes: token id = byte value (vocabulary 256).
///
/// Classifiers read words. Splitting: ASCII letters are lowercased; a word is
/// a maximal run of ASCII letters, digits and bytes >= 0x80 (so UTF-8 letters
/// stay inside words); every other printable ASCII character (punctuation) is
/// a token of its own; spaces and control characters separate tokens.
///
/// The vocabulary is built from the training texts: ids 0, 1, 2 are the
/// specials PAD, UNK, CLS; then every word seen at least min_freq times,
/// most frequent first, ties in byte-wise lexicographic order, cut so that
/// the whole vocabulary (specials included) has at most the spec's size.
///
/// Saved as text, beside the weights (`<weights>.vocab`):
///   tfc-vocab 1 <size>
///   <token of id 0>
///   <token of id 1>
///   ...
/// with "<pad>", "<unk>", "<cls>" for the specials (they cannot clash with
/// words: '<' and '>' are punctuation tokens).
///
/// Encoding a text for a sequence of S: CLS, then the ids of its tokens
/// (UNK for unknown words), cut to S, then PAD up to S; the mask is 1 for
/// CLS and real tokens and 0 for padding.
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_TOKENIZER_H
#define TFC_RUNTIME_TOKENIZER_H

#include "runtime/Data.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tfc::rt {

constexpr int32_t kPadId = 0;
constexpr int32_t kUnkId = 1;
constexpr int32_t kClsId = 2;
constexpr int32_t kSpecialCount = 3;

/// Appends the word tokens of `text` to `out`.
void splitWords(const std::string &text, std::vector<std::string> &out);

struct Vocab {
  std::vector<std::string> tokens; ///< By id.
  std::unordered_map<std::string, int32_t> ids;

  int64_t size() const { return int64_t(tokens.size()); }
  /// The id of `token`, or kUnkId.
  int32_t id(const std::string &token) const;
};

/// Builds the vocabulary of at most `maxSize` ids (specials included) from
/// the texts of `examples`.
Vocab buildVocab(const std::vector<Example> &examples, int64_t maxSize,
                 int64_t minFreq);

bool saveVocab(const std::string &path, const Vocab &vocab, std::string &err);

/// Loads a vocabulary file; it must hold at most `maxSize` tokens.
bool loadVocab(const std::string &path, int64_t maxSize, Vocab &vocab,
               std::string &err);

/// Encodes `text` into ids [seqLen] and mask [seqLen].
void encode(const Vocab &vocab, const std::string &text, int64_t seqLen,
            int32_t *ids, float *mask);

} // namespace tfc::rt

#endif // TFC_RUNTIME_TOKENIZER_H
