// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Worker index and count from TF_CONFIG, Open MPI, Slurm or torchrun.

#include "tfdist/distribute/launcher.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "tfdist/base/text.h"

namespace tfdist::dist {
namespace {

Result<LauncherTopology> FromRankSize(const char* rank_name, const char* size_name,
                                      const char* rank, const char* size, const char* source) {
  LauncherTopology t;
  t.source = source;
  if (size == nullptr) {
    return Status::InvalidArgument(
        fmt::format("{} is set but {} is not; both are needed", rank_name, size_name));
  }
  TFDIST_ASSIGN_OR_RETURN(t.worker, ParseNonNegative(rank_name, rank));
  TFDIST_ASSIGN_OR_RETURN(t.workers, ParseNonNegative(size_name, size));
  if (*t.workers < 1 || *t.worker >= *t.workers) {
    return Status::InvalidArgument(
        fmt::format("{}={} is not a rank of {}={}", rank_name, rank, size_name, size));
  }
  return t;
}

Result<LauncherTopology> FromTfConfig(const char* text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("TF_CONFIG is not valid JSON");
  }
  auto count = [&](const char* type) -> size_t {
    if (!j.contains("cluster") || !j["cluster"].is_object() || !j["cluster"].contains(type))
      return 0;
    const auto& v = j["cluster"][type];
    return v.is_array() ? v.size() : 0;
  };
  const size_t chiefs = count("chief");
  const size_t workers = count("worker");
  if (chiefs + workers == 0) {
    return Status::InvalidArgument("TF_CONFIG names no chief or worker in its cluster");
  }
  if (!j.contains("task") || !j["task"].is_object() || !j["task"].contains("type") ||
      !j["task"]["type"].is_string() || !j["task"].contains("index") ||
      !j["task"]["index"].is_number_integer()) {
    return Status::InvalidArgument("TF_CONFIG has no task with a type and an integer index");
  }
  const std::string type = j["task"]["type"];
  const int64_t index = j["task"]["index"];
  LauncherTopology t;
  t.source = "TF_CONFIG";
  t.workers = static_cast<int64_t>(chiefs + workers);
  if (type == "chief") {
    if (index < 0 || static_cast<size_t>(index) >= chiefs) {
      return Status::InvalidArgument(
          fmt::format("TF_CONFIG task chief {} is not in the cluster", index));
    }
    t.worker = index;
  } else if (type == "worker") {
    if (index < 0 || static_cast<size_t>(index) >= workers) {
      return Status::InvalidArgument(fmt::format(
          "TF_CONFIG task worker {} is not in the cluster's {} workers", index, workers));
    }
    t.worker = static_cast<int64_t>(chiefs) + index;
  } else {
    return Status::InvalidArgument(
        fmt::format("TF_CONFIG task type '{}' reads no input (expected chief or worker)", type));
  }
  return t;
}

}  // namespace

Result<LauncherTopology> TopologyFromEnvironment(
    const std::function<const char*(const char*)>& getenv) {
  if (const char* tf = getenv("TF_CONFIG"); tf != nullptr && *tf != '\0') return FromTfConfig(tf);
  if (const char* rank = getenv("OMPI_COMM_WORLD_RANK")) {
    return FromRankSize("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", rank,
                        getenv("OMPI_COMM_WORLD_SIZE"), "Open MPI");
  }
  if (const char* rank = getenv("SLURM_PROCID")) {
    return FromRankSize("SLURM_PROCID", "SLURM_NTASKS", rank, getenv("SLURM_NTASKS"), "Slurm");
  }
  if (const char* rank = getenv("RANK")) {
    return FromRankSize("RANK", "WORLD_SIZE", rank, getenv("WORLD_SIZE"), "torchrun");
  }
  return LauncherTopology{};
}

}  // namespace tfdist::dist
