//===- Safetensors.cpp - Checkpoints in the safetensors format ------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Safetensors.h"
#include "runtime/JsonText.h"
#include "runtime/Support.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; this runtime assumes a "
              "little-endian host");

namespace tfc::rt {

/// Refuse headers above this size, as the reference implementation does.
static const uint64_t kMaxHeaderBytes = 100000000;

/// Bytes per element of a safetensors dtype, or 0 when unknown.
static uint64_t dtypeSize(const std::string &dtype) {
  static const std::pair<const char *, uint64_t> sizes[] = {
      {"F64", 8}, {"F32", 4}, {"F16", 2},  {"BF16", 2},    {"I64", 8},
      {"I32", 4}, {"I16", 2}, {"I8", 1},   {"U64", 8},     {"U32", 4},
      {"U16", 2}, {"U8", 1},  {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  for (const auto &entry : sizes)
    if (dtype == entry.first)
      return entry.second;
  return 0;
}

bool writeSafetensors(const std::string &path,
                      const std::vector<TensorView> &tensors,
                      const Metadata &metadata, std::string &err) {
  Json header = Json::object();
  if (!metadata.empty()) {
    Json &meta = header["__metadata__"] = Json::object();
    for (const auto &kv : metadata)
      meta[kv.first] = kv.second;
  }
  std::set<std::string> names;
  uint64_t offset = 0;
  std::vector<Chunk> chunks;
  chunks.push_back({nullptr, 8}); // Length, filled in below.
  chunks.push_back({nullptr, 0}); // Header, filled in below.
  for (const TensorView &t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" ||
        !names.insert(t.name).second) {
      err = path + ": cannot write tensor named '" + t.name +
            "' (empty, reserved or repeated)";
      return false;
    }
    uint64_t count = 1;
    for (int64_t d : t.shape) {
      if (d < 0) {
        err = path + ": tensor '" + t.name + "' has a negative dimension";
        return false;
      }
      count *= uint64_t(d);
    }
    uint64_t bytes = count * sizeof(float);
    if (bytes > 0 && !t.data) {
      err = path + ": tensor '" + t.name + "' has no data";
      return false;
    }
    header[t.name] = {{"dtype", "F32"},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    chunks.push_back({t.data, size_t(bytes)});
  }
  std::string text = jsonText(header);
  while ((8 + text.size()) % 8 != 0)
    text += ' ';
  unsigned char length[8];
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i)
    length[i] = static_cast<unsigned char>(n >> (8 * i));
  chunks[0].data = length;
  chunks[1] = {text.data(), text.size()};
  return writeFileAtomic(path, chunks, err);
}

SafetensorsFile::~SafetensorsFile() { close(); }

void SafetensorsFile::close() {
  if (mapping_)
    munmap(mapping_, mappedBytes_);
  mapping_ = nullptr;
  mappedBytes_ = 0;
  data_ = nullptr;
  entries_.clear();
  metadata_.clear();
}

const SafetensorsEntry *SafetensorsFile::find(const std::string &name) const {
  for (const SafetensorsEntry &e : entries_)
    if (e.name == name)
      return &e;
  return nullptr;
}

const std::string *
SafetensorsFile::metadataValue(const std::string &key) const {
  for (const auto &kv : metadata_)
    if (kv.first == key)
      return &kv.second;
  return nullptr;
}

/// Reads a JSON array of integers in [0, 2^63).
static bool readIntArray(const Json &v, std::vector<int64_t> &out) {
  if (!v.is_array())
    return false;
  out.clear();
  for (const Json &item : v) {
    if (!item.is_number_unsigned() || item.get<uint64_t>() > INT64_MAX)
      return false;
    out.push_back(item.get<int64_t>());
  }
  return true;
}

/// Parses the JSON header of `size` bytes at `text` into an object. The
/// parser keeps the last of repeated keys; a repeated tensor name is an
/// error (a repeated __metadata__ keeps its last).
static bool parseHeader(const unsigned char *text, uint64_t size, Json &header,
                        std::string &why) {
  std::set<std::string> names;
  std::string repeated;
  auto noteNames = [&](int depth, Json::parse_event_t event, Json &parsed) {
    if (depth == 1 && event == Json::parse_event_t::key &&
        parsed != "__metadata__" &&
        !names.insert(parsed.get<std::string>()).second && repeated.empty())
      repeated = parsed.get<std::string>();
    return true;
  };
  std::string jsonErr;
  size_t errorByte = 0;
  if (!parseJson(reinterpret_cast<const char *>(text), size_t(size), header,
                 jsonErr, errorByte, noteNames)) {
    why = errorByte ? format("bad header: byte %zu of the JSON: %s",
                             errorByte - 1, jsonErr.c_str())
                    : "bad header: " + jsonErr;
    return false;
  }
  if (!header.is_object()) {
    why = "bad header: the JSON is not an object";
    return false;
  }
  if (!repeated.empty()) {
    why = "bad header: tensor '" + repeated + "' appears twice";
    return false;
  }
  return true;
}

/// The header's member `name`, `v`, as a tensor whose bytes lie inside the
/// `dataSize` bytes of data.
static bool parseEntry(const std::string &name, const Json &v,
                       uint64_t dataSize, SafetensorsEntry &e,
                       std::string &why) {
  e.name = name;
  auto dtype = v.is_object() ? v.find("dtype") : v.end();
  auto shape = v.is_object() ? v.find("shape") : v.end();
  auto offsets = v.is_object() ? v.find("data_offsets") : v.end();
  if (!v.is_object() || dtype == v.end() || !dtype->is_string() ||
      shape == v.end() || offsets == v.end()) {
    why = "bad header: tensor '" + name +
          "' needs \"dtype\", \"shape\" and \"data_offsets\"";
    return false;
  }
  e.dtype = dtype->get<std::string>();
  uint64_t elementSize = dtypeSize(e.dtype);
  if (elementSize == 0) {
    why =
        "bad header: tensor '" + name + "' has unknown dtype '" + e.dtype + "'";
    return false;
  }
  std::vector<int64_t> range;
  if (!readIntArray(*shape, e.shape)) {
    why = "bad header: tensor '" + name +
          "': shape is not an array of non-negative integers";
    return false;
  }
  if (!readIntArray(*offsets, range) || range.size() != 2 ||
      range[0] > range[1]) {
    why = "bad header: tensor '" + name +
          "': data_offsets is not [begin, end] with begin <= end";
    return false;
  }
  e.begin = uint64_t(range[0]);
  e.end = uint64_t(range[1]);
  uint64_t count = 1;
  for (int64_t d : e.shape) {
    if (d != 0 && count > (uint64_t(1) << 56) / uint64_t(d)) {
      why = "bad header: tensor '" + name + "' is too large";
      return false;
    }
    count *= uint64_t(d);
  }
  if (e.end - e.begin != count * elementSize) {
    why = format("bad header: tensor '%s' %s %s needs %llu bytes but "
                 "data_offsets span %llu",
                 name.c_str(), e.dtype.c_str(), shapeString(e.shape).c_str(),
                 (unsigned long long)(count * elementSize),
                 (unsigned long long)(e.end - e.begin));
    return false;
  }
  if (e.end > dataSize) {
    why = format("truncated: tensor '%s' ends at byte %llu of the data, the "
                 "file holds %llu",
                 name.c_str(), (unsigned long long)e.end,
                 (unsigned long long)dataSize);
    return false;
  }
  return true;
}

/// The format forbids holes and overlaps: sorted by offset, the tensors
/// tile the `dataSize` bytes of data exactly.
static bool checkTiling(const std::vector<SafetensorsEntry> &entries,
                        uint64_t dataSize, std::string &why) {
  std::vector<const SafetensorsEntry *> byOffset;
  for (const SafetensorsEntry &e : entries)
    byOffset.push_back(&e);
  std::stable_sort(byOffset.begin(), byOffset.end(),
                   [](const SafetensorsEntry *a, const SafetensorsEntry *b) {
                     return a->begin != b->begin ? a->begin < b->begin
                                                 : a->end < b->end;
                   });
  uint64_t covered = 0;
  const SafetensorsEntry *previous = nullptr;
  for (const SafetensorsEntry *e : byOffset) {
    if (e->begin < covered) {
      why = format("bad header: tensor '%s' (data_offsets [%llu, %llu]) "
                   "overlaps tensor '%s' (data_offsets [%llu, %llu])",
                   e->name.c_str(), (unsigned long long)e->begin,
                   (unsigned long long)e->end, previous->name.c_str(),
                   (unsigned long long)previous->begin,
                   (unsigned long long)previous->end);
      return false;
    }
    if (e->begin > covered) {
      why = format("bad header: bytes %llu to %llu of the data belong to no "
                   "tensor (tensor '%s' starts at %llu)",
                   (unsigned long long)covered, (unsigned long long)e->begin,
                   e->name.c_str(), (unsigned long long)e->begin);
      return false;
    }
    covered = e->end;
    previous = e;
  }
  if (covered != dataSize) {
    why = format("bad header: bytes %llu to %llu of the data belong to no "
                 "tensor (the tensors end at %llu)",
                 (unsigned long long)covered, (unsigned long long)dataSize,
                 (unsigned long long)covered);
    return false;
  }
  return true;
}

bool SafetensorsFile::open(const std::string &path, std::string &err) {
  close();
  path_ = path;
  // Devices and FIFOs are refused before they are opened (a FIFO's open
  // waits for a writer); O_NONBLOCK covers one that replaces the file
  // between the check and the open.
  uint64_t checkedSize = 0;
  if (!regularFileSize(path, checkedSize, err))
    return false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    err = path + ": cannot open: " + strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    err = path + ": not a regular file";
    ::close(fd);
    return false;
  }
  uint64_t fileSize = uint64_t(st.st_size);
  if (fileSize < 8) {
    err = format("%s: truncated: %llu bytes, too short for a safetensors "
                 "header length",
                 path.c_str(), (unsigned long long)fileSize);
    ::close(fd);
    return false;
  }
  void *mapping =
      mmap(nullptr, size_t(fileSize), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping == MAP_FAILED) {
    err = path + ": cannot map: " + strerror(errno);
    return false;
  }
  mapping_ = mapping;
  mappedBytes_ = size_t(fileSize);
  const unsigned char *bytes = static_cast<const unsigned char *>(mapping);
  uint64_t headerSize = 0;
  for (int i = 0; i < 8; ++i)
    headerSize |= uint64_t(bytes[i]) << (8 * i);
  auto fail = [&](const std::string &why) {
    err = path + ": " + why;
    close();
    return false;
  };
  if (headerSize > kMaxHeaderBytes)
    return fail(format("header length %llu is implausible (not a safetensors "
                       "file?)",
                       (unsigned long long)headerSize));
  if (headerSize > fileSize - 8)
    return fail(format("truncated: the header needs %llu bytes, the file has "
                       "%llu after the length",
                       (unsigned long long)headerSize,
                       (unsigned long long)(fileSize - 8)));
  Json header;
  std::string why;
  if (!parseHeader(bytes + 8, headerSize, header, why))
    return fail(why);
  data_ = bytes + 8 + headerSize;
  uint64_t dataSize = fileSize - 8 - headerSize;
  for (const auto &member : header.items()) {
    const std::string &name = member.key();
    const Json &v = member.value();
    if (name == "__metadata__") {
      if (!v.is_object())
        return fail("bad header: __metadata__ is not an object");
      for (const auto &kv : v.items()) {
        if (!kv.value().is_string())
          return fail("bad header: __metadata__ value '" + kv.key() +
                      "' is not a string");
        metadata_.emplace_back(kv.key(), kv.value().get<std::string>());
      }
      continue;
    }
    SafetensorsEntry e;
    if (!parseEntry(name, v, dataSize, e, why))
      return fail(why);
    entries_.push_back(std::move(e));
  }
  if (!checkTiling(entries_, dataSize, why))
    return fail(why);
  return true;
}

bool SafetensorsFile::readF32(const std::string &name,
                              const std::vector<int64_t> &shape, float *dst,
                              std::string &err) const {
  const SafetensorsEntry *e = find(name);
  if (!e) {
    err = path_ + ": tensor '" + name + "' is missing";
    return false;
  }
  if (e->dtype != "F32") {
    err = path_ + ": tensor '" + name + "' has dtype " + e->dtype +
          ", expected F32";
    return false;
  }
  if (e->shape != shape) {
    err = path_ + ": tensor '" + name + "' has shape " + shapeString(e->shape) +
          " in the file, expected " + shapeString(shape);
    return false;
  }
  if (e->end > e->begin)
    memcpy(dst, data_ + e->begin, size_t(e->end - e->begin));
  return true;
}

std::vector<TensorView> manifestViews(const Manifest &manifest,
                                      const float *base,
                                      const std::string &prefix) {
  std::vector<TensorView> views;
  for (const TensorInfo &t : manifest.tensors)
    views.push_back({prefix + t.name, t.shape, base + t.offset});
  return views;
}

bool readManifestTensors(const SafetensorsFile &file, const Manifest &manifest,
                         float *base, const std::string &prefix,
                         std::string &err) {
  // When the file says it was written for another model, say so: a wrong
  // name or shape is then no surprise.
  std::string otherModel;
  const std::string *model = file.metadataValue("tfc.model");
  if (model && *model != manifest.model)
    otherModel = "; the checkpoint is of model '" + *model +
                 "', this executable is model '" + manifest.model + "'";
  for (const TensorInfo &t : manifest.tensors) {
    std::string name = prefix + t.name;
    const SafetensorsEntry *e = file.find(name);
    if (!e) {
      err = file.path() + ": tensor '" + name + "' " + shapeString(t.shape) +
            " is missing from the checkpoint" + otherModel;
      return false;
    }
    if (e->shape != t.shape) {
      err = file.path() + ": tensor '" + name + "' has shape " +
            shapeString(e->shape) + " in the checkpoint, the model expects " +
            shapeString(t.shape) + otherModel;
      return false;
    }
    if (!file.readF32(name, t.shape, base + t.offset, err))
      return false;
  }
  // A tensor that this model does not have means another architecture
  // (learned positions where this model has none, say): the tensors it
  // shares with this one were trained for a different model. Optimizer
  // state (`optimizer.`) is what a training checkpoint adds.
  if (prefix.empty()) {
    std::set<std::string> names;
    for (const TensorInfo &t : manifest.tensors)
      names.insert(t.name);
    for (const SafetensorsEntry &e : file.entries())
      if (!names.count(e.name) && e.name.rfind("optimizer.", 0) != 0) {
        err = file.path() + ": tensor '" + e.name +
              "' is not a tensor of this model" +
              (otherModel.empty() ? " ('" + manifest.model + "')" : otherModel);
        return false;
      }
  }
  return true;
}

Metadata checkpointMetadata(const Manifest &manifest) {
  return {{"format", "pt"},
          {"tfc.model", manifest.model},
          {"tfc.task", toString(manifest.task)},
          {"tfc.params", std::to_string(manifest.params)}};
}

bool saveCheckpoint(const std::string &path, const Manifest &manifest,
                    const float *params, const std::vector<TensorView> &extra,
                    const Metadata &extraMetadata, std::string &err) {
  std::vector<TensorView> tensors = manifestViews(manifest, params);
  tensors.insert(tensors.end(), extra.begin(), extra.end());
  Metadata metadata = checkpointMetadata(manifest);
  metadata.insert(metadata.end(), extraMetadata.begin(), extraMetadata.end());
  return writeSafetensors(path, tensors, metadata, err);
}

bool loadCheckpoint(const std::string &path, const Manifest &manifest,
                    float *params, std::string &err) {
  SafetensorsFile file;
  if (!file.open(path, err))
    return false;
  return readManifestTensors(file, manifest, params, "", err);
}

} // namespace tfc::rt
