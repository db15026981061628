// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Pipeline shape for auto-sharding (TensorFlow's auto_shard.cc and
// compute_batch_size: which ops pass through, where the reader is).

#include "tfdist/distribute/shape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <map>

#include "tfdist/data/pipeline.h"

namespace tfdist::dist {
namespace {

using data::Op;

template <typename T>
bool Is(const Op& op) {
  return std::holds_alternative<T>(op.params);
}

// Ops that keep the batch dimension (TensorFlow's compute_batch_size list,
// which holds CacheDataset and FilterDataset). MapDataset is not on that
// list, nor IgnoreErrorsDataset: after batch() they hide the static batch
// size (the elements stay batches).
bool KeepsBatch(const Op& op) {
  const auto* map = std::get_if<data::MapOp>(&op.params);
  return Is<data::PrefetchOp>(op) || Is<data::RepeatOp>(op) || Is<data::ShardOp>(op) ||
         Is<data::ShuffleOp>(op) || Is<data::SkipOp>(op) || Is<data::TakeOp>(op) ||
         Is<data::CacheOp>(op) || Is<data::FilterOp>(op) || (map && map->parse_dataset);
}

bool HidesBatchSize(const Op& op) { return Is<data::MapOp>(op) || Is<data::IgnoreErrorsOp>(op); }

// Ops FILE sharding can see through between the reader and the end
// (auto_shard.cc's pass-through list, which holds MapDataset, PaddedBatch
// and RebatchDataset, but neither UnbatchDataset nor IgnoreErrorsDataset).
// GroupByWindowDataset is one of its function ops, walked through when its
// function reads no files (a reduce_func that batches its window does not).
bool FileTransparent(const Op& op) {
  return KeepsBatch(op) || Is<data::BatchOp>(op) || Is<data::MapOp>(op) ||
         Is<data::RebatchOp>(op) || Is<data::GroupByWindowOp>(op);
}

// The batch dimension of the elements' spec, when static: the last op that
// sets it is batch(G)/padded_batch(G) or rebatch(G) with drop_remainder and
// a literal G, and the ops after it keep the batch dimension (a map() may
// change it, and concatenate() joins other specs; parse_example_dataset
// keeps it).
std::optional<int64_t> StaticBatchDimension(const std::vector<Op>& ops) {
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

}  // namespace

PipelineShape Analyze(const data::Pipeline& p) {
  PipelineShape s;
  const auto& ops = p.ops;
  // The shapes of the datasets concatenate() joins, each analyzed once.
  std::map<size_t, PipelineShape> joined_shapes;
  auto joined_shape = [&](size_t i) -> const PipelineShape& {
    auto it = joined_shapes.find(i);
    if (it == joined_shapes.end()) {
      const auto& c = std::get<data::ConcatenateOp>(ops[i].params);
      it = joined_shapes.emplace(i, Analyze(*c.dataset)).first;
    }
    return it->second;
  };
  if (Is<data::TFRecordOp>(ops[0])) {
    s.reader = 0;
  } else if (Is<data::ListFilesOp>(ops[0]) || Is<data::FromTensorSlicesOp>(ops[0])) {
    for (size_t i = 1; i < ops.size(); ++i) {
      if (Is<data::InterleaveOp>(ops[i])) {
        s.reader = i;
        break;
      }
    }
  }
  if (!s.reader) {
    s.file_blocker =
        fmt::format("the pipeline reads no files ({}() is not file-based)", ops[0].name);
  } else {
    for (size_t i = *s.reader + 1; i < ops.size(); ++i) {
      if (Is<data::ConcatenateOp>(ops[i])) {
        // TensorFlow recurses into each input: FILE applies when every one
        // reads files, and shards the file names of each (ShardFiles).
        const PipelineShape& other = joined_shape(i);
        if (!other.file_blocker.empty()) {
          s.file_blocker =
              fmt::format("concatenate() ({}) joins a dataset where {}",
                          data::DescribePosition(p.text, ops[i].pos), other.file_blocker);
          break;
        }
        continue;
      }
      if (!FileTransparent(ops[i])) {
        s.file_blocker = fmt::format("{}() after the reader hides the files it reads ({})",
                                     ops[i].name, data::DescribePosition(p.text, ops[i].pos));
        break;
      }
    }
  }
  // Walk back from the end through batch-preserving ops to a batch().
  bool size_hidden = false;
  std::vector<std::optional<int64_t>> joined;  // the batch sizes of concatenated datasets
  for (size_t i = ops.size(); i-- > 0;) {
    if (KeepsBatch(ops[i])) continue;
    if (HidesBatchSize(ops[i])) {
      size_hidden = true;
      continue;
    }
    if (Is<data::ConcatenateOp>(ops[i])) {
      // compute_batch_size: every input must have the same static size.
      const PipelineShape& other = joined_shape(i);
      if (!other.batched) break;
      if (!other.global_batch_size) size_hidden = true;
      joined.push_back(other.global_batch_size);
      continue;
    }
    if (const auto* b = std::get_if<data::BatchOp>(&ops[i].params)) {
      s.batched = true;
      if (b->batch_size.symbol == data::IntArg::Symbol::kLiteral && !size_hidden &&
          std::all_of(joined.begin(), joined.end(),
                      [&](const std::optional<int64_t>& g) { return g == b->batch_size.value; })) {
        s.global_batch_size = b->batch_size.value;
      }
      s.drop_remainder = b->drop_remainder;
    } else if (const auto* r = std::get_if<data::RebatchOp>(&ops[i].params)) {
      // Batches, of a size compute_batch_size does not look for.
      s.batched = true;
      s.drop_remainder = r->drop_remainder;
    } else if (const auto* g = std::get_if<data::GroupByWindowOp>(&ops[i].params)) {
      // Batches whose size the data decides.
      s.batched = true;
      s.drop_remainder = g->drop_remainder;
    }
    break;
  }
  // The rank of the elements, forward: records, names and integers are
  // scalars; a batch has rank >= 1 (unbatch() gives its scalars back); a
  // map() or a value given in the pipeline may be anything.
  // A parse_single_example() of FixedLenFeatures gives a dict whose ranks
  // are the features' (kRows: all >= 1, their first dimensions known).
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
    } else if (Is<data::ListFilesOp>(op) || Is<data::TFRecordOp>(op) || Is<data::RangeOp>(op) ||
               Is<data::InterleaveOp>(op)) {
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
  // enumerate()'s pair leads with its index, a scalar, whatever follows it.
  const bool enumerated = std::any_of(ops.begin(), ops.end(),
                                      [](const data::Op& op) { return Is<data::EnumerateOp>(op); });
  s.scalar_elements = !s.batched && (rank == Rank::kScalar || enumerated);
  if (enumerated) {  // the pair leads with its index
    s.scalar_component = 0;
    s.scalar_feature.clear();
  }
  if (s.batched || rank != Rank::kRows || enumerated) s.element_rows.clear();
  // tf.distribute asks the element spec first: a batch dimension that is
  // static there (batch(G, drop_remainder=True), followed by ops that keep
  // the spec) is G whatever the graph walk above found.
  if (s.batched && !s.global_batch_size) s.global_batch_size = StaticBatchDimension(ops);
  for (const data::Op& op : ops) {
    if (const auto* f = std::get_if<data::FilterOp>(&op.params); f && s.filter.empty()) {
      s.filter =
          fmt::format("filter({}) ({})", f->function, data::DescribePosition(p.text, op.pos));
    }
    if (const auto* sh = std::get_if<data::ShardOp>(&op.params)) {
      s.shards_by_context =
          s.shards_by_context || sh->index.symbol == data::IntArg::Symbol::kInputPipelineId;
    }
  }
  // repeat() forever makes the stream endless; a take(n >= 0) after it, or a
  // symbolic one, ends it again.
  for (size_t i = 0; i < ops.size(); ++i) {
    if (const auto* r = std::get_if<data::RepeatOp>(&ops[i].params)) {
      if (!r->count || (r->count->symbol == data::IntArg::Symbol::kLiteral && r->count->value < 0))
        s.endless_at = i;
    } else if (const auto* t = std::get_if<data::TakeOp>(&ops[i].params)) {
      if (t->count.symbol != data::IntArg::Symbol::kLiteral || t->count.value >= 0)
        s.endless_at.reset();
    }
  }
  // An unseeded shuffle of names, then shard(): each worker shuffles differently.
  bool unseeded = false;
  const size_t names_end = s.reader.value_or(ops.size());
  for (size_t i = 0; i < names_end; ++i) {
    if (const std::optional<int64_t>* seed = data::OpSeedOf(ops[i])) {
      unseeded = unseeded || !*seed;
    } else if (Is<data::ShardOp>(ops[i]) && unseeded) {
      s.shard_after_unseeded_shuffle = true;
    }
  }
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
