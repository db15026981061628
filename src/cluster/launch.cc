// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// What the environment says of an MPI launcher, and the host's name: the
// part of the cluster module that needs no MPI.

#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <string_view>

#include "tfdist/base/text.h"
#include "tfdist/cluster/cluster.h"

namespace tfdist::cluster {
namespace {

// A rank or size: a non-negative int.
Result<int> Number(const char* name, const char* text) {
  TFDIST_ASSIGN_OR_RETURN(const int64_t v, ParseNonNegative(name, text));
  if (v > INT_MAX) {
    return Status::InvalidArgument(
        fmt::format("{}='{}' is more ranks than MPI counts", name, text));
  }
  return static_cast<int>(v);
}

Result<Launch> FromRankSize(const char* rank_name, const char* rank, const char* size_name,
                            const char* size, const char* launcher) {
  Launch l;
  l.launcher = launcher;
  TFDIST_ASSIGN_OR_RETURN(l.rank, Number(rank_name, rank));
  TFDIST_ASSIGN_OR_RETURN(l.size, Number(size_name, size));
  if (l.size < 1 || l.rank >= l.size) {
    return Status::InvalidArgument(
        fmt::format("{}={} is not a rank of {}={}", rank_name, rank, size_name, size));
  }
  l.launched = true;
  return l;
}

}  // namespace

Result<Launch> LaunchFromEnvironment(const std::function<const char*(const char*)>& getenv) {
  if (const char* rank = getenv("OMPI_COMM_WORLD_RANK")) {
    if (const char* size = getenv("OMPI_COMM_WORLD_SIZE")) {
      return FromRankSize("OMPI_COMM_WORLD_RANK", rank, "OMPI_COMM_WORLD_SIZE", size, "Open MPI");
    }
  }
  // srun with PMIx: the rank, and the size from Slurm or PMI.
  if (const char* rank = getenv("PMIX_RANK")) {
    if (const char* size = getenv("SLURM_NTASKS")) {
      return FromRankSize("PMIX_RANK", rank, "SLURM_NTASKS", size, "PMIx");
    }
    if (const char* size = getenv("PMI_SIZE")) {
      return FromRankSize("PMIX_RANK", rank, "PMI_SIZE", size, "PMIx");
    }
  }
  if (const char* rank = getenv("PMI_RANK")) {
    if (const char* size = getenv("PMI_SIZE")) {
      return FromRankSize("PMI_RANK", rank, "PMI_SIZE", size, "PMI");
    }
  }
  return Launch{};
}

std::string HostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof name) != 0) return "unknown";
  name[HOST_NAME_MAX] = '\0';
  return name;
}

}  // namespace tfdist::cluster
