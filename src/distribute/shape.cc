// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Pipeline shape for auto-sharding (TensorFlow's auto_shard.cc and
// compute_batch_size: which ops pass through, where the reader is), as
// named questions over tables of op kinds, one per answer of PipelineShape.

#include "tfdist/distribute/shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <limits>
#include <map>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <variant>

#include "tfdist/data/pipeline.h"

namespace tfdist::dist {
namespace {

using data::Op;
using data::OpParams;

template <typename T>
bool Is(const Op& op) {
  return std::holds_alternative<T>(op.params);
}

// An op's kind: the place of its struct among OpParams' alternatives, as
// auto_shard.cc names a dataset op by its type.
template <typename T, size_t I = 0>
constexpr size_t KindOf() {
  if constexpr (std::is_same_v<T, std::variant_alternative_t<I, OpParams>>) {
    return I;
  } else {
    return KindOf<T, I + 1>();
  }
}

// A table of op kinds, written as the ops' structs.
template <typename... T>
constexpr std::array<size_t, sizeof...(T)> Kinds() {
  return {KindOf<T>()...};
}

// Whether `op` is of a kind in `table`.
template <size_t N>
bool In(const std::array<size_t, N>& table, const Op& op) {
  return std::find(table.begin(), table.end(), op.params.index()) != table.end();
}

// The ops by role, as auto_shard.cc tables them (kReaderDatasetOps,
// kFuncDatasetOps, kMultipleInputsDatasetOps, kPassThroughOps) and
// compute_batch_size looks through them.

// Sources that read records themselves (kReaderDatasetOps: TFRecordDataset).
constexpr auto kReaderSources = Kinds<data::TFRecordOp>();
// Sources of file names, which a reader function after them opens.
constexpr auto kFileNameSources = Kinds<data::ListFilesOp, data::FromTensorSlicesOp>();
// Ops whose function reads the records of each file name (kFuncDatasetOps:
// InterleaveDataset, ParallelInterleaveDataset, FlatMapDataset).
constexpr auto kReaderFunctionOps = Kinds<data::InterleaveOp>();
// Ops that join other datasets to their input (kMultipleInputsDatasetOps).
constexpr auto kJoiningOps = Kinds<data::ConcatenateOp>();
// Ops that keep the batch dimension (TensorFlow's compute_batch_size list,
// which holds CacheDataset and FilterDataset; and ParseExampleDataset, see
// KeepsBatch). MapDataset is not on that list, nor IgnoreErrorsDataset:
// after batch() they hide the static batch size (the elements stay batches).
constexpr auto kBatchKeepingOps =
    Kinds<data::PrefetchOp, data::RepeatOp, data::ShardOp, data::ShuffleOp, data::SkipOp,
          data::TakeOp, data::CacheOp, data::FilterOp>();
constexpr auto kBatchSizeHidingOps = Kinds<data::MapOp, data::IgnoreErrorsOp>();
// Ops that make batches: batch()/padded_batch(), rebatch() (of a size
// compute_batch_size does not look for), and a grouping whose reduce_func
// batches its windows (of a size the data decides).
constexpr auto kBatchingOps = Kinds<data::BatchOp, data::RebatchOp, data::GroupByWindowOp>();
// Beyond those that keep the batch, the ops FILE sharding sees through
// between the reader and the end (auto_shard.cc's pass-through list, which
// holds MapDataset, PaddedBatch and RebatchDataset, but neither
// UnbatchDataset nor IgnoreErrorsDataset). GroupByWindowDataset is one of
// its function ops, walked through when its function reads no files (a
// reduce_func that batches its window does not).
constexpr auto kFilePassThroughOps =
    Kinds<data::BatchOp, data::MapOp, data::RebatchOp, data::GroupByWindowOp>();
// Ops whose elements are scalars whatever their input: file names, records
// and range()'s integers.
constexpr auto kScalarOps =
    Kinds<data::ListFilesOp, data::TFRecordOp, data::RangeOp, data::InterleaveOp>();

// Whether `op` keeps the batch dimension: kBatchKeepingOps, and
// apply(parse_example_dataset(...)), which unlike a map() keeps it.
bool KeepsBatch(const Op& op) {
  const auto* map = std::get_if<data::MapOp>(&op.params);
  return In(kBatchKeepingOps, op) || (map && map->parse_dataset);
}

bool HidesBatchSize(const Op& op) { return In(kBatchSizeHidingOps, op); }

bool FileTransparent(const Op& op) { return KeepsBatch(op) || In(kFilePassThroughOps, op); }

// The batch dimension of the elements' spec, when static: the last op that
// sets it is batch(G)/padded_batch(G) or rebatch(G) with drop_remainder and
// a literal G, and the ops after it keep the batch dimension (a map() may
// change it, and concatenate() joins other specs; parse_example_dataset
// keeps it).
std::optional<int64_t> StaticBatchDimension(std::span<const Op> ops) {
  for (size_t i = ops.size(); i-- > 0;) {
    if (KeepsBatch(ops[i]) || Is<data::IgnoreErrorsOp>(ops[i])) continue;
    if (const auto* b = std::get_if<data::BatchOp>(&ops[i].params)) {
      if (b->drop_remainder && b->batch_size.symbol == data::IntArg::Symbol::kLiteral) {
        return b->batch_size.value;
      }
    } else if (const auto* r = std::get_if<data::RebatchOp>(&ops[i].params)) {
      if (r->drop_remainder && r->sizes.size() == 1 &&
          r->sizes[0].symbol == data::IntArg::Symbol::kLiteral) {
        return r->sizes[0].value;
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

data::IntArg Literal(int64_t v, size_t pos) {
  data::IntArg a;
  a.value = v;
  a.pos = pos;
  return a;
}

// The reader op a tfrecord source stands for.
Op ReaderOf(const data::TFRecordOp& t, size_t pos) {
  data::InterleaveOp i;
  i.compression = t.compression;
  if (t.num_parallel_reads) {
    i.cycle_length = *t.num_parallel_reads;
    i.block_length = Literal(1, pos);
    i.num_parallel_calls = *t.num_parallel_reads;
    i.deterministic = true;
  } else {
    i.flat_map = true;
  }
  return Op{i, "tfrecord", pos};
}

Op NamesOf(const data::TFRecordOp& t, size_t pos) {
  return Op{data::FromTensorSlicesOp::Names(t.files), "from_tensor_slices", pos};
}

// The shapes of the datasets a pipeline's concatenate()s join, each
// analyzed when first asked for.
class JoinedShapes {
 public:
  explicit JoinedShapes(const data::Pipeline& p) : p_(p) {}

  // The shape of the dataset op `i` (a concatenate()) joins.
  const PipelineShape& At(size_t i) {
    auto it = shapes_.find(i);
    if (it == shapes_.end()) {
      const auto& c = std::get<data::ConcatenateOp>(p_.ops[i].params);
      it = shapes_.emplace(i, Analyze(*c.dataset)).first;
    }
    return it->second;
  }

 private:
  const data::Pipeline& p_;
  std::map<size_t, PipelineShape> shapes_;
};

// PipelineShape::reader: a source that reads records (kReaderSources), or
// after a source of file names the first op whose function reads them
// (kReaderFunctionOps); none after any other source.
std::optional<size_t> FindReader(const std::vector<Op>& ops) {
  if (In(kReaderSources, ops[0])) return 0;
  if (!In(kFileNameSources, ops[0])) return std::nullopt;
  for (size_t i = 1; i < ops.size(); ++i) {
    if (In(kReaderFunctionOps, ops[i])) return i;
  }
  return std::nullopt;
}

// PipelineShape::file_blocker: FILE sharding needs a reader, and every op
// after it seen through (FileTransparent), or joining datasets that read
// files themselves (TensorFlow recurses into each input of a concatenate,
// and shards the file names of each: ShardFiles).
std::string FileBlocker(const data::Pipeline& p, std::optional<size_t> reader,
                        JoinedShapes& joined) {
  const auto& ops = p.ops;
  if (!reader) {
    return fmt::format("the pipeline reads no files ({}() is not file-based)", ops[0].name);
  }
  for (size_t i = *reader + 1; i < ops.size(); ++i) {
    if (In(kJoiningOps, ops[i])) {
      const PipelineShape& other = joined.At(i);
      if (!other.file_blocker.empty()) {
        return fmt::format("concatenate() ({}) joins a dataset where {}",
                           data::DescribePosition(p.text, ops[i].pos), other.file_blocker);
      }
      continue;
    }
    if (!FileTransparent(ops[i])) {
      return fmt::format("{}() after the reader hides the files it reads ({})", ops[i].name,
                         data::DescribePosition(p.text, ops[i].pos));
    }
  }
  return "";
}

// PipelineShape's batched, global_batch_size and drop_remainder.
struct Batching {
  bool batched = false;
  std::optional<int64_t> global_batch_size;
  bool drop_remainder = false;
};

// The last batching op (kBatchingOps), walking back from the end through
// the ops that keep the batch and those that hide its size; the joined
// datasets of a concatenate() must be batched too, and the size is static
// when every one has the same (compute_batch_size). tf.distribute asks the
// element spec first: a batch dimension that is static there
// (StaticBatchDimension) is the size whatever the walk found.
Batching FindBatching(const std::vector<Op>& ops, JoinedShapes& joined) {
  Batching s;
  bool size_hidden = false;
  std::vector<std::optional<int64_t>> sizes;  // the batch sizes of concatenated datasets
  for (size_t i = ops.size(); i-- > 0;) {
    if (KeepsBatch(ops[i])) continue;
    if (HidesBatchSize(ops[i])) {
      size_hidden = true;
      continue;
    }
    if (In(kJoiningOps, ops[i])) {
      const PipelineShape& other = joined.At(i);
      if (!other.batched) break;
      if (!other.global_batch_size) size_hidden = true;
      sizes.push_back(other.global_batch_size);
      continue;
    }
    if (!In(kBatchingOps, ops[i])) break;
    s.batched = true;
    if (const auto* b = std::get_if<data::BatchOp>(&ops[i].params)) {
      if (b->batch_size.symbol == data::IntArg::Symbol::kLiteral && !size_hidden &&
          std::all_of(sizes.begin(), sizes.end(),
                      [&](const std::optional<int64_t>& g) { return g == b->batch_size.value; })) {
        s.global_batch_size = b->batch_size.value;
      }
      s.drop_remainder = b->drop_remainder;
    } else if (const auto* r = std::get_if<data::RebatchOp>(&ops[i].params)) {
      s.drop_remainder = r->drop_remainder;
    } else if (const auto* g = std::get_if<data::GroupByWindowOp>(&ops[i].params)) {
      s.drop_remainder = g->drop_remainder;
    }
    break;
  }
  if (s.batched && !s.global_batch_size) s.global_batch_size = StaticBatchDimension(ops);
  return s;
}

// PipelineShape's scalar_elements, scalar_component, scalar_feature and
// element_rows.
struct ElementRank {
  bool scalar_elements = false;
  size_t scalar_component = 0;
  std::string scalar_feature;
  std::vector<std::pair<std::string, int64_t>> element_rows;
};

// The rank of the elements, forward: records, names and integers are
// scalars (kScalarOps; from_tensor_slices() of integers); a batch has rank
// >= 1 (unbatch() gives its scalars back); a map() or a value given in the
// pipeline may be anything. A parse_single_example() of FixedLenFeatures
// gives a dict whose ranks are the features' (kRows: all >= 1, their first
// dimensions known); one scalar feature makes a scalar component.
// enumerate()'s pair leads with its index, a scalar, whatever follows it.
ElementRank FindElementRank(const std::vector<Op>& ops, bool batched) {
  ElementRank s;
  enum class Rank { kScalar, kBatchOfScalars, kRows, kUnknown };
  Rank rank = Rank::kUnknown;
  for (const data::Op& op : ops) {
    if (const auto* m = std::get_if<data::MapOp>(&op.params);
        m != nullptr && m->single_example && rank == Rank::kScalar && !m->features.empty() &&
        std::none_of(m->features.begin(), m->features.end(),
                     [](const data::FeatureSpec& f) { return f.var_len; })) {
      s.element_rows.clear();
      rank = Rank::kRows;
      std::vector<std::string> scalars;
      for (const data::FeatureSpec& f : m->features) {
        if (f.shape.empty()) {
          scalars.push_back(f.name);
        } else {
          s.element_rows.emplace_back(f.name, f.shape[0]);
        }
      }
      if (!scalars.empty()) {
        // A scalar component is enough to fail the rebatch; TensorFlow
        // flattens the dict in the order of its sorted keys.
        rank = Rank::kScalar;
        const std::string& first = *std::min_element(scalars.begin(), scalars.end());
        s.scalar_feature = first;
        s.scalar_component =
            std::count_if(m->features.begin(), m->features.end(),
                          [&](const data::FeatureSpec& f) { return f.name < first; });
      }
    } else if (const auto* f = std::get_if<data::FromTensorSlicesOp>(&op.params)) {
      rank = f->integers ? Rank::kScalar : Rank::kUnknown;
    } else if (In(kScalarOps, op)) {
      rank = Rank::kScalar;
      s.scalar_component = 0;
      s.scalar_feature.clear();
    } else if (Is<data::BatchOp>(op) || Is<data::RebatchOp>(op)) {
      rank = rank == Rank::kScalar ? Rank::kBatchOfScalars : Rank::kUnknown;
    } else if (Is<data::UnbatchOp>(op)) {
      rank = rank == Rank::kBatchOfScalars ? Rank::kScalar : Rank::kUnknown;
    } else if (Is<data::MapOp>(op) || Is<data::ConcatenateOp>(op)) {
      rank = Rank::kUnknown;
    }
  }
  const bool enumerated = std::any_of(ops.begin(), ops.end(),
                                      [](const data::Op& op) { return Is<data::EnumerateOp>(op); });
  s.scalar_elements = !batched && (rank == Rank::kScalar || enumerated);
  if (enumerated) {  // the pair leads with its index
    s.scalar_component = 0;
    s.scalar_feature.clear();
  }
  if (batched || rank != Rank::kRows || enumerated) s.element_rows.clear();
  return s;
}

// How messages name op `op` of `p` with the arguments `args`:
// "filter(is_valid) (line 3, column 9)".
std::string OpName(const data::Pipeline& p, const Op& op, std::string_view args) {
  return fmt::format("{}({}) ({})", op.name, args, data::DescribePosition(p.text, op.pos));
}

// PipelineShape::filter: the first filter(), named by its function and
// position.
std::string FirstFilter(const data::Pipeline& p) {
  for (const data::Op& op : p.ops) {
    if (const auto* f = std::get_if<data::FilterOp>(&op.params)) return OpName(p, op, f->function);
  }
  return "";
}

// PipelineShape::shards_by_context: a shard() whose index is
// ctx.input_pipeline_id.
bool ShardsByContext(const std::vector<Op>& ops) {
  return std::any_of(ops.begin(), ops.end(), [](const Op& op) {
    const auto* sh = std::get_if<data::ShardOp>(&op.params);
    return sh != nullptr && sh->index.symbol == data::IntArg::Symbol::kInputPipelineId;
  });
}

// PipelineShape::endless_at: repeat() forever makes the stream endless; a
// take(n >= 0) after it, or a symbolic one, ends it again.
std::optional<size_t> EndlessAt(const std::vector<Op>& ops) {
  std::optional<size_t> endless;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (const auto* r = std::get_if<data::RepeatOp>(&ops[i].params)) {
      if (!r->count || (r->count->symbol == data::IntArg::Symbol::kLiteral && r->count->value < 0))
        endless = i;
    } else if (const auto* t = std::get_if<data::TakeOp>(&ops[i].params)) {
      if (t->count.symbol != data::IntArg::Symbol::kLiteral || t->count.value >= 0) endless.reset();
    }
  }
  return endless;
}

// PipelineShape::batches_after_endless: a kBatchingOps op after the
// repeat() forever at `endless_at`.
bool BatchesAfterEndless(const std::vector<Op>& ops, std::optional<size_t> endless_at) {
  if (!endless_at) return false;
  return std::any_of(ops.begin() + static_cast<std::ptrdiff_t>(*endless_at) + 1, ops.end(),
                     [](const Op& op) { return In(kBatchingOps, op); });
}

// PipelineShape::shard_after_unseeded_shuffle: among the ops before the
// reader (all of them without one), a random op without an op seed
// (OpSeedOf), then a shard(): each worker shuffles its names differently.
bool ShardAfterUnseededShuffle(const std::vector<Op>& ops, std::optional<size_t> reader) {
  bool unseeded = false;
  const size_t names_end = reader.value_or(ops.size());
  for (size_t i = 0; i < names_end; ++i) {
    if (const std::optional<int64_t>* seed = data::OpSeedOf(ops[i])) {
      unseeded = unseeded || !*seed;
    } else if (Is<data::ShardOp>(ops[i]) && unseeded) {
      return true;
    }
  }
  return false;
}

// A cardinality as it flows through the ops: kKnown with a count, or with
// none where tfdist cannot know the count without reading anything.
struct Count {
  Cardinality kind = Cardinality::kUnknown;
  std::optional<int64_t> n;
};

Count Known(std::optional<int64_t> n) { return Count{Cardinality::kKnown, n}; }
constexpr Count kInfiniteCount{Cardinality::kInfinite, std::nullopt};
constexpr Count kUnknownCount{Cardinality::kUnknown, std::nullopt};

// A known count `n`, or unknown when it overflowed TensorFlow's int64.
Count KnownUnlessOverflow(bool overflow, int64_t n) { return overflow ? kUnknownCount : Known(n); }

std::optional<int64_t> LiteralOf(const data::IntArg& a) {
  if (a.symbol != data::IntArg::Symbol::kLiteral) return std::nullopt;
  return a.value;
}

// Ops whose cardinality is their input's: MapDataset (which preserves it in
// TensorFlow 2), ParseExampleDataset, PrefetchDataset, CacheDataset,
// ShuffleDataset, and enumerate(), a zip with range(start, int64 max), which
// TensorFlow counts as infinite (RangeCardinality; before it did, that
// range's count made enumerate() of an infinite input a huge known one).
constexpr auto kCardinalityKeepingOps =
    Kinds<data::MapOp, data::PrefetchOp, data::CacheOp, data::ShuffleOp, data::EnumerateOp>();
// Ops whose cardinality TensorFlow does not compute: unknown whatever
// their input's. FilterDataset, InterleaveDataset, FlatMapDataset,
// ParallelInterleaveDataset, RebatchDataset(V2) and GroupByWindowDataset
// have none of their own; IgnoreErrorsDataset's is unknown.
constexpr auto kCardinalityUnknownOps = Kinds<data::FilterOp, data::InterleaveOp, data::RebatchOp,
                                              data::IgnoreErrorsOp, data::GroupByWindowOp>();

// The cardinality of a source: range()'s count (RangeCardinality: infinite
// for a stop of int64 max), the elements given to from_tensor_slices() or
// from_tensors(), list_files()' matches (a from_tensor_slices() of them),
// a TFRecordDataset's unknown.
Count SourceCardinality(const Op& op) {
  if (const auto* f = std::get_if<data::FromTensorSlicesOp>(&op.params)) {
    return Known(static_cast<int64_t>(f->integers ? f->ints.size() : f->names.size()));
  }
  if (Is<data::ListFilesOp>(op)) return Known(std::nullopt);
  if (const auto* r = std::get_if<data::RangeOp>(&op.params)) {
    const std::optional<int64_t> start = LiteralOf(r->start), stop = LiteralOf(r->stop),
                                 step = LiteralOf(r->step);
    if (stop == std::numeric_limits<int64_t>::max()) return kInfiniteCount;
    if (!start || !stop || !step) return Known(std::nullopt);
    if (*step == 0 || *start == *stop || (*stop > *start) != (*step > 0)) return Known(0);
    // The distance, in uint64 arithmetic: it does not fit int64 when the
    // bounds are far apart.
    const uint64_t distance =
        *step > 0 ? uint64_t(*stop) - uint64_t(*start) : uint64_t(*start) - uint64_t(*stop);
    const uint64_t stride = *step > 0 ? uint64_t(*step) : uint64_t(0) - uint64_t(*step);
    const uint64_t n = (distance - 1) / stride + 1;
    return KnownUnlessOverflow(n > uint64_t(std::numeric_limits<int64_t>::max()), int64_t(n));
  }
  return kUnknownCount;  // TFRecordDataset
}

// The cardinality after op `i` of `ops` whose input's is `in`, by the
// CardinalityInternal of the op's TensorFlow dataset.
Count CardinalityAfter(const std::vector<Op>& ops, size_t i, Count in, JoinedShapes& joined) {
  const Op& op = ops[i];
  if (In(kCardinalityKeepingOps, op)) return in;
  if (In(kCardinalityUnknownOps, op)) return kUnknownCount;
  if (const auto* r = std::get_if<data::RepeatOp>(&op.params)) {
    // RepeatDataset: forever (None or a negative count) is infinite unless
    // the input is empty (one whose count tfdist cannot see is taken as
    // not: list_files()' never is); a count of 0 is empty; else the
    // input's count times `count`.
    const std::optional<int64_t> count =
        r->count ? LiteralOf(*r->count) : std::optional<int64_t>(-1);
    if (count && *count < 0) {
      return in.kind == Cardinality::kKnown && in.n == 0 ? Known(0) : kInfiniteCount;
    }
    if (count == 0) return Known(0);
    if (in.kind != Cardinality::kKnown) return in;
    if (!count || !in.n) return Known(std::nullopt);
    int64_t n = 0;
    const bool overflow = __builtin_mul_overflow(*in.n, *count, &n);
    return KnownUnlessOverflow(overflow, n);
  }
  if (const auto* t = std::get_if<data::TakeOp>(&op.params)) {
    // TakeDataset: min(input, count), count -1 taking everything.
    if (in.kind == Cardinality::kUnknown) return in;
    const std::optional<int64_t> count = LiteralOf(t->count);
    if (!count) return Known(std::nullopt);
    if (*count == -1) return in;
    if (*count < -1) return kUnknownCount;  // TensorFlow's min() gives no cardinality
    if (in.kind == Cardinality::kInfinite) return Known(*count);
    return Known(in.n ? std::optional<int64_t>(std::min(*in.n, *count)) : std::nullopt);
  }
  if (in.kind != Cardinality::kKnown) {
    // Every other op keeps an infinite or unknown input's cardinality,
    // and concatenate() joins another.
    if (!Is<data::ConcatenateOp>(op)) return in;
  }
  if (const auto* s = std::get_if<data::SkipOp>(&op.params)) {
    // SkipDataset: max(0, input - count); a negative count skips everything.
    const std::optional<int64_t> count = LiteralOf(s->count);
    if (count && *count < 0) return Known(0);
    if (!count || !in.n) return Known(std::nullopt);
    return Known(std::max<int64_t>(0, *in.n - *count));
  }
  if (const auto* b = std::get_if<data::BatchOp>(&op.params)) {
    // BatchDataset (and PaddedBatchDataset): the last short batch counts
    // unless drop_remainder.
    const std::optional<int64_t> size = LiteralOf(b->batch_size);
    if (!size || *size <= 0 || !in.n) return Known(std::nullopt);
    return Known(*in.n / *size + (*in.n % *size == 0 || b->drop_remainder ? 0 : 1));
  }
  if (const auto* sh = std::get_if<data::ShardOp>(&op.params)) {
    // ShardDataset: the elements at positions p % num_shards == index.
    // SHARD_HINT (-1) is no count TensorFlow can divide by.
    if (sh->num_shards.symbol == data::IntArg::Symbol::kShardHint) return kUnknownCount;
    const std::optional<int64_t> shards = LiteralOf(sh->num_shards), index = LiteralOf(sh->index);
    if (!shards || !index || *shards <= 0 || !in.n) return Known(std::nullopt);
    return Known(*in.n / *shards + (*index < *in.n % *shards ? 1 : 0));
  }
  if (Is<data::UnbatchOp>(op)) {
    // UnbatchDataset: the input's count times its static batch dimension;
    // unknown without one.
    const std::optional<int64_t> size = StaticBatchDimension(std::span<const Op>(ops.data(), i));
    if (!size || *size <= 0) return kUnknownCount;
    if (!in.n) return Known(std::nullopt);
    int64_t n = 0;
    const bool overflow = __builtin_mul_overflow(*in.n, *size, &n);
    return KnownUnlessOverflow(overflow, n);
  }
  if (Is<data::ConcatenateOp>(op)) {
    // ConcatenateDataset: infinite when either is, else unknown when
    // either is, else the sum.
    const PipelineShape& other = joined.At(i);
    if (in.kind == Cardinality::kInfinite || other.cardinality == Cardinality::kInfinite) {
      return kInfiniteCount;
    }
    if (in.kind == Cardinality::kUnknown || other.cardinality == Cardinality::kUnknown) {
      return kUnknownCount;
    }
    if (!in.n || !other.known_cardinality) return Known(std::nullopt);
    int64_t n = 0;
    const bool overflow = __builtin_add_overflow(*in.n, *other.known_cardinality, &n);
    return KnownUnlessOverflow(overflow, n);
  }
  assert(false && "an op kind without a cardinality rule");
  return kUnknownCount;
}

// PipelineShape's cardinality and known_cardinality: the source's, then
// each op's rule (CardinalityAfter) in turn.
Count FindCardinality(const std::vector<Op>& ops, JoinedShapes& joined) {
  Count c = SourceCardinality(ops[0]);
  for (size_t i = 1; i < ops.size(); ++i) c = CardinalityAfter(ops, i, c, joined);
  return c;
}

// The arguments that make `op`'s output order one TensorFlow does not fix,
// as messages show them, or nullopt: num_parallel_calls with
// deterministic=False in interleave() (ParallelInterleaveDataset), map()
// (ParallelMapDataset), parse_example_dataset() and batch()
// (ParallelBatchDataset), which give each element as soon as it is ready.
// Without num_parallel_calls the op is sequential and deterministic has no
// effect.
std::optional<std::string> UnorderedArguments(const Op& op) {
  if (const auto* i = std::get_if<data::InterleaveOp>(&op.params)) {
    if (i->num_parallel_calls && i->deterministic == false) return "deterministic=False";
  } else if (const auto* m = std::get_if<data::MapOp>(&op.params)) {
    if (m->num_parallel_calls && m->deterministic == false) {
      return m->parse_dataset ? "parse_example_dataset(..., deterministic=False)"
                              : "deterministic=False";
    }
  } else if (const auto* b = std::get_if<data::BatchOp>(&op.params)) {
    if (b->num_parallel_calls && b->deterministic == false) return "deterministic=False";
  }
  return std::nullopt;
}

// PipelineShape's nondeterministic_at and nondeterministic: the first op
// whose arguments leave its order free (UnorderedArguments), or a
// concatenate() joining a dataset with one (named by that dataset's op).
std::pair<std::optional<size_t>, std::string> FindNondeterministic(const data::Pipeline& p,
                                                                   JoinedShapes& joined) {
  for (size_t i = 0; i < p.ops.size(); ++i) {
    if (std::optional<std::string> args = UnorderedArguments(p.ops[i])) {
      return {i, OpName(p, p.ops[i], *args)};
    }
    if (In(kJoiningOps, p.ops[i]) && joined.At(i).nondeterministic_at) {
      return {i, joined.At(i).nondeterministic};
    }
  }
  return {std::nullopt, ""};
}

}  // namespace

PipelineShape Analyze(const data::Pipeline& p) {
  JoinedShapes joined(p);
  PipelineShape s;
  s.reader = FindReader(p.ops);
  s.file_blocker = FileBlocker(p, s.reader, joined);
  const Batching batching = FindBatching(p.ops, joined);
  s.batched = batching.batched;
  s.global_batch_size = batching.global_batch_size;
  s.drop_remainder = batching.drop_remainder;
  ElementRank rank = FindElementRank(p.ops, s.batched);
  s.scalar_elements = rank.scalar_elements;
  s.scalar_component = rank.scalar_component;
  s.scalar_feature = std::move(rank.scalar_feature);
  s.element_rows = std::move(rank.element_rows);
  s.filter = FirstFilter(p);
  s.shards_by_context = ShardsByContext(p.ops);
  s.endless_at = EndlessAt(p.ops);
  s.batches_after_endless = BatchesAfterEndless(p.ops, s.endless_at);
  s.shard_after_unseeded_shuffle = ShardAfterUnseededShuffle(p.ops, s.reader);
  const Count cardinality = FindCardinality(p.ops, joined);
  s.cardinality = cardinality.kind;
  s.known_cardinality = cardinality.n;
  std::tie(s.nondeterministic_at, s.nondeterministic) = FindNondeterministic(p, joined);
  return s;
}

data::Pipeline FileNames(const data::Pipeline& p, const PipelineShape& s) {
  data::Pipeline names;
  names.text = p.text;
  if (const auto* t = std::get_if<data::TFRecordOp>(&p.ops[0].params)) {
    names.ops.push_back(NamesOf(*t, p.ops[0].pos));
    return names;
  }
  names.ops.assign(p.ops.begin(), p.ops.begin() + static_cast<std::ptrdiff_t>(*s.reader));
  return names;
}

data::Pipeline ShardFiles(const data::Pipeline& p, const PipelineShape& s, int64_t workers,
                          int64_t worker) {
  assert(s.file_blocker.empty() && 0 <= worker && worker < workers);
  data::Pipeline out;
  out.text = p.text;
  const size_t pos = p.ops[*s.reader].pos;
  // TensorFlow removes every shuffle of the names and adds one back right
  // after the shard, with the buffer size, seeds and flag of the one nearest
  // the source (auto_shard.cc visits them from the reader back, each
  // overwriting the last): so each worker's own files come in a seeded order.
  std::optional<Op> moved;
  size_t rest = *s.reader + 1;
  if (const auto* t = std::get_if<data::TFRecordOp>(&p.ops[0].params)) {
    out.ops.push_back(NamesOf(*t, p.ops[0].pos));
  } else {
    for (size_t i = 0; i < *s.reader; ++i) {
      Op op = p.ops[i];
      if (auto* l = std::get_if<data::ListFilesOp>(&op.params); l != nullptr && l->shuffle) {
        // list_files(shuffle=True) is list_files(shuffle=False).shuffle(num_files, seed).
        l->shuffle = false;
        data::ShuffleOp sh;
        sh.buffer_size = Literal(int64_t{1} << 40, op.pos);  // all the names
        sh.seed = l->seed;
        moved = Op{sh, "shuffle", op.pos};
      }
      if (Is<data::ShuffleOp>(op) && i > 0) {
        if (!moved) moved = std::move(op);
        continue;
      }
      out.ops.push_back(std::move(op));
    }
  }
  data::ShardOp shard;
  shard.num_shards = Literal(workers, pos);
  shard.index = Literal(worker, pos);
  out.ops.push_back(Op{shard, "shard", pos});
  if (moved) out.ops.push_back(std::move(*moved));
  if (const auto* t = std::get_if<data::TFRecordOp>(&p.ops[0].params)) {
    out.ops.push_back(ReaderOf(*t, p.ops[0].pos));
    rest = 1;
  } else {
    out.ops.push_back(p.ops[*s.reader]);
  }
  for (size_t i = rest; i < p.ops.size(); ++i) {
    Op op = p.ops[i];
    // A joined dataset's files are sharded too, as TensorFlow recurses.
    if (auto* c = std::get_if<data::ConcatenateOp>(&op.params)) {
      const data::Pipeline& other = *c->dataset;
      c->dataset = std::make_shared<const data::Pipeline>(
          ShardFiles(other, Analyze(other), workers, worker));
    }
    out.ops.push_back(std::move(op));
  }
  return out;
}

const StringList* StaticFileNames(const data::Pipeline& p, const PipelineShape& s) {
  if (!s.reader) return nullptr;
  if (const auto* t = std::get_if<data::TFRecordOp>(&p.ops[0].params)) return &t->files;
  const auto* listed = std::get_if<data::FromTensorSlicesOp>(&p.ops[0].params);
  if (listed == nullptr) return nullptr;
  using Symbol = data::IntArg::Symbol;
  for (size_t i = 1; i < *s.reader; ++i) {
    if (const auto* sh = std::get_if<data::ShuffleOp>(&p.ops[i].params)) {
      if (sh->buffer_size.symbol != Symbol::kLiteral || sh->buffer_size.value < 1) return nullptr;
    } else if (const auto* pf = std::get_if<data::PrefetchOp>(&p.ops[i].params)) {
      if (pf->buffer_size.symbol != Symbol::kLiteral || pf->buffer_size.value < 0) return nullptr;
    } else {
      return nullptr;
    }
  }
  return &listed->names;
}

io::Compression ReaderCompression(const data::Pipeline& p, const PipelineShape& s) {
  assert(s.reader);
  if (const auto* t = std::get_if<data::TFRecordOp>(&p.ops[0].params)) return t->compression;
  if (const auto* i = std::get_if<data::InterleaveOp>(&p.ops[*s.reader].params)) {
    return i->compression;
  }
  return io::Compression::kNone;
}

}  // namespace tfdist::dist
