// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The binding of a call's arguments to TensorFlow's parameter lists (private).

#ifndef TFDIST_DATA_BINDER_H_
#define TFDIST_DATA_BINDER_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "expression.h"
#include "tfdist/base/result.h"
#include "tfdist/data/ops.h"
#include "tfdist/io/byte_stream.h"

namespace tfdist::data {

// One parameter of a TensorFlow signature, in the signature's order.
struct Param {
  const char* name;
  bool required;
};

// Turns the calls of a parsed chain (expression.h) into typed ops, with
// TensorFlow's argument names and defaults. Every error is InvalidArgument
// "<position>: <what>" (PositionError) pointing into the expression.
//
// Thread-safety: a Binder is immutable; it refers to `text`, which must
// outlive it.
class Binder {
 public:
  explicit Binder(std::string_view text) : text_(text) {}

  // PositionError(text, pos, what).
  Status ErrorAt(size_t pos, std::string_view what) const;
  // PositionError(text, pos, cause): a check's error, at the value checked.
  Status ErrorAt(size_t pos, Status cause) const;

  // "shard() takes num_shards and index" / "batch() takes batch_size (and
  // optionally drop_remainder, ...)".
  static std::string Signature(std::string_view name, std::span<const Param> params);

  // Matches the call's arguments to `params` as Python does: positionals
  // first, then keywords. Returns one Expr per param (pointing into `call`),
  // nullptr when omitted.
  // Error: too many arguments, a required one missing, an unknown or
  // repeated keyword, a positional after a keyword.
  Result<std::vector<const Expr*>> Bind(const Call& call, std::string_view name,
                                        std::span<const Param> params) const;

  // How a value is named in messages: 3, "a", a list, tfrecord(...), ...
  static std::string ExprText(const Expr& e);
  // `s` is `suffix` or ends in "." + `suffix` (tf.data.AUTOTUNE, AUTOTUNE).
  static bool EndsWith(std::string_view s, std::string_view suffix);
  // An omitted argument or None.
  static bool IsNone(const Expr* e);

  // An integer argument: a literal, AUTOTUNE (kAutotune), SHARD_HINT, a
  // ctx.* name or ctx.get_per_replica_batch_size(N). `what` names it in
  // messages.
  Result<IntArg> Int(const Expr& e, std::string_view what) const;
  // Int, or nullopt for None or an omitted argument.
  Result<std::optional<IntArg>> OptInt(const Expr* e, std::string_view what) const;
  // Int, or `fallback` at `pos` for None or an omitted argument.
  Result<IntArg> IntOr(const Expr* e, std::string_view what, int64_t fallback, size_t pos) const;
  // An integer seed, or nullopt for None or an omitted argument.
  Result<std::optional<int64_t>> Seed(const Expr* e) const;
  // True or False, or nullopt for None or an omitted argument.
  Result<std::optional<bool>> OptBool(const Expr* e, std::string_view what) const;
  // A string or a list of strings.
  Result<std::vector<std::string>> Strings(const Expr& e, std::string_view what) const;
  // compression_type: "", "GZIP", "ZLIB" or "auto"; None or omitted: none.
  Result<io::Compression> Compression(const Expr* e) const;
  // TFRecordDataset's buffer_size: checked as TensorFlow checks it, unused.
  Status ReaderBufferSize(const Expr* e) const;

  // tfrecord, TFRecordDataset, tf.data.TFRecordDataset or data.TFRecordDataset.
  static bool IsReaderName(std::string_view name);
  // The function of interleave()/flat_map(): a TFRecord reader of a file
  // name (a reader name, a reader call, or a lambda calling one on its
  // argument). Returns the reader's compression.
  Result<io::Compression> ReaderFunction(const Expr& e) const;

  // The source call of a chain (TensorFlow's spellings: tf.data.Dataset.range,
  // Dataset.range, range): list_files, from_tensor_slices, from_tensors,
  // tfrecord, range.
  Result<Op> Source(const Call& call) const;
  // A method call after the source: shard, interleave, flat_map, shuffle,
  // repeat, batch, padded_batch, unbatch, rebatch, take, skip, enumerate,
  // prefetch, cache, map, filter, ignore_errors, apply, concatenate,
  // group_by_window, bucket_by_sequence_length.
  Result<Op> Transform(const Call& call) const;

 private:
  // One per op: its params from `call` (whose name `name` is as written).
  Result<OpParams> ListFiles(const Call& call, std::string_view name) const;
  Result<OpParams> FromTensorSlices(const Call& call, std::string_view name) const;
  Result<OpParams> FromTensors(const Call& call, std::string_view name) const;
  Result<OpParams> TFRecord(const Call& call, std::string_view name) const;
  Result<OpParams> Range(const Call& call, std::string_view name) const;
  Result<OpParams> Shard(const Call& call, std::string_view name) const;
  Result<OpParams> Interleave(const Call& call, std::string_view name) const;
  Result<OpParams> FlatMap(const Call& call, std::string_view name) const;
  Result<OpParams> Shuffle(const Call& call, std::string_view name) const;
  Result<OpParams> Repeat(const Call& call, std::string_view name) const;
  Result<OpParams> Batch(const Call& call, std::string_view name) const;
  Result<OpParams> Take(const Call& call, std::string_view name) const;
  Result<OpParams> Skip(const Call& call, std::string_view name) const;
  Result<OpParams> Enumerate(const Call& call, std::string_view name) const;
  Result<OpParams> Prefetch(const Call& call, std::string_view name) const;
  Result<OpParams> Map(const Call& call, std::string_view name) const;
  Result<OpParams> Filter(const Call& call, std::string_view name) const;
  Result<OpParams> PaddedBatch(const Call& call, std::string_view name) const;
  Result<OpParams> Unbatch(const Call& call, std::string_view name) const;
  Result<OpParams> Rebatch(const Call& call, std::string_view name) const;
  Result<OpParams> Cache(const Call& call, std::string_view name) const;
  Result<OpParams> IgnoreErrors(const Call& call, std::string_view name) const;
  Result<OpParams> Apply(const Call& call, std::string_view name) const;
  Result<OpParams> Concatenate(const Call& call, std::string_view name) const;
  Result<OpParams> GroupByWindow(const Call& call, std::string_view name) const;
  Result<OpParams> BucketBySequenceLength(const Call& call, std::string_view name) const;
  // A group's window size or batch size: a positive number, as TensorFlow's
  // kernels require when they run.
  Result<IntArg> PositiveSize(const Expr& e, std::string_view op, std::string_view what) const;

  // The elements of from_tensor_slices()/from_tensors() given as `items`.
  Result<OpParams> Elements(std::span<const Expr> items) const;
  // A value as Python writes it ("1.5", "(1, 'a')"); a string at the top
  // level is itself. Error: a call or a lambda.
  Result<std::string> ValueText(const Expr& e, bool nested) const;
  // opaque("name"): the name of a function tfdist does not look into, or
  // nullopt for another expression.
  Result<std::optional<std::string>> Opaque(const Expr& e) const;

  std::string_view text_;
};

}  // namespace tfdist::data

#endif  // TFDIST_DATA_BINDER_H_
