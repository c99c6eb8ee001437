//===- SpecParserTest.cpp - Unit tests for the TOML spec parser -----------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// One case per kind of rejected input, in a table per part of the schema
/// that RejectedSpec runs (each checks the exact line, column and key of the
/// diagnostic), plus tests that every spec in specs/ parses and that
/// layouts, defaults and per-layer settings come out as documented in
/// docs/spec.md.
///
//===----------------------------------------------------------------------===//

#include "frontend/Spec.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#ifndef TFC_SOURCE_DIR
#error "TFC_SOURCE_DIR must name the source tree (set by CMake)"
#endif

using namespace tfc::spec;

namespace {

/// A parse result and its diagnostic.
struct Outcome {
  std::optional<Spec> spec;
  Diagnostic diag;
};

Outcome parse(const std::string &text) {
  Outcome out;
  out.spec = parseSpecString(text, "t.toml", out.diag);
  return out;
}

/// The [model] section of a small valid LM spec: lines 1 to 5.
const char *const kModel = "[model]\n"
                           "d_model = 64\n"
                           "heads = 4\n"
                           "d_ff = 128\n"
                           "layers = 2\n";

/// The [data] section of a small valid LM spec: two lines.
const char *const kData = "[data]\n"
                          "train = \"x.txt\"\n";

/// Checks that `text` is rejected at `line`:`column` for `key`, with a
/// message containing `fragment`, rendered as one line.
void expectSpecError(const std::string &text, uint32_t line, uint32_t column,
                     const std::string &key, const std::string &fragment) {
  Outcome o = parse(text);
  ASSERT_FALSE(o.spec.has_value()) << "accepted:\n" << text;
  std::string rendered = o.diag.str();
  EXPECT_EQ(o.diag.loc.line, line) << rendered;
  EXPECT_EQ(o.diag.loc.column, column) << rendered;
  EXPECT_EQ(o.diag.key, key) << rendered;
  EXPECT_NE(o.diag.message.find(fragment), std::string::npos) << rendered;
  EXPECT_EQ(rendered.find('\n'), std::string::npos) << rendered;
  EXPECT_EQ(rendered.rfind("t.toml:" + std::to_string(line) + ":" +
                               std::to_string(column) + ": error: " + key +
                               ": ",
                           0),
            0u)
      << rendered;
}

/// expectSpecError, reporting failures at the line of the call.
#define EXPECT_SPEC_ERROR(...)                                                 \
  do {                                                                         \
    SCOPED_TRACE("spec error check");                                          \
    expectSpecError(__VA_ARGS__);                                              \
  } while (false)

/// A spec that the parser must reject at `line`:`column` for `key`, with a
/// message containing `fragment` (see expectSpecError); `name` names the
/// case in the test's name.
struct Rejection {
  const char *name;
  std::string text;
  uint32_t line;
  uint32_t column;
  std::string key;
  std::string fragment;
};

/// A spec that the parser must accept.
struct Acceptance {
  const char *name;
  std::string text;
};

/// Shows a case by its name and text when a check fails.
void PrintTo(const Rejection &rejection, std::ostream *os) {
  *os << rejection.name << ":\n" << rejection.text;
}
void PrintTo(const Acceptance &acceptance, std::ostream *os) {
  *os << acceptance.name << ":\n" << acceptance.text;
}

/// The name of a parameterised case in the test's name.
template <typename Case>
std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  return info.param.name;
}

/// The specs the parser rejects, one table per part of this file.
class RejectedSpec : public ::testing::TestWithParam<Rejection> {};

TEST_P(RejectedSpec, IsReportedAtTheKey) {
  const Rejection &rejection = GetParam();
  expectSpecError(rejection.text, rejection.line, rejection.column,
                  rejection.key, rejection.fragment);
}

/// The specs the parser accepts near the limits that it checks.
class AcceptedSpec : public ::testing::TestWithParam<Acceptance> {};

TEST_P(AcceptedSpec, Parses) {
  Outcome o = parse(GetParam().text);
  EXPECT_TRUE(o.spec) << o.diag.str();
}

std::string specPath(const char *name) {
  return std::string(TFC_SOURCE_DIR) + "/specs/" + name;
}

} // namespace

//===----------------------------------------------------------------------===//
// The baseline and the rendering of diagnostics
//===----------------------------------------------------------------------===//

TEST(SpecParser, MinimalSpecParses) {
  Outcome o = parse(std::string(kModel) + kData);
  ASSERT_TRUE(o.spec) << o.diag.str();
  const Spec &s = *o.spec;
  EXPECT_EQ(s.model.name, "t");
  EXPECT_EQ(s.model.task, Task::LanguageModel);
  EXPECT_EQ(s.model.vocab, 256);
  EXPECT_EQ(s.totalLayers(), 2);
  EXPECT_TRUE(s.attention.causal);
  EXPECT_EQ(s.data.format, DataFormat::Bytes);
  EXPECT_EQ(s.training.seqLen, 256);
  EXPECT_EQ(s.layerFactors(), (std::vector<int64_t>{1, 1}));
}

TEST(SpecParser, DiagnosticRendering) {
  Diagnostic d;
  d.path = "specs/x.toml";
  d.loc = Loc{3, 7};
  d.key = "model.heads";
  d.message = "expected a positive integer, got 0";
  EXPECT_EQ(d.str(),
            "specs/x.toml:3:7: error: model.heads: expected a positive "
            "integer, got 0");
}

TEST(SpecParser, MissingFileIsReported) {
  Diagnostic d;
  EXPECT_FALSE(parseSpecFile("/nonexistent/spec.toml", d));
  EXPECT_EQ(d.key, "file");
  EXPECT_NE(d.str().find("/nonexistent/spec.toml"), std::string::npos);
  EXPECT_NE(d.message.find("cannot open"), std::string::npos);
}

TEST(SpecParser, RefusesASpecThatIsNotARegularFile) {
  // A FIFO would block the compiler until something writes it.
  std::string dir =
      ::testing::TempDir() + "/spec-fifo-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::string fifo = dir + "/spec.toml";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Diagnostic d;
  EXPECT_FALSE(parseSpecFile(fifo, d));
  EXPECT_EQ(d.key, "file");
  EXPECT_NE(d.message.find("it is a FIFO, not a regular file"),
            std::string::npos)
      << d.str();
  Diagnostic device;
  EXPECT_FALSE(parseSpecFile("/dev/zero", device));
  EXPECT_NE(device.message.find("a character device"), std::string::npos)
      << device.str();
  std::filesystem::remove_all(dir);
}

/// Diagnostics that must stay on one line.
const Rejection kRenderingRejections[] = {
    // A quoted key with a newline escape must not break the one-line rule.
    {"ControlCharactersStayOnOneLine",
     std::string(kModel) + "\"a\\nb\" = 1\n" + kData, 6, 1, "model.\"a\\nb\"",
     "unknown key"},
};
INSTANTIATE_TEST_SUITE_P(Rendering, RejectedSpec,
                         ::testing::ValuesIn(kRenderingRejections),
                         caseName<Rejection>);

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

TEST(SpecParser, AcceptsLineEndingBackslashAndQuotesInStrings) {
  Outcome o = parse(std::string(kModel) + "name = \"\"\"ab\\\n   cd\"\"\"\n" +
                    "[data]\ntrain = '''a''b.txt'''\nval = \"v\\\"\\u00e9\"\n"
                    "test = \"\"\"t\"\"\"\"\n");
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(o.spec->model.name, "abcd");
  EXPECT_EQ(o.spec->data.train, "a''b.txt");
  EXPECT_EQ(o.spec->data.val, "v\"\xC3\xA9");
  EXPECT_EQ(o.spec->data.test, "t\"");
}

TEST(SpecParser, AcceptsStringsInArraysInlineTablesAndDottedKeys) {
  // Non-ASCII text in every place TOML puts a string: the lexical pre-check
  // must follow keys, values, arrays and inline tables.
  Outcome o = parse("\"\xC3\xA9\" = 1\n[\"\xC3\xA8\".'\xC3\xA9']\na = "
                    "[\"\xC3\xA9\", # \xC3\xA9\n"
                    "  '\xC3\xA9', [\"\xC3\xA9\"],\n  { \"\xC3\xA9\" = "
                    "\"\xC3\xA9\", b = '\xC3\xA9' }, "
                    "\"\"\"\xC3\xA9\"\"\"]\n");
  ASSERT_FALSE(o.spec);
  // Only the schema rejects it: the unknown top-level key, not the syntax.
  EXPECT_EQ(o.diag.key, "\"\xC3\xA9\"") << o.diag.str();
  EXPECT_EQ(o.diag.loc.line, 1u) << o.diag.str();
}

TEST(SpecParser, AcceptsNonAsciiInCommentsAndStrings) {
  Outcome o = parse("# \xC3\xA9t\xC3\xA9\n" + std::string(kModel) + kData +
                    "val = \"v\xC3\xA9.txt\" # \xC2\xA7\n"
                    "test = 't\xC3\xA9.txt'\n");
  EXPECT_TRUE(o.spec) << o.diag.str();
}

/// TOML syntax errors and the text that the lexical pre-check refuses.
const Rejection kSyntaxRejections[] = {
    {"TomlSyntaxError", "[model]\nd_model = 64\nheads = = 4\n", 3, 9, "syntax",
     ""},
    {"DuplicateKey", std::string(kModel) + "heads = 8\n" + kData, 6, 9,
     "syntax", "heads"},
    {"NonAsciiOutsideStrings",
     std::string(kModel) + "dropout = 0.1\xC2\xA7\n" + kData, 6, 14, "syntax",
     "non-ASCII"},
    {"InvalidUtf8", std::string(kModel) + "name = \"a\xFF\"\n" + kData, 6, 10,
     "syntax", "UTF-8"},
    // toml++ would read `1"` as part of a number and classify the next
    // character; a quote there does not open a string.
    {"NonAsciiAfterQuoteInNumber",
     std::string(kModel) + "dropout = 1\"\xC2\xA7\"\n" + kData, 6, 13, "syntax",
     "non-ASCII"},
    // A quote after a value's first character does not open a string either.
    {"NonAsciiAfterQuoteInValue",
     std::string(kModel) + "dropout = 2=\"\xC2\xA7\"\n" + kData, 6, 14,
     "syntax", "non-ASCII"},
    // Nor does one inside a malformed value, up to its terminator.
    {"NonAsciiInsideMalformedValue",
     std::string(kModel) + "dropout = 6e{'\xD2\x97'\n" + kData, 6, 15, "syntax",
     "non-ASCII"},
    // In a value, '.' belongs to a number, not to a dotted key.
    {"NonAsciiAfterDotInValue",
     std::string(kModel) + "dropout = -.'\xC2\xA7'\n" + kData, 6, 14, "syntax",
     "non-ASCII"},
    {"ControlCharacters",
     std::string(kModel) + std::string("dropout = 0.\0\"\xC2\xA7\"\n", 18) +
         kData,
     6, 13, "syntax", "control character U+0000"},
    {"NonAsciiEscapeInMultiLineString",
     std::string(kModel) + "name = \"\"\"a\\\xC2\xA7\"\"\"\n" + kData, 6, 13,
     "syntax", "invalid escape sequence"},
    {"NonAsciiEscapeInString",
     std::string(kModel) + "name = \"a\\\xC2\xA7\"\n" + kData, 6, 11, "syntax",
     "invalid escape sequence"},
    {"NonAsciiAfterLineEndingBackslash",
     std::string(kModel) + "name = \"\"\"a\\\n  \xC2\xA7\"\"\"\n" + kData, 7, 3,
     "syntax", "line-ending backslash"},
};
INSTANTIATE_TEST_SUITE_P(Syntax, RejectedSpec,
                         ::testing::ValuesIn(kSyntaxRejections),
                         caseName<Rejection>);

//===----------------------------------------------------------------------===//
// Unknown sections and keys, types
//===----------------------------------------------------------------------===//

TEST(SpecParser, AcceptsIntegerWhereFloatExpected) {
  Outcome o = parse(std::string(kModel) + "dropout = 0\n" + kData +
                    "[training]\nlr = 1\nclip = 5\n");
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(o.spec->model.dropout, 0.0);
  EXPECT_EQ(o.spec->training.lr, 1.0);
  EXPECT_EQ(o.spec->training.clip, 5.0);
}

TEST(SpecParser, ReadsPrecision) {
  Outcome f32 = parse(std::string(kModel) + kData + "[training]\nlr = 1\n");
  ASSERT_TRUE(f32.spec) << f32.diag.str();
  EXPECT_EQ(f32.spec->training.precision, Precision::F32);
  Outcome bf16 =
      parse(std::string(kModel) + kData + "[training]\nprecision = \"bf16\"\n");
  ASSERT_TRUE(bf16.spec) << bf16.diag.str();
  EXPECT_EQ(bf16.spec->training.precision, Precision::BF16);
}

/// Unknown sections and keys, and values of the wrong type.
const Rejection kUnknownSectionsAndKeysTypesRejections[] = {
    {"UnknownSection", std::string(kModel) + kData + "[optim]\nlr = 1\n", 8, 2,
     "optim", "unknown section"},
    {"SuggestsMisspeltSection", std::string(kModel) + kData + "[trainng]\n", 8,
     2, "trainng", "did you mean [training]"},
    {"SuggestsSwappedLetters", "[modle]\n" + std::string(kModel) + kData, 1, 2,
     "modle", "did you mean [model]"},
    {"SuggestsNoFarName", std::string(kModel) + kData + "[training]\nx = 1\n",
     9, 1, "training.x", "valid keys in [training] are"},
    {"UnknownTopLevelKey", "seed = 3\n" + std::string(kModel) + kData, 1, 1,
     "seed", "keys belong in a section"},
    {"UnknownKey", std::string(kModel) + "colour = \"blue\"\n" + kData, 6, 1,
     "model.colour", "valid keys in [model] are"},
    {"SuggestsMisspeltKey", std::string(kModel) + "drop_out = 0.1\n" + kData, 6,
     1, "model.drop_out", "did you mean \"dropout\""},
    {"UnknownKeyInSubtable",
     std::string(kModel) + kData + "[data.extra]\nx = 1\n", 8, 7, "data.extra",
     "unknown key"},
    {"SectionThatIsNotATable", "ffn = \"gelu\"\n" + std::string(kModel) + kData,
     1, 7, "ffn", "expected a table [ffn], got a string"},
    {"WrongType",
     "[model]\nd_model = \"64\"\nheads = 4\nd_ff = 128\nlayers = 2\n" +
         std::string(kData),
     2, 11, "model.d_model", "got a string"},
    {"FloatWhereIntegerExpected",
     "[model]\nd_model = 64\nheads = 4\nd_ff = 128\nlayers = 2.0\n" +
         std::string(kData),
     5, 10, "model.layers", "got the floating-point number 2.0"},
    {"UnknownPrecision",
     std::string(kModel) + kData + "[training]\nprecision = \"fp16\"\n", 9, 13,
     "training.precision", "expected one of \"f32\" or \"bf16\", got \"fp16\""},
    {"PrecisionThatIsNotAString",
     std::string(kModel) + kData + "[training]\nprecision = 16\n", 9, 13,
     "training.precision", "got an integer"},
    {"StringWhereBooleanExpected",
     std::string(kModel) + "tie_embeddings = \"true\"\n" + kData, 6, 18,
     "model.tie_embeddings",
     "expected a boolean (true or false), got a string"},
    {"UnknownEnumValue",
     std::string(kModel) + "[ffn]\nactivation = \"swish\"\n" + kData, 7, 14,
     "ffn.activation",
     "expected one of \"relu\", \"gelu\" or \"squared_relu\", "
     "got \"swish\""},
    {"ModelNameWithASpace",
     std::string(kModel) + "name = \"my model\"\n" + kData, 6, 8, "model.name",
     "[A-Za-z0-9_.-]"},
    {"ModelNameStartingWithDot",
     std::string(kModel) + "name = \"..\"\n" + kData, 6, 8, "model.name",
     "not starting with"},
};
INSTANTIATE_TEST_SUITE_P(
    UnknownSectionsAndKeysTypes, RejectedSpec,
    ::testing::ValuesIn(kUnknownSectionsAndKeysTypesRejections),
    caseName<Rejection>);

//===----------------------------------------------------------------------===//
// Required keys and sections
//===----------------------------------------------------------------------===//

/// Missing required keys and sections.
const Rejection kRequiredKeysAndSectionsRejections[] = {
    {"MissingRequiredKeyAtSectionHeader",
     "\n  [model]\nheads = 4\nd_ff = 128\nlayers = 2\n" + std::string(kData), 2,
     3, "model.d_model", "missing required key"},
    {"MissingModelSection", std::string(kData), 1, 1, "model",
     "missing required section [model]"},
    {"MissingDataSection", std::string(kModel), 1, 1, "data",
     "missing required section [data]"},
    {"MissingTrainPath", std::string(kModel) + "[data]\nformat = \"bytes\"\n",
     6, 1, "data.train", "missing required key"},
    {"ClassifierWithoutVocab",
     "[model]\ntask = \"classify\"\nd_model = 64\nheads = "
     "4\nd_ff = 128\nlayers = 2\n[data]\ntrain = \"a.jsonl\"\n",
     1, 1, "model.vocab", "missing required key"},
};
INSTANTIATE_TEST_SUITE_P(
    RequiredKeysAndSections, RejectedSpec,
    ::testing::ValuesIn(kRequiredKeysAndSectionsRejections),
    caseName<Rejection>);

//===----------------------------------------------------------------------===//
// Ranges
//===----------------------------------------------------------------------===//

/// Values outside their ranges.
const Rejection kRangesRejections[] = {
    {"NonPositiveSize",
     "[model]\nd_model = 64\nheads = 4\nd_ff = 0\nlayers = 2\n" +
         std::string(kData),
     4, 8, "model.d_ff", "expected an integer in [1, 1048576], got 0"},
    {"NegativeBatch", std::string(kModel) + kData + "[training]\nbatch = -8\n",
     9, 9, "training.batch", "got -8"},
    {"DropoutOutsideUnitInterval",
     std::string(kModel) + "dropout = 1.0\n" + kData, 6, 11, "model.dropout",
     "expected a number in [0, 0.99999994] (larger values "
     "round to 1 in float32), got 1"},
    {"NonPositiveLearningRate",
     std::string(kModel) + kData + "[training]\nlr = 0.0\n", 9, 6,
     "training.lr", "expected a number in [1e-09, 1e+38]"},
    {"InfiniteNumber", std::string(kModel) + kData + "[training]\nlr = inf\n",
     9, 6, "training.lr", "got inf"},
    {"NotANumber", std::string(kModel) + kData + "[training]\neps = nan\n", 9,
     7, "training.eps", "got nan"},
    {"BetaOutOfRange", std::string(kModel) + kData + "[training]\nbeta2 = 1\n",
     9, 9, "training.beta2", "[0, 0.99999994]"},
    {"NegativeSeed", std::string(kModel) + kData + "[training]\nseed = -1\n", 9,
     8, "training.seed", "non-negative integer"},
    {"WarmupBeyondSteps",
     std::string(kModel) + kData + "[training]\nsteps = 100\nwarmup = 200\n",
     10, 10, "training.warmup",
     "expected at most training.steps (100), got 200"},
    {"InverseSqrtWithoutWarmup",
     std::string(kModel) + kData + "[training]\nschedule = \"inverse_sqrt\"\n",
     9, 12, "training.schedule", "training.warmup >= 1"},
};
INSTANTIATE_TEST_SUITE_P(Ranges, RejectedSpec,
                         ::testing::ValuesIn(kRangesRejections),
                         caseName<Rejection>);

//===----------------------------------------------------------------------===//
// Model consistency
//===----------------------------------------------------------------------===//

/// Keys of [model] and [data] that contradict each other.
const Rejection kModelConsistencyRejections[] = {
    {"HeadsNotDividingDModel",
     "[model]\nd_model = 64\nheads = 6\nd_ff = 128\nlayers = 2\n" +
         std::string(kData),
     3, 9, "model.heads", "expected a divisor of model.d_model (64), got 6"},
    {"RotaryWithOddHeadSize",
     "[model]\nd_model = 12\nheads = 4\nd_ff = 128\nlayers = "
     "2\npositions = \"rotary\"\n" +
         std::string(kData),
     6, 13, "model.positions", "even head size"},
    {"ClassifyWithFewerThanTwoClasses",
     "[model]\ntask = \"classify\"\nvocab = 100\nd_model = "
     "64\nheads = 4\nd_ff = 128\nlayers = 2\nclasses = 1\n"
     "[data]\ntrain = \"a.jsonl\"\n",
     8, 11, "model.classes", "got 1"},
    {"BceWithMoreThanTwoClasses",
     "[model]\ntask = \"classify\"\nvocab = 100\nd_model = "
     "64\nheads = 4\nd_ff = 128\nlayers = 2\nclasses = 5\n"
     "loss = \"bce\"\n[data]\ntrain = \"a.jsonl\"\n",
     9, 8, "model.loss", "model.classes = 2, got 5"},
    {"ClassifierKeysInLanguageModel",
     std::string(kModel) + "classes = 3\n" + kData, 6, 11, "model.classes",
     "only valid when model.task = \"classify\""},
    {"VocabTooSmallForBytes", std::string(kModel) + "vocab = 100\n" + kData, 6,
     9, "model.vocab", "at least 256"},
    // PAD, UNK and CLS come first in a classify model's word vocabulary.
    {"ClassifyVocabWithoutRoomForAWord",
     "[model]\ntask = \"classify\"\nvocab = 3\nd_model = "
     "64\nheads = 4\nd_ff = 128\nlayers = 2\n"
     "[data]\ntrain = \"a.jsonl\"\n",
     3, 9, "model.vocab", "at least 4 for a classify model"},
    {"DataFormatNotMatchingTask",
     std::string(kModel) + "[data]\nformat = \"jsonl\"\ntrain = \"a.jsonl\"\n",
     7, 10, "data.format", "expected \"bytes\""},
    {"ValWithoutTestForBytes",
     std::string(kModel) + "[data]\ntrain = \"a\"\nval = \"b\"\n", 6, 1,
     "data.test", "give data.test too"},
    {"FractionsAboveOne",
     std::string(kModel) + kData + "train_fraction = 0.9\nval_fraction = 0.2\n",
     9, 16, "data.val_fraction", "<= 1"},
    {"EmptyPath", std::string(kModel) + "[data]\ntrain = \"\"\n", 7, 9,
     "data.train", "empty string"},
    // The executable's manifest records each path on a line of its own.
    {"LineBreakInPath",
     std::string(kModel) + "[data]\ntrain = \"a.txt\\nlr 1\"\n", 7, 9,
     "data.train", "control character 0x0a"},
    {"TabInPath", std::string(kModel) + "[data]\ntrain = \"a\\tb.txt\"\n", 7, 9,
     "data.train", "control character 0x09"},
};
INSTANTIATE_TEST_SUITE_P(ModelConsistency, RejectedSpec,
                         ::testing::ValuesIn(kModelConsistencyRejections),
                         caseName<Rejection>);

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// A longformer LM of 3 layers at seq_len 64; [attention] header on line 6.
std::string longformer(const std::string &attentionKeys,
                       const std::string &training = "seq_len = 64\n") {
  return "[model]\nd_model = 64\nheads = 4\nd_ff = 128\nlayers = 3\n"
         "[attention]\nkind = \"longformer\"\n" +
         attentionKeys + kData + "[training]\n" + training;
}

TEST(SpecParser, LongformerScalarWindowExpandsPerLayer) {
  Outcome o = parse(longformer("window = 16\n"));
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(o.spec->attention.window, (std::vector<int64_t>{16, 16, 16}));
  EXPECT_EQ(o.spec->attention.dilation, (std::vector<int64_t>{1, 1, 1}));
  EXPECT_TRUE(o.spec->attention.globalTokens.empty());
}

TEST(SpecParser, LongformerPerLayerWindowAndDilation) {
  Outcome o = parse(longformer("window = [8, 16, 32]\ndilation = [1, 2, 4]\n"));
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(o.spec->attention.window, (std::vector<int64_t>{8, 16, 32}));
  EXPECT_EQ(o.spec->attention.dilation, (std::vector<int64_t>{1, 2, 4}));
}

TEST(SpecParser, ClassifierLongformerDefaultsToClsGlobalToken) {
  Outcome o = parse("[model]\ntask = \"classify\"\nvocab = 100\nd_model = "
                    "64\nheads = 4\nd_ff = 128\nlayers = 2\n[attention]\n"
                    "kind = \"longformer\"\nwindow = 8\n[data]\ntrain = "
                    "\"a.jsonl\"\n");
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_FALSE(o.spec->attention.causal);
  EXPECT_EQ(o.spec->attention.globalTokens, (std::vector<int64_t>{0}));
  EXPECT_EQ(o.spec->data.format, DataFormat::Jsonl);
}

TEST(SpecParser, PrimerDConvParses) {
  Outcome o = parse(std::string(kModel) +
                    "[attention]\ndconv = true\ndconv_kernel = 3\n[ffn]\n"
                    "activation = \"squared_relu\"\n" +
                    kData);
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_TRUE(o.spec->attention.dconv);
  EXPECT_EQ(o.spec->attention.dconvKernel, 3);
  EXPECT_EQ(o.spec->ffn.activation, Activation::SquaredRelu);
}

/// Attention keys out of range, missing, or given for another kind.
const Rejection kAttentionRejections[] = {
    {"LongformerWithoutWindow", longformer(""), 6, 1, "attention.window",
     "missing required key"},
    {"WindowLargerThanSeqLen", longformer("window = 128\n"), 8, 10,
     "attention.window",
     "no larger than the sequence length 64 (training.seq_len)"
     ", got 128"},
    {"WindowArrayElementLargerThanSeqLen", longformer("window = [8, 65, 8]\n"),
     8, 14, "attention.window[1]", "got 65"},
    {"WindowArrayOfWrongLength", longformer("window = [8, 8]\n"), 8, 10,
     "attention.window", "expected one entry per layer (3), got 2"},
    {"DilationArrayOfWrongLength",
     longformer("window = 8\ndilation = [1, 2, 2, 4]\n"), 9, 12,
     "attention.dilation", "expected one entry per layer (3), got 4"},
    {"NonIntegerWindowElement", longformer("window = [8, 8.5, 8]\n"), 8, 14,
     "attention.window[1]", "floating-point number 8.5"},
    {"LongformerKeysForOtherKinds",
     std::string(kModel) + "[attention]\nwindow = 16\n" + kData, 7, 10,
     "attention.window", "only valid when attention.kind = \"longformer\""},
    {"GlobalTokenBeyondSeqLen",
     "[model]\ntask = \"classify\"\nvocab = 100\nd_model = "
     "64\nheads = 4\nd_ff = 128\nlayers = 2\n[attention]\n"
     "kind = \"longformer\"\nwindow = 8\nglobal_tokens = [0, "
     "64]\n[data]\ntrain = \"a.jsonl\"\n[training]\nseq_len = "
     "64\n",
     11, 21, "attention.global_tokens[1]",
     "below training.seq_len (64), got 64"},
    {"GlobalTokensInCausalAttention",
     longformer("window = 8\nglobal_tokens = [0]\n"), 9, 17,
     "attention.global_tokens", "attention.causal = true"},
    {"NonPositivePerformerFeatures",
     std::string(kModel) + "[attention]\nkind = \"performer\"\nfeatures = 0\n" +
         kData,
     8, 12, "attention.features", "got 0"},
    {"PerformerKeysForOtherKinds",
     std::string(kModel) + "[attention]\nfeatures = 64\n" + kData, 7, 12,
     "attention.features", "only valid when attention.kind = \"performer\""},
    {"NonCausalLanguageModel",
     std::string(kModel) + "[attention]\ncausal = false\n" + kData, 7, 10,
     "attention.causal", "expected true"},
    {"DConvWithoutCausalAttention",
     "[model]\ntask = \"classify\"\nvocab = 100\nd_model = "
     "64\nheads = 4\nd_ff = 128\nlayers = 2\n[attention]\n"
     "dconv = true\n[data]\ntrain = \"a.jsonl\"\n",
     9, 9, "attention.dconv", "attention.causal = true"},
    {"DConvKernelWithoutDConv",
     std::string(kModel) + "[attention]\ndconv_kernel = 3\n" + kData, 7, 16,
     "attention.dconv_kernel", "only valid when attention.dconv = true"},
};
INSTANTIATE_TEST_SUITE_P(Attention, RejectedSpec,
                         ::testing::ValuesIn(kAttentionRejections),
                         caseName<Rejection>);

//===----------------------------------------------------------------------===//
// Hourglass
//===----------------------------------------------------------------------===//

/// An hourglass LM whose layout value starts on line 6, column 10 (after
/// `layout = ` and the opening quote, items start at column 11).
std::string hourglass(const std::string &layoutLine,
                      const std::string &training = "") {
  return "[model]\nd_model = 64\nheads = 4\nd_ff = 128\n[hourglass]\n" +
         layoutLine + "\n" + kData + "[training]\nseq_len = 96\n" + training;
}

TEST(SpecParser, LayoutParsesIntoLevels) {
  Outcome o = parse(hourglass("layout = \"2@1 4@3 2@1\""));
  ASSERT_TRUE(o.spec) << o.diag.str();
  const Hourglass &h = o.spec->hourglass;
  EXPECT_TRUE(h.enabled);
  ASSERT_EQ(h.levels.size(), 3u);
  EXPECT_EQ(h.levels[0].layers, 2);
  EXPECT_EQ(h.levels[0].factor, 1);
  EXPECT_EQ(h.levels[1].layers, 4);
  EXPECT_EQ(h.levels[1].factor, 3);
  EXPECT_EQ(h.levels[2].layers, 2);
  EXPECT_EQ(h.levels[2].factor, 1);
  EXPECT_EQ(o.spec->totalLayers(), 8);
  EXPECT_EQ(o.spec->model.layers, 8);
  EXPECT_EQ(o.spec->layerFactors(),
            (std::vector<int64_t>{1, 1, 3, 3, 3, 3, 1, 1}));
  EXPECT_EQ(layoutString(h.levels), "2@1 4@3 2@1");
}

TEST(SpecParser, NestedLayoutParses) {
  Outcome o = parse(hourglass("layout = \"1@1  2@2\t3@6 2@2 1@1\""));
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(layoutString(o.spec->hourglass.levels), "1@1 2@2 3@6 2@2 1@1");
  EXPECT_EQ(o.spec->totalLayers(), 9);
}

TEST(SpecParser, ShorteningFactorsExpandToAbsoluteLayout) {
  Outcome o = parse("[model]\nd_model = 64\nheads = 4\nd_ff = 128\n"
                    "[hourglass]\nshortening_factors = [2, 2]\n" +
                    std::string(kData));
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(layoutString(o.spec->hourglass.levels), "1@1 1@2 1@4 1@2 1@1");
  EXPECT_EQ(o.spec->hourglass.shortening, ShortenKind::Avg);
  EXPECT_EQ(o.spec->hourglass.upsampling, UpsampleKind::Naive);

  o = parse("[model]\nd_model = 64\nheads = 4\nd_ff = 128\n[hourglass]\n"
            "shortening_factors = [2, 3]\nlayers_per_level = 2\n"
            "shortening = \"linear\"\nupsampling = \"attention\"\n" +
            std::string(kData) + "[training]\nseq_len = 96\n");
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(layoutString(o.spec->hourglass.levels), "2@1 2@2 2@6 2@2 2@1");
  EXPECT_EQ(o.spec->hourglass.shortening, ShortenKind::Linear);
  EXPECT_EQ(o.spec->hourglass.upsampling, UpsampleKind::Attention);
}

TEST(SpecParser, HourglassLongformerChecksWindowPerLevel) {
  // Layers 2..5 run at 96 / 3 = 32 positions: a window of 48 fits the
  // full-resolution layers only.
  Outcome o = parse(hourglass("layout = \"2@1 4@3 2@1\"") +
                    "[attention]\nkind = \"longformer\"\n"
                    "window = [48, 48, 32, 32, 32, 32, 48, 48]\n");
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_SPEC_ERROR(hourglass("layout = \"2@1 4@3 2@1\"") +
                        "[attention]\nkind = \"longformer\"\nwindow = 48\n",
                    13, 10, "attention.window",
                    "sequence length 32 of layer 2 (training.seq_len 96 / "
                    "hourglass factor 3), got 48");
}

/// Malformed hourglass layouts and shortening factors.
const Rejection kHourglassRejections[] = {
    {"LayoutThatIsNotAPalindrome", hourglass("layout = \"2@1 4@3 1@1\""), 6, 19,
     "hourglass.layout",
     "expected a palindrome: item \"1@1\" must mirror \"2@1\""},
    {"LayoutWithEvenItemCount", hourglass("layout = \"2@1 2@1\""), 6, 10,
     "hourglass.layout", "odd number of items"},
    {"LayoutItemWithLettersInFactor", hourglass("layout = \"2@1 4@x 2@1\""), 6,
     15, "hourglass.layout", "got \"4@x\""},
    {"LayoutItemWithoutAt", hourglass("layout = \"2@1 43 2@1\""), 6, 15,
     "hourglass.layout", "layers@factor"},
    {"LayoutItemWithoutLayers", hourglass("layout = \"2@1 @3 2@1\""), 6, 15,
     "hourglass.layout", "layers@factor"},
    {"LayoutItemWithNegativeLayers", hourglass("layout = \"2@1 -4@3 2@1\""), 6,
     15, "hourglass.layout", "layers@factor"},
    {"LayoutItemWithFactorZero", hourglass("layout = \"2@1 4@0 2@1\""), 6, 15,
     "hourglass.layout", "shortening factor"},
    // Trax's rule: each factor must be a multiple of the one before it.
    {"LayoutFactorsThatDoNotDivide", hourglass("layout = \"1@2 2@3 1@2\""), 6,
     15, "hourglass.layout",
     "factor of \"2@3\" to be a multiple of the factor of the "
     "level before it (\"1@2\")"},
    {"NestedLayoutFactorsThatDoNotDivide",
     hourglass("layout = \"1@1 1@2 2@3 1@2 1@1\""), 6, 19, "hourglass.layout",
     "multiple"},
    {"LayoutWhoseFirstFactorIsNotOne", hourglass("layout = \"1@2 2@4 1@2\""), 6,
     11, "hourglass.layout", "first level to run at factor 1"},
    {"LayoutOfOneLevel", hourglass("layout = \"4@1\""), 6, 10,
     "hourglass.layout", "at least one shortened level"},
    {"LayoutWithoutShortening", hourglass("layout = \"2@1 4@1 2@1\""), 6, 15,
     "hourglass.layout", "larger than the factor"},
    {"EmptyCentreLevel", hourglass("layout = \"2@1 0@3 2@1\""), 6, 15,
     "hourglass.layout", "at least one layer in the centre"},
    {"SeqLenNotDivisibleByLargestFactor",
     "[model]\nd_model = 64\nheads = 4\nd_ff = 128\n"
     "[hourglass]\nlayout = \"2@1 4@3 2@1\"\n" +
         std::string(kData) + "[training]\nseq_len = 100\n",
     10, 11, "training.seq_len",
     "expected a multiple of 3 (the largest hourglass factor), "
     "got 100"},
    {"DefaultSeqLenNotDivisibleAtLayout",
     "[model]\nd_model = 64\nheads = 4\nd_ff = 128\n"
     "[hourglass]\nlayout = \"2@1 4@3 2@1\"\n" +
         std::string(kData),
     6, 10, "hourglass.layout", "256, the default"},
    {"BothLayoutAndShorteningFactors",
     hourglass("layout = \"2@1 4@3 2@1\"\nshortening_factors "
               "= [3]"),
     7, 22, "hourglass.shortening_factors", "not both"},
    {"HourglassWithoutLayout", hourglass("shortening = \"avg\""), 5, 1,
     "hourglass.layout", "missing required key"},
    {"ModelLayersWithHourglass",
     std::string(kModel) + "[hourglass]\nlayout = \"1@1 1@2 1@1\"\n" + kData, 5,
     10, "model.layers", "not allowed together with"},
    {"ShorteningFactorBelowTwo", hourglass("shortening_factors = [2, 1]"), 6,
     26, "hourglass.shortening_factors[1]", "got 1"},
};
INSTANTIATE_TEST_SUITE_P(Hourglass, RejectedSpec,
                         ::testing::ValuesIn(kHourglassRejections),
                         caseName<Rejection>);

//===----------------------------------------------------------------------===//
// The shipped specs
//===----------------------------------------------------------------------===//

TEST(SpecFiles, AllShippedSpecsParse) {
  for (const char *name :
       {"transformer_cls.toml", "performer_cls.toml", "longformer_cls.toml",
        "hourglass_lm.toml", "hourglass_enwik8.toml", "primer_ez_lm.toml",
        "vanilla_lm.toml"}) {
    Diagnostic diag;
    std::optional<Spec> spec = parseSpecFile(specPath(name), diag);
    EXPECT_TRUE(spec.has_value()) << diag.str();
  }
}

TEST(SpecFiles, ClassifiersFollowTheBlog) {
  for (const char *name :
       {"transformer_cls.toml", "performer_cls.toml", "longformer_cls.toml"}) {
    Diagnostic diag;
    std::optional<Spec> spec = parseSpecFile(specPath(name), diag);
    ASSERT_TRUE(spec) << diag.str();
    EXPECT_EQ(spec->model.task, Task::Classify) << name;
    EXPECT_EQ(spec->totalLayers(), 6) << name;
    EXPECT_EQ(spec->model.heads, 8) << name;
    EXPECT_EQ(spec->model.dModel, 128) << name;
    EXPECT_EQ(spec->model.dFF, 512) << name;
    EXPECT_EQ(spec->model.classes, 2) << name;
    EXPECT_DOUBLE_EQ(spec->model.dropout, 0.1) << name;
    EXPECT_DOUBLE_EQ(spec->training.lr, 1e-4) << name;
    EXPECT_EQ(spec->training.batch, 16) << name;
    EXPECT_EQ(spec->training.seqLen, 256) << name;
    EXPECT_EQ(spec->training.patience, 3) << name;
    EXPECT_FALSE(spec->attention.causal) << name;
    EXPECT_EQ(spec->resolvePath(spec->data.train),
              std::string(TFC_SOURCE_DIR) +
                  "/specs/../../shared/data/fine_foods_train.jsonl");
  }
  Diagnostic diag;
  std::optional<Spec> performer =
      parseSpecFile(specPath("performer_cls.toml"), diag);
  ASSERT_TRUE(performer) << diag.str();
  EXPECT_EQ(performer->attention.kind, AttentionKind::Performer);
  EXPECT_EQ(performer->attention.features, 256);
  std::optional<Spec> longformerSpec =
      parseSpecFile(specPath("longformer_cls.toml"), diag);
  ASSERT_TRUE(longformerSpec) << diag.str();
  EXPECT_EQ(longformerSpec->attention.window, std::vector<int64_t>(6, 128));
  EXPECT_EQ(longformerSpec->attention.globalTokens, std::vector<int64_t>{0});
}

TEST(SpecFiles, HourglassSpecsHaveTheirLayouts) {
  Diagnostic diag;
  std::optional<Spec> enwik8 =
      parseSpecFile(specPath("hourglass_enwik8.toml"), diag);
  ASSERT_TRUE(enwik8) << diag.str();
  EXPECT_EQ(layoutString(enwik8->hourglass.levels), "5@1 24@3 5@1");
  EXPECT_EQ(enwik8->totalLayers(), 34);
  std::optional<Spec> labml =
      parseSpecFile(specPath("hourglass_lm.toml"), diag);
  ASSERT_TRUE(labml) << diag.str();
  EXPECT_EQ(layoutString(labml->hourglass.levels), "2@1 2@2 2@4 2@2 2@1");
  EXPECT_EQ(labml->hourglass.shortening, ShortenKind::Avg);
  EXPECT_EQ(labml->hourglass.upsampling, UpsampleKind::Naive);
}

TEST(SpecFiles, PrimerAndVanillaLanguageModels) {
  Diagnostic diag;
  std::optional<Spec> primer =
      parseSpecFile(specPath("primer_ez_lm.toml"), diag);
  ASSERT_TRUE(primer) << diag.str();
  EXPECT_EQ(primer->ffn.activation, Activation::SquaredRelu);
  EXPECT_TRUE(primer->attention.dconv);
  EXPECT_EQ(primer->attention.dconvKernel, 3);
  std::optional<Spec> vanilla =
      parseSpecFile(specPath("vanilla_lm.toml"), diag);
  ASSERT_TRUE(vanilla) << diag.str();
  EXPECT_EQ(vanilla->totalLayers(), 8);
  EXPECT_EQ(vanilla->model.dModel, 256);
  EXPECT_EQ(vanilla->model.dFF, 1024);
  EXPECT_EQ(vanilla->model.vocab, 256);
  EXPECT_EQ(vanilla->data.format, DataFormat::Bytes);
}

//===----------------------------------------------------------------------===//
// Float32 limits
//===----------------------------------------------------------------------===//

// Values inside the mathematical ranges that float32 turns into 0, 1 or a
// step too small to move a weight: each one named by its key.

/// Values that float32 turns into 0, 1 or a step too small.
const Rejection kFloat32LimitsRejections[] = {
    {"EpsilonThatIsZeroInFloat32",
     std::string(kModel) + kData + "[training]\neps = 1e-300\n", 9, 7,
     "training.eps",
     "smaller values are 0 in float32, and a zero epsilon "
     "divides by zero), got 1e-300"},
    {"NormEpsilonThatIsZeroInFloat32",
     std::string(kModel) + "norm_eps = 1e-300\n" + kData, 6, 12,
     "model.norm_eps", "got 1e-300"},
    {"Beta2ThatRoundsToOneInFloat32",
     std::string(kModel) + kData + "[training]\nbeta2 = 0.99999999\n", 9, 9,
     "training.beta2", "larger values round to 1 in float32), got 0.99999999"},
    {"Beta1ThatRoundsToOneInFloat32",
     std::string(kModel) + kData + "[training]\nbeta1 = 0.99999997\n", 9, 9,
     "training.beta1", "got 0.99999997"},
    {"LearningRateTooSmallForFloat32",
     std::string(kModel) + kData + "[training]\nlr = 1e-50\n", 9, 6,
     "training.lr",
     "a smaller step leaves float32 weights of the usual scale "
     "unchanged), got 1e-50"},
    {"LearningRateTooLargeForFloat32",
     std::string(kModel) + kData + "[training]\nlr = 1e39\n", 9, 6,
     "training.lr", "got 1e+39"},
    {"WeightDecayTooLargeForFloat32",
     std::string(kModel) + kData + "[training]\nweight_decay = 1e300\n", 9, 16,
     "training.weight_decay", "larger values overflow float32"},
};
INSTANTIATE_TEST_SUITE_P(Float32Limits, RejectedSpec,
                         ::testing::ValuesIn(kFloat32LimitsRejections),
                         caseName<Rejection>);

/// Values just inside the float32 limits above.
const Acceptance kFloat32LimitsAcceptances[] = {
    {"SmallEpsilonThatIsNormalInFloat32",
     std::string(kModel) + kData + "[training]\neps = 1e-30\n"},
    {"LargestBetaBelowOneInFloat32",
     std::string(kModel) + kData + "[training]\nbeta2 = 0.99999994\n"},
    {"SmallestLearningRate",
     std::string(kModel) + kData + "[training]\nlr = 1e-9\n"},
};
INSTANTIATE_TEST_SUITE_P(Float32Limits, AcceptedSpec,
                         ::testing::ValuesIn(kFloat32LimitsAcceptances),
                         caseName<Acceptance>);

//===----------------------------------------------------------------------===//
// Command-line overrides
//===----------------------------------------------------------------------===//

Outcome parseWith(const std::string &text, std::optional<int64_t> batch,
                  std::optional<int64_t> seqLen) {
  Overrides overrides;
  overrides.batch = batch;
  overrides.seqLen = seqLen;
  Outcome out;
  out.spec = parseSpecString(text, "t.toml", out.diag, overrides);
  return out;
}

TEST(SpecOverrides, ReplaceBatchAndSeqLen) {
  Outcome o = parseWith(std::string(kModel) + kData, 3, 40);
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(o.spec->training.batch, 3);
  EXPECT_EQ(o.spec->training.seqLen, 40);
}

TEST(SpecOverrides, TakeTheKeysRanges) {
  for (int64_t bad :
       {int64_t(0), int64_t(-3), int64_t(1) << 55, int64_t(1) << 62}) {
    Outcome o = parseWith(std::string(kModel) + kData, bad, std::nullopt);
    ASSERT_FALSE(o.spec) << bad;
    EXPECT_EQ(o.diag.flag, "--batch");
    EXPECT_EQ(o.diag.str(), "tfc: error: --batch: expected an integer in [1, "
                            "1048576] (the range of training.batch), got " +
                                std::to_string(bad));
  }
  Outcome o =
      parseWith(std::string(kModel) + kData, std::nullopt, int64_t(1) << 59);
  ASSERT_FALSE(o.spec);
  EXPECT_EQ(o.diag.str(),
            "tfc: error: --seq-len: expected an integer in [1, 4194304] (the "
            "range of training.seq_len), got 576460752303423488");
}

TEST(SpecOverrides, SeqLenMustBeAMultipleOfTheHourglassFactors) {
  Outcome o =
      parseWith(hourglass("layout = \"2@1 4@3 2@1\""), std::nullopt, 32);
  ASSERT_FALSE(o.spec);
  EXPECT_EQ(o.diag.str(), "tfc: error: --seq-len: expected a multiple of 3 "
                          "(the largest factor of hourglass.layout), got 32");
  EXPECT_TRUE(
      parseWith(hourglass("layout = \"2@1 4@3 2@1\""), std::nullopt, 33).spec);
}

TEST(SpecOverrides, GlobalTokenBeyondSeqLenIsAnError) {
  Outcome o = parseWith(
      "[model]\ntask = \"classify\"\nvocab = 100\nd_model = 64\nheads = "
      "4\nd_ff = 128\nlayers = 2\n[attention]\nkind = \"longformer\"\nwindow "
      "= 8\nglobal_tokens = [0, 40]\n[data]\ntrain = \"a.jsonl\"\n[training]\n"
      "seq_len = 64\n",
      std::nullopt, 32);
  ASSERT_FALSE(o.spec);
  EXPECT_EQ(o.diag.str(), "t.toml:11:21: error: attention.global_tokens[1]: "
                          "expected a token position below --seq-len (32), "
                          "got 40");
}

TEST(SpecOverrides, WindowsWiderThanAShorterSeqLenAreKept) {
  Outcome o = parseWith(longformer("window = 32\n"), std::nullopt, 16);
  ASSERT_TRUE(o.spec) << o.diag.str();
  EXPECT_EQ(o.spec->attention.window, (std::vector<int64_t>{32, 32, 32}));
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

TEST(SpecHelpers, EnumNames) {
  EXPECT_STREQ(toString(Task::Classify), "classify");
  EXPECT_STREQ(toString(Positions::Rotary), "rotary");
  EXPECT_STREQ(toString(AttentionKind::Longformer), "longformer");
  EXPECT_STREQ(toString(Activation::SquaredRelu), "squared_relu");
  EXPECT_STREQ(toString(ShortenKind::Attention), "attention");
  EXPECT_STREQ(toString(UpsampleKind::Naive), "naive");
  EXPECT_STREQ(toString(ClassifyLoss::BinaryCrossEntropy), "bce");
  EXPECT_STREQ(toString(Optimizer::AdamW), "adamw");
  EXPECT_STREQ(toString(Schedule::InverseSqrt), "inverse_sqrt");
  EXPECT_STREQ(toString(Precision::BF16), "bf16");
  EXPECT_STREQ(toString(DataFormat::Jsonl), "jsonl");
}

TEST(SpecHelpers, ResolvePath) {
  Spec spec;
  spec.path = "specs/a.toml";
  EXPECT_EQ(spec.resolvePath("../data/x.txt"), "specs/../data/x.txt");
  EXPECT_EQ(spec.resolvePath("/abs/x.txt"), "/abs/x.txt");
  spec.path = "a.toml";
  EXPECT_EQ(spec.resolvePath("x.txt"), "x.txt");
}
