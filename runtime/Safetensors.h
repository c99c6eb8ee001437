//===- Safetensors.h - Checkpoints in the safetensors format ----*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Reading and writing safetensors files, the format of Hugging Face's
/// `safetensors` library (`safetensors.torch.load_file` reads what we write):
///
///   8 bytes   N, unsigned little-endian: length of the header
///   N bytes   JSON object, UTF-8, padded with spaces so data starts at a
///             multiple of 8:
///             {"__metadata__": {"key": "value", ...},        (optional)
///              "<name>": {"dtype": "F32", "shape": [d0, ...],
///                         "data_offsets": [begin, end]}, ...}
///   the data  tensors' bytes, row-major, little-endian; offsets are
///             relative to the start of the data
///
/// A model checkpoint holds every manifest tensor under its manifest name
/// (PyTorch naming, see docs/weights.md), as F32, plus metadata:
///   format      "pt"
///   tfc.model   the manifest's model name
///   tfc.task    lm | classify
///   tfc.params  number of floats in the flat buffer
/// Further state (optimizer m, v, step) can go in the same file: pass more
/// tensors, e.g. manifestViews(manifest, m, "optimizer.m.") and metadata such
/// as {"tfc.step", "1200"}; loaders ignore names they are not asked for.
///
/// Files are written atomically (`<path>.tmp`, fsync, rename).
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_SAFETENSORS_H
#define TFC_RUNTIME_SAFETENSORS_H

#include "runtime/Manifest.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace tfc::rt {

/// A float tensor to write.
struct TensorView {
  std::string name;
  std::vector<int64_t> shape;
  const float *data = nullptr;
};

using Metadata = std::vector<std::pair<std::string, std::string>>;

/// Writes `tensors` (F32, in the given order) and `metadata` to `path`
/// atomically. Names must be unique and non-empty.
bool writeSafetensors(const std::string &path,
                      const std::vector<TensorView> &tensors,
                      const Metadata &metadata, std::string &err);

/// One tensor described by a safetensors header.
struct SafetensorsEntry {
  std::string name;
  std::string dtype; ///< "F32", "BF16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0; ///< Byte offsets into the data.
  uint64_t end = 0;
};

/// A safetensors file opened for reading: the header is parsed and checked
/// (every tensor's bytes lie inside the file) and the file is mapped.
class SafetensorsFile {
public:
  SafetensorsFile() = default;
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile &) = delete;
  SafetensorsFile &operator=(const SafetensorsFile &) = delete;

  bool open(const std::string &path, std::string &err);
  void close();

  const std::string &path() const { return path_; }
  const std::vector<SafetensorsEntry> &entries() const { return entries_; }
  const Metadata &metadata() const { return metadata_; }
  /// The entry called `name`, or nullptr.
  const SafetensorsEntry *find(const std::string &name) const;
  /// The metadata value for `key`, or nullptr.
  const std::string *metadataValue(const std::string &key) const;

  /// Copies tensor `name` into `dst`; it must exist, be F32 and have exactly
  /// `shape`.
  bool readF32(const std::string &name, const std::vector<int64_t> &shape,
               float *dst, std::string &err) const;

private:
  std::string path_;
  std::vector<SafetensorsEntry> entries_;
  Metadata metadata_;
  void *mapping_ = nullptr;
  size_t mappedBytes_ = 0;
  const unsigned char *data_ = nullptr; ///< Start of the tensor data.
};

/// Views of every manifest tensor inside the flat buffer `base`, named
/// `prefix + name`.
std::vector<TensorView> manifestViews(const Manifest &manifest,
                                      const float *base,
                                      const std::string &prefix = "");

/// Reads every manifest tensor `prefix + name` from `file` into `base`. The
/// error for a missing tensor or a shape mismatch names the tensor (and both
/// shapes) and says so when the file was written for another model.
bool readManifestTensors(const SafetensorsFile &file, const Manifest &manifest,
                         float *base, const std::string &prefix,
                         std::string &err);

/// The checkpoint metadata for `manifest` (format, tfc.model, ...).
Metadata checkpointMetadata(const Manifest &manifest);

/// Saves the parameters (and any `extra` tensors and metadata) to `path`.
bool saveCheckpoint(const std::string &path, const Manifest &manifest,
                    const float *params, const std::vector<TensorView> &extra,
                    const Metadata &extraMetadata, std::string &err);

/// Loads the parameters from the checkpoint at `path`.
bool loadCheckpoint(const std::string &path, const Manifest &manifest,
                    float *params, std::string &err);

} // namespace tfc::rt

#endif // TFC_RUNTIME_SAFETENSORS_H
