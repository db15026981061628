// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// What a pipeline's structure allows: where its file names meet the reader,
// whether FILE sharding applies, its static batch size; and the per-worker
// rewrite of FILE sharding. Pure: no I/O.

#ifndef TFDIST_DISTRIBUTE_POLICY_H_
#define TFDIST_DISTRIBUTE_POLICY_H_

#include <cstdint>
#include <optional>
#include <string>

#include "tfdist/data/pipeline.h"

namespace tfdist::dist {

struct Structure {
  // Index of the op that reads records (a tfrecord source, interleave or
  // flat_map), or nullopt for a source that is not file-based.
  std::optional<size_t> reader;
  // Why FILE sharding cannot apply; empty when it can.
  std::string file_blocker;
  // The elements are batches: the ops after the last batch() keep the batch
  // dimension (prefetch, repeat, shard, shuffle, skip, take, map).
  bool batched = false;
  // Static when a literal and no map() follows the batch (TensorFlow's
  // compute_batch_size does not look through MapDataset).
  std::optional<int64_t> global_batch_size;
  bool drop_remainder = false;
  // shard() applied after an unseeded shuffle of file names.
  bool shard_after_unseeded_shuffle = false;
};

Structure Analyze(const data::Pipeline& pipeline);

// The pipeline worker `worker` of `workers` runs under FILE sharding: the
// file names feeding the reader are sharded, and shuffles of the names
// (list_files' own included) move after the shard, so each worker's set of
// files is fixed. REQUIRES: Analyze(pipeline).file_blocker is empty.
data::Pipeline ShardFiles(const data::Pipeline& pipeline, const Structure& s, int64_t workers,
                          int64_t worker);

// The ops before the reader: the stream of file names (a tfrecord source's
// list becomes from_tensor_slices). REQUIRES: s.reader.
data::Pipeline FileNames(const data::Pipeline& pipeline, const Structure& s);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_POLICY_H_
