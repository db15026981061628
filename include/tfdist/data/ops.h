// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The typed ops of a pipeline expression: one struct per tf.data stage, with
// TensorFlow's argument names, as ParsePipeline (pipeline.h) makes them and
// the builder and the analyses of distribute read them.

#ifndef TFDIST_DATA_OPS_H_
#define TFDIST_DATA_OPS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "tfdist/base/string_list.h"
#include "tfdist/data/features.h"
#include "tfdist/io/byte_stream.h"

namespace tfdist::data {

// tf.data.AUTOTUNE.
inline constexpr int64_t kAutotune = -1;

// An integer argument: a literal, or a name the distribution context fills
// in (SHARD_HINT, ctx.num_input_pipelines, ...).
struct IntArg {
  enum class Symbol {
    kLiteral,
    kShardHint,            // tf.data.experimental.SHARD_HINT
    kNumInputPipelines,    // ctx.num_input_pipelines
    kInputPipelineId,      // ctx.input_pipeline_id
    kNumReplicasInSync,    // ctx.num_replicas_in_sync
    kPerReplicaBatchSize,  // ctx.get_per_replica_batch_size(value)
  };
  Symbol symbol = Symbol::kLiteral;
  int64_t value = 0;
  size_t pos = 0;  // byte offset in the expression, for messages
};

// The stages, with TensorFlow's argument names. Defaults are TensorFlow's.
struct ListFilesOp {
  std::vector<std::string> patterns;
  bool shuffle = true;
  std::optional<int64_t> seed;
};
// from_tensor_slices([...]) and from_tensors(x): elements given in the
// pipeline. Strings are names (a reader opens them as files); integers are
// integers; any other value (a float, a tuple, a dict, a list) is an
// element labelled by its Python text, which a reader would take as a name.
struct FromTensorSlicesOp {
  StringList names;           // the elements, unless `ints`
  std::vector<int64_t> ints;  // the elements when every one is an integer
  bool integers = false;

  static FromTensorSlicesOp Names(StringList names) {
    FromTensorSlicesOp op;
    op.names = std::move(names);
    return op;
  }
};
// tf.data.TFRecordDataset(filenames, compression_type, buffer_size, num_parallel_reads)
struct TFRecordOp {
  StringList files;
  io::Compression compression = io::Compression::kNone;
  std::optional<IntArg> num_parallel_reads;
};
struct RangeOp {
  IntArg start, stop, step;
};
struct ShardOp {
  IntArg num_shards, index;
};
// interleave(tfrecord, ...) / flat_map(tfrecord): the function reads the
// records of a file name.
struct InterleaveOp {
  io::Compression compression = io::Compression::kNone;
  std::optional<IntArg> cycle_length;        // None or AUTOTUNE: BuildOptions::cpus
  std::optional<IntArg> block_length;        // None: 1
  std::optional<IntArg> num_parallel_calls;  // None: sequential
  std::optional<bool> deterministic;         // None: true
  bool flat_map = false;                     // written as flat_map()
};
struct ShuffleOp {
  IntArg buffer_size;
  std::optional<int64_t> seed;
  bool reshuffle_each_iteration = true;
};
struct RepeatOp {
  std::optional<IntArg> count;  // None or -1: forever
};
// batch() and padded_batch(), which groups the same elements (padding
// changes their shapes only).
struct BatchOp {
  IntArg batch_size;
  bool drop_remainder = false;
  bool padded = false;
  // batch()'s (padded_batch has neither): the batches are the same, but
  // with both set and deterministic False their order is not fixed.
  std::optional<IntArg> num_parallel_calls;  // None: sequential
  std::optional<bool> deterministic;         // None: true
};
// unbatch(): the elements of each batch, one at a time.
struct UnbatchOp {};
// rebatch(batch_size | [sizes], drop_remainder): RebatchDatasetV2. The
// elements of consecutive batches regrouped into batches of the sizes in
// turn, crossing the input's batch boundaries; a short last batch is kept
// unless drop_remainder.
struct RebatchOp {
  std::vector<IntArg> sizes;
  bool drop_remainder = false;
};
// cache() / cache(filename): later passes give the first pass's elements
// in its order (TensorFlow replays its cache; tfdist reads the input again
// as the first pass did, so memory stays bounded).
struct CacheOp {
  std::string filename;
};
// filter(predicate): counted as keeping every element (tfdist does not run
// the predicate), so every count after it is an upper bound.
struct FilterOp {
  std::string function;  // its name, for messages
};
struct Pipeline;
// concatenate(dataset): the input's elements, then those of `dataset` (a
// pipeline of its own, written as a method chain in the argument).
struct ConcatenateOp {
  std::shared_ptr<const Pipeline> dataset;
};
// ignore_errors(): a file a reader cannot open or read to its end ends
// where the error is (TensorFlow's reader moves on to the next file), and
// the error is dropped.
struct IgnoreErrorsOp {};
// group_by_window(key_func, reduce_func, window_size | window_size_func)
// and bucket_by_sequence_length(...): elements grouped by a key that only
// the data decides (tfdist does not run key_func), each group's window of
// elements batched whole. Layouts show the elements up to it exactly and
// the batches after it as bounds (doc/semantics.md, "Grouping by the
// data"); no pipeline runs it.
struct GroupByWindowOp {
  std::string key_func;  // its name, for messages (element_length_func for buckets)
  // The window size of every key (group_by_window), or of each bucket
  // (bucket_by_sequence_length: one per bucket); empty when
  // window_size_func decides it.
  std::vector<IntArg> window_sizes;
  std::string window_size_func;  // its name, when it decides
  // bucket_by_sequence_length: len(bucket_boundaries) + 1 buckets, each
  // window batched by its own size.
  bool buckets = false;
  // group_by_window: the reduce function batches its window,
  // `lambda key, window: window.batch(reduce_batch_size)` (or padded_batch).
  std::optional<IntArg> reduce_batch_size;
  bool drop_remainder = false;  // of the batch of each window
};
struct TakeOp {
  IntArg count;
};
struct SkipOp {
  IntArg count;
};
struct EnumerateOp {
  IntArg start;
};
struct PrefetchOp {
  IntArg buffer_size;
};
// map(parse_example({...})) and the TensorFlow spellings of it (see
// ParsePipeline). Elements stay records in the pipeline; the declared
// features are parsed into dense columns where batches are staged.
struct MapOp {
  // The function, when not parse_example: opaque("name") in the grammar,
  // one element in, one out (a traced function that parses nothing).
  std::string opaque;
  std::vector<FeatureSpec> features;  // in the dict's order; empty when opaque
  bool single_example = false;        // parse_single_example: one record per element
  // apply(parse_example_dataset({...})): TensorFlow's ParseExampleDataset,
  // which, unlike a map(), keeps a batch size static (compute_batch_size
  // looks through it).
  bool parse_dataset = false;
  std::optional<IntArg> num_parallel_calls;
  std::optional<bool> deterministic;  // None: true
};

using OpParams = std::variant<ListFilesOp, FromTensorSlicesOp, TFRecordOp, RangeOp, ShardOp,
                              InterleaveOp, ShuffleOp, RepeatOp, BatchOp, TakeOp, SkipOp,
                              EnumerateOp, PrefetchOp, MapOp, UnbatchOp, RebatchOp, CacheOp,
                              FilterOp, IgnoreErrorsOp, ConcatenateOp, GroupByWindowOp>;

struct Op {
  OpParams params;
  std::string name;  // as written: "list_files", "shard", ...
  size_t pos = 0;    // byte offset of the name in the expression
};

// A parsed pipeline: ops[0] is the source, the rest are applied in order.
struct Pipeline {
  std::vector<Op> ops;
  std::string text;  // the expression as given
};

}  // namespace tfdist::data

#endif  // TFDIST_DATA_OPS_H_
