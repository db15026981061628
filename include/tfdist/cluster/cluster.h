// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The ranks of a job started by an MPI launcher (mpirun, srun): which one
// this process is, and the few collective steps tfdist's commands take
// together: agree, gather to rank 0, broadcast from rank 0. Without a
// launcher, or in a build without MPI, the job is this process alone, and
// every step is local.
//
// Only this module speaks MPI (src/cluster/mpi.cc). Every wait polls MPI's
// nonblocking calls with short sleeps rather than spinning, so that ranks
// oversubscribed on a few cores leave them to the ranks that work, and a
// wait ends with Status::Interrupted on SIGINT or SIGTERM.

#ifndef TFDIST_CLUSTER_CLUSTER_H_
#define TFDIST_CLUSTER_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/group.h"
#include "tfdist/base/result.h"
#include "tfdist/base/status.h"

namespace tfdist::cluster {

// What the environment says of a launcher: Open MPI's mpirun
// (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE), or a PMIx or PMI launcher
// such as srun (PMIX_RANK with SLURM_NTASKS or PMI_SIZE; PMI_RANK, PMI_SIZE).
struct Launch {
  bool launched = false;  // by an MPI launcher
  int rank = 0;
  int size = 1;
  std::string launcher;  // "Open MPI", "PMIx", "PMI"; empty when not launched
};
// Error: InvalidArgument naming the variable that is not a rank of the size.
Result<Launch> LaunchFromEnvironment(const std::function<const char*(const char*)>& getenv);

// Whether this build talks to other ranks (it was built with MPI).
bool Available();

// Joins the job's ranks: MPI's start when `launch` says a launcher started
// more than one rank and the build has MPI; otherwise nothing (a job of
// one). Called once, before any other function here; Leave() at the end.
// Error: Unavailable when MPI cannot start.
Status Join(const Launch& launch);
// Ends this rank's part (MPI's finalize) once every rank calls it; nothing
// when Join started nothing.
void Leave();
// Ends the whole job at once, every rank with exit status `code`: for a
// rank that cannot go on with the others (they would wait for it forever).
[[noreturn]] void Abort(int code);

// This rank and the number of ranks (0 and 1 without a job).
int Rank();
int Size();
inline bool IsRoot() { return Rank() == 0; }
// This host's name (gethostname).
std::string HostName();
// The job as a Group (group.h), for the library's steps that share work:
// its members are the ranks, named "rank R (HOST)"; its AllGather waits
// through signals, so that a rank stopped by one tells the others (which
// then stop too) rather than leave them waiting. A job of one without a
// launcher.
Group& JobGroup();

// Every rank's `mine`, by rank, at rank 0; an empty vector elsewhere.
// Called by every rank. Error: Interrupted; Internal for MPI's errors.
Result<std::vector<std::string>> Gather(std::string_view mine);
// Every rank's `mine`, by rank, at every rank. Called by every rank.
// `through_signals`: a signal does not end the wait (a second one ends the
// process, as always), so that a rank stopped by one still tells the
// others. Error: as Gather; ResourceExhausted over 2 GiB in all.
Result<std::vector<std::string>> AllGather(std::string_view mine, bool through_signals = false);
// Rank 0's `value`, at every rank. Called by every rank.
Result<std::string> Broadcast(std::string value);
// Whether `mine` is true at every rank. Called by every rank.
Result<bool> AllTrue(bool mine);
// The largest of every rank's `mine`, at every rank.
Result<int64_t> Max(int64_t mine);
// Returns when every rank has called it.
Status Barrier();

// The all-reduce of each global step of a synchronous job, as
// tf.distribute's multi-worker iterator takes one to agree on the step
// before it: whether any rank's replicas have a batch, whether any has
// ended its epoch, and whether any rank failed, with `bytes` of a
// stand-in gradient summed beside them. Every rank calls it once per step;
// a rank that fails calls it once more with `failed`, so that the others
// stop at the same all-reduce rather than wait for it forever. It runs on
// a communicator of its own, apart from the other steps here.
struct StepVote {
  bool failed = false;
  bool any_batch = false;
  bool any_end = false;
};
// Each field true where it is at some rank.
Result<StepVote> StepAllReduce(uint64_t bytes, const StepVote& mine);

// For ranks that do not meet at each step: a rank that fails tells every
// other rank at once (TellFailure), and each asks, as often as it can,
// whether one did (FailureTold). Both return at once; nothing without a
// job.
void TellFailure();
bool FailureTold();

}  // namespace tfdist::cluster

#endif  // TFDIST_CLUSTER_CLUSTER_H_
