// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A pipeline's shape as auto-sharding sees it (TensorFlow's auto_shard.cc
// and compute_batch_size): where its file names meet the reader, whether
// FILE sharding can apply, its static batch size; what TensorFlow reports of
// it before distribution (its cardinality, whether its order is fixed); and
// the rewrites of FILE sharding. Pure: no I/O.

#ifndef TFDIST_DISTRIBUTE_SHAPE_H_
#define TFDIST_DISTRIBUTE_SHAPE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tfdist/data/ops.h"

namespace tfdist::dist {

// TensorFlow's static cardinality of a dataset, as dataset.cardinality()
// reports it: a count, INFINITE_CARDINALITY or UNKNOWN_CARDINALITY.
enum class Cardinality { kKnown, kInfinite, kUnknown };

struct PipelineShape {
  // Index of the op that reads records (a tfrecord source, interleave or
  // flat_map), or nullopt for a source that is not file-based.
  std::optional<size_t> reader;
  // Why FILE sharding cannot apply; empty when it can.
  std::string file_blocker;
  // The elements are batches: the ops after the last batch() (or
  // padded_batch(), rebatch()) keep the batch dimension (prefetch, repeat,
  // shard, shuffle, skip, take, cache, filter, map, ignore_errors).
  bool batched = false;
  // Static when a literal and no map() or ignore_errors() follows the batch
  // (TensorFlow's compute_batch_size does not look through them), and
  // never after rebatch().
  std::optional<int64_t> global_batch_size;
  bool drop_remainder = false;
  // shard() applied after an unseeded shuffle of file names.
  bool shard_after_unseeded_shuffle = false;
  // The op (its index) of a repeat() forever (no count, or -1) that no
  // take() follows: the pipeline never ends, unless its input turns out
  // empty (an epoch without elements ends repeat(), as in TensorFlow).
  std::optional<size_t> endless_at;
  // With endless_at: an op that makes batches (batch(), padded_batch(),
  // rebatch(), a grouping) follows that repeat(), so its batches run across
  // the passes: no pass over the data ends on a short or dropped batch.
  bool batches_after_endless = false;
  // A shard() whose index is ctx.input_pipeline_id: each worker of
  // distribute_datasets_from_function reads its own share.
  bool shards_by_context = false;
  // Not batched, and every element known to hold a scalar (rank 0) first
  // component: a record, a file name, an integer of range() or
  // from_tensor_slices(), or enumerate()'s index. The legacy rebatch that
  // tf.distribute adds over several replicas in sync fails on it. False
  // where a map() or a value given in the pipeline may make it anything.
  bool scalar_elements = false;
  // With scalar_elements: the first scalar of an element's components in
  // TensorFlow's flat order (a dict's keys sorted), as its error names it.
  size_t scalar_component = 0;
  // With scalar_elements, of a parse_single_example() dict: that
  // component's feature name; empty when the element itself is a scalar.
  std::string scalar_feature;
  // Not batched, and every element a parse_single_example() dict of
  // FixedLenFeatures of rank >= 1: each feature's name and first dimension,
  // in the dict's order (what the legacy rebatch cuts). Empty otherwise.
  std::vector<std::pair<std::string, int64_t>> element_rows;
  // The first filter(), as messages name it ("filter(is_valid) (line 3,
  // column 9)"), or empty: tfdist counts it as keeping every element.
  std::string filter;
  // What dataset.cardinality() reports for the pipeline as written, before
  // any distribution, by each op's CardinalityInternal in TensorFlow: a
  // source's count (range(), the elements of from_tensor_slices(), the
  // files list_files() matches; a TFRecordDataset's is unknown), kept by
  // map(), prefetch(), cache(), shuffle() and enumerate(), computed by
  // batch() (ceil(n / b), floor with drop_remainder), take(), skip(),
  // shard(), repeat() (forever: infinite, even of an unknown input, unless
  // it is empty), unbatch() (times a static batch size, else unknown) and
  // concatenate() (infinite if either is, then unknown if either is);
  // filter(), interleave(), flat_map(), rebatch(), ignore_errors() and
  // group_by_window() make it unknown. Keras 2's fit() refuses an infinite
  // dataset without steps_per_epoch; an unknown one runs its first epoch
  // until the input ends, which after a repeat() is never.
  Cardinality cardinality = Cardinality::kUnknown;
  // With kKnown: the count, when tfdist knows it without reading anything;
  // nullopt where it depends on the files list_files() matches or on a
  // ctx.* value (an input function's). A repeat() forever of such an input
  // is counted infinite (list_files() never matches nothing).
  std::optional<int64_t> known_cardinality;
  // The first op (its index) whose output order TensorFlow does not fix:
  // interleave(), map(), batch() or parse_example_dataset() with
  // num_parallel_calls and deterministic=False, or a concatenate() joining
  // a dataset that has one; nullopt when none. (tf.data.Options().deterministic
  // is not modelled.)
  std::optional<size_t> nondeterministic_at;
  // That op as messages name it ("interleave(deterministic=False) (line 2,
  // column 5)"; for a concatenate(), the op of its dataset), or empty.
  std::string nondeterministic;
};

PipelineShape Analyze(const data::Pipeline& pipeline);

// The pipeline worker `worker` of `workers` runs under FILE sharding: the
// file names feeding the reader are sharded, and shuffles of the names
// (list_files' own included) move after the shard, so each worker's set of
// files is fixed; the datasets concatenate() joins after the reader are
// rewritten the same way. REQUIRES: shape.file_blocker is empty, 0 <= worker < workers.
data::Pipeline ShardFiles(const data::Pipeline& pipeline, const PipelineShape& shape,
                          int64_t workers, int64_t worker);

// The ops before the reader: the stream of file names (a tfrecord source's
// list becomes from_tensor_slices). REQUIRES: shape.reader.
data::Pipeline FileNames(const data::Pipeline& pipeline, const PipelineShape& shape);

// The file names the reader gets, as a set, without running anything: a
// tfrecord source's list, or a list of names followed only by shuffles and
// prefetches with literal arguments (which change only the order); nullptr
// where other ops or symbolic arguments need the names pipeline run.
const StringList* StaticFileNames(const data::Pipeline& pipeline, const PipelineShape& shape);

// The compression the reader is told (tfrecord's or interleave's function's
// compression_type). REQUIRES: shape.reader.
io::Compression ReaderCompression(const data::Pipeline& pipeline, const PipelineShape& shape);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_SHAPE_H_
