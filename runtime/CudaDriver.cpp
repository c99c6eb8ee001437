//===- CudaDriver.cpp - The CUDA side of a --target=cuda executable -------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// libtfcrt_cuda: what the host code of a `tfc compile --target=cuda`
/// executable calls (codegen/gpu/Passes.td). The CUDA driver library is
/// loaded at run time with dlopen, so executables build, link and run their
/// non-GPU commands (`info`) on machines without a GPU or the CUDA toolkit,
/// and fail with one line when a command needs the GPU and there is none.
///
/// The kernels are one module (`tfc_gpu_image`: PTX, or a fatbin of cubin
/// and PTX), loaded once on first use. Arenas and the device copies of the
/// entry points' buffers are allocated once and kept for the whole run.
///
/// With TFC_GPU_GRAPH=1, the launches between two copies (a training
/// step's, the optimizer's) are held back until the next copy; a run of
/// launches identical to an earlier one, kernels, grids and arguments, is
/// captured once as a CUDA graph and replayed with one call from then on.
///
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

extern "C" {
extern const char tfc_gpu_image[];
extern const int64_t tfc_gpu_image_size;
extern const int32_t tfc_gpu_image_format;
extern const char tfc_gpu_kernel_names[];
extern const int32_t tfc_gpu_kernel_count;
extern const int32_t tfc_gpu_kernel_shared_bytes[];
extern const int32_t tfc_gpu_arch;
}

namespace {

// The few types and entry points of cuda.h that the glue uses.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUgraph = struct CUgraph_st *;
using CUgraphExec = struct CUgraphExec_st *;
constexpr int kAttrComputeMajor = 75, kAttrComputeMinor = 76;
/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, and the dynamic shared
/// memory a kernel may use without it.
constexpr int kFuncMaxDynamicShared = 8, kDefaultSharedBytes = 48 * 1024;
constexpr int kJitErrorLogBuffer = 5, kJitErrorLogBufferSize = 6;
/// CU_STREAM_CAPTURE_MODE_RELAXED.
constexpr int kCaptureRelaxed = 2;

struct Driver {
  CUresult (*init)(unsigned);
  CUresult (*deviceGetCount)(int *);
  CUresult (*deviceGet)(CUdevice *, int);
  CUresult (*deviceGetAttribute)(int *, int, CUdevice);
  CUresult (*deviceGetName)(char *, int, CUdevice);
  CUresult (*primaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*ctxSetCurrent)(CUcontext);
  CUresult (*moduleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                               void **);
  CUresult (*moduleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*funcSetAttribute)(CUfunction, int, int);
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                           unsigned, unsigned, unsigned, CUstream, void **,
                           void **);
  CUresult (*memAlloc)(CUdeviceptr *, size_t);
  CUresult (*memGetInfo)(size_t *, size_t *);
  CUresult (*memcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*memcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*getErrorString)(CUresult, const char **);
  CUresult (*eventCreate)(CUevent *, unsigned);
  CUresult (*eventRecord)(CUevent, CUstream);
  CUresult (*eventSynchronize)(CUevent);
  CUresult (*eventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*streamCreate)(CUstream *, unsigned);
  CUresult (*streamBeginCapture)(CUstream, int);
  CUresult (*streamEndCapture)(CUstream, CUgraph *);
  CUresult (*graphInstantiate)(CUgraphExec *, CUgraph, unsigned long long);
  CUresult (*graphLaunch)(CUgraphExec, CUstream);
  CUresult (*graphDestroy)(CUgraph);
};

/// One launch as the host code asked for it.
struct Launch {
  int32_t kernel;
  int64_t dims[6]; ///< grid, then block
  std::vector<int64_t> args;

  bool operator==(const Launch &other) const {
    return kernel == other.kernel && std::equal(dims, dims + 6, other.dims) &&
           args == other.args;
  }
};

/// A run of launches between two copies, seen once at least; its graph
/// once it was seen twice.
struct Sequence {
  std::vector<Launch> launches;
  CUgraphExec graph = nullptr;
};

/// The device time of one kernel's launches, when TFC_GPU_PROFILE is set.
struct KernelTime {
  int64_t launches = 0;
  double milliseconds = 0;
  int64_t blocks = 0, threads = 0; ///< of the last launch
};

Driver driver;
std::vector<CUfunction> kernels;
std::vector<const char *> kernelNames;
std::vector<CUdeviceptr> arenas, buffers;

/// A host buffer kept on the device between the entry points' calls (the
/// training state, tfc_device_keep): every entry point that takes it uses
/// the one device copy, which is filled from the host only when the host
/// wrote its copy and copied back only when the host reads it.
struct KeptBuffer {
  const void *host;
  int64_t bytes;
  CUdeviceptr device = 0;
  bool deviceCurrent = false; ///< the device's copy holds the latest values
  bool hostStale = false;     ///< a kernel wrote the device's copy since
};
std::vector<KeptBuffer> kept;

KeptBuffer *findKept(const void *host) {
  for (KeptBuffer &buffer : kept)
    if (buffer.host == host)
      return &buffer;
  return nullptr;
}
std::string deviceName;
size_t allocatedBytes = 0;
/// Per kernel, when profiling: every launch waits for its kernel, timed by
/// a pair of events.
std::vector<KernelTime> profile;
CUevent profileStart = nullptr, profileEnd = nullptr;
/// When profiling: the copies between host and device, in wall-clock time.
double copyMilliseconds = 0;
int64_t copyBytes = 0, copies = 0;

/// With TFC_GPU_GRAPH=1 (and no profiling): the launches held back since
/// the last copy, the sequences seen so far, and the stream that their
/// graphs are captured on and replayed on. It is a blocking stream, so its
/// work and that of the default stream (the copies, the launches of
/// sequences seen once) run in the order they were issued.
bool useGraphs = false;
std::vector<Launch> pending;
std::vector<Sequence> sequences;
CUstream graphStream = nullptr;
/// The most distinct sequences kept: a training run has a few (the step,
/// the optimizer, the evaluation).
constexpr size_t kMaxSequences = 16;

double nowMilliseconds() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void fail(const std::string &message) {
  std::fprintf(stderr, "tfc: error: GPU: %s\n", message.c_str());
  std::exit(1);
}

std::string errorText(CUresult result) {
  const char *text = nullptr;
  if (driver.getErrorString)
    driver.getErrorString(result, &text);
  return text ? text : "CUDA error " + std::to_string(result);
}

void check(CUresult result, const char *what) {
  if (result != 0)
    fail(std::string(what) + ": " + errorText(result));
}

std::string formatBytes(size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f MiB", bytes / 1048576.0);
  return text;
}

template <typename F>
void resolve(void *library, F &fn, const char *name) {
  fn = reinterpret_cast<F>(dlsym(library, name));
  if (!fn)
    fail(std::string("the NVIDIA driver library has no ") + name +
         " (a driver for CUDA 12 or later is needed)");
}

/// Prints the profile: one line per kernel, the most device time first.
void printProfile() {
  std::vector<int32_t> order;
  double total = 0;
  int64_t launches = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(profile.size()); ++i) {
    if (profile[i].launches)
      order.push_back(i);
    total += profile[i].milliseconds;
    launches += profile[i].launches;
  }
  std::sort(order.begin(), order.end(), [](int32_t a, int32_t b) {
    return profile[a].milliseconds > profile[b].milliseconds;
  });
  std::fprintf(stderr,
               "gpu-profile: %lld launches, %.3f ms of kernels; %lld copies "
               "of %.1f MiB between host and device, %.3f ms\n",
               static_cast<long long>(launches), total,
               static_cast<long long>(copies), copyBytes / 1048576.0,
               copyMilliseconds);
  for (int32_t i : order) {
    const KernelTime &k = profile[i];
    std::fprintf(
        stderr,
        "gpu-profile: %-10s %6.2f%% %10.3f ms %7lld launches "
        "%10.1f us each, %lld blocks of %lld\n",
        kernelNames[i], 100 * k.milliseconds / total, k.milliseconds,
        static_cast<long long>(k.launches), 1000 * k.milliseconds / k.launches,
        static_cast<long long>(k.blocks), static_cast<long long>(k.threads));
  }
}

/// Whether the environment variable `name` is set to something other than
/// "" or "0".
bool isSet(const char *name) {
  const char *value = std::getenv(name);
  return value && *value && std::strcmp(value, "0") != 0;
}

/// Loads the driver, picks device 0, checks its architecture and loads
/// the kernels; once.
void initialize() {
  static bool done = false;
  if (done)
    return;
  done = true;
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!library)
    fail("no NVIDIA driver: libcuda.so.1 cannot be loaded (this executable "
         "was compiled with --target=cuda and needs an NVIDIA GPU)");
  resolve(library, driver.getErrorString, "cuGetErrorString");
  resolve(library, driver.init, "cuInit");
  resolve(library, driver.deviceGetCount, "cuDeviceGetCount");
  resolve(library, driver.deviceGet, "cuDeviceGet");
  resolve(library, driver.deviceGetAttribute, "cuDeviceGetAttribute");
  resolve(library, driver.deviceGetName, "cuDeviceGetName");
  resolve(library, driver.primaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(library, driver.ctxSetCurrent, "cuCtxSetCurrent");
  resolve(library, driver.moduleLoadDataEx, "cuModuleLoadDataEx");
  resolve(library, driver.moduleGetFunction, "cuModuleGetFunction");
  resolve(library, driver.funcSetAttribute, "cuFuncSetAttribute");
  resolve(library, driver.launchKernel, "cuLaunchKernel");
  resolve(library, driver.memAlloc, "cuMemAlloc_v2");
  resolve(library, driver.memGetInfo, "cuMemGetInfo_v2");
  resolve(library, driver.memcpyHtoD, "cuMemcpyHtoD_v2");
  resolve(library, driver.memcpyDtoH, "cuMemcpyDtoH_v2");
  resolve(library, driver.eventCreate, "cuEventCreate");
  resolve(library, driver.eventRecord, "cuEventRecord");
  resolve(library, driver.eventSynchronize, "cuEventSynchronize");
  resolve(library, driver.eventElapsedTime, "cuEventElapsedTime");

  CUresult result = driver.init(0);
  int count = 0;
  if (result == 0)
    result = driver.deviceGetCount(&count);
  if (result != 0 || count == 0)
    fail("no CUDA device" +
         (result != 0 ? " (" + errorText(result) + ")" : std::string()));
  CUdevice device;
  check(driver.deviceGet(&device, 0), "cuDeviceGet");
  char name[256] = {0};
  driver.deviceGetName(name, sizeof(name) - 1, device);
  deviceName = name;
  int major = 0, minor = 0;
  check(driver.deviceGetAttribute(&major, kAttrComputeMajor, device),
        "cuDeviceGetAttribute");
  check(driver.deviceGetAttribute(&minor, kAttrComputeMinor, device),
        "cuDeviceGetAttribute");
  if (major * 10 + minor < tfc_gpu_arch)
    fail("the kernels were compiled for sm_" + std::to_string(tfc_gpu_arch) +
         ", newer than " + deviceName + " (sm_" + std::to_string(major) +
         std::to_string(minor) + "); compile with --gpu-arch=sm_" +
         std::to_string(major) + std::to_string(minor));
  CUcontext context;
  check(driver.primaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(driver.ctxSetCurrent(context), "cuCtxSetCurrent");

  std::vector<char> log(8192, 0);
  int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
  void *values[] = {log.data(), reinterpret_cast<void *>(log.size() - 1)};
  CUmodule module;
  result = driver.moduleLoadDataEx(&module, tfc_gpu_image, 2, options, values);
  if (result != 0)
    fail("loading the kernels on " + deviceName + ": " + errorText(result) +
         (log[0] ? " (" + std::string(log.data()) + ")" : std::string()));
  const char *kernelName = tfc_gpu_kernel_names;
  for (int32_t i = 0; i < tfc_gpu_kernel_count; ++i) {
    CUfunction fn;
    check(driver.moduleGetFunction(&fn, module, kernelName),
          "cuModuleGetFunction");
    if (tfc_gpu_kernel_shared_bytes[i] > kDefaultSharedBytes)
      check(driver.funcSetAttribute(fn, kFuncMaxDynamicShared,
                                    tfc_gpu_kernel_shared_bytes[i]),
            "cuFuncSetAttribute (dynamic shared memory)");
    kernels.push_back(fn);
    kernelNames.push_back(kernelName);
    kernelName += std::strlen(kernelName) + 1;
  }
  if (isSet("TFC_GPU_PROFILE")) {
    profile.resize(tfc_gpu_kernel_count);
    check(driver.eventCreate(&profileStart, 0), "cuEventCreate");
    check(driver.eventCreate(&profileEnd, 0), "cuEventCreate");
    std::atexit(printProfile);
  } else if (isSet("TFC_GPU_GRAPH")) {
    // Profiling times each launch, so it runs them one by one.
    resolve(library, driver.streamCreate, "cuStreamCreate");
    resolve(library, driver.streamBeginCapture, "cuStreamBeginCapture_v2");
    resolve(library, driver.streamEndCapture, "cuStreamEndCapture");
    resolve(library, driver.graphInstantiate, "cuGraphInstantiateWithFlags");
    resolve(library, driver.graphLaunch, "cuGraphLaunch");
    resolve(library, driver.graphDestroy, "cuGraphDestroy");
    check(driver.streamCreate(&graphStream, 0), "cuStreamCreate");
    useGraphs = true;
  }
}

/// Launches `kernel` on `stream` with grid and block `d` and the `count`
/// arguments `args`, timed when profiling.
void issue(int32_t kernel, const int64_t *d, const int64_t *args, size_t count,
           CUstream stream) {
  // Kept between launches: thousands of them make a training step.
  static std::vector<void *> params;
  params.resize(count);
  for (size_t i = 0; i < count; ++i)
    params[i] = const_cast<int64_t *>(&args[i]);
  if (profileStart)
    check(driver.eventRecord(profileStart, nullptr), "cuEventRecord");
  check(driver.launchKernel(kernels.at(kernel), d[0], d[1], d[2], d[3], d[4],
                            d[5], tfc_gpu_kernel_shared_bytes[kernel], stream,
                            params.data(), nullptr),
        "cuLaunchKernel");
  if (profileStart) {
    check(driver.eventRecord(profileEnd, nullptr), "cuEventRecord");
    check(driver.eventSynchronize(profileEnd), "a kernel");
    float milliseconds = 0;
    check(driver.eventElapsedTime(&milliseconds, profileStart, profileEnd),
          "cuEventElapsedTime");
    KernelTime &time = profile[kernel];
    time.launches += 1;
    time.milliseconds += milliseconds;
    time.blocks = d[0] * d[1] * d[2];
    time.threads = d[3] * d[4] * d[5];
  }
}

/// Launches `launch` on `stream`.
void issue(const Launch &launch, CUstream stream) {
  issue(launch.kernel, launch.dims, launch.args.data(), launch.args.size(),
        stream);
}

/// Issues the launches held back: the graph of the same sequence when it
/// was seen before (captured now if this is its second time), otherwise
/// one by one, remembering the sequence.
void flush() {
  if (pending.empty())
    return;
  Sequence *seen = nullptr;
  for (Sequence &sequence : sequences)
    if (sequence.launches == pending)
      seen = &sequence;
  if (!seen) {
    for (const Launch &launch : pending)
      issue(launch, nullptr);
    if (sequences.size() < kMaxSequences)
      sequences.push_back({std::move(pending), nullptr});
    pending.clear();
    return;
  }
  if (!seen->graph) {
    check(driver.streamBeginCapture(graphStream, kCaptureRelaxed),
          "cuStreamBeginCapture");
    for (const Launch &launch : pending)
      issue(launch, graphStream);
    CUgraph graph = nullptr;
    check(driver.streamEndCapture(graphStream, &graph), "cuStreamEndCapture");
    check(driver.graphInstantiate(&seen->graph, graph, 0),
          "cuGraphInstantiateWithFlags");
    check(driver.graphDestroy(graph), "cuGraphDestroy");
  }
  check(driver.graphLaunch(seen->graph, graphStream), "cuGraphLaunch");
  pending.clear();
}

/// `bytes` of device memory, or a one-line error saying how much the model
/// needs and how much is free.
CUdeviceptr allocate(size_t bytes, const char *what) {
  initialize();
  CUdeviceptr pointer = 0;
  CUresult result = driver.memAlloc(&pointer, bytes ? bytes : 1);
  if (result != 0) {
    size_t freeBytes = 0, totalBytes = 0;
    driver.memGetInfo(&freeBytes, &totalBytes);
    fail("the model does not fit in the memory of " + deviceName + ": " + what +
         " needs " + formatBytes(bytes) + " more after " +
         formatBytes(allocatedBytes) + ", " + formatBytes(freeBytes) + " of " +
         formatBytes(totalBytes) + " free");
  }
  allocatedBytes += bytes;
  return pointer;
}

/// When profiling, counts a copy of `bytes` that began at `start`.
void countCopy(double start, int64_t bytes) {
  if (!profileStart)
    return;
  copyMilliseconds += nowMilliseconds() - start;
  copyBytes += bytes;
  copies += 1;
}

/// Copies between host and device, timed when profiling; a copy to the
/// host waits for the kernels before it and reports their errors.
void copyToDevice(CUdeviceptr device, const void *host, int64_t bytes) {
  flush();
  double start = profileStart ? nowMilliseconds() : 0;
  check(driver.memcpyHtoD(device, host, bytes), "copy to the GPU");
  countCopy(start, bytes);
}

void copyToHost(void *host, CUdeviceptr device, int64_t bytes) {
  flush();
  double start = profileStart ? nowMilliseconds() : 0;
  check(driver.memcpyDtoH(host, device, bytes),
        "a kernel or the copy from the GPU");
  countCopy(start, bytes);
}

} // namespace

extern "C" {

/// Launches kernel `kernel` with the arguments in `slots` (8 bytes each),
/// or holds it back for a graph (TFC_GPU_GRAPH).
void tfc_gpu_launch(int32_t kernel, int64_t gx, int64_t gy, int64_t gz,
                    int64_t bx, int64_t by, int64_t bz, int64_t slots,
                    int32_t count) {
  initialize();
  if (gx > 0x7fffffff || gy > 65535 || gz > 65535)
    fail("kernel " + std::to_string(kernel) + ": a grid of " +
         std::to_string(gx) + " x " + std::to_string(gy) + " x " +
         std::to_string(gz) + " blocks exceeds the device's limits");
  auto *args = reinterpret_cast<int64_t *>(slots);
  if (useGraphs) {
    pending.push_back({kernel, {gx, gy, gz, bx, by, bz}, {args, args + count}});
    return;
  }
  const int64_t dims[6] = {gx, gy, gz, bx, by, bz};
  issue(kernel, dims, args, count, nullptr);
}

/// The device memory of arena `number` (`bytes` long), allocated once.
void *tfc_gpu_arena(int32_t number, int64_t bytes) {
  if (arenas.size() <= static_cast<size_t>(number))
    arenas.resize(number + 1, 0);
  if (!arenas[number])
    arenas[number] = allocate(bytes, "its working memory (arena)");
  return reinterpret_cast<void *>(arenas[number]);
}

/// Keeps the host buffer `host` of `bytes` bytes on the device from its
/// next use on (see KeptBuffer).
void tfc_device_keep(const void *host, int64_t bytes) {
  // `train` keeps its state before it writes anything: a missing device
  // stops it there.
  initialize();
  if (!findKept(host))
    kept.push_back({host, bytes});
}

/// Brings the host's copy of a kept buffer up to date.
void tfc_device_read(const void *host) {
  KeptBuffer *buffer = findKept(host);
  if (!buffer || !buffer->hostStale)
    return;
  copyToHost(const_cast<void *>(host), buffer->device, buffer->bytes);
  buffer->hostStale = false;
}

/// Brings the host's copy of a kept buffer up to date for the host to
/// write it; the device's copy is filled again at its next use.
void tfc_device_write(void *host) {
  tfc_device_read(host);
  if (KeptBuffer *buffer = findKept(host))
    buffer->deviceCurrent = false;
}

/// The device copy `id` of a host buffer of `bytes` bytes, filled from it.
/// A kept buffer's copy is the same for every entry point and filled only
/// when the host wrote it.
void *tfc_gpu_to_device(int32_t id, const void *host, int64_t bytes) {
  if (KeptBuffer *buffer = findKept(host); buffer && bytes <= buffer->bytes) {
    if (!buffer->device)
      buffer->device = allocate(buffer->bytes, "the training state");
    if (!buffer->deviceCurrent) {
      copyToDevice(buffer->device, host, buffer->bytes);
      buffer->deviceCurrent = true;
      buffer->hostStale = false;
    }
    return reinterpret_cast<void *>(buffer->device);
  }
  // A kept buffer taken whole by no entry point: its own copy, the host's
  // values first.
  tfc_device_write(const_cast<void *>(host));
  if (buffers.size() <= static_cast<size_t>(id))
    buffers.resize(id + 1, 0);
  if (!buffers[id])
    buffers[id] = allocate(bytes, "an argument buffer");
  copyToDevice(buffers[id], host, bytes);
  return reinterpret_cast<void *>(buffers[id]);
}

/// Copies `bytes` from the device buffer `device` back to `host`; waits
/// for the kernels before it and reports their errors. A kept buffer stays
/// on the device until the host reads it.
void tfc_gpu_to_host(void *host, void *device, int64_t bytes) {
  if (KeptBuffer *buffer = findKept(host);
      buffer && buffer->device == reinterpret_cast<CUdeviceptr>(device)) {
    buffer->hostStale = true;
    return;
  }
  copyToHost(host, reinterpret_cast<CUdeviceptr>(device), bytes);
}

} // extern "C"
