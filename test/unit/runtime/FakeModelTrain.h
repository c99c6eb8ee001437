//===- FakeModelTrain.h - Test-only training functions ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// Test only: what the fake models share to stand in for generated
/// tfc_train_step / tfc_optimizer_step: plain Adam over the flat buffers
/// (the base rate it is given after linear warm-up, then constant; betas 0.9
/// and 0.999, eps 1e-8, no clipping) and hooks that the command-line tests
/// drive through the environment:
///   TFC_FAKE_SLEEP_MS=N   every train step sleeps N ms (so a test can
///                         interrupt or kill a run in the middle)
///   TFC_FAKE_NAN_AT=N     the N-th train step of the process reports a NaN
///                         loss
///   TFC_FAKE_LOG_FULL_AT=N  from the N-th train step of the process on,
///                         the descriptor the runtime writes metrics.jsonl
///                         through points at /dev/full: every later write
///                         to the log fails with ENOSPC, as on a full disk
///
//===----------------------------------------------------------------------===//

#ifndef TFC_TEST_UNIT_RUNTIME_FAKEMODELTRAIN_H
#define TFC_TEST_UNIT_RUNTIME_FAKEMODELTRAIN_H

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <string>
#include <unistd.h>

namespace fake {

/// Points every descriptor of this process whose file name ends with
/// `suffix` at /dev/full.
inline void redirectToDevFull(const char *suffix) {
  DIR *fds = opendir("/proc/self/fd");
  if (!fds)
    return;
  size_t suffixSize = strlen(suffix);
  while (dirent *entry = readdir(fds)) {
    int fd = atoi(entry->d_name);
    std::string link = std::string("/proc/self/fd/") + entry->d_name;
    char target[4096];
    ssize_t n = readlink(link.c_str(), target, sizeof(target) - 1);
    if (entry->d_name[0] == '.' || n < ssize_t(suffixSize) ||
        memcmp(target + n - suffixSize, suffix, suffixSize) != 0)
      continue;
    int full = open("/dev/full", O_WRONLY | O_CLOEXEC);
    if (full >= 0) {
      dup2(full, fd);
      close(full);
    }
  }
  closedir(fds);
}

/// Runs the environment hooks; returns true when this step's loss must be
/// NaN.
inline bool trainStepHooks() {
  static long calls = 0;
  ++calls;
  const char *fullAt = getenv("TFC_FAKE_LOG_FULL_AT");
  if (fullAt && atol(fullAt) == calls)
    redirectToDevFull("/metrics.jsonl");
  if (const char *ms = getenv("TFC_FAKE_SLEEP_MS"))
    usleep(useconds_t(atol(ms) * 1000));
  const char *nanAt = getenv("TFC_FAKE_NAN_AT");
  return nanAt && atol(nanAt) == calls;
}

/// The rate of update `step` (1-based) of `schedule` = {base rate, steps,
/// warm-up steps}: linear warm-up, then the base rate.
inline float rate(int64_t step, const float *schedule) {
  float t = float(step);
  return schedule[0] * t / std::fmax(t, schedule[2]);
}

/// One Adam update of every float of the buffers, in place.
inline void adam(int64_t n, float *params, const float *grads, float *m,
                 float *v, int64_t step, float lr, float *stats) {
  const float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f;
  double norm = 0;
  for (int64_t i = 0; i < n; ++i)
    norm += double(grads[i]) * double(grads[i]);
  float c1 = 1.0f - std::pow(beta1, float(step));
  float c2 = 1.0f - std::pow(beta2, float(step));
  for (int64_t i = 0; i < n; ++i) {
    m[i] = beta1 * m[i] + (1 - beta1) * grads[i];
    v[i] = beta2 * v[i] + (1 - beta2) * grads[i] * grads[i];
    params[i] -= lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + eps);
  }
  stats[0] = float(std::sqrt(norm));
  stats[1] = lr;
}

/// A counter-based coin for the fake "dropout": true for about a quarter
/// of (seed, i).
inline bool dropped(int64_t seed, int64_t i) {
  uint64_t z = uint64_t(seed) ^ (uint64_t(i) * 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return ((z ^ (z >> 31)) & 3) == 0;
}

} // namespace fake

#endif // TFC_TEST_UNIT_RUNTIME_FAKEMODELTRAIN_H
