// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
#include <doctest/doctest.h>

#include <map>
#include <string>

#include "tfdist/cluster/cluster.h"

namespace tfdist::cluster {
namespace {

Result<Launch> From(const std::map<std::string, std::string>& env) {
  return LaunchFromEnvironment([&](const char* name) -> const char* {
    auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST_CASE("a launcher's rank and size come from its own variables") {
  Result<Launch> none = From({});
  REQUIRE(none.ok());
  CHECK(!none->launched);
  CHECK(none->size == 1);

  Result<Launch> ompi =
      From({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"PMIX_RANK", "2"}});
  REQUIRE(ompi.ok());
  CHECK(ompi->launched);
  CHECK(ompi->rank == 2);
  CHECK(ompi->size == 4);
  CHECK(ompi->launcher == "Open MPI");

  Result<Launch> srun = From({{"PMIX_RANK", "1"}, {"SLURM_NTASKS", "3"}, {"SLURM_PROCID", "1"}});
  REQUIRE(srun.ok());
  CHECK(srun->rank == 1);
  CHECK(srun->size == 3);
  CHECK(srun->launcher == "PMIx");

  Result<Launch> pmi = From({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}});
  REQUIRE(pmi.ok());
  CHECK(pmi->launcher == "PMI");

  // A Slurm batch script's own variables, without a step's PMI: no launch.
  Result<Launch> batch = From({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}});
  REQUIRE(batch.ok());
  CHECK(!batch->launched);
}

TEST_CASE("variables that name no rank are an error naming them") {
  Result<Launch> past = From({{"OMPI_COMM_WORLD_RANK", "4"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
  REQUIRE(!past.ok());
  CHECK(past.status().message() ==
        "OMPI_COMM_WORLD_RANK=4 is not a rank of OMPI_COMM_WORLD_SIZE=4");
  Result<Launch> text = From({{"PMI_RANK", "one"}, {"PMI_SIZE", "2"}});
  REQUIRE(!text.ok());
  CHECK(text.status().message() == "PMI_RANK='one' is not a non-negative integer");
}

TEST_CASE("without a job, every step is this process's own value") {
  REQUIRE(Join(Launch{}).ok());
  CHECK(Rank() == 0);
  CHECK(Size() == 1);
  CHECK(IsRoot());
  Result<std::vector<std::string>> all = Gather("mine");
  REQUIRE(all.ok());
  CHECK(*all == std::vector<std::string>{"mine"});
  CHECK(*Broadcast("value") == "value");
  CHECK(*AllTrue(false) == false);
  CHECK(*Max(-3) == -3);
  CHECK(Barrier().ok());
  CHECK(!HostName().empty());
  Leave();
}

}  // namespace
}  // namespace tfdist::cluster
