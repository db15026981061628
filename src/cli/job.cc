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
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/file_list.h"
#include "tfdist/io/record_reader.h"
#include "tfdist/io/storage.h"

namespace tfdist::cli {
namespace {

using Json = nlohmann::json;

JobPart job_part = JobPart::kEach;  // of the command StartJob was given

// The smallest file read in byte ranges, one per rank: two parts of
// CountRecords' size.
constexpr uint64_t kMinRangedBytes = uint64_t{64} << 20;

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

// What rank 0 gathers: a JSON value per file, in the files' order (null
// for a file read in byte ranges), and per such file, each rank's value
// for its range, by rank.
struct Gathered {
  std::vector<Json> files;
  std::vector<std::vector<Json>> ranges;
};

// `files`, one JSON value per whole file of this rank, and `ranges`, one
// per file read in byte ranges, gathered to rank 0 and put in order there.
Result<Gathered> GatherInOrder(const SplitFiles& split, Json files, Json ranges) {
  Json mine;
  mine["files"] = std::move(files);
  mine["ranges"] = std::move(ranges);
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::string> all, cluster::Gather(DumpJson(mine)));
  Gathered out;
  if (!cluster::IsRoot()) return out;
  out.files.resize(split.owner.size());
  std::vector<size_t> next(all.size(), 0);  // each rank's next value
  std::vector<Json> ranks(all.size());
  for (size_t r = 0; r < all.size(); ++r) ranks[r] = ParseJson(all[r]);
  for (size_t i = 0; i < split.owner.size(); ++i) {
    if (split.owner[i] < 0) continue;
    const auto r = static_cast<size_t>(split.owner[i]);
    const Json& theirs = ranks[r]["files"];
    if (next[r] >= theirs.size()) {
      return Status::Internal(
          fmt::format("rank {} sent {} results, fewer than its files", r, theirs.size()));
    }
    out.files[i] = theirs[next[r]++];
  }
  out.ranges.resize(split.ranged.size());
  for (size_t k = 0; k < split.ranged.size(); ++k) {
    for (size_t r = 0; r < ranks.size(); ++r) {
      const Json& theirs = ranks[r]["ranges"];
      if (k >= theirs.size()) {
        return Status::Internal(
            fmt::format("rank {} sent {} ranges, fewer than the files read by "
                        "ranges",
                        r, theirs.size()));
      }
      out.ranges[k].push_back(theirs[k]);
    }
  }
  return out;
}

Json RecordCountJson(const io::RecordCount& c) {
  Json j;
  j["records"] = c.records;
  j["bytes"] = c.payload_bytes;
  j["compression"] = static_cast<int>(c.compression);
  j["status"] = StatusToJson(c.status);
  j["error_offset"] = OptionalJson(c.error_offset);
  return j;
}

io::RecordCount RecordCountFromJson(const Json& j) {
  io::RecordCount c;
  c.records = j["records"];
  c.payload_bytes = j["bytes"];
  c.compression = static_cast<io::Compression>(j["compression"].get<int>());
  c.status = StatusFrom(j["status"]);
  c.error_offset = OptionalFromJson(j["error_offset"]);
  return c;
}

Json DigestJson(const io::FileDigest& f) {
  Json j;
  j["records"] = f.digest.records;
  j["bytes"] = f.digest.payload_bytes;
  j["unordered"] = f.digest.unordered;
  j["ordered"] = f.digest.ordered;
  j["compression"] = static_cast<int>(f.compression);
  j["status"] = StatusToJson(f.status);
  j["error_offset"] = OptionalJson(f.error_offset);
  return j;
}

io::FileDigest DigestFromJson(const Json& j) {
  io::FileDigest f;
  f.digest.records = j["records"];
  f.digest.payload_bytes = j["bytes"];
  f.digest.unordered = j["unordered"];
  f.digest.ordered = j["ordered"];
  f.compression = static_cast<io::Compression>(j["compression"].get<int>());
  f.status = StatusFrom(j["status"]);
  f.error_offset = OptionalFromJson(j["error_offset"]);
  return f;
}

// The options of a read by byte ranges: of an uncompressed file.
io::RecordReaderOptions ForRanges(io::RecordReaderOptions options) {
  options.compression = io::Compression::kNone;
  return options;
}

// This rank's range of each file read by ranges, read by `read` (with
// `options`), as JSON: its bounds, and its `result` by `to_json`.
template <typename Range, typename R>
Json ReadMyRanges(const SplitFiles& split, const io::RecordReaderOptions& options,
                  Range (*read)(const std::string&, const io::RecordReaderOptions&, uint64_t,
                                uint64_t, uint64_t, size_t),
                  R Range::*result, Json (*to_json)(const R&)) {
  Json ranges = Json::array();
  for (size_t k = 0; k < split.ranged.size(); ++k) {
    const auto [from, to] = MyRange(split, k);
    const Range range = read(split.resolved.files[split.ranged[k]], ForRanges(options), from, to,
                             uint64_t{32} << 20, 0);
    ranges.push_back({{"begin", OptionalJson(range.begin)},
                      {"end", range.end},
                      {"result", to_json(range.*result)}});
  }
  return ranges;
}

// The result for `path` of every rank's range of it (ReadMyRanges), by
// `join`.
template <typename Range, typename R>
R JoinGathered(const std::string& path, const io::RecordReaderOptions& options,
               const std::vector<Json>& gathered, R Range::*result, R (*from_json)(const Json&),
               R (*join)(const std::string&, const io::RecordReaderOptions&,
                         std::span<const Range>)) {
  std::vector<Range> ranges;
  for (const Json& j : gathered) {
    Range& range = ranges.emplace_back();
    range.begin = OptionalFromJson(j["begin"]);
    range.end = j["end"];
    range.*result = from_json(j["result"]);
  }
  return join(path, ForRanges(options), ranges);
}

// Whether `path`, read with `compression`, is an uncompressed file: declared
// so, or detected from its first bytes.
bool Uncompressed(const std::string& path, io::Compression compression) {
  if (compression != io::Compression::kAuto) return compression == io::Compression::kNone;
  Result<std::unique_ptr<io::ByteSource>> source = io::OpenFileSource(path);
  if (!source.ok()) return false;
  std::string prefix(64 * 1024, '\0');
  Result<size_t> n = (*source)->Read(prefix);
  if (!n.ok()) return false;
  prefix.resize(*n);
  return io::DetectCompression(prefix) == io::Compression::kNone;
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

std::pair<uint64_t, uint64_t> MyRange(const SplitFiles& split, size_t k) {
  const uint64_t size = split.ranged_sizes[k];
  const auto ranks = static_cast<uint64_t>(cluster::Size());
  const auto r = static_cast<uint64_t>(cluster::Rank());
  // size / ranks * i, and the rest spread over the first cuts: no overflow.
  auto cut = [&](uint64_t i) { return size / ranks * i + std::min(i, size % ranks); };
  return {cut(r), cut(r + 1)};
}

Result<std::optional<SplitFiles>> SplitFileArgs(const FileArgs& args, bool by_ranges) {
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
    std::string verdict;
    if (cluster::IsRoot()) {
      const int ranks = cluster::Size();
      std::vector<uint64_t> sizes(files.size());
      uint64_t total = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        sizes[i] = io::FileSize(files[i]).value_or(0);
        total += sizes[i];
      }
      // A local uncompressed file larger than a rank's share, and large
      // enough for parts, is read in byte ranges, one per rank.
      Json ranged = Json::array();
      std::vector<uint64_t> whole = sizes;
      for (size_t i = 0; by_ranges && i < files.size(); ++i) {
        if (sizes[i] < kMinRangedBytes || sizes[i] * static_cast<uint64_t>(ranks) <= total ||
            files[i] == "-" || io::IsRemote(files[i]) ||
            !Uncompressed(files[i], split.resolved.compression)) {
          continue;
        }
        ranged.push_back({i, sizes[i]});
        whole[i] = 0;  // each rank's load grows alike
      }
      std::vector<int> parts = io::SplitByBytes(whole, ranks);
      for (const Json& r : ranged) parts[r[0].get<size_t>()] = -1;
      // Standard input, which only rank 0 reads, is rank 0's.
      for (size_t i = 0; i < parts.size(); ++i) {
        if (files[i] == "-") parts[i] = 0;
      }
      verdict = DumpJson(Json{{"owner", parts}, {"ranged", ranged}});
    }
    TFDIST_ASSIGN_OR_RETURN(verdict, cluster::Broadcast(std::move(verdict)));
    const Json shared = ParseJson(verdict);
    split.owner = shared["owner"].get<std::vector<int>>();
    for (const Json& r : shared["ranged"]) {
      split.ranged.push_back(r[0].get<size_t>());
      split.ranged_sizes.push_back(r[1].get<uint64_t>());
    }
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

Result<std::vector<FileScan>> GatherScans(const SplitFiles& split, std::vector<FileScan> mine,
                                          const io::RecordReaderOptions& options) {
  if (cluster::Size() == 1) return mine;
  Json files = Json::array();
  for (const FileScan& s : mine) {
    Json j = RecordCountJson(s.count);
    j["source"] = static_cast<int>(s.source);
    j["stale_index"] = s.stale_index;
    j["file_bytes"] = OptionalJson(s.file_bytes);
    files.push_back(std::move(j));
  }
  Json ranges =
      ReadMyRanges(split, options, io::CountFileRange, &io::RangeCount::count, RecordCountJson);
  TFDIST_ASSIGN_OR_RETURN(Gathered all, GatherInOrder(split, std::move(files), std::move(ranges)));
  if (!cluster::IsRoot()) return std::vector<FileScan>();
  std::vector<FileScan> scans(all.files.size());
  for (size_t i = 0; i < all.files.size(); ++i) {
    const Json& j = all.files[i];
    FileScan& s = scans[i];
    s.path = split.resolved.files[i];
    if (j.is_null()) continue;  // read by ranges
    s.count = RecordCountFromJson(j);
    s.source = static_cast<io::CountSource>(j["source"].get<int>());
    s.stale_index = j["stale_index"];
    s.file_bytes = OptionalFromJson(j["file_bytes"]);
  }
  for (size_t k = 0; k < split.ranged.size(); ++k) {
    FileScan& s = scans[split.ranged[k]];
    s.count = JoinGathered(s.path, options, all.ranges[k], &io::RangeCount::count,
                           RecordCountFromJson, io::JoinCountedRanges);
    s.source = io::CountSource::kScan;
    s.file_bytes = split.ranged_sizes[k];
  }
  return scans;
}

Result<std::vector<io::FileDigest>> GatherDigests(const SplitFiles& split,
                                                  std::vector<io::FileDigest> mine,
                                                  const io::RecordReaderOptions& options) {
  if (cluster::Size() == 1) return mine;
  Json files = Json::array();
  for (const io::FileDigest& f : mine) files.push_back(DigestJson(f));
  Json ranges =
      ReadMyRanges(split, options, io::DigestFileRange, &io::RangeDigest::digest, DigestJson);
  TFDIST_ASSIGN_OR_RETURN(Gathered all, GatherInOrder(split, std::move(files), std::move(ranges)));
  if (!cluster::IsRoot()) return std::vector<io::FileDigest>();
  std::vector<io::FileDigest> digests(all.files.size());
  for (size_t i = 0; i < all.files.size(); ++i) {
    if (!all.files[i].is_null()) digests[i] = DigestFromJson(all.files[i]);
  }
  for (size_t k = 0; k < split.ranged.size(); ++k) {
    const size_t f = split.ranged[k];
    digests[f] = JoinGathered(split.resolved.files[f], options, all.ranges[k],
                              &io::RangeDigest::digest, DigestFromJson, io::JoinDigestedRanges);
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
  // The files read in ranges are IndexRanges'.
  Json ranges = Json::array();
  for (size_t k = 0; k < split.ranged.size(); ++k) ranges.push_back(nullptr);
  TFDIST_ASSIGN_OR_RETURN(Gathered gathered,
                          GatherInOrder(split, std::move(out), std::move(ranges)));
  for (const Json& j : gathered.files) {
    if (j.is_null() || j.contains("reached")) {  // read by ranges (IndexRanges), or not reached
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

Result<std::vector<Result<io::IndexedCount>>> IndexRanges(const SplitFiles& split, bool overwrite) {
  std::vector<Result<io::IndexedCount>> results;
  if (split.ranged.empty()) return results;
  // Rank 0 stamps each file before any rank scans it, and says which to scan.
  std::vector<std::unique_ptr<io::IndexInParts>> indexes(split.ranged.size());
  std::string go;
  if (cluster::IsRoot()) {
    Json flags = Json::array();
    for (size_t k = 0; k < split.ranged.size(); ++k) {
      Result<std::unique_ptr<io::IndexInParts>> begun =
          io::IndexInParts::Begin(split.resolved.files[split.ranged[k]], overwrite);
      if (begun.ok()) {
        indexes[k] = std::move(*begun);
        results.emplace_back(io::IndexedCount{});
      } else {
        results.emplace_back(begun.status());
      }
      flags.push_back(begun.ok());
    }
    go = DumpJson(flags);
  }
  TFDIST_ASSIGN_OR_RETURN(go, cluster::Broadcast(std::move(go)));
  const Json flags = ParseJson(go);
  // Each rank writes the index lines of its range into a file of its own
  // beside the index (in --index-dir, which every rank sees).
  Json parts = Json::array();
  const std::string suffix = fmt::format(".part-{}-{}", cluster::Rank(), getpid());
  for (size_t k = 0; k < split.ranged.size(); ++k) {
    if (!flags[k].get<bool>()) {
      parts.push_back(nullptr);
      continue;
    }
    const std::string& path = split.resolved.files[split.ranged[k]];
    const auto [from, to] = MyRange(split, k);
    const io::RangeCount part = io::WriteIndexPart(path, from, to, io::IndexPathFor(path) + suffix);
    parts.push_back({{"begin", OptionalJson(part.begin)},
                     {"end", part.end},
                     {"result", RecordCountJson(part.count)},
                     {"suffix", suffix}});
  }
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::string> all, cluster::Gather(DumpJson(parts)));
  if (!cluster::IsRoot()) return results;
  std::vector<Json> ranks;
  for (std::string& r : all) ranks.push_back(ParseJson(std::move(r)));
  for (size_t k = 0; k < split.ranged.size(); ++k) {
    if (!indexes[k]) continue;
    const std::string& path = split.resolved.files[split.ranged[k]];
    std::vector<io::RangeCount> counted;
    std::vector<std::string> files;
    for (const Json& rank : ranks) {
      const Json& j = rank[k];
      io::RangeCount& range = counted.emplace_back();
      range.begin = OptionalFromJson(j["begin"]);
      range.end = j["end"];
      range.count = RecordCountFromJson(j["result"]);
      files.push_back(io::IndexPathFor(path) + j["suffix"].get<std::string>());
    }
    results[k] = indexes[k]->Finish(counted, files);
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
