// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Pipeline expressions: a tf.data method chain, parsed into a plan of stages
// and built into a Dataset.

#ifndef TFDIST_DATA_PIPELINE_H_
#define TFDIST_DATA_PIPELINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/string_list.h"
#include "tfdist/data/dataset.h"
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
struct FromTensorSlicesOp {
  StringList names;
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
struct BatchOp {
  IntArg batch_size;
  bool drop_remainder = false;
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
  std::vector<FeatureSpec> features;  // in the dict's order
  bool single_example = false;       // parse_single_example: one record per element
  std::optional<IntArg> num_parallel_calls;
};

using OpParams =
    std::variant<ListFilesOp, FromTensorSlicesOp, TFRecordOp, RangeOp, ShardOp, InterleaveOp,
                 ShuffleOp, RepeatOp, BatchOp, TakeOp, SkipOp, EnumerateOp, PrefetchOp, MapOp>;

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

// Parses a pipeline expression (doc/semantics.md, "Element order"; the grammar is the manual's PIPELINES). Whitespace, newlines and
// '#' comments are free. Sources may be written with TensorFlow's prefixes
// (tf.data.Dataset.list_files, tf.data.TFRecordDataset); the reader function
// of interleave/flat_map may be `tfrecord`, `tf.data.TFRecordDataset`,
// `tfrecord(compression_type="GZIP")` or
// `lambda f: tf.data.TFRecordDataset(f, compression_type="GZIP")`.
// map() takes one function, parse_example, declaring its features as
// TensorFlow does: `map(parse_example({"x": FixedLenFeature([3], tf.float32)}))`,
// `map(lambda r: tf.io.parse_single_example(r, features={...}))`, with
// tf.io.FixedLenFeature(shape, dtype, default_value=None) values, dtypes
// tf.int64, tf.float32 and tf.string, shapes as lists or tuples, and a
// default_value of exactly the shape's number of values (nested or flat, as
// TensorFlow reshapes it; a scalar for a shape of one value). It must apply
// to records: not to file names, range() integers or enumerate() pairs; and
// parse_single_example not to batches.
// Error: InvalidArgument "line L, column C: <what was expected>", whose
// position() is the byte offset the message points at (PositionError).
Result<Pipeline> ParsePipeline(std::string_view text);

// "column C" or "line L, column C" for a byte offset of `text`.
std::string DescribePosition(std::string_view text, size_t pos);

// InvalidArgument "<DescribePosition(text, pos)>: <what>", with position() `pos`.
Status PositionError(std::string_view text, size_t pos, std::string_view what);

// The values of tf.distribute.InputContext for ctx.* names.
struct InputContext {
  int64_t num_input_pipelines = 1;
  int64_t input_pipeline_id = 0;
  int64_t num_replicas_in_sync = 1;
};

// What a built pipeline's stages did, counted as they run: shared by every
// iterator of the build (thread-safe). Layouts account for every record
// with them; runs report the bytes.
struct ReadCounters {
  // Bytes of the records the readers consumed: framed, added per file as
  // it is closed; not the reads of deferred payloads.
  std::atomic<uint64_t> bytes_read{0};
  // File names the readers took (each file opened once per name).
  std::atomic<uint64_t> files{0};
  // Records in the short final batches that batch(drop_remainder=True) dropped.
  std::atomic<uint64_t> dropped_remainder{0};
  // Records skip() passed over (file names skipped before a reader are no
  // records and are not counted).
  std::atomic<uint64_t> skipped{0};
};

struct BuildOptions {
  // Where ctx.* names get their values; without it they are an error.
  std::optional<InputContext> context;
  // What SHARD_HINT stands for: {num_shards, index} (the HINT policy).
  std::optional<std::pair<int64_t, int64_t>> shard_hint;
  // CPUs of the host being modelled: TensorFlow's default (AUTOTUNE)
  // cycle_length and num_parallel_calls. Default: this machine's.
  int64_t cpus = 0;
  // Seed for stages given no seed. Default: a random one per run, as
  // TensorFlow's unseeded shuffles differ run to run.
  std::optional<uint64_t> default_seed;
  // The readers (tfrecord, interleave, flat_map) give the records of a file
  // with an up-to-date index (io::ReadRecordExtents) without reading them:
  // Element::Kind::kRecordRef, in the order and with the origins reading
  // would give, for a PayloadFetcher to read later. Files without one (or
  // compressed) are read as usual. Only for pipelines whose ops after the
  // reader never look at payloads (all of tfdist's do not).
  bool deferred_payloads = false;
  // When set, the stages count what they read and drop (ReadCounters).
  std::shared_ptr<ReadCounters> counters;
};

// The CPUs that AUTOTUNE stands for under `options`: BuildOptions::cpus,
// else this machine's.
int64_t AutotuneCpus(const BuildOptions& options);

// The arguments of `pipeline` that the host's CPUs decide (AUTOTUNE, or
// None where TensorFlow's default is AUTOTUNE), as "op(argument)":
// "interleave(cycle_length)", "interleave(num_parallel_calls)".
std::vector<std::string> AutotunedArguments(const Pipeline& pipeline);

// Builds the dataset of `pipeline`. Globs are expanded now (list_files
// fails here when nothing matches, as in TensorFlow's eager mode).
// Error: InvalidArgument naming the position (PositionError).
Result<std::shared_ptr<const Dataset>> BuildDataset(const Pipeline& pipeline,
                                                    const BuildOptions& options);

}  // namespace tfdist::data

#endif  // TFDIST_DATA_PIPELINE_H_
