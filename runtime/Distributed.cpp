//===- Distributed.cpp - Data-parallel training over MPI ------------------===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//

#include "runtime/Distributed.h"
#include "runtime/Support.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

#ifdef TFC_HAVE_MPI
// The C API only: no MPI C++ bindings (and their library) in the link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif

namespace tfc::rt {

World world;

#ifdef TFC_HAVE_MPI
bool mpiAvailable() { return true; }
#else
bool mpiAvailable() { return false; }
#endif

int launchedRanks() {
  const char *size = getenv("OMPI_COMM_WORLD_SIZE");
  int64_t n = 0;
  if (!size || !parseInt64(size, n) || n < 1)
    return 1;
  return int(std::min<int64_t>(n, 1 << 30));
}

int threadsPerLocalRank() {
  const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  int64_t n = 0;
  if (!local || !parseInt64(local, n) || n <= 1 || getenv("OMP_NUM_THREADS"))
    return 0;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return int(std::max<int64_t>(1, int64_t(cores) / n));
}

bool startDistributed(std::string &err) {
  int ranks = launchedRanks();
  if (ranks <= 1)
    return true;
#ifdef TFC_HAVE_MPI
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) !=
      MPI_SUCCESS) {
    err = "MPI_Init failed";
    return false;
  }
  world.mpi = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &world.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world.size);
  return true;
#else
  err = format("mpirun started %d ranks, but this executable's runtime was "
               "built without MPI (install libopenmpi-dev and rebuild tfc); "
               "run it without mpirun to train in one process",
               ranks);
  return false;
#endif
}

int endDistributed(int status) {
  if (!world.mpi)
    return status;
#ifdef TFC_HAVE_MPI
  if (world.agreed) {
    MPI_Finalize();
    return status;
  }
#endif
  // Another rank may be waiting in a collective: finalising would wait for
  // it. Exiting with a failure status makes mpirun end the job.
  fflush(stdout);
  fflush(stderr);
  _exit(status != 0 ? status : 1);
}

int failOnRank(const std::string &message) {
  if (world.agreed) {
    if (world.rank == 0)
      fprintf(stderr, "tfc: %s\n", message.c_str());
    return 1;
  }
  if (world.rank > 0) {
    fflush(stdout);
    sleep(1);
  }
  fprintf(stderr, "tfc: rank %d: %s\n", world.rank, message.c_str());
  return 1;
}

#ifdef TFC_HAVE_MPI
namespace {
/// MPI counts are int: large buffers go in pieces.
constexpr int64_t kChunk = int64_t(1) << 30;

void allreduce(void *values, int64_t count, MPI_Datatype type, size_t size,
               MPI_Op op) {
  char *bytes = static_cast<char *>(values);
  for (int64_t done = 0; done < count; done += kChunk) {
    int n = int(std::min(kChunk, count - done));
    MPI_Allreduce(MPI_IN_PLACE, bytes + size_t(done) * size, n, type, op,
                  MPI_COMM_WORLD);
  }
}
} // namespace
#endif

void sumAcrossRanks(float *values, int64_t count) {
#ifdef TFC_HAVE_MPI
  if (world.size > 1)
    allreduce(values, count, MPI_FLOAT, sizeof(float), MPI_SUM);
#else
  (void)values, (void)count;
#endif
}

void sumAcrossRanks(double *values, int64_t count) {
#ifdef TFC_HAVE_MPI
  if (world.size > 1)
    allreduce(values, count, MPI_DOUBLE, sizeof(double), MPI_SUM);
#else
  (void)values, (void)count;
#endif
}

void maxAcrossRanks(int64_t *values, int64_t count) {
#ifdef TFC_HAVE_MPI
  if (world.size > 1)
    allreduce(values, count, MPI_INT64_T, sizeof(int64_t), MPI_MAX);
#else
  (void)values, (void)count;
#endif
}

void broadcastFromRank0(float *values, int64_t count) {
#ifdef TFC_HAVE_MPI
  if (world.size <= 1)
    return;
  for (int64_t done = 0; done < count; done += kChunk)
    MPI_Bcast(values + done, int(std::min(kChunk, count - done)), MPI_FLOAT, 0,
              MPI_COMM_WORLD);
#else
  (void)values, (void)count;
#endif
}

void gatherAcrossRanks(std::vector<int32_t> &values) {
#ifdef TFC_HAVE_MPI
  if (world.size <= 1)
    return;
  int mine = int(values.size());
  std::vector<int> counts(size_t(world.size)), offsets(size_t(world.size));
  MPI_Allgather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < world.size; ++r) {
    offsets[size_t(r)] = total;
    total += counts[size_t(r)];
  }
  std::vector<int32_t> all(size_t(std::max(total, 1)));
  MPI_Allgatherv(values.data(), mine, MPI_INT32_T, all.data(), counts.data(),
                 offsets.data(), MPI_INT32_T, MPI_COMM_WORLD);
  all.resize(size_t(total));
  values.swap(all);
#else
  (void)values;
#endif
}

bool ranksAgree(const char *what, uint64_t hash, const std::string &detail,
                std::string &err) {
#ifdef TFC_HAVE_MPI
  if (world.size <= 1)
    return true;
  std::vector<uint64_t> hashes(size_t(world.size));
  MPI_Allgather(&hash, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T,
                MPI_COMM_WORLD);
  int odd = -1;
  for (int r = 1; r < world.size && odd < 0; ++r)
    if (hashes[size_t(r)] != hashes[0])
      odd = r;
  if (odd < 0)
    return true;
  // The odd rank's own description, sent to everyone.
  int length = int(detail.size());
  MPI_Bcast(&length, 1, MPI_INT, odd, MPI_COMM_WORLD);
  std::string text(size_t(length), '\0');
  if (world.rank == odd)
    text = detail;
  MPI_Bcast(text.data(), length, MPI_CHAR, odd, MPI_COMM_WORLD);
  err = format("rank %d: its %s differs from rank 0's%s", odd, what,
               text.empty() ? "" : (" (" + text + ")").c_str());
  return false;
#else
  (void)what, (void)hash, (void)detail, (void)err;
  return true;
#endif
}

uint64_t hashBytes(const void *data, size_t size, uint64_t hash) {
  const unsigned char *p = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i) {
    hash ^= p[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint64_t hashExecutable() {
  FILE *file = fopen("/proc/self/exe", "rb");
  if (!file)
    return 0;
  uint64_t hash = hashBytes(nullptr, 0);
  std::vector<unsigned char> chunk(size_t(1) << 20);
  size_t n;
  while ((n = fread(chunk.data(), 1, chunk.size(), file)) > 0)
    hash = hashBytes(chunk.data(), n, hash);
  fclose(file);
  return hash;
}

} // namespace tfc::rt
