//===- SafetensorsTest.cpp - Tests of checkpoints -------------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Safetensors.h"
#include "TestUtil.h"
#include "runtime/JsonText.h"
#include "runtime/Manifest.h"
#include "runtime/Params.h"
#include "runtime/Support.h"

#include <gtest/gtest.h>

#include <cstring>
#include <sys/stat.h>

using namespace tfc::rt;
using tfc::rt::test::readText;
using tfc::rt::test::TempDir;
using tfc::rt::test::writeText;

namespace {

const char *kManifest = "tfc-manifest 1\n"
                        "model tiny\n"
                        "task lm\n"
                        "vocab 256\n"
                        "batch 1\nseq_len 4\nd_model 3\nlayers 1\nheads 1\n"
                        "params 24\n"
                        "flops_per_token 0\nactivation_bytes 0\n"
                        "tensor embed.weight 0 param normal:1 2 4 3\n"
                        "tensor norm.weight 12 param ones 1 3\n"
                        "tensor layers.0.attn.features 15 buffer "
                        "features:2:2 3 2 2 2\n"
                        "end\n";

Manifest tinyManifest() {
  Manifest m;
  std::string err;
  EXPECT_TRUE(parseManifest(kManifest, m, err)) << err;
  return m;
}

/// A saved, freshly initialised checkpoint of kManifest.
std::vector<float> saveTiny(const std::string &path) {
  Manifest m = tinyManifest();
  std::vector<float> params(size_t(m.params), 0.0f);
  initParams(m, params.data(), 3);
  std::string err;
  EXPECT_TRUE(saveCheckpoint(path, m, params.data(), {}, {}, err)) << err;
  return params;
}

std::string loadError(const std::string &path) {
  Manifest m = tinyManifest();
  std::vector<float> params(size_t(m.params));
  std::string err;
  EXPECT_FALSE(loadCheckpoint(path, m, params.data(), err));
  return err;
}

TEST(Safetensors, RoundTrip) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  std::vector<float> saved = saveTiny(path);
  Manifest m = tinyManifest();
  std::vector<float> loaded(size_t(m.params), -1.0f);
  std::string err;
  ASSERT_TRUE(loadCheckpoint(path, m, loaded.data(), err)) << err;
  // Offset 23 belongs to no tensor and is not saved.
  EXPECT_EQ(0, memcmp(saved.data(), loaded.data(), 23 * sizeof(float)));
  EXPECT_TRUE(tfc::rt::test::temporaries(dir.path()).empty());
}

TEST(Safetensors, FileLayoutIsStandard) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  std::vector<float> saved = saveTiny(path);
  std::string bytes = readText(path);
  ASSERT_GE(bytes.size(), 8u);
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i)
    n |= uint64_t(uint8_t(bytes[size_t(i)])) << (8 * i);
  EXPECT_EQ((8 + n) % 8, 0u); // Data is 8-byte aligned.
  // 12 + 3 + 8 floats of data after the header.
  EXPECT_EQ(bytes.size(), 8 + n + 23 * 4);
  std::string header = bytes.substr(8, size_t(n));
  Json v;
  std::string err;
  size_t at = 0;
  ASSERT_TRUE(parseJson(header.data(), header.size(), v, err, at)) << err;
  // Metadata first, then the tensors in the order written.
  EXPECT_EQ(v.begin().key(), "__metadata__");
  const Json &meta = v["__metadata__"];
  EXPECT_EQ(meta["format"], "pt");
  EXPECT_EQ(meta["tfc.model"], "tiny");
  ASSERT_TRUE(v.contains("norm.weight"));
  const Json &norm = v["norm.weight"];
  EXPECT_EQ(norm["dtype"], "F32");
  EXPECT_EQ(norm["shape"], Json({3}));
  EXPECT_EQ(norm["data_offsets"], Json({48, 60}));
  // Compact, as the reference implementation writes it.
  EXPECT_EQ(header.find(": "), std::string::npos);
  float ones[3];
  memcpy(ones, bytes.data() + 8 + n + 48, sizeof(ones));
  EXPECT_EQ(ones[0], 1.0f);
  EXPECT_EQ(ones[2], 1.0f);
}

TEST(Safetensors, ExtraStateUnderOtherNames) {
  // Optimizer state can share the file under prefixed names and metadata.
  TempDir dir;
  std::string path = dir.file("state.safetensors");
  Manifest m = tinyManifest();
  std::vector<float> params(24, 1.0f), adamM(24, 2.0f), adamV(24, 3.0f);
  std::vector<TensorView> extra =
      manifestViews(m, adamM.data(), "optimizer.m.");
  std::vector<TensorView> v = manifestViews(m, adamV.data(), "optimizer.v.");
  extra.insert(extra.end(), v.begin(), v.end());
  std::string err;
  ASSERT_TRUE(saveCheckpoint(path, m, params.data(), extra,
                             {{"tfc.step", "1200"}}, err))
      << err;
  SafetensorsFile file;
  ASSERT_TRUE(file.open(path, err)) << err;
  EXPECT_EQ(file.entries().size(), 9u);
  ASSERT_NE(file.metadataValue("tfc.step"), nullptr);
  EXPECT_EQ(*file.metadataValue("tfc.step"), "1200");
  std::vector<float> back(24, 0.0f);
  ASSERT_TRUE(readManifestTensors(file, m, back.data(), "optimizer.v.", err))
      << err;
  EXPECT_EQ(back[0], 3.0f);
  EXPECT_EQ(back[22], 3.0f);
  // The parameters load as usual; the extra names are ignored.
  ASSERT_TRUE(loadCheckpoint(path, m, back.data(), err)) << err;
  EXPECT_EQ(back[5], 1.0f);
}

TEST(Safetensors, MissingFile) {
  TempDir dir;
  std::string path = dir.file("none.safetensors");
  EXPECT_EQ(loadError(path), path + ": cannot open: No such file or directory");
  EXPECT_EQ(loadError(dir.path()), dir.path() + ": is a directory");
}

TEST(Safetensors, Truncated) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  saveTiny(path);
  std::string bytes = readText(path);
  writeText(path, bytes.substr(0, bytes.size() - 1));
  EXPECT_EQ(loadError(path),
            path + ": truncated: tensor 'layers.0.attn.features' ends at byte "
                   "92 of the data, the file holds 91");
  writeText(path, bytes.substr(0, 100));
  EXPECT_NE(loadError(path).find(path + ": truncated: the header needs"),
            std::string::npos);
  writeText(path, bytes.substr(0, 5));
  EXPECT_EQ(loadError(path), path + ": truncated: 5 bytes, too short for a "
                                    "safetensors header length");
  writeText(path, "");
  EXPECT_EQ(loadError(path), path + ": truncated: 0 bytes, too short for a "
                                    "safetensors header length");
}

/// A safetensors file with the given header text and `data` bytes.
std::string rawFile(const std::string &header, size_t data) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[size_t(i)] = char((header.size() >> (8 * i)) & 0xff);
  return out + header + std::string(data, '\0');
}

/// The load error of rawFile(header, data) written at `path`.
std::string rawLoadError(const std::string &path, const std::string &header,
                         size_t data) {
  writeText(path, rawFile(header, data));
  return loadError(path);
}

/// The load error of zero-filled F32 tensors named and shaped as `shapes`,
/// with `metadata`, written at `path` by writeSafetensors.
std::string writtenLoadError(
    const std::string &path,
    const std::vector<std::pair<std::string, std::vector<int64_t>>> &shapes,
    const Metadata &metadata) {
  static const std::vector<float> zeros(64, 0.0f);
  std::vector<TensorView> tensors;
  for (const auto &[name, shape] : shapes)
    tensors.push_back({name, shape, zeros.data()});
  std::string err;
  EXPECT_TRUE(writeSafetensors(path, tensors, metadata, err)) << err;
  return loadError(path);
}

TEST(Safetensors, BadHeader) {
  TempDir dir;
  std::string path = dir.file("bad.safetensors");
  EXPECT_EQ(rawLoadError(path, "{\"embed.weight\": {\"dtype\": \"F32\",", 0),
            path + ": bad header: byte 33 of the JSON: "
                   "syntax error while parsing object key - "
                   "unexpected end of input; expected string "
                   "literal");
  EXPECT_EQ(rawLoadError(path, "{\"embed.weight\": ", 0),
            path + ": bad header: byte 17 of the JSON: "
                   "syntax error while parsing value - "
                   "unexpected end of input; expected '[', "
                   "'{', or a literal");
  EXPECT_EQ(rawLoadError(path, "{\"a\": 1e999}", 0),
            path + ": bad header: number overflow parsing '1e999'");
  EXPECT_EQ(rawLoadError(path, "{\"a\": \"\xff\"}", 0),
            path + ": bad header: byte 7 of the JSON: "
                   "syntax error while parsing value - "
                   "invalid string: ill-formed UTF-8 byte; "
                   "last read: '\"\xff'");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [1], "
                         "\"data_offsets\": [0, 4]}, \"__metadata__\": {}, "
                         "\"a\": {\"dtype\": \"F32\", \"shape\": [1], "
                         "\"data_offsets\": [0, 4]}}",
                         4),
            path + ": bad header: tensor 'a' appears twice");
  EXPECT_EQ(rawLoadError(path, "[1, 2]", 0),
            path + ": bad header: the JSON is not an object");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                         "\"data_offsets\": [0, 4]}}",
                         8),
            path + ": bad header: tensor 'a' F32 [2] needs 8 "
                   "bytes but data_offsets span 4");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"Q4\", \"shape\": [2], "
                         "\"data_offsets\": [0, 8]}}",
                         8),
            path + ": bad header: tensor 'a' has unknown "
                   "dtype 'Q4'");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [-2], "
                         "\"data_offsets\": [0, 8]}}",
                         8),
            path + ": bad header: tensor 'a': shape is not an "
                   "array of non-negative integers");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2.0], "
                         "\"data_offsets\": [0, 8]}}",
                         8),
            path + ": bad header: tensor 'a': shape is not an "
                   "array of non-negative integers");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                         "\"data_offsets\": [0, 9223372036854775808]}}",
                         8),
            path + ": bad header: tensor 'a': data_offsets "
                   "is not [begin, end] with begin <= end");
  EXPECT_EQ(rawLoadError(path, "{\"a\": {\"dtype\": \"F32\"}}", 0),
            path + ": bad header: tensor 'a' needs "
                   "\"dtype\", \"shape\" and "
                   "\"data_offsets\"");
  EXPECT_EQ(rawLoadError(path, "{\"__metadata__\": {\"n\": 1}}", 0),
            path + ": bad header: __metadata__ value 'n' is "
                   "not a string");
  std::string huge(8, '\xff');
  writeText(path, huge + "{}");
  EXPECT_EQ(loadError(path), path + ": header length 18446744073709551615 is "
                                    "implausible (not a safetensors file?)");
}

TEST(Safetensors, DataOffsetsTileTheData) {
  // The format forbids overlapping tensors and bytes that belong to none.
  TempDir dir;
  std::string path = dir.file("offsets.safetensors");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                         "\"data_offsets\": [0, 8]}, \"b\": {\"dtype\": "
                         "\"F32\", \"shape\": [2], \"data_offsets\": [4, "
                         "12]}}",
                         12),
            path + ": bad header: tensor 'b' (data_offsets "
                   "[4, 12]) overlaps tensor 'a' "
                   "(data_offsets [0, 8])");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                         "\"data_offsets\": [0, 8]}, \"b\": {\"dtype\": "
                         "\"F32\", \"shape\": [2], \"data_offsets\": [0, "
                         "8]}}",
                         8),
            path + ": bad header: tensor 'b' (data_offsets "
                   "[0, 8]) overlaps tensor 'a' "
                   "(data_offsets [0, 8])");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                         "\"data_offsets\": [0, 8]}, \"b\": {\"dtype\": "
                         "\"F32\", \"shape\": [2], \"data_offsets\": [12, "
                         "20]}}",
                         20),
            path + ": bad header: bytes 8 to 12 of the data "
                   "belong to no tensor (tensor 'b' starts "
                   "at 12)");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                         "\"data_offsets\": [4, 12]}}",
                         12),
            path + ": bad header: bytes 0 to 4 of the data "
                   "belong to no tensor (tensor 'a' starts "
                   "at 4)");
  EXPECT_EQ(rawLoadError(path,
                         "{\"a\": {\"dtype\": \"F32\", \"shape\": [2], "
                         "\"data_offsets\": [0, 8]}}",
                         16),
            path + ": bad header: bytes 8 to 16 of the data "
                   "belong to no tensor (the tensors end at "
                   "8)");
}

TEST(Safetensors, WrongShapeNamesTensorAndShapes) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  EXPECT_EQ(writtenLoadError(path,
                             {{"embed.weight", {3, 4}},
                              {"norm.weight", {3}},
                              {"layers.0.attn.features", {2, 2, 2}}},
                             {{"tfc.model", "tiny"}}),
            path + ": tensor 'embed.weight' has shape [3, 4] "
                   "in the checkpoint, the model expects "
                   "[4, 3]");
}

TEST(Safetensors, MissingNameAndOtherModel) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  EXPECT_EQ(writtenLoadError(path,
                             {{"embed.weight", {4, 3}},
                              {"layers.0.attn.features", {2, 2, 2}}},
                             {{"tfc.model", "tiny"}}),
            path + ": tensor 'norm.weight' [3] is missing from the checkpoint");
  EXPECT_EQ(writtenLoadError(path, {{"lm_head.weight", {2, 2}}},
                             {{"tfc.model", "big-lm"}}),
            path + ": tensor 'embed.weight' [4, 3] is missing from the "
                   "checkpoint; the checkpoint is of model 'big-lm', this "
                   "executable is model 'tiny'");
}

TEST(Safetensors, ExtraTensorMeansAnotherModel) {
  // Every tensor of the model is there, and one more: the checkpoint is of
  // another architecture, whatever its name says.
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  std::vector<float> data(12, 0.0f);
  std::vector<TensorView> tensors = {
      {"embed.weight", {4, 3}, data.data()},
      {"norm.weight", {3}, data.data()},
      {"layers.0.attn.features", {2, 2, 2}, data.data()},
      {"pos_embed.weight", {4, 3}, data.data()}};
  std::string err;
  ASSERT_TRUE(writeSafetensors(path, tensors, {}, err)) << err;
  EXPECT_EQ(loadError(path), path + ": tensor 'pos_embed.weight' is not a "
                                    "tensor of this model ('tiny')");
  ASSERT_TRUE(writeSafetensors(path, tensors, {{"tfc.model", "big-lm"}}, err))
      << err;
  EXPECT_EQ(loadError(path), path + ": tensor 'pos_embed.weight' is not a "
                                    "tensor of this model; the checkpoint is "
                                    "of model 'big-lm', this executable is "
                                    "model 'tiny'");
  // Without the extra tensor, another model's name alone does not stop a
  // load of weights of the same shapes.
  tensors.pop_back();
  ASSERT_TRUE(writeSafetensors(path, tensors, {{"tfc.model", "big-lm"}}, err))
      << err;
  Manifest m = tinyManifest();
  std::vector<float> params(size_t(m.params), 1.0f);
  EXPECT_TRUE(loadCheckpoint(path, m, params.data(), err)) << err;
  EXPECT_EQ(params[0], 0.0f);
}

TEST(Safetensors, WrongDtype) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  EXPECT_EQ(rawLoadError(path,
                         "{\"embed.weight\": {\"dtype\": \"F16\", \"shape\": "
                         "[4, 3], \"data_offsets\": [0, 24]}}",
                         24),
            path + ": tensor 'embed.weight' has dtype F16, "
                   "expected F32");
}

TEST(Safetensors, RejectsBadNamesOnWrite) {
  TempDir dir;
  std::string err;
  float x = 0;
  EXPECT_FALSE(writeSafetensors(dir.file("a"), {{"a", {1}, &x}, {"a", {1}, &x}},
                                {}, err));
  EXPECT_EQ(err, dir.file("a") + ": cannot write tensor named 'a' (empty, "
                                 "reserved or repeated)");
}

TEST(Safetensors, MetadataIsWrittenAsUtf8) {
  // JSON text is UTF-8: a byte that is not becomes U+FFFD, escapes as JSON
  // needs them, and the file reads back.
  TempDir dir;
  std::string path = dir.file("m.safetensors"), err;
  float x = 0;
  ASSERT_TRUE(writeSafetensors(path, {{"a", {1}, &x}},
                               {{"path", "caf\xc3\xa9/\xff\"q\"\n"}}, err))
      << err;
  SafetensorsFile file;
  ASSERT_TRUE(file.open(path, err)) << err;
  ASSERT_NE(file.metadataValue("path"), nullptr);
  EXPECT_EQ(*file.metadataValue("path"), "caf\xc3\xa9/\xef\xbf\xbd\"q\"\n");
  EXPECT_NE(readText(path).find("\\\"q\\\"\\n"), std::string::npos);
}

TEST(Safetensors, FailedWriteKeepsTheOldFile) {
  TempDir dir;
  std::string path = dir.file("w.safetensors");
  saveTiny(path);
  std::string before = readText(path);
  Manifest m = tinyManifest();
  std::vector<float> params(24, 5.0f);
  std::string err;

  // 1. The temporary file cannot be created (the path's directory is gone).
  std::string gone = dir.file("gone/w.safetensors");
  EXPECT_FALSE(saveCheckpoint(gone, m, params.data(), {}, {}, err));
  EXPECT_EQ(err.find(gone + ": cannot create a temporary file beside it ("), 0u)
      << err;
  EXPECT_NE(err.find("): No such file or directory"), std::string::npos) << err;

  // 2. Writing fails half way: the file size limit stops the write with
  // EFBIG after 200 bytes. The old file stays, the temporary is removed.
  std::vector<float> big(1000, 5.0f);
  bool ok = false;
  {
    tfc::rt::test::FileSizeLimit limit(200);
    ASSERT_TRUE(limit.limited());
    ok =
        writeSafetensors(path, {{"embed.weight", {1000}, big.data()}}, {}, err);
  }
  EXPECT_FALSE(ok);
  EXPECT_EQ(err, path + ": write error: File too large");
  EXPECT_EQ(readText(path), before);
  EXPECT_TRUE(tfc::rt::test::temporaries(dir.path()).empty());
  std::vector<float> loaded(24);
  EXPECT_TRUE(loadCheckpoint(path, m, loaded.data(), err)) << err;
}

} // namespace
