//===- FakeCudaDriver.cpp - A stand-in for libcuda.so.1 in unit tests ----===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// The CUDA driver entry points that libtfcrt_cuda resolves, with no GPU:
/// memory is host memory, and a launch appends a line to a log instead of
/// running a kernel. A launch on a stream that is capturing is recorded in
/// the graph; launching the graph appends its launches to the log. The test
/// reads the log through `tfc_fake_cuda_log`.
///
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {
struct Graph {
  std::vector<std::string> launches;
};

std::string log;
std::vector<std::string> capture;
bool capturing = false;
int captures = 0;

/// With TFC_FAKE_CUDA_SUMMARY set, prints how many launches ran on their
/// own and in graphs at exit (a compiled model run against the fake).
struct Summary {
  int64_t direct = 0, graphLaunches = 0, graphKernels = 0;
  ~Summary() {
    if (std::getenv("TFC_FAKE_CUDA_SUMMARY"))
      std::fprintf(stderr,
                   "fake-cuda: %lld launches on their own, %d graphs "
                   "captured, %lld graph launches of %lld kernels\n",
                   static_cast<long long>(direct), captures,
                   static_cast<long long>(graphLaunches),
                   static_cast<long long>(graphKernels));
  }
} summary;

std::string kernelName(void *function) {
  return "k" + std::to_string(reinterpret_cast<intptr_t>(function) - 1);
}

/// `k<n>(<second argument>)`, then `/<bytes>` of dynamic shared memory.
std::string describe(void *function, void **params, unsigned sharedBytes) {
  return kernelName(function) + "(" +
         std::to_string(*static_cast<int64_t *>(params[1])) + ")" +
         (sharedBytes ? "/" + std::to_string(sharedBytes) : "");
}
} // namespace

extern "C" {
const char *tfc_fake_cuda_log() { return log.c_str(); }
int tfc_fake_cuda_captures() { return captures; }

int cuGetErrorString(int, const char **text) {
  *text = "fake error";
  return 0;
}
int cuInit(unsigned) { return 0; }
int cuDeviceGetCount(int *count) {
  *count = 1;
  return 0;
}
int cuDeviceGet(int *device, int) {
  *device = 0;
  return 0;
}
int cuDeviceGetAttribute(int *value, int attribute, int) {
  *value = attribute == 75 ? 9 : 0;
  return 0;
}
int cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "fake GPU", length);
  return 0;
}
int cuDevicePrimaryCtxRetain(void **context, int) {
  *context = nullptr;
  return 0;
}
int cuCtxSetCurrent(void *) { return 0; }
int cuModuleLoadDataEx(void **module, const void *, unsigned, int *, void **) {
  *module = nullptr;
  return 0;
}
/// Kernel `k<n>` is the function pointer n + 1.
int cuModuleGetFunction(void **function, void *, const char *name) {
  *function = reinterpret_cast<void *>(std::atoi(name + 1) + 1);
  return 0;
}
/// Logs `k<n>.shared=<bytes>` for the dynamic shared memory allowed.
int cuFuncSetAttribute(void *function, int attribute, int value) {
  if (attribute == 8)
    log += kernelName(function) + ".shared=" + std::to_string(value) + " ";
  return 0;
}
/// Logs the launch (describe), with `@` when on a stream of its own.
int cuLaunchKernel(void *function, unsigned, unsigned, unsigned, unsigned,
                   unsigned, unsigned, unsigned sharedBytes, void *stream,
                   void **params, void **) {
  // A compiled model's kernels may take one argument: not described.
  static const bool model = std::getenv("TFC_FAKE_CUDA_SUMMARY");
  std::string line = model ? "" : describe(function, params, sharedBytes);
  if (capturing) {
    capture.push_back(line);
  } else {
    log += (stream ? "@" : "") + line + " ";
    summary.direct += 1;
  }
  return 0;
}
int cuMemAlloc_v2(uint64_t *pointer, size_t bytes) {
  *pointer = reinterpret_cast<uint64_t>(std::calloc(1, bytes));
  return 0;
}
int cuMemGetInfo_v2(size_t *free, size_t *total) {
  *free = *total = 1 << 30;
  return 0;
}
int cuMemcpyHtoD_v2(uint64_t device, const void *host, size_t bytes) {
  std::memcpy(reinterpret_cast<void *>(device), host, bytes);
  log += "to-device ";
  return 0;
}
int cuMemcpyDtoH_v2(void *host, uint64_t device, size_t bytes) {
  std::memcpy(host, reinterpret_cast<void *>(device), bytes);
  log += "to-host ";
  return 0;
}
int cuEventCreate(void **event, unsigned) {
  *event = nullptr;
  return 0;
}
int cuEventRecord(void *, void *) { return 0; }
int cuEventSynchronize(void *) { return 0; }
int cuEventElapsedTime(float *milliseconds, void *, void *) {
  *milliseconds = 0;
  return 0;
}
int cuStreamCreate(void **stream, unsigned) {
  *stream = reinterpret_cast<void *>(1);
  return 0;
}
int cuStreamBeginCapture_v2(void *stream, int) {
  if (!stream || capturing)
    return 1;
  capturing = true;
  capture.clear();
  return 0;
}
int cuStreamEndCapture(void *, void **graph) {
  if (!capturing)
    return 1;
  capturing = false;
  captures += 1;
  *graph = new Graph{capture};
  return 0;
}
int cuGraphInstantiateWithFlags(void **exec, void *graph, unsigned long long) {
  *exec = new Graph(*static_cast<Graph *>(graph));
  return 0;
}
int cuGraphDestroy(void *graph) {
  delete static_cast<Graph *>(graph);
  return 0;
}
/// Logs the graph's launches between brackets.
int cuGraphLaunch(void *exec, void *stream) {
  if (!stream)
    return 1;
  log += "[ ";
  for (const std::string &line : static_cast<Graph *>(exec)->launches)
    log += line + " ";
  summary.graphLaunches += 1;
  summary.graphKernels += static_cast<Graph *>(exec)->launches.size();
  log += "] ";
  return 0;
}
}
