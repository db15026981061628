// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Whether DATA sharding can seek to each worker's records with index files.

#include "record_index_plan.h"

#include <fmt/format.h>

#include <set>

#include "tfdist/io/record_index.h"

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

Result<bool> PlanRecordIndex(const data::Pipeline& pipeline, const Structure& s,
                             const DistributeOptions& options, const data::BuildOptions& build,
                             Decision& d) {
  if (options.api != Api::kDistribute || d.applied != AutoShardPolicy::kData ||
      options.topology.workers < 2 || !build.use_record_index || !s.reader ||
      !ReaderKeepsOrder(pipeline.ops[*s.reader])) {
    return false;
  }
  // The distinct names the reader opens.
  data::BuildOptions b = build;
  b.deferred_payloads = false;
  b.bytes_read.reset();
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
    if (!io::ReadIndex(file, "", &stale)) {
      if (!stale.empty()) {
        d.warnings.push_back(fmt::format(
            "index not used: {}; every worker reads every file (tfdist index --force {} "
            "writes it again)",
            stale, file));
      }
      return false;
    }
  }
  d.record_index = true;
  d.reason += fmt::format(
      "; DATA with index files: each worker reads only its own records ({} file{} indexed)",
      files.size(), files.size() == 1 ? "" : "s");
  std::erase_if(d.warnings, [](const std::string& w) {
    return w.starts_with("DATA sharding: each of the");
  });
  return true;
}

}  // namespace tfdist::dist
