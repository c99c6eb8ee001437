//===- CudaGraphTest.cpp - libtfcrt_cuda's graphs, against a fake driver --===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Runs the host side of a GPU executable (libtfcrt_cuda) against
/// FakeCudaDriver.cpp with TFC_GPU_GRAPH=1: what reaches the driver, in
/// what order, when the same launches repeat between copies. What a graph
/// does on a real GPU only a GPU run checks (scripts/gpu-check.sh).
///
//===----------------------------------------------------------------------===//

#include <gtest/gtest.h>

#include <cstdint>
#include <dlfcn.h>
#include <string>

// The symbols of a compiled model's kernels: three kernels of no code, the
// second with 64 KiB of dynamic shared memory (above the 48 KiB a kernel
// may use without asking).
extern "C" const char tfc_gpu_image[] = "";
extern "C" const int64_t tfc_gpu_image_size = 0;
extern "C" const int32_t tfc_gpu_image_format = 0;
extern "C" const char tfc_gpu_kernel_names[] = "k0\0k1\0k2";
extern "C" const int32_t tfc_gpu_kernel_count = 3;
extern "C" const int32_t tfc_gpu_kernel_shared_bytes[] = {0, 65536, 0};
extern "C" const int32_t tfc_gpu_arch = 80;

extern "C" {
void tfc_gpu_launch(int32_t kernel, int64_t gx, int64_t gy, int64_t gz,
                    int64_t bx, int64_t by, int64_t bz, int64_t slots,
                    int32_t count);
void *tfc_gpu_to_device(int32_t id, const void *host, int64_t bytes);
void tfc_gpu_to_host(void *host, void *device, int64_t bytes);
}

namespace {

/// Launches `kernel` on one block with the arguments (buffer, `value`).
void launch(int32_t kernel, void *buffer, int64_t value) {
  int64_t slots[2] = {reinterpret_cast<int64_t>(buffer), value};
  tfc_gpu_launch(kernel, 1, 1, 1, 32, 1, 1, reinterpret_cast<int64_t>(slots),
                 2);
}

/// What the fake driver logged since the last call.
std::string newLog() {
  static size_t seen = 0;
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(library, nullptr);
  auto read =
      reinterpret_cast<const char *(*)()>(dlsym(library, "tfc_fake_cuda_log"));
  std::string all = read();
  std::string fresh = all.substr(seen);
  seen = all.size();
  return fresh;
}

int captures() {
  void *library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  return reinterpret_cast<int (*)()>(
      dlsym(library, "tfc_fake_cuda_captures"))();
}

TEST(CudaGraphTest, RepeatedLaunchesReplayAsOneGraph) {
  int64_t host[4] = {1, 2, 3, 4};
  void *device = tfc_gpu_to_device(0, host, sizeof(host));
  // Loading the kernels allows k1 its shared memory.
  EXPECT_EQ(newLog(), "k1.shared=65536 to-device ");
  auto step = [&](int64_t value) {
    launch(0, device, value);
    launch(1, device, value + 1);
    launch(2, device, value + 2);
    tfc_gpu_to_host(host, device, sizeof(host));
  };

  // The first time: each launch on its own, before the copy back.
  step(10);
  EXPECT_EQ(newLog(), "k0(10) k1(11)/65536 k2(12) to-host ");
  EXPECT_EQ(captures(), 0);
  // The second time: captured once, launched as one graph.
  step(10);
  EXPECT_EQ(newLog(), "[ k0(10) k1(11)/65536 k2(12) ] to-host ");
  EXPECT_EQ(captures(), 1);
  // From then on the same graph, not captured again.
  step(10);
  step(10);
  EXPECT_EQ(newLog(), "[ k0(10) k1(11)/65536 k2(12) ] to-host "
                      "[ k0(10) k1(11)/65536 k2(12) ] to-host ");
  EXPECT_EQ(captures(), 1);
  // An argument that differs is another sequence: its first time runs
  // launch by launch, and a copy to the device waits for what came before.
  step(20);
  launch(0, device, 30);
  tfc_gpu_to_device(0, host, sizeof(host));
  launch(1, device, 31);
  tfc_gpu_to_host(host, device, sizeof(host));
  EXPECT_EQ(newLog(), "k0(20) k1(21)/65536 k2(22) to-host k0(30) to-device "
                      "k1(31)/65536 to-host ");
  step(20);
  EXPECT_EQ(newLog(), "[ k0(20) k1(21)/65536 k2(22) ] to-host ");
  EXPECT_EQ(captures(), 2);
}

} // namespace
