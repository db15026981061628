// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The cluster module over MPI: the only file of tfdist that includes
// mpi.h (tools/check_modules.py enforces it).
//
// Every step is one of MPI's nonblocking collectives, waited for by
// polling (MPI_Test, then a sleep that grows to 0.2 ms): a blocking call
// would spin on its core, and ranks oversubscribed on a few cores would
// take them from the one that works; a poll also sees a signal.

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <thread>
#include <vector>

#include "tfdist/base/interrupt.h"
#include "tfdist/cluster/cluster.h"

namespace tfdist::cluster {
namespace {

bool joined = false;  // MPI was started by Join
int rank = 0;
int size = 1;
MPI_Comm steps = MPI_COMM_NULL;  // StepAllReduce's own communicator
// TellFailure's messages: a communicator of their own, this rank's receive
// of one (posted at Join), and the sends of this rank's.
MPI_Comm failures = MPI_COMM_NULL;
MPI_Request failure_told = MPI_REQUEST_NULL;
int failure_word = 0;
std::vector<MPI_Request> failure_sends;
bool told = false;
constexpr int kFailureTag = 29;
std::vector<std::string> hosts;  // by rank, gathered at Join

Status MpiError(int code, std::string_view what) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) length = 0;
  return Status::Internal(
      fmt::format("MPI: {} failed: {}", what, std::string_view(text, static_cast<size_t>(length))));
}

// Waits for `request`, started by `what` with result `started`; a signal
// ends the wait, unless `through_signals`.
Status Wait(int started, MPI_Request* request, std::string_view what,
            bool through_signals = false) {
  if (started != MPI_SUCCESS) return MpiError(started, what);
  auto pause = std::chrono::microseconds(20);
  for (;;) {
    int done = 0;
    if (int rc = MPI_Test(request, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) {
      return MpiError(rc, what);
    }
    if (done) return Status::OK();
    if (Interrupted() && !through_signals) return Status::Interrupted();
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::microseconds(200));
  }
}

}  // namespace

bool Available() { return true; }

Status Join(const Launch& launch) {
  if (!launch.launched || launch.size <= 1) return Status::OK();
  int provided = 0;
  if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
      rc != MPI_SUCCESS) {
    return Status::Unavailable(
        fmt::format("MPI did not start (error {}) in a job started by {}", rc, launch.launcher));
  }
  joined = true;
  // Errors are returned, and worded by the caller, rather than ending the job.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (int rc = MPI_Comm_dup(MPI_COMM_WORLD, &steps); rc != MPI_SUCCESS) {
    return MpiError(rc, "making the steps' communicator");
  }
  MPI_Comm_set_errhandler(steps, MPI_ERRORS_RETURN);
  if (int rc = MPI_Comm_dup(MPI_COMM_WORLD, &failures); rc != MPI_SUCCESS) {
    return MpiError(rc, "making the failures' communicator");
  }
  MPI_Comm_set_errhandler(failures, MPI_ERRORS_RETURN);
  TFDIST_ASSIGN_OR_RETURN(hosts, AllGather(HostName(), false));
  if (int rc = MPI_Irecv(&failure_word, 1, MPI_INT, MPI_ANY_SOURCE, kFailureTag, failures,
                         &failure_told);
      rc != MPI_SUCCESS) {
    return MpiError(rc, "waiting for news of a failure");
  }
  return Status::OK();
}

void Leave() {
  if (!joined) return;
  joined = false;
  if (steps != MPI_COMM_NULL) MPI_Comm_free(&steps);
  // The receive no failure matched is cancelled; this rank's own news of
  // one has gone out (small messages are sent at once), or is dropped.
  if (failure_told != MPI_REQUEST_NULL) {
    MPI_Cancel(&failure_told);
    MPI_Wait(&failure_told, MPI_STATUS_IGNORE);
  }
  for (MPI_Request& r : failure_sends) {
    if (r != MPI_REQUEST_NULL) MPI_Request_free(&r);
  }
  if (failures != MPI_COMM_NULL) MPI_Comm_free(&failures);
  MPI_Finalize();
}

void Abort(int code) {
  if (!joined) ExitRemovingTempFiles(code);
  // MPI_Abort ends this process too; its temporary files go first.
  IgnoreInterrupts();
  MPI_Abort(MPI_COMM_WORLD, code);
  ExitRemovingTempFiles(code);
}

int Rank() { return rank; }
int Size() { return size; }

Result<std::vector<std::string>> Gather(std::string_view mine) {
  if (!joined) return std::vector<std::string>{std::string(mine)};
  if (mine.size() > INT_MAX) {
    return Status::ResourceExhausted(fmt::format(
        "rank {}'s result is {} bytes, over the 2 GiB that MPI sends at once", rank, mine.size()));
  }
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(rank == 0 ? static_cast<size_t>(size) : 0);
  MPI_Request request;
  TFDIST_RETURN_IF_ERROR(Wait(
      MPI_Igather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD, &request),
      &request, "gathering the results' sizes"));
  std::vector<int> offsets(lengths.size());
  int64_t total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(std::min<int64_t>(total, INT_MAX));
    total += lengths[r];
  }
  // Every rank takes part in the data's gather, also when rank 0 finds the
  // whole too large (it then says so after it).
  const bool too_large = total > INT_MAX;
  std::string all(rank == 0 && !too_large ? static_cast<size_t>(total) : 0, '\0');
  std::vector<int> counts = lengths;
  if (too_large) std::fill(counts.begin(), counts.end(), 0);
  TFDIST_RETURN_IF_ERROR(
      Wait(MPI_Igatherv(mine.data(), too_large && rank == 0 ? 0 : length, MPI_CHAR, all.data(),
                        counts.data(), offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD, &request),
           &request, "gathering the results"));
  std::vector<std::string> out;
  if (rank != 0) return out;
  if (too_large) {
    return Status::ResourceExhausted(fmt::format(
        "the ranks' results are {} bytes together, over the 2 GiB that MPI gathers at once",
        total));
  }
  for (size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
  }
  return out;
}

Result<std::vector<std::string>> AllGather(std::string_view mine, bool through_signals) {
  if (!joined) return std::vector<std::string>{std::string(mine)};
  if (mine.size() > INT_MAX) {
    return Status::ResourceExhausted(fmt::format(
        "rank {}'s part is {} bytes, over the 2 GiB that MPI sends at once", rank, mine.size()));
  }
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<size_t>(size));
  MPI_Request request;
  TFDIST_RETURN_IF_ERROR(Wait(
      MPI_Iallgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD, &request),
      &request, "sharing the parts' sizes", through_signals));
  std::vector<int> offsets(lengths.size());
  int64_t total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(std::min<int64_t>(total, INT_MAX));
    total += lengths[r];
  }
  // Every rank sees the same total, and all stop together when it is too large.
  if (total > INT_MAX) {
    return Status::ResourceExhausted(fmt::format(
        "the ranks' parts are {} bytes together, over the 2 GiB that MPI shares at once", total));
  }
  std::string all(static_cast<size_t>(total), '\0');
  TFDIST_RETURN_IF_ERROR(
      Wait(MPI_Iallgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                           offsets.data(), MPI_CHAR, MPI_COMM_WORLD, &request),
           &request, "sharing the parts", through_signals));
  std::vector<std::string> out;
  out.reserve(lengths.size());
  for (size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r])));
  }
  return out;
}

Group& JobGroup() {
  class Ranks final : public Group {
   public:
    int rank() const override { return Rank(); }
    int size() const override { return Size(); }
    Result<std::vector<std::string>> AllGather(std::string mine) override {
      return cluster::AllGather(mine, /*through_signals=*/true);
    }
    std::string Name(int r) const override {
      const auto i = static_cast<size_t>(r);
      return fmt::format("rank {} ({})", r, i < hosts.size() ? hosts[i] : HostName());
    }
  };
  static Ranks group;
  return group;
}

Result<std::string> Broadcast(std::string value) {
  if (!joined) return value;
  int64_t length = static_cast<int64_t>(value.size());
  MPI_Request request;
  TFDIST_RETURN_IF_ERROR(Wait(MPI_Ibcast(&length, 1, MPI_INT64_T, 0, MPI_COMM_WORLD, &request),
                              &request, "broadcasting a size"));
  if (length > INT_MAX) {
    return Status::ResourceExhausted(
        fmt::format("rank 0's {} bytes are over the 2 GiB that MPI broadcasts at once", length));
  }
  value.resize(static_cast<size_t>(length));
  TFDIST_RETURN_IF_ERROR(Wait(
      MPI_Ibcast(value.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD, &request),
      &request, "broadcasting"));
  return value;
}

Result<bool> AllTrue(bool mine) {
  if (!joined) return mine;
  int in = mine ? 1 : 0, out = 0;
  MPI_Request request;
  TFDIST_RETURN_IF_ERROR(
      Wait(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD, &request), &request,
           "agreeing"));
  return out != 0;
}

Result<int64_t> Max(int64_t mine) {
  if (!joined) return mine;
  int64_t out = 0;
  MPI_Request request;
  TFDIST_RETURN_IF_ERROR(
      Wait(MPI_Iallreduce(&mine, &out, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD, &request), &request,
           "taking the largest value"));
  return out;
}

Status Barrier() {
  if (!joined) return Status::OK();
  MPI_Request request;
  return Wait(MPI_Ibarrier(MPI_COMM_WORLD, &request), &request, "waiting for every rank");
}

Result<StepVote> StepAllReduce(uint64_t bytes, const StepVote& mine) {
  if (!joined) return mine;
  // The gradient's doubles (its size rounded up), then the three votes,
  // summed.
  const size_t n = static_cast<size_t>((bytes + 7) / 8);
  if (n > INT_MAX - 3) {
    return Status::InvalidArgument(
        fmt::format("an all-reduce of {} bytes is over the 16 GiB that one call sums", bytes));
  }
  thread_local std::vector<double> in, out;
  in.assign(n + 3, 1.0);
  in[n] = mine.failed ? 1 : 0;
  in[n + 1] = mine.any_batch ? 1 : 0;
  in[n + 2] = mine.any_end ? 1 : 0;
  out.resize(n + 3);
  MPI_Request request;
  TFDIST_RETURN_IF_ERROR(Wait(MPI_Iallreduce(in.data(), out.data(), static_cast<int>(n + 3),
                                             MPI_DOUBLE, MPI_SUM, steps, &request),
                              &request, "the step's all-reduce"));
  return StepVote{out[n] > 0, out[n + 1] > 0, out[n + 2] > 0};
}

void TellFailure() {
  if (!joined || !failure_sends.empty()) return;
  static const int word = 1;
  for (int r = 0; r < size; ++r) {
    if (r == rank) continue;
    MPI_Request request;
    if (MPI_Isend(&word, 1, MPI_INT, r, kFailureTag, failures, &request) == MPI_SUCCESS) {
      failure_sends.push_back(request);
    }
  }
  // Small messages go out eagerly; a few polls see them off.
  for (int i = 0; i < 1000; ++i) {
    int done = 0;
    if (MPI_Testall(static_cast<int>(failure_sends.size()), failure_sends.data(), &done,
                    MPI_STATUSES_IGNORE) != MPI_SUCCESS ||
        done) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

bool FailureTold() {
  if (!joined || told) return told;
  if (failure_told == MPI_REQUEST_NULL) return false;
  int done = 0;
  if (MPI_Test(&failure_told, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) return false;
  told = done != 0;
  return told;
}

}  // namespace tfdist::cluster
