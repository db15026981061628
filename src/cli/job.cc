// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A command in a job of several ranks: see job.h. What the ranks send each
// other is JSON (nlohmann-json), small: a rank's host and file list digest,
// the split, and each file's result.

#include "job.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <nlohmann/json.hpp>
#include <numeric>
#include <utility>

#include "report.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/base/json.h"
#include "tfdist/cluster/cluster.h"
#include "tfdist/io/file_list.h"

namespace tfdist::cli {
namespace {

using Json = nlohmann::json;

JobPart job_part = JobPart::kEach;  // of the command StartJob was given

// The error of a rank that rank 0 stopped (and reports): silent.
constexpr std::string_view kStoppedByRoot = "stopped by rank 0";

std::string RankName(int rank, const std::string& host) {
  return fmt::format("rank {} ({})", rank, host);
}

// A status another rank sent.
Status StatusFrom(const Json& j) {
  return StatusFromJson(j).value_or(Status::Internal("a rank sent an error this one cannot read"));
}

Json OptionalJson(const std::optional<uint64_t>& v) { return v ? Json(*v) : Json(nullptr); }
std::optional<uint64_t> OptionalFromJson(const Json& j) {
  return j.is_null() ? std::nullopt : std::optional<uint64_t>(j.get<uint64_t>());
}

// `mine`, one JSON value per file of this rank, gathered to rank 0 and put
// back in the files' order there.
Result<std::vector<Json>> GatherInOrder(const SplitFiles& split, const Json& mine) {
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::string> all, cluster::Gather(DumpJson(mine)));
  std::vector<Json> out;
  if (!cluster::IsRoot()) return out;
  out.resize(split.owner.size());
  std::vector<size_t> next(all.size(), 0);  // each rank's next value
  std::vector<Json> ranks(all.size());
  for (size_t r = 0; r < all.size(); ++r) ranks[r] = ParseJson(all[r]);
  for (size_t i = 0; i < split.owner.size(); ++i) {
    const auto r = static_cast<size_t>(split.owner[i]);
    if (next[r] >= ranks[r].size()) {
      return Status::Internal(
          fmt::format("rank {} sent {} results, fewer than its files", r, ranks[r].size()));
    }
    out[i] = std::move(ranks[r][next[r]++]);
  }
  return out;
}

}  // namespace

JobPart JobPartOf(std::string_view command) {
  if (command == "count" || command == "verify" || command == "digest" || command == "index" ||
      command == "reshard" || command == "convert") {
    return JobPart::kSplit;
  }
  // Each rank takes its worker from the launcher's variables.
  if (command == "run") return JobPart::kWorkers;
  if (command == "layout" || command == "check") return JobPart::kEach;
  return JobPart::kRootOnly;
}

Result<bool> StartJob(std::string_view command) {
  job_part = JobPartOf(command);
  TFDIST_ASSIGN_OR_RETURN(const cluster::Launch launch,
                          cluster::LaunchFromEnvironment([](const char* n) { return getenv(n); }));
  if (!launch.launched || launch.size <= 1) return true;
  // layout and check only read which worker they are.
  if (job_part == JobPart::kEach) return true;
  if (!cluster::Available()) {
    if (launch.rank == 0) {
      PrintMessage("warning",
                   fmt::format("started by {} as {} ranks, but this tfdist was built without "
                               "MPI: each rank runs the command alone ({})",
                               launch.launcher, launch.size,
                               command == "run" ? "as one worker of the layout"
                                                : "and prints its own result"));
    }
    job_part = JobPart::kEach;
    return true;
  }
  TFDIST_RETURN_IF_ERROR(cluster::Join(launch));
  if (job_part == JobPart::kSplit && !cluster::IsRoot()) QuietWarnings();
  // A worker's report and errors go to rank 0, which prints the cluster's.
  if (job_part == JobPart::kWorkers) {
    CaptureMessages();
  }
  if (job_part == JobPart::kWorkers && !cluster::IsRoot()) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) {
      return Status::Internal("cannot send this rank's standard output to /dev/null");
    }
  }
  return job_part != JobPart::kRootOnly || cluster::IsRoot();
}

int EndJob(int rc) {
  if (cluster::Size() > 1 && job_part != JobPart::kEach && !Interrupted()) {
    Result<std::string> shared = cluster::Broadcast(std::to_string(rc));
    if (shared.ok()) {
      rc = std::atoi(shared->c_str());
    } else if (!Interrupted()) {
      rc = std::max(rc, ReportJobError(shared.status(), false));
    }
  }
  // A rank stopped by a signal leaves without MPI's goodbye, which would
  // wait for ranks that may never say theirs; the launcher ends the rest.
  if (!Interrupted()) cluster::Leave();
  return rc;
}

Status CheckSameFiles(const Result<std::vector<std::string>>& files) {
  if (cluster::Size() == 1) return files.status();
  // What each rank found, for rank 0 to compare.
  Json found;
  found["host"] = cluster::HostName();
  found["ok"] = files.ok();
  if (files.ok()) {
    std::string all;
    for (const std::string& f : *files) all += f + '\n';
    found["files"] = files->size();
    found["hash"] = std::hash<std::string>{}(all);
  } else {
    found["error"] = StatusToJson(files.status());
  }
  TFDIST_ASSIGN_OR_RETURN(const std::vector<std::string> ranks, cluster::Gather(DumpJson(found)));
  Status stop;  // rank 0's verdict
  if (cluster::IsRoot()) {
    if (!files.ok()) {
      stop = files.status();
    } else {
      const Json root = ParseJson(ranks[0]);
      for (size_t r = 1; r < ranks.size() && stop.ok(); ++r) {
        const Json other = ParseJson(ranks[r]);
        const std::string who = RankName(static_cast<int>(r), other["host"]);
        if (!other["ok"].get<bool>()) {
          stop = StatusFrom(other["error"]).Annotate(who);
        } else if (other["hash"] != root["hash"] || other["files"] != root["files"]) {
          stop = Status::InvalidArgument(fmt::format(
              "{} found {} files where rank 0 ({}) found {}, or other ones: every rank must see "
              "the same inputs (a shared file system, or an object store)",
              who, other["files"].get<size_t>(), root["host"].get<std::string>(),
              root["files"].get<size_t>()));
        }
      }
    }
  }
  TFDIST_ASSIGN_OR_RETURN(const std::string shared,
                          cluster::Broadcast(stop.ok() ? "" : std::string(stop.message())));
  if (shared.empty()) return Status::OK();
  if (!cluster::IsRoot()) return Status::Cancelled(std::string(kStoppedByRoot));
  return stop;
}

Result<std::optional<SplitFiles>> SplitFileArgs(const FileArgs& args) {
  Result<ResolvedFiles> resolved = ResolveFileArgs(args);
  const Status same =
      CheckSameFiles(resolved.ok() ? Result<std::vector<std::string>>(resolved->files)
                                   : Result<std::vector<std::string>>(resolved.status()));
  if (!same.ok()) {
    if (same.code() == StatusCode::kCancelled && same.message() == kStoppedByRoot) {
      return std::optional<SplitFiles>();
    }
    return same;
  }
  SplitFiles split;
  split.resolved = std::move(*resolved);
  const std::vector<std::string>& files = split.resolved.files;
  split.owner.assign(files.size(), 0);
  if (cluster::Size() > 1) {
    // Rank 0 splits the files by their sizes, which it alone looks up.
    std::string owner;
    if (cluster::IsRoot()) {
      std::vector<uint64_t> sizes(files.size());
      for (size_t i = 0; i < sizes.size(); ++i) sizes[i] = io::FileSize(files[i]).value_or(0);
      std::vector<int> parts = io::SplitByBytes(sizes, cluster::Size());
      // Standard input, which only rank 0 reads, is rank 0's.
      for (size_t i = 0; i < parts.size(); ++i) {
        if (files[i] == "-") parts[i] = 0;
      }
      owner = DumpJson(Json(parts));
    }
    TFDIST_ASSIGN_OR_RETURN(owner, cluster::Broadcast(std::move(owner)));
    split.owner = ParseJson(owner).get<std::vector<int>>();
  }
  for (size_t i = 0; i < split.owner.size(); ++i) {
    if (split.owner[i] == cluster::Rank()) split.mine.push_back(i);
  }
  return std::optional<SplitFiles>(std::move(split));
}

std::vector<std::string> MyFiles(const SplitFiles& split) {
  std::vector<std::string> files;
  files.reserve(split.mine.size());
  for (size_t i : split.mine) files.push_back(split.resolved.files[i]);
  return files;
}

Result<std::vector<FileScan>> GatherScans(const SplitFiles& split, std::vector<FileScan> mine) {
  if (cluster::Size() == 1) return mine;
  Json out = Json::array();
  for (const FileScan& s : mine) {
    Json j;
    j["records"] = s.count.records;
    j["bytes"] = s.count.payload_bytes;
    j["compression"] = static_cast<int>(s.count.compression);
    j["status"] = StatusToJson(s.count.status);
    j["error_offset"] = OptionalJson(s.count.error_offset);
    j["source"] = static_cast<int>(s.source);
    j["stale_index"] = s.stale_index;
    j["file_bytes"] = OptionalJson(s.file_bytes);
    out.push_back(std::move(j));
  }
  TFDIST_ASSIGN_OR_RETURN(std::vector<Json> all, GatherInOrder(split, out));
  std::vector<FileScan> scans(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const Json& j = all[i];
    FileScan& s = scans[i];
    s.path = split.resolved.files[i];
    s.count.records = j["records"];
    s.count.payload_bytes = j["bytes"];
    s.count.compression = static_cast<io::Compression>(j["compression"].get<int>());
    s.count.status = StatusFrom(j["status"]);
    s.count.error_offset = OptionalFromJson(j["error_offset"]);
    s.source = static_cast<io::CountSource>(j["source"].get<int>());
    s.stale_index = j["stale_index"];
    s.file_bytes = OptionalFromJson(j["file_bytes"]);
  }
  return scans;
}

Result<std::vector<io::FileDigest>> GatherDigests(const SplitFiles& split,
                                                  std::vector<io::FileDigest> mine) {
  if (cluster::Size() == 1) return mine;
  Json out = Json::array();
  for (const io::FileDigest& f : mine) {
    Json j;
    j["records"] = f.digest.records;
    j["bytes"] = f.digest.payload_bytes;
    j["unordered"] = f.digest.unordered;
    j["ordered"] = f.digest.ordered;
    j["compression"] = static_cast<int>(f.compression);
    j["status"] = StatusToJson(f.status);
    j["error_offset"] = OptionalJson(f.error_offset);
    out.push_back(std::move(j));
  }
  TFDIST_ASSIGN_OR_RETURN(std::vector<Json> all, GatherInOrder(split, out));
  std::vector<io::FileDigest> digests(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    const Json& j = all[i];
    io::FileDigest& f = digests[i];
    f.digest.records = j["records"];
    f.digest.payload_bytes = j["bytes"];
    f.digest.unordered = j["unordered"];
    f.digest.ordered = j["ordered"];
    f.compression = static_cast<io::Compression>(j["compression"].get<int>());
    f.status = StatusFrom(j["status"]);
    f.error_offset = OptionalFromJson(j["error_offset"]);
  }
  return digests;
}

Result<std::vector<std::optional<Result<io::IndexedCount>>>> GatherIndexes(
    const SplitFiles& split, std::vector<Result<io::IndexedCount>> mine) {
  Json out = Json::array();
  for (size_t i = 0; i < split.mine.size(); ++i) {
    Json j;
    if (i >= mine.size()) {
      j["reached"] = false;
    } else if (mine[i].ok()) {
      j["records"] = mine[i]->count.records;
      j["bytes"] = mine[i]->count.payload_bytes;
      j["index"] = mine[i]->index_path;
    } else {
      j["status"] = StatusToJson(mine[i].status());
    }
    out.push_back(std::move(j));
  }
  std::vector<std::optional<Result<io::IndexedCount>>> results;
  if (cluster::Size() == 1) {
    for (Result<io::IndexedCount>& r : mine) results.emplace_back(std::move(r));
    results.resize(split.owner.size());
    return results;
  }
  TFDIST_ASSIGN_OR_RETURN(std::vector<Json> all, GatherInOrder(split, out));
  for (const Json& j : all) {
    if (j.contains("reached")) {
      results.emplace_back(std::nullopt);
    } else if (j.contains("status")) {
      results.emplace_back(Result<io::IndexedCount>(StatusFrom(j["status"])));
    } else {
      io::IndexedCount c;
      c.count.records = j["records"];
      c.count.payload_bytes = j["bytes"];
      c.index_path = j["index"];
      results.emplace_back(std::move(c));
    }
  }
  return results;
}

Status CheckSharedFolder(const std::string& folder) {
  // The probe's name, from rank 0 (its host and process), to every rank,
  // which looks for it in its own `folder`.
  std::string name;
  if (cluster::IsRoot()) {
    name = fmt::format(".tfdist-probe-{}-{}", cluster::HostName(), getpid());
    if (std::FILE* f = std::fopen(fmt::format("{}/{}", folder, name).c_str(), "w")) {
      std::fclose(f);
    } else {
      name.clear();
    }
  }
  TFDIST_ASSIGN_OR_RETURN(name, cluster::Broadcast(name));
  if (name.empty()) {
    if (!cluster::IsRoot()) return Status::Cancelled(std::string(kStoppedByRoot));
    return Status::FailedPrecondition(fmt::format("{}: cannot write a probe file in it", folder));
  }
  const std::string probe = fmt::format("{}/{}", folder, name);
  struct stat st;
  const bool found = ::stat(probe.c_str(), &st) == 0;
  Json mine;
  mine["found"] = found;
  mine["host"] = cluster::HostName();
  Result<std::vector<std::string>> all = cluster::Gather(DumpJson(mine));
  // Rank 0 removes the probe once every rank has looked (the gather).
  if (cluster::IsRoot()) std::remove(probe.c_str());
  if (!all.ok()) return all.status();
  Status verdict;
  if (cluster::IsRoot()) {
    for (size_t r = 1; r < all->size() && verdict.ok(); ++r) {
      const Json other = ParseJson((*all)[r]);
      if (!other["found"].get<bool>()) {
        verdict = Status::FailedPrecondition(fmt::format(
            "{}: {} does not see the file rank 0 wrote in it: the folder must be on a file "
            "system every rank sees",
            folder, RankName(static_cast<int>(r), other["host"])));
      }
    }
  }
  TFDIST_ASSIGN_OR_RETURN(const std::string shared,
                          cluster::Broadcast(verdict.ok() ? "" : verdict.message()));
  if (shared.empty()) return Status::OK();
  if (!cluster::IsRoot()) return Status::Cancelled(std::string(kStoppedByRoot));
  return verdict;
}

int ReportUsageError(const Status& status, bool json) {
  if (cluster::IsRoot()) return ReportError(status, json);
  return ExitCodeFor(status);
}

int ReportJobError(const Status& status, bool json) {
  if (status.code() == StatusCode::kCancelled && status.message() == kStoppedByRoot) {
    return ExitCodeFor(Status::InvalidArgument(""));  // rank 0 says why; its status is the job's
  }
  if (cluster::IsRoot()) return ReportError(status, json);
  PrintMessage("error", Describe(status.Annotate(RankName(cluster::Rank(), cluster::HostName()))));
  return ExitCodeFor(status);
}

}  // namespace tfdist::cli
