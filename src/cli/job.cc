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
#include "tfdist/cluster/cluster.h"

namespace tfdist::cli {
namespace {

using Json = nlohmann::json;

JobPart job_part = JobPart::kEach;  // of the command StartJob was given

// The error of a rank that rank 0 stopped (and reports): silent.
constexpr std::string_view kStoppedByRoot = "stopped by rank 0";

std::string RankName(int rank, const std::string& host) {
  return fmt::format("rank {} ({})", rank, host);
}

Json StatusToJson(const Status& s) {
  Json j;
  j["code"] = static_cast<int>(s.code());
  j["message"] = s.message();
  if (s.position()) j["position"] = *s.position();
  if (s.advice().remedy != Remedy::kNone) {
    j["remedy"] = static_cast<int>(s.advice().remedy);
    j["subject"] = s.advice().subject;
  }
  return j;
}

Status StatusFromJson(const Json& j) {
  Status s(static_cast<StatusCode>(j.at("code").get<int>()), j.at("message").get<std::string>());
  if (j.contains("position")) s = std::move(s).WithPosition(j["position"].get<size_t>());
  if (j.contains("remedy")) {
    s = std::move(s).WithAdvice(static_cast<Remedy>(j["remedy"].get<int>()),
                                j["subject"].get<std::string>());
  }
  return s;
}

Json OptionalJson(const std::optional<uint64_t>& v) { return v ? Json(*v) : Json(nullptr); }
std::optional<uint64_t> OptionalFromJson(const Json& j) {
  return j.is_null() ? std::nullopt : std::optional<uint64_t>(j.get<uint64_t>());
}

// `mine`, one JSON value per file of this rank, gathered to rank 0 and put
// back in the files' order there.
Result<std::vector<Json>> GatherInOrder(const SplitFiles& split, const Json& mine) {
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::string> all, cluster::Gather(mine.dump()));
  std::vector<Json> out;
  if (!cluster::IsRoot()) return out;
  out.resize(split.owner.size());
  std::vector<size_t> next(all.size(), 0);  // each rank's next value
  std::vector<Json> ranks(all.size());
  for (size_t r = 0; r < all.size(); ++r) ranks[r] = Json::parse(all[r]);
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

// Splits files of `sizes` bytes across `ranks`: the largest first, each to
// the rank with the fewest bytes so far (the lowest such rank), which keeps
// the largest share within one file of the smallest. Standard input ("-"),
// which only rank 0 reads, is rank 0's.
std::vector<int> Split(const std::vector<std::string>& files, const std::vector<uint64_t>& sizes,
                       int ranks) {
  std::vector<size_t> order(files.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return sizes[a] > sizes[b]; });
  std::vector<uint64_t> load(static_cast<size_t>(ranks), 0);
  std::vector<int> owner(files.size(), 0);
  for (size_t i : order) {
    size_t r = 0;
    if (files[i] != "-") {
      r = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    }
    owner[i] = static_cast<int>(r);
    load[r] += sizes[i];
  }
  return owner;
}

}  // namespace

JobPart JobPartOf(std::string_view command) {
  if (command == "count" || command == "verify" || command == "digest" || command == "index") {
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

Result<std::optional<SplitFiles>> SplitFileArgs(const FileArgs& args) {
  Result<ResolvedFiles> resolved = ResolveFileArgs(args);
  if (cluster::Size() == 1) {
    if (!resolved.ok()) return resolved.status();
    SplitFiles split;
    split.resolved = std::move(*resolved);
    split.mine.resize(split.resolved.files.size());
    std::iota(split.mine.begin(), split.mine.end(), size_t{0});
    split.owner.assign(split.resolved.files.size(), 0);
    return std::optional<SplitFiles>(std::move(split));
  }
  // What each rank found, for rank 0 to compare.
  Json found;
  found["host"] = cluster::HostName();
  found["ok"] = resolved.ok();
  if (resolved.ok()) {
    std::string all;
    for (const std::string& f : resolved->files) all += f + '\n';
    found["files"] = resolved->files.size();
    found["hash"] = std::hash<std::string>{}(all);
  } else {
    found["error"] = StatusToJson(resolved.status());
  }
  TFDIST_ASSIGN_OR_RETURN(const std::vector<std::string> ranks, cluster::Gather(found.dump()));
  Status stop;  // rank 0's verdict
  Json verdict;
  if (cluster::IsRoot()) {
    if (!resolved.ok()) {
      stop = resolved.status();
    } else {
      const Json root = Json::parse(ranks[0]);
      for (size_t r = 1; r < ranks.size() && stop.ok(); ++r) {
        const Json other = Json::parse(ranks[r]);
        const std::string who = RankName(static_cast<int>(r), other["host"]);
        if (!other["ok"].get<bool>()) {
          stop = StatusFromJson(other["error"]).Annotate(who);
        } else if (other["hash"] != root["hash"] || other["files"] != root["files"]) {
          stop = Status::InvalidArgument(fmt::format(
              "{} found {} files where rank 0 ({}) found {}, or other ones: every rank must see "
              "the same inputs (a shared file system, or an object store)",
              who, other["files"].get<size_t>(), root["host"].get<std::string>(),
              root["files"].get<size_t>()));
        }
      }
    }
    verdict["go"] = stop.ok();
    if (stop.ok()) {
      std::vector<uint64_t> sizes(resolved->files.size());
      for (size_t i = 0; i < sizes.size(); ++i) {
        sizes[i] = FileSize(resolved->files[i]).value_or(0);
      }
      verdict["owner"] = Split(resolved->files, sizes, cluster::Size());
    }
  }
  TFDIST_ASSIGN_OR_RETURN(const std::string shared, cluster::Broadcast(verdict.dump()));
  if (!cluster::IsRoot()) verdict = Json::parse(shared);
  if (!verdict["go"].get<bool>()) {
    if (cluster::IsRoot()) return stop;
    return std::optional<SplitFiles>();
  }
  SplitFiles split;
  split.resolved = std::move(*resolved);
  split.owner = verdict["owner"].get<std::vector<int>>();
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
    s.count.status = StatusFromJson(j["status"]);
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
    f.status = StatusFromJson(j["status"]);
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
      results.emplace_back(Result<io::IndexedCount>(StatusFromJson(j["status"])));
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
  Result<std::vector<std::string>> all = cluster::Gather(mine.dump());
  // Rank 0 removes the probe once every rank has looked (the gather).
  if (cluster::IsRoot()) std::remove(probe.c_str());
  if (!all.ok()) return all.status();
  Status verdict;
  if (cluster::IsRoot()) {
    for (size_t r = 1; r < all->size() && verdict.ok(); ++r) {
      const Json other = Json::parse((*all)[r]);
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
