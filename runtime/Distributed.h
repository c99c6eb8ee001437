//===- Distributed.h - Data-parallel training over MPI ----------*- C++ -*-===//
//
// Part of tfc, a compiler for efficient transformers.
//
//===----------------------------------------------------------------------===//
///
/// \file
/// `mpirun -np N ./model train ...` runs N copies of the executable (ranks)
/// that train one model together, data-parallel:
///
///   - step t's global batch is N * B rows (B = the compiled batch); rank r
///     computes rows r*B .. r*B + B - 1 of it with the generated step, so N
///     ranks see the samples that one process compiled with batch N * B sees
///   - the flat gradient buffer (and the loss after it) is summed over the
///     ranks with one in-place MPI_Allreduce and scaled by 1/N: the mean
///     over the global batch, since each rank's loss is a mean over an equal
///     share of it
///   - every rank then runs the generated optimizer step on the same
///     gradients, so all ranks hold the same parameters after every step
///   - rank 0's parameters (seeded init, --weights or --resume) are
///     broadcast before the first step
///   - validation and test batches are global batches too (N * B windows
///     or lines, rank r evaluating its B of each, as in training), so
///     `--eval-batches K` covers what it covers for one process compiled
///     with batch N * B; the ranks' loss sums (and classifier predictions)
///     are reduced; rank 0 alone writes checkpoints, metrics and curves
///   - each rank draws its own dropout masks (rank 0 those of one process)
///   - a second, two-number all-reduce per step makes the ranks stop after
///     the same step on any rank's signal or time limit; at every
///     checkpoint the ranks compare a hash of their parameters
///
/// `mpirun -np 1` is a single process (MPI is not initialised).
///
/// Without mpirun nothing here calls MPI: the launch is detected from Open
/// MPI's environment (OMPI_COMM_WORLD_SIZE), and MPI_Init runs only for
/// `train` under mpirun. A runtime built without MPI (TFC_HAVE_MPI unset)
/// trains single-process and refuses a launch by mpirun with N > 1.
///
/// Outcomes that every rank reaches together (the end of the run, an
/// interruption, a non-finite loss, a disagreement found at start-up) end
/// with MPI_Finalize. Any other error ends only the rank that meets it: it
/// prints `tfc: rank R: <reason>` and exits without finalising, and mpirun
/// then ends the whole job (it does the same when a rank dies).
///
//===----------------------------------------------------------------------===//

#ifndef TFC_RUNTIME_DISTRIBUTED_H
#define TFC_RUNTIME_DISTRIBUTED_H

#include <cstdint>
#include <string>
#include <vector>

namespace tfc::rt {

/// The ranks of this run; {0, 1} for a single process.
struct World {
  int rank = 0;
  int size = 1;
  bool mpi = false;    ///< MPI_Init has run.
  bool agreed = false; ///< The exit status is one that every rank reached.
};

extern World world;

/// True when the runtime was built with MPI.
bool mpiAvailable();

/// The number of ranks mpirun started (OMPI_COMM_WORLD_SIZE), 1 without
/// mpirun. Does not initialise MPI.
int launchedRanks();

/// The default worker threads of each rank when mpirun started several
/// ranks on this machine (OMPI_COMM_WORLD_LOCAL_SIZE) and neither --threads
/// nor OMP_NUM_THREADS chose: the machine's cores shared among them. 0
/// otherwise (the OpenMP runtime's own default: every core).
int threadsPerLocalRank();

/// Initialises MPI when the process was started by mpirun; fills `world`.
/// Fails when mpirun started several ranks and the runtime has no MPI.
bool startDistributed(std::string &err);

/// Ends the process's part in the run and returns `status`: MPI_Finalize
/// when every rank agreed on the outcome (world.agreed), otherwise the
/// process exits at once, without finalising, so that mpirun ends the job.
int endDistributed(int status);

/// `fail` of a run of several ranks: prints `tfc: rank R: <message>`, or,
/// when every rank meets the error together (world.agreed), prints
/// `tfc: <message>` on rank 0 only. A rank other than 0 first waits a
/// second, so that an error that every rank meets on its own is printed by
/// rank 0 before mpirun ends the job. Returns 1.
int failOnRank(const std::string &message);

/// Sums `count` values over the ranks, in place (no-op for one rank).
void sumAcrossRanks(float *values, int64_t count);
void sumAcrossRanks(double *values, int64_t count);
/// Element-wise maximum over the ranks, in place.
void maxAcrossRanks(int64_t *values, int64_t count);

/// Copies rank 0's `count` floats to every rank.
void broadcastFromRank0(float *values, int64_t count);

/// Appends every rank's `values` in rank order, on every rank.
void gatherAcrossRanks(std::vector<int32_t> &values);

/// Checks that every rank has the same `hash` for `what` (e.g. "executable",
/// "training data"). On a mismatch every rank returns false with the same
/// `err`: "rank R: its <what> differs from rank 0's (<detail>)", where
/// `detail` is rank R's own description (e.g. its path).
bool ranksAgree(const char *what, uint64_t hash, const std::string &detail,
                std::string &err);

/// FNV-1a over bytes, chained through `hash`.
uint64_t hashBytes(const void *data, size_t size,
                   uint64_t hash = 0xcbf29ce484222325ull);

/// The hash of this process's executable file (/proc/self/exe); 0 when it
/// cannot be read.
uint64_t hashExecutable();

} // namespace tfc::rt

#endif // TFC_RUNTIME_DISTRIBUTED_H
