// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Resharding and recompressing TFRecord datasets, written atomically.

#ifndef TFDIST_IO_RESHARD_H_
#define TFDIST_IO_RESHARD_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tfdist/base/group.h"
#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::io {

// What the shards are balanced by.
enum class ReshardBalance {
  kRecords,  // record counts differ by at most 1
  kBytes,    // no shard holds more than one record's size over the mean
};

// Accepts "records" and "bytes". Error: InvalidArgument naming both.
Result<ReshardBalance> ParseReshardBalance(std::string_view text);

struct ReshardPlanOptions {
  // Exactly one of num_shards and records_per_shard is non-zero. With
  // records_per_shard K there are ceil(records / K) shards, balanced as
  // `balance` says (by records, every shard then holds at most K).
  uint64_t num_shards = 0;
  uint64_t records_per_shard = 0;
  // Default: kRecords.
  ReshardBalance balance = ReshardBalance::kRecords;
  // When set, the records are permuted (SeededPermutation) before they are
  // cut into shards; otherwise every shard is a contiguous run of the input,
  // so the shards concatenated in name order give the input order.
  std::optional<uint64_t> seed;
};

// Which input record goes where: output position p holds input record
// order[p] (input records numbered 0.. across the files in order), and shard
// s holds the output positions [bounds[s], bounds[s + 1]).
struct ReshardPlan {
  std::vector<uint64_t> order;   // empty: the identity (input order)
  std::vector<uint64_t> bounds;  // num_shards() + 1 entries, from 0 to the record count

  uint64_t num_shards() const { return bounds.empty() ? 0 : bounds.size() - 1; }
  // The input record at output position p.
  uint64_t record_at(uint64_t p) const { return order.empty() ? p : order[p]; }
};

// Plans a reshard of records of the given sizes (any unit: the framed size,
// payload + 16, is what Reshard() uses) in input order. Pure: no I/O.
// Every shard is non-empty, as TensorFlow's FILE sharding expects.
// REQUIRES: exactly one of options.num_shards and records_per_shard is
// non-zero.
// Error: InvalidArgument when there are no records, or fewer records than
// shards (advice Remedy::kFewerShards with the record count as subject).
Result<ReshardPlan> PlanReshard(std::span<const uint64_t> record_sizes,
                                const ReshardPlanOptions& options);

// A permutation of [0, n) that depends only on (n, seed), the same on every
// platform (SplitMix64 and Fisher-Yates, no standard-library distribution).
std::vector<uint64_t> SeededPermutation(uint64_t n, uint64_t seed);

// TensorFlow's shard naming: "PREFIX-00003-of-00016.tfrecord", with ".gz"
// or ".zlib" added for GZIP and ZLIB.
std::string ShardFileName(const std::string& prefix, uint64_t index, uint64_t count,
                          Compression compression);

// What follows the numbers of a shard's name: ".tfrecord", ".tfrecord.gz"...
std::string ShardFileSuffix(Compression compression);

// The name convert gives `path`: its basename without ".gz" / ".zlib", plus
// the suffix of `compression`, in `output_dir` (default: beside `path`).
std::string ConvertedFileName(const std::string& path, Compression compression,
                              const std::string& output_dir);

// Wraps the sink of each output file (below compression): a seam for tests
// that inject write failures such as ENOSPC.
using SinkWrapper = std::function<std::unique_ptr<ByteSink>(std::unique_ptr<ByteSink>)>;

// How outputs are written; shared by Reshard() and Convert().
struct RewriteOptions {
  // Compression of the inputs. Default: kAuto (detected per file).
  Compression input_compression = Compression::kAuto;
  // Compression of the outputs. Default: kNone. REQUIRES: not kAuto.
  Compression output_compression = Compression::kNone;
  // zlib level, -1 (zlib's default) to 9. Default: -1.
  int compression_level = -1;
  // Replace existing outputs, and the old set of shards of the output
  // prefix. Default: false (InvalidArgument if one exists).
  bool overwrite = false;
  // fsync each output before the renames, and the folder after. Default: true.
  bool sync = true;
  // Plan uncompressed inputs from an up-to-date FILE.idx instead of a scan
  // (their CRCs are then checked while they are copied). Default: true.
  bool use_index = true;
  // Default: none.
  SinkWrapper wrap_sink;
  // Notes for the user (a wait for the output folder's lock, a dead
  // writer's commit completed or undone). Default: none.
  std::function<void(std::string_view)> note;
  // The processes that share the work (the ranks of a job), every one
  // calling Reshard() or Convert() with the same arguments: see "A group"
  // below. Default: this process alone.
  Group* group = nullptr;
};

struct ReshardOptions : ReshardPlanOptions, RewriteOptions {
  // Shards are named ShardFileName(output_prefix, ...). REQUIRES: non-empty.
  std::string output_prefix;
};

// One written file.
struct OutputSummary {
  std::string path;
  FileRecords count;
  uint64_t file_bytes = 0;  // the file on disk
};

struct RewriteSummary {
  std::vector<OutputSummary> outputs;
  FileRecords total;
  bool planned_from_index = false;  // some input was planned from its index
};

// Rewrites the records of `inputs` (in that order) into the shards of
// PlanReshard over their framed sizes.
//
// Memory: about 8 bytes per record (16 with a seed; 8 more while planning),
// plus a few 1 MiB buffers per thread; payloads are never held. Every record
// is checked (both CRCs) before any output is renamed into place:
// compressed inputs by the planning scan (so nothing is written for a
// corrupt one), uncompressed inputs as they are copied (the planning pass
// only walks their framing, or reads their index). With a seed, compressed
// inputs are first inflated into temporary files in the destination folder,
// so the records can be read in any order.
//
// Atomicity: the outputs are written under temporary names in the
// destination folder and renamed into place only when all are complete and
// fsynced (then the folder is fsynced). A failure or an interrupt before
// that leaves the destination as it was: temporary files are removed. With
// `overwrite`, files under the output names are removed just before the
// renames; a rename that fails (or a second signal during the renames)
// removes the outputs already renamed, so the folder never holds a mix of
// old and new shards, nor a part of the old set.
//
// A group: with options.group of several members, the members share the
// work and write the same files, byte for byte, as one process would.
// Member 0 leads: it takes the output folder's lock (held to the end) and
// stages in a folder the others must see too (a shared file system; it
// checks with a probe file there, FailedPrecondition naming the member that
// does not see it). The inputs are scanned by the members, split by bytes;
// each output is written by one member (so a compressed output is one
// stream, as one process writes it), the outputs split in runs balanced by
// bytes. The members then agree, and only when every one succeeded does the
// leader commit them all, as above; a failure anywhere leaves no output and
// no staged file. Every member returns the same result: the summary, or
// the error one process would have met first (a failed write elsewhere
// than at member 0 names the member: "rank 2 (host-c): writing ...").
//
// REQUIRES: as PlanReshard; output_prefix non-empty; output_compression
// not kAuto.
// Error: InvalidArgument (no inputs, standard input, an existing output
// without overwrite (advice Remedy::kOverwrite), fewer records than shards
// (as PlanReshard), an unwritable folder); NotFound or DataLoss naming the
// input file and offset, in count's words, or saying the input's FILE.idx
// does not describe it (advice Remedy::kRewriteFileIndex with the input);
// Internal (a failed write or fsync, e.g. a full disk); Cancelled
// (SIGINT/SIGTERM, see interrupt.h).
Result<RewriteSummary> Reshard(std::span<const std::string> inputs, const ReshardOptions& options);

struct ConvertOptions : RewriteOptions {
  // Where the outputs go. Default: beside each input.
  std::string output_dir;
};

// Rewrites each input into ConvertedFileName(input, output_compression,
// output_dir), record for record, with Reshard()'s checks and atomicity:
// all outputs appear together or none does; shared by a group as Reshard().
// REQUIRES: output_compression not kAuto.
// Error: as Reshard(); also InvalidArgument when an output would replace
// its own input (advice Remedy::kOtherOutputFolder) or two inputs map to
// the same output.
Result<RewriteSummary> Convert(std::span<const std::string> inputs, const ConvertOptions& options);

}  // namespace tfdist::io

#endif  // TFDIST_IO_RESHARD_H_
