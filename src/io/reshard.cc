// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard and convert: the passes driven in order, and the outputs
// committed all at once.

#include "tfdist/io/reshard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <filesystem>
#include <set>

#include "reshard_internal.h"

namespace tfdist::io {
namespace {

// The output set of the folders of `paths` (the lock taken, a dead
// writer's leftovers dealt with).
Result<std::unique_ptr<OutputSet>> BeginOutputs(std::span<const std::string> folders,
                                                const RewriteOptions& o, const char* command) {
  OutputSetOptions so;
  so.replace = o.overwrite;
  so.sync = o.sync;
  so.command = command;
  so.note = o.note;
  return OutputSet::Begin(folders, std::move(so));
}

// Pass 2 and the commit.
Result<RewriteSummary> WriteAndCommit(std::vector<Input>& inputs, const ReshardPlan& plan,
                                      std::vector<Output>& outputs, const RewriteOptions& o,
                                      OutputSet& set) {
  TFDIST_RETURN_IF_ERROR(WriteOutputs(inputs, plan, outputs, o, set));
  for (Input& in : inputs) in.spill.reset();  // not needed any more
  for (Output& out : outputs) set.Add(std::move(out.file));
  TFDIST_RETURN_IF_ERROR(set.Commit());

  RewriteSummary summary;
  for (const Output& out : outputs) {
    OutputSummary s;
    s.path = out.path;
    s.count.records = out.end - out.begin;
    s.count.payload_bytes = out.framed_bytes - kFraming * s.count.records;
    s.file_bytes = out.file_bytes;
    summary.total.records += s.count.records;
    summary.total.payload_bytes += s.count.payload_bytes;
    summary.outputs.push_back(std::move(s));
  }
  summary.planned_from_index =
      std::any_of(inputs.begin(), inputs.end(), [](const Input& in) { return in.from_index; });
  return summary;
}

// Says that an interrupt changed nothing; other errors pass (a failed
// write says so itself: WriteOutputs).
Status Explain(Status s) {
  if (s.code() == StatusCode::kCancelled) {
    return Status::Cancelled(
        "interrupted; the outputs are as they were: no new file was written and no temporary file "
        "is left");
  }
  return s;
}

}  // namespace

Result<RewriteSummary> Reshard(std::span<const std::string> inputs, const ReshardOptions& options) {
  assert(!options.output_prefix.empty());
  assert((options.num_shards == 0) != (options.records_per_shard == 0));
  auto names = [&](uint64_t n) {
    std::vector<std::string> v;
    for (uint64_t s = 0; s < n; ++s) {
      v.push_back(ShardFileName(options.output_prefix, s, n, options.output_compression));
    }
    return v;
  };
  // Fail before reading anything: the folder is locked, and a set of the
  // prefix already there would be doubled by a new one beside it.
  const std::string folder = OutputFolderOf(options.output_prefix);
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<OutputSet> set,
                          BeginOutputs({&folder, 1}, options, "reshard"));
  TFDIST_RETURN_IF_ERROR(
      set->ExpectFamily({options.output_prefix, ShardFileSuffix(options.output_compression)}));
  Result<std::vector<Input>> scanned =
      ScanInputs(inputs, options, options.seed.has_value(), set.get());
  if (!scanned.ok()) return Explain(scanned.status());
  std::vector<Input>& in = *scanned;

  ReshardPlan plan;
  {
    std::vector<uint64_t> sizes;
    sizes.reserve(in.empty() ? 0 : in.back().first + in.back().records());
    for (const Input& input : in) {
      for (uint64_t i = 0; i < input.records(); ++i) {
        sizes.push_back(input.offsets[i + 1] - input.offsets[i]);
      }
    }
    TFDIST_ASSIGN_OR_RETURN(plan, PlanReshard(sizes, options));
  }
  const std::vector<std::string> paths = names(plan.num_shards());
  std::vector<Output> outputs(paths.size());
  for (size_t s = 0; s < paths.size(); ++s) {
    outputs[s].path = paths[s];
    outputs[s].begin = plan.bounds[s];
    outputs[s].end = plan.bounds[s + 1];
  }
  Result<RewriteSummary> summary = WriteAndCommit(in, plan, outputs, options, *set);
  if (!summary.ok()) return Explain(summary.status());
  return summary;
}

Result<RewriteSummary> Convert(std::span<const std::string> inputs, const ConvertOptions& options) {
  std::vector<std::string> paths;
  std::set<std::string> seen;
  for (const std::string& input : inputs) {
    std::string out = ConvertedFileName(input, options.output_compression, options.output_dir);
    namespace fs = std::filesystem;
    std::error_code ec;
    const bool same = fs::path(out).lexically_normal() == fs::path(input).lexically_normal() ||
                      fs::equivalent(out, input, ec);
    if (same) {
      return Status::InvalidArgument(
                 fmt::format("{}: converting to {} would write the file onto itself", input,
                             CompressionName(options.output_compression)))
          .WithAdvice(Remedy::kOtherOutputFolder);
    }
    if (!seen.insert(fs::path(out).lexically_normal().string()).second) {
      return Status::InvalidArgument(
          fmt::format("{}: two inputs would be converted to this same file", out));
    }
    paths.push_back(std::move(out));
  }
  TFDIST_RETURN_IF_ERROR(CheckNewFiles(paths, options.overwrite));
  std::vector<std::string> folders;
  for (const std::string& p : paths) folders.push_back(OutputFolderOf(p));
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<OutputSet> set,
                          BeginOutputs(folders, options, "convert"));
  Result<std::vector<Input>> scanned = ScanInputs(inputs, options, false, nullptr);
  if (!scanned.ok()) return Explain(scanned.status());
  std::vector<Input>& in = *scanned;
  ReshardPlan plan;  // identity; one output per input
  std::vector<Output> outputs(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    outputs[i].path = paths[i];
    outputs[i].begin = in[i].first;
    outputs[i].end = in[i].first + in[i].records();
  }
  Result<RewriteSummary> summary = WriteAndCommit(in, plan, outputs, options, *set);
  if (!summary.ok()) return Explain(summary.status());
  return summary;
}

}  // namespace tfdist::io
