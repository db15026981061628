// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// list_files() lowered to the ops it stands for, once for the builder and
// the planner.

#include <algorithm>
#include <cassert>
#include <utility>
#include <variant>

#include "tfdist/data/pipeline.h"

namespace tfdist::data {

Result<std::vector<Op>> LowerListFiles(const Op& op, std::string_view text,
                                       const io::FolderListings& listings) {
  const auto* l = std::get_if<ListFilesOp>(&op.params);
  assert(l != nullptr);
  Result<StringList> files =
      io::ExpandFilePatterns(l->patterns, listings, io::MatchRule::kAnyPattern);
  if (!files.ok()) return PositionError(text, op.pos, files.status().Annotate("list_files"));
  const int64_t n = static_cast<int64_t>(files->size());
  std::vector<Op> ops;
  ops.push_back(Op{FromTensorSlicesOp::Names(std::move(*files)), op.name, op.pos});
  // list_files(shuffle=True) is the sorted matches shuffled with a buffer
  // of all of them.
  if (l->shuffle) {
    ShuffleOp shuffle;
    shuffle.buffer_size.value = std::max<int64_t>(n, 1);
    shuffle.buffer_size.pos = op.pos;
    shuffle.seed = l->seed;
    ops.push_back(Op{shuffle, "shuffle", op.pos});
  }
  return ops;
}

}  // namespace tfdist::data
