// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Read by index: whether DATA sharding can seek to each worker's records
// with index files (run --read-by-index).

#include <fmt/format.h>

#include <set>

#include "plan.h"
#include "tfdist/io/file_index.h"

namespace tfdist::dist {
namespace {

// File names beyond which the index check is not attempted (every file is read).
constexpr size_t kMaxIndexedNames = 1'000'000;

bool ReaderKeepsOrder(const data::Op& op) {
  auto plain = [](io::Compression c) {
    return c == io::Compression::kNone || c == io::Compression::kAuto;
  };
  if (const auto* t = std::get_if<data::TFRecordOp>(&op.params)) return plain(t->compression);
  if (const auto* i = std::get_if<data::InterleaveOp>(&op.params)) {
    return plain(i->compression) && i->deterministic.value_or(true);
  }
  return false;
}

}  // namespace

Result<bool> PlanReadByIndex(const data::Pipeline& pipeline, const PipelineShape& s,
                             const DistributeOptions& options, const data::BuildOptions& build,
                             Decision& d) {
  if (options.api != Api::kDistribute || !d.ShardsData(options.topology) ||
      !options.read_by_index || !s.reader || !ReaderKeepsOrder(pipeline.ops[*s.reader])) {
    return false;
  }
  // The distinct names the reader opens.
  data::BuildOptions b = build;
  b.read_by_index = false;
  b.counters.reset();
  TFDIST_ASSIGN_OR_RETURN(auto names, data::BuildDataset(FileNames(pipeline, s), b));
  TFDIST_ASSIGN_OR_RETURN(auto it, names->MakeIterator());
  std::set<std::string> files;
  size_t seen = 0;
  for (;;) {
    data::Element e;
    bool end = false;
    TFDIST_RETURN_IF_ERROR(it->GetNext(e, end));
    if (end) break;
    if (++seen > kMaxIndexedNames || e.kind != data::Element::Kind::kName) return false;
    files.insert(std::move(e.bytes));
  }
  if (files.empty()) return false;
  for (const std::string& file : files) {
    std::string stale;
    if (!io::ReadIndex(file, &stale)) {
      if (!stale.empty()) {
        d.Warn(WarningKind::kIndexNotUsed,
               fmt::format("index not used: {}; every worker reads every file", stale),
               Advice{Remedy::kRewriteFileIndex, file});
      }
      return false;
    }
  }
  d.read_by_index = true;
  d.reason += fmt::format(
      "; DATA read by index: each worker reads only its own records ({} file{} indexed)",
      files.size(), files.size() == 1 ? "" : "s");
  std::erase_if(d.warnings,
                [](const Warning& w) { return w.kind == WarningKind::kDataReadsEverything; });
  return true;
}

}  // namespace tfdist::dist
