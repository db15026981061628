// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Pipeline expressions: a tf.data method chain, parsed into a plan of stages
// (the typed ops of ops.h) and built into a Dataset.

#ifndef TFDIST_DATA_PIPELINE_H_
#define TFDIST_DATA_PIPELINE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/ops.h"
#include "tfdist/data/seeds.h"
#include "tfdist/io/file_list.h"

namespace tfdist::data {

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
// The error `cause` at byte `pos` of `text`: annotated with
// DescribePosition(text, pos) (Status::Annotate: its code and advice kept),
// with position() `pos`. REQUIRES: !cause.ok()
Status PositionError(std::string_view text, size_t pos, Status cause);

// The values of tf.distribute.InputContext for ctx.* names.
struct InputContext {
  int64_t num_input_pipelines = 1;
  int64_t input_pipeline_id = 0;
  int64_t num_replicas_in_sync = 1;
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
  // When set, every shuffle iterator registers its buffer there while it
  // lives (a resume's cursor shows what each holds).
  std::shared_ptr<ShuffleWatch> shuffle_watch;
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

// The ops list_files(patterns, shuffle, seed), `op` of the expression
// `text`, stands for (doc/semantics.md, "list_files"): from_tensor_slices()
// of the sorted names its patterns match (io::ExpandFilePatterns with
// MatchRule::kAnyPattern; `listings` stand in for reading their folders),
// named and placed as `op`; then, with shuffle=True, a shuffle() of a
// buffer of all of them (max(n, 1)) with list_files' seed, at its position.
// The builder builds these ops and the planner plans them, so that both
// list and shuffle the same way.
// Error: ExpandFilePatterns' at list_files' position (PositionError: its
// code kept, so that a folder that cannot be listed stays a data error and
// no descriptor left a resource one), "<position>: list_files: <message>".
// REQUIRES: `op` is a list_files op.
Result<std::vector<Op>> LowerListFiles(const Op& op, std::string_view text,
                                       const io::FolderListings& listings = io::FolderListings());

// Builds the dataset of `pipeline`. Globs are expanded now (list_files
// fails here when nothing matches, as in TensorFlow's eager mode).
// Error: InvalidArgument naming the position (PositionError).
Result<std::shared_ptr<const Dataset>> BuildDataset(const Pipeline& pipeline,
                                                    const BuildOptions& options);

}  // namespace tfdist::data

#endif  // TFDIST_DATA_PIPELINE_H_
