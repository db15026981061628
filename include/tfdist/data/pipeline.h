// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Pipeline expressions: a tf.data method chain, parsed into a plan of stages
// and built into a Dataset.

#ifndef TFDIST_DATA_PIPELINE_H_
#define TFDIST_DATA_PIPELINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/string_list.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/features.h"
#include "tfdist/data/seeds.h"
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

// Parses a pipeline expression (doc/semantics.md, "Element order"; the grammar is the manual's
// PIPELINES). Whitespace, newlines and
// '#' comments are free. Sources may be written with TensorFlow's prefixes
// (tf.data.Dataset.list_files, tf.data.TFRecordDataset); the reader function
// of interleave/flat_map may be `tfrecord`, `tf.data.TFRecordDataset`,
// `tfrecord(compression_type="GZIP")` or
// `lambda f: tf.data.TFRecordDataset(f, compression_type="GZIP")`.
// map() takes parse_example, declaring its features as TensorFlow does:
// `map(parse_example({"x": FixedLenFeature([3], tf.float32)}))`,
// `map(lambda r: tf.io.parse_single_example(r, features={...}))`, with
// tf.io.FixedLenFeature(shape, dtype, default_value=None) and
// tf.io.VarLenFeature(dtype) values, dtypes tf.int64, tf.float32 and
// tf.string, shapes as lists or tuples, and a default_value of exactly the
// shape's number of values (nested or flat, as TensorFlow reshapes it; a
// scalar for a shape of one value). It must apply to records: not to file
// names, integers or enumerate() pairs; and parse_single_example not to
// batches. `apply(tf.data.experimental.parse_example_dataset({...}))` parses
// the same way. Or map() takes `opaque("name")`, a function tfdist does not
// look into: one element in, one out. unbatch() and rebatch() need batches.
// Error: InvalidArgument "line L, column C: <what was expected>" (or the
// line's SourceMarker), whose position() is the byte offset the message
// points at (PositionError).
Result<Pipeline> ParsePipeline(std::string_view text);

// A line of a pipeline expression may end in a comment "#@ WHERE" naming
// where the line came from, as C's #line does: the chain a traced Python
// input function made ends each op's line in "#@ FILE:LINE".
inline constexpr std::string_view kSourceMarker = "#@ ";

// The WHERE of the "#@ WHERE" comment ending the line of `text` that holds
// byte `pos` (the line's first '#' outside a string literal), or empty; a
// view into `text`.
std::string_view SourceMarker(std::string_view text, size_t pos);

// Where byte `pos` of `text` is, for messages: the line's SourceMarker when
// it has one, else "column C" (one line) or "line L, column C".
std::string DescribePosition(std::string_view text, size_t pos);

// InvalidArgument "<DescribePosition(text, pos)>: <what>", with position() `pos`.
Status PositionError(std::string_view text, size_t pos, std::string_view what);

// The values of tf.distribute.InputContext for ctx.* names.
struct InputContext {
  int64_t num_input_pipelines = 1;
  int64_t input_pipeline_id = 0;
  int64_t num_replicas_in_sync = 1;
};

// What the readers of several pipelines (the workers of a from-function
// layout) took from each file, as record counts: a reader takes a prefix of
// its file's records, so the records of a file read by anyone are those
// below the largest count, and those read by more than one worker those
// below the second largest of the workers' own. Memory: one entry per
// distinct file read (whose name is interned anyway), whatever the workers.
// Thread-safe.
class FileReadTally {
 public:
  // Worker `worker` closed `file` after taking its first `records` records.
  void Add(const std::string* file, int64_t worker, uint64_t records);

  struct Totals {
    uint64_t distinct = 0;  // records read by at least one worker
    uint64_t shared = 0;    // of those, read by more than one worker
  };
  Totals totals() const;
  // Whether some worker closed `file` (an interned path).
  bool Read(const std::string* file) const;

 private:
  struct Entry {
    int64_t best_worker = -1;
    uint64_t best = 0;    // the most records a worker took
    uint64_t second = 0;  // the most that another worker took
  };
  mutable std::mutex mu_;
  std::unordered_map<const std::string*, Entry> files_;
};

// What a built pipeline's stages did, counted as they run: shared by every
// iterator of the build (thread-safe). Layouts account for every record
// with them; runs report the bytes.
struct ReadCounters {
  // Bytes of the records the readers consumed: framed, added per file as
  // it is closed; not the payloads fetched after a read by index
  // (PayloadFetcher).
  std::atomic<uint64_t> bytes_read{0};
  // File names the readers took (each file opened once per name).
  std::atomic<uint64_t> files{0};
  // Records in the short final batches that batch(drop_remainder=True) dropped.
  std::atomic<uint64_t> dropped_remainder{0};
  // Records skip() passed over (file names skipped before a reader are no
  // records and are not counted).
  std::atomic<uint64_t> skipped{0};
  // Records the readers took from their files (each read of a file counted).
  std::atomic<uint64_t> records_read{0};
  // When set, each file closed is told to it as read by worker `worker`.
  std::shared_ptr<FileReadTally> tally;
  int64_t worker = 0;

  // A reader closed `file` (may be null: not a named file) after taking
  // `bytes` framed bytes and its first `records` records.
  void FileClosed(const std::string* file, uint64_t bytes, uint64_t records);
};

struct BuildOptions {
  // Where ctx.* names get their values; without it they are an error.
  std::optional<InputContext> context;
  // The HINT policy's {num_workers, worker}: every shard() whose num_shards
  // is SHARD_HINT becomes shard(num_workers, worker), whatever its index,
  // and must not be empty: an input of more than 0 but fewer than
  // num_workers elements fails with TensorFlow's require_non_empty error.
  // Without it SHARD_HINT is an error (Remedy::kHintPolicy).
  std::optional<std::pair<int64_t, int64_t>> shard_hint;
  // CPUs of the host being modelled: TensorFlow's default (AUTOTUNE)
  // cycle_length and num_parallel_calls. Default: this machine's.
  int64_t cpus = 0;
  // The program's tf.random.set_seed(): with it, every shuffle has
  // TensorFlow's seeds (ResolveOpSeeds gives those made without one theirs).
  std::optional<GlobalSeed> global_seed;
  // Seed for shuffles that have neither an op seed nor a global seed
  // (random in TensorFlow). Default: a random one per run, as TensorFlow's
  // unseeded shuffles differ run to run.
  std::optional<uint64_t> default_seed;
  // Read by index: the readers (tfrecord, interleave, flat_map) give the
  // records of a file with an up-to-date index (io::ReadRecordExtents) as
  // record ids, without reading them:
  // Element::Kind::kRecordId, in the order and with the origins reading
  // would give, for a PayloadFetcher to read later. Files without one (or
  // compressed) are read as usual. Only for pipelines whose ops after the
  // reader never look at payloads (all of tfdist's do not).
  bool read_by_index = false;
  // Whether records are record ids (layouts: doc/semantics.md, "Layouts hold
  // no payloads"). Unless kNone, the readers read and check every record as
  // they would (the same errors, at the same records), then keep its id
  // (Element::Kind::kRecordId: file, index, offset, size) and, with
  // kLabelled, its label; a file is read a small block at a time. No stage
  // needs a payload to count its elements: map() passes records through
  // and filter() keeps them all.
  RecordIds record_ids = RecordIds::kNone;
  // When set, the stages count what they read and drop (ReadCounters).
  std::shared_ptr<ReadCounters> counters;
  // The pipeline is built inside one whose ops after it ignore errors (a
  // cache()'s input rebuilt, a concatenate()'s dataset): its readers end a
  // file at its error (IgnoreErrorsOp). Set by the builder.
  bool errors_ignored = false;
};

// The CPUs that AUTOTUNE stands for under `options`: BuildOptions::cpus,
// else this machine's.
int64_t AutotuneCpus(const BuildOptions& options);

// The most threads tfdist reads with for one interleave (or tfrecord with
// num_parallel_reads): TensorFlow takes any num_parallel_calls, and the
// order does not depend on the threads.
inline constexpr int64_t kMaxReaderThreads = 256;

// An interleave's cycle length when cycle_length is AUTOTUNE (or None), as
// TensorFlow resolves it on `cpus` CPUs: without num_parallel_calls
// (InterleaveDataset) the CPUs; with it (ParallelInterleaveDatasetV4's
// ComputeCycleLength) min(num_parallel_calls, CPUs), or ceil(CPUs / 3) when
// num_parallel_calls is AUTOTUNE too. `num_parallel_calls` may be kAutotune.
int64_t AutotuneCycleLength(std::optional<int64_t> num_parallel_calls, int64_t cpus);

// The threads tfdist reads with for num_parallel_calls `calls` (kAutotune:
// `cpus`) in an interleave of `cycle_length` slots: at most
// kMaxReaderThreads, and at most 2 * cycle_length, which is every input it
// reads at once (its open inputs and as many future ones; TensorFlow's
// autotuned parallelism stays within cycle_length).
int64_t ReaderThreads(int64_t calls, int64_t cycle_length, int64_t cpus);

// The arguments of `pipeline` that the host's CPUs decide (AUTOTUNE, or
// None where TensorFlow's default is AUTOTUNE), as "op(argument)" and what
// it resolves to on `cpus` CPUs: {"interleave(cycle_length)", 4},
// {"interleave(num_parallel_calls)", 8}. Those of a concatenate()'s
// pipeline too.
std::vector<std::pair<std::string, int64_t>> AutotunedArguments(const Pipeline& pipeline,
                                                                int64_t cpus);

// Where tfdist reads with fewer threads than `pipeline` asks for
// (ReaderThreads; for AUTOTUNE, fewer than min(CPUs, cycle length)), one
// line each: "interleave(num_parallel_calls=1024): read by 256 threads
// (tfdist's limit); the order is TensorFlow's, which does not depend on
// them". Empty when none.
std::vector<std::string> ThreadNotes(const Pipeline& pipeline, const BuildOptions& options);

// `pipeline` with the op seed TensorFlow gives each shuffle made without
// one (list_files(shuffle=True) included) under `global`, drawn in the
// order the program makes them (OpSeedCounter); the others unchanged.
// Idempotent: the result has no shuffle without a seed.
Pipeline ResolveOpSeeds(const Pipeline& pipeline, const GlobalSeed& global);

// The op seed of an op that draws one, a random op: shuffle(), and
// list_files() with shuffle=True; null for every other op.
const std::optional<int64_t>* OpSeedOf(const Op& op);
std::optional<int64_t>* OpSeedOf(Op& op);

// Whether a random op of `pipeline` (OpSeedOf), a concatenate()'s dataset's
// included, has no op seed: without the program's global seed its order is
// random in TensorFlow.
bool HasUnseededShuffle(const Pipeline& pipeline);

// Builds the dataset of `pipeline`. Globs are expanded now (list_files
// fails here when nothing matches, as in TensorFlow's eager mode).
// Error: InvalidArgument naming the position (PositionError).
Result<std::shared_ptr<const Dataset>> BuildDataset(const Pipeline& pipeline,
                                                    const BuildOptions& options);

}  // namespace tfdist::data

#endif  // TFDIST_DATA_PIPELINE_H_
