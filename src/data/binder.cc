// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// From the syntax tree to typed ops: TensorFlow's argument names, defaults
// and checks, with the position of every mistake.

#include "binder.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <utility>

#include "map_function.h"
#include "tfdist/base/text.h"
#include "tfdist/data/pipeline.h"

namespace tfdist::data {

Status Binder::ErrorAt(size_t pos, std::string_view what) const {
  return PositionError(text_, pos, what);
}

Status Binder::ErrorAt(size_t pos, Status cause) const {
  return PositionError(text_, pos, std::move(cause));
}

std::string Binder::Signature(std::string_view name, std::span<const Param> params) {
  std::vector<std::string> required, optional;
  for (const Param& p : params) (p.required ? required : optional).push_back(p.name);
  std::string out = fmt::format("{}() takes ", name);
  if (required.empty()) {
    out += optional.empty() ? "no arguments" : "";
  } else if (required.size() == 1) {
    out += required[0];
  } else {
    for (size_t i = 0; i < required.size(); ++i) {
      out += i == 0 ? "" : (i + 1 == required.size() ? " and " : ", ");
      out += required[i];
    }
  }
  if (!optional.empty()) {
    out += required.empty() ? "optionally " : " (and optionally ";
    for (size_t i = 0; i < optional.size(); ++i) out += (i ? ", " : "") + optional[i];
    if (!required.empty()) out += ")";
  }
  return out;
}

Result<std::vector<const Expr*>> Binder::Bind(const Call& call, std::string_view name,
                                              std::span<const Param> params) const {
  std::vector<const Expr*> bound(params.size(), nullptr);
  size_t positional = 0;
  bool seen_keyword = false;
  for (const Arg& arg : call.args) {
    if (arg.keyword.empty()) {
      if (seen_keyword) {
        return ErrorAt(arg.pos, "a positional argument cannot follow a keyword argument");
      }
      if (positional >= params.size()) {
        return ErrorAt(call.pos, fmt::format("{}; got {} arguments", Signature(name, params),
                                             call.args.size()));
      }
      bound[positional++] = &arg.value;
      continue;
    }
    seen_keyword = true;
    auto it = std::find_if(params.begin(), params.end(),
                           [&](const Param& p) { return arg.keyword == p.name; });
    if (it == params.end()) {
      return ErrorAt(arg.pos, fmt::format("{}() has no argument '{}'; {}", name,
                                          Abbreviate(arg.keyword, 40), Signature(name, params)));
    }
    const size_t k = static_cast<size_t>(it - params.begin());
    if (bound[k] != nullptr) {
      return ErrorAt(arg.pos, fmt::format("{}() got {} twice", name, arg.keyword));
    }
    bound[k] = &arg.value;
  }
  for (size_t k = 0; k < params.size(); ++k) {
    if (params[k].required && bound[k] == nullptr) {
      const size_t n = call.args.size();
      return ErrorAt(call.pos, fmt::format("{}; got {} argument{}", Signature(name, params), n,
                                           n == 1 ? "" : "s"));
    }
  }
  return bound;
}

std::string Binder::ExprText(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::kInt:
      return fmt::format("{}", e.number);
    case Expr::Kind::kFloat:
      return fmt::format("{}", e.real);
    case Expr::Kind::kString:
      return fmt::format("\"{}\"", e.text);
    case Expr::Kind::kList:
      return "a list";
    case Expr::Kind::kTuple:
      return "a tuple";
    case Expr::Kind::kDict:
      return "a dict";
    case Expr::Kind::kName:
      return e.text;
    case Expr::Kind::kCall:
      return e.text + "(...)";
    case Expr::Kind::kLambda:
      return "a lambda";
    case Expr::Kind::kChain:
      return e.calls.front().name + "(...)." + e.calls.back().name + "(...)";
  }
  return "?";
}

bool Binder::EndsWith(std::string_view s, std::string_view suffix) {
  return s == suffix || (s.size() > suffix.size() && s.ends_with(suffix) &&
                         s[s.size() - suffix.size() - 1] == '.');
}

bool Binder::IsNone(const Expr* e) {
  return e == nullptr || (e->kind == Expr::Kind::kName && e->text == "None");
}

Result<IntArg> Binder::Int(const Expr& e, std::string_view what) const {
  IntArg a;
  a.pos = e.pos;
  if (e.kind == Expr::Kind::kInt) {
    a.value = e.number;
    return a;
  }
  if (e.kind == Expr::Kind::kName) {
    if (EndsWith(e.text, "AUTOTUNE")) {
      a.value = kAutotune;
      return a;
    }
    if (EndsWith(e.text, "SHARD_HINT")) {
      a.symbol = IntArg::Symbol::kShardHint;
      a.value = -1;
      return a;
    }
    if (e.text.find('.') != std::string::npos) {
      if (EndsWith(e.text, "num_input_pipelines")) {
        a.symbol = IntArg::Symbol::kNumInputPipelines;
        return a;
      }
      if (EndsWith(e.text, "input_pipeline_id")) {
        a.symbol = IntArg::Symbol::kInputPipelineId;
        return a;
      }
      if (EndsWith(e.text, "num_replicas_in_sync")) {
        a.symbol = IntArg::Symbol::kNumReplicasInSync;
        return a;
      }
    }
  }
  if (e.kind == Expr::Kind::kCall && EndsWith(e.text, "get_per_replica_batch_size")) {
    if (e.args.size() != 1 ||
        (!e.args[0].keyword.empty() && e.args[0].keyword != "global_batch_size")) {
      return ErrorAt(e.pos, "get_per_replica_batch_size() takes global_batch_size");
    }
    TFDIST_ASSIGN_OR_RETURN(IntArg g, Int(e.args[0].value, "global_batch_size"));
    if (g.symbol != IntArg::Symbol::kLiteral) {
      return ErrorAt(e.args[0].pos, "global_batch_size must be a number");
    }
    a.symbol = IntArg::Symbol::kPerReplicaBatchSize;
    a.value = g.value;
    return a;
  }
  return ErrorAt(e.pos, fmt::format("expected an integer for {}; got {}", what, ExprText(e)));
}

Result<std::optional<IntArg>> Binder::OptInt(const Expr* e, std::string_view what) const {
  if (IsNone(e)) return std::optional<IntArg>();
  TFDIST_ASSIGN_OR_RETURN(IntArg a, Int(*e, what));
  return std::optional<IntArg>(a);
}

Result<IntArg> Binder::IntOr(const Expr* e, std::string_view what, int64_t fallback,
                             size_t pos) const {
  if (IsNone(e)) {
    IntArg a;
    a.value = fallback;
    a.pos = pos;
    return a;
  }
  return Int(*e, what);
}

Result<std::optional<int64_t>> Binder::Seed(const Expr* e) const {
  if (IsNone(e)) return std::optional<int64_t>();
  if (e->kind != Expr::Kind::kInt) {
    return ErrorAt(e->pos, fmt::format("expected an integer seed or None; got {}", ExprText(*e)));
  }
  return std::optional<int64_t>(e->number);
}

Result<std::optional<bool>> Binder::OptBool(const Expr* e, std::string_view what) const {
  if (IsNone(e)) return std::optional<bool>();
  if (e->kind == Expr::Kind::kName && (e->text == "True" || e->text == "False")) {
    return std::optional<bool>(e->text == "True");
  }
  return ErrorAt(e->pos, fmt::format("expected True or False for {}; got {}", what, ExprText(*e)));
}

Result<std::vector<std::string>> Binder::Strings(const Expr& e, std::string_view what) const {
  if (e.kind == Expr::Kind::kString) return std::vector<std::string>{e.text};
  if (e.kind == Expr::Kind::kList) {
    std::vector<std::string> out;
    for (const Expr& item : e.items) {
      if (item.kind != Expr::Kind::kString) {
        return ErrorAt(item.pos,
                       fmt::format("expected a string in {}; got {}", what, ExprText(item)));
      }
      out.push_back(item.text);
    }
    return out;
  }
  return ErrorAt(e.pos, fmt::format("expected a string or a list of strings for {}; got {}", what,
                                    ExprText(e)));
}

Result<io::Compression> Binder::Compression(const Expr* e) const {
  if (IsNone(e)) return io::Compression::kNone;
  if (e->kind != Expr::Kind::kString) {
    return ErrorAt(e->pos, fmt::format("expected compression_type \"\", \"GZIP\", \"ZLIB\" or "
                                       "\"auto\"; got {}",
                                       ExprText(*e)));
  }
  Result<io::Compression> c = io::ParseCompression(e->text);
  if (!c.ok()) return ErrorAt(e->pos, c.status());
  return c;
}

// TFRecordDataset's buffer_size: tfdist sizes its own reads, but takes
// only what TensorFlow takes, an integer >= 0 (0: no buffering) or None.
Status Binder::ReaderBufferSize(const Expr* e) const {
  TFDIST_ASSIGN_OR_RETURN(std::optional<IntArg> size, OptInt(e, "buffer_size"));
  if (size && size->value < 0) {
    return ErrorAt(e->pos,
                   fmt::format("tfrecord(): buffer_size must be at least 0; got {}", ExprText(*e)));
  }
  return Status::OK();
}

bool Binder::IsReaderName(std::string_view name) {
  return name == "tfrecord" || name == "TFRecordDataset" || name == "tf.data.TFRecordDataset" ||
         name == "data.TFRecordDataset";
}

Result<io::Compression> Binder::ReaderFunction(const Expr& e) const {
  if (e.kind == Expr::Kind::kName && IsReaderName(e.text)) return io::Compression::kNone;
  static constexpr Param kParams[] = {{"compression_type", false}, {"buffer_size", false}};
  if (e.kind == Expr::Kind::kCall && IsReaderName(e.text)) {
    Call call{e.text, e.pos, e.pos, e.args};
    TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, e.text, kParams));
    TFDIST_RETURN_IF_ERROR(ReaderBufferSize(b[1]));
    return Compression(b[0]);
  }
  if (e.kind == Expr::Kind::kLambda) {
    const Expr& body = e.items[0];
    if (body.kind == Expr::Kind::kCall && IsReaderName(body.text) && !body.args.empty() &&
        body.args[0].keyword.empty() && body.args[0].value.kind == Expr::Kind::kName &&
        body.args[0].value.text == e.text) {
      Call call{body.text, body.pos, body.pos,
                std::vector<Arg>(body.args.begin() + 1, body.args.end())};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, body.text, kParams));
      TFDIST_RETURN_IF_ERROR(ReaderBufferSize(b[1]));
      return Compression(b[0]);
    }
    return ErrorAt(e.pos, fmt::format("the lambda must read its argument as TFRecords: lambda {0}: "
                                      "tf.data.TFRecordDataset({0}, ...)",
                                      e.text));
  }
  return ErrorAt(e.pos, fmt::format("expected the reader function tfrecord (or "
                                    "tf.data.TFRecordDataset); got {}",
                                    ExprText(e)));
}

Result<Op> Binder::Source(const Call& call) const {
  // TensorFlow's spellings: tf.data.Dataset.range, Dataset.range, range.
  std::string name = call.name;
  for (std::string_view prefix : {"tf.data.Dataset.", "data.Dataset.", "Dataset."}) {
    if (name.starts_with(prefix)) name = name.substr(prefix.size());
  }
  Op op;
  op.name = name;
  op.pos = call.pos;
  if (name == "list_files") {
    TFDIST_ASSIGN_OR_RETURN(op.params, ListFiles(call, name));
  } else if (name == "from_tensor_slices") {
    TFDIST_ASSIGN_OR_RETURN(op.params, FromTensorSlices(call, name));
  } else if (name == "from_tensors") {
    TFDIST_ASSIGN_OR_RETURN(op.params, FromTensors(call, name));
  } else if (IsReaderName(call.name) || name == "TFRecordDataset") {
    op.name = "tfrecord";
    // Messages name the reader as written.
    TFDIST_ASSIGN_OR_RETURN(op.params, TFRecord(call, call.name));
  } else if (name == "range") {
    TFDIST_ASSIGN_OR_RETURN(op.params, Range(call, name));
  } else {
    return ErrorAt(call.pos, fmt::format("unknown source '{}'; expected list_files, "
                                         "from_tensor_slices, from_tensors, tfrecord or range",
                                         Abbreviate(call.name, 40)));
  }
  return op;
}

Result<Op> Binder::Transform(const Call& call) const {
  using BindOp = Result<OpParams> (Binder::*)(const Call&, std::string_view) const;
  static constexpr std::pair<std::string_view, BindOp> kMethods[] = {
      {"shard", &Binder::Shard},
      {"interleave", &Binder::Interleave},
      {"flat_map", &Binder::FlatMap},
      {"shuffle", &Binder::Shuffle},
      {"repeat", &Binder::Repeat},
      {"batch", &Binder::Batch},
      {"take", &Binder::Take},
      {"skip", &Binder::Skip},
      {"enumerate", &Binder::Enumerate},
      {"prefetch", &Binder::Prefetch},
      {"map", &Binder::Map},
      {"filter", &Binder::Filter},
      {"padded_batch", &Binder::PaddedBatch},
      {"unbatch", &Binder::Unbatch},
      {"rebatch", &Binder::Rebatch},
      {"cache", &Binder::Cache},
      {"ignore_errors", &Binder::IgnoreErrors},
      {"apply", &Binder::Apply},
      {"concatenate", &Binder::Concatenate},
      {"group_by_window", &Binder::GroupByWindow},
      {"bucket_by_sequence_length", &Binder::BucketBySequenceLength},
  };
  const auto* method = std::find_if(std::begin(kMethods), std::end(kMethods),
                                    [&](const auto& m) { return m.first == call.name; });
  if (method == std::end(kMethods)) {
    return ErrorAt(
        call.pos,
        fmt::format("unknown method '{}'; expected shard, interleave, flat_map, "
                    "shuffle, repeat, batch, padded_batch, unbatch, rebatch, take, "
                    "skip, enumerate, prefetch, cache, map, filter, ignore_errors, apply, "
                    "concatenate, group_by_window or bucket_by_sequence_length",
                    Abbreviate(call.name, 40)));
  }
  Op op;
  op.name = call.name;
  op.pos = call.pos;
  TFDIST_ASSIGN_OR_RETURN(op.params, (this->*method->second)(call, call.name));
  return op;
}

Result<OpParams> Binder::ListFiles(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"file_pattern", true}, {"shuffle", false}, {"seed", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  ListFilesOp p;
  TFDIST_ASSIGN_OR_RETURN(p.patterns, Strings(*b[0], "file_pattern"));
  TFDIST_ASSIGN_OR_RETURN(auto shuffle, OptBool(b[1], "shuffle"));
  p.shuffle = shuffle.value_or(true);
  TFDIST_ASSIGN_OR_RETURN(p.seed, Seed(b[2]));
  return OpParams(std::move(p));
}

Result<OpParams> Binder::FromTensorSlices(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"tensors", true}, {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  if (b[0]->kind != Expr::Kind::kList) {
    return ErrorAt(b[0]->pos, fmt::format("from_tensor_slices() takes a list (of file names, "
                                          "integers or other values); got {}",
                                          ExprText(*b[0])));
  }
  return Elements(b[0]->items);
}

Result<OpParams> Binder::FromTensors(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"tensors", true}, {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  return Elements(std::span(b[0], 1));
}

// Strings are names, integers integers, other values their text.
Result<OpParams> Binder::Elements(std::span<const Expr> items) const {
  FromTensorSlicesOp p;
  const bool ints = !items.empty() && std::all_of(items.begin(), items.end(), [](const Expr& e) {
    return e.kind == Expr::Kind::kInt;
  });
  if (ints) {
    p.integers = true;
    for (const Expr& e : items) p.ints.push_back(e.number);
    return OpParams(std::move(p));
  }
  StringList::Builder names;
  for (const Expr& e : items) {
    if (e.kind == Expr::Kind::kString) {
      names.Add(e.text);
      continue;
    }
    TFDIST_ASSIGN_OR_RETURN(std::string label, ValueText(e, false));
    names.Add(label);
  }
  p.names = std::move(names).Finish();
  return OpParams(std::move(p));
}

Result<std::string> Binder::ValueText(const Expr& e, bool nested) const {
  switch (e.kind) {
    case Expr::Kind::kInt:
      return fmt::format("{}", e.number);
    case Expr::Kind::kFloat: {
      std::string text = fmt::format("{}", e.real);
      if (text.find_first_of(".eEin") == std::string::npos) text += ".0";  // Python's 1.0
      return text;
    }
    case Expr::Kind::kString:
      return nested ? fmt::format("'{}'", e.text) : e.text;
    case Expr::Kind::kName:
      return e.text;
    case Expr::Kind::kList:
    case Expr::Kind::kTuple:
    case Expr::Kind::kDict: {
      const bool dict = e.kind == Expr::Kind::kDict;
      std::string out = e.kind == Expr::Kind::kList ? "[" : dict ? "{" : "(";
      for (size_t i = 0; i < e.items.size(); ++i) {
        TFDIST_ASSIGN_OR_RETURN(std::string item, ValueText(e.items[i], true));
        out += (i == 0 ? "" : dict && i % 2 == 1 ? ": " : ", ") + item;
      }
      if (e.kind == Expr::Kind::kTuple && e.items.size() == 1) out += ",";
      return out + (e.kind == Expr::Kind::kList ? "]" : dict ? "}" : ")");
    }
    case Expr::Kind::kCall:
    case Expr::Kind::kLambda:
    case Expr::Kind::kChain:
      break;
  }
  return ErrorAt(e.pos, fmt::format("expected a value (a number, a string, a list, a tuple or a "
                                    "dict); got {}",
                                    ExprText(e)));
}

Result<OpParams> Binder::TFRecord(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"filenames", true},
                                      {"compression_type", false},
                                      {"buffer_size", false},
                                      {"num_parallel_reads", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  TFRecordOp p;
  TFDIST_ASSIGN_OR_RETURN(const std::vector<std::string> files, Strings(*b[0], "filenames"));
  p.files = StringList(files);
  TFDIST_ASSIGN_OR_RETURN(p.compression, Compression(b[1]));
  TFDIST_RETURN_IF_ERROR(ReaderBufferSize(b[2]));
  TFDIST_ASSIGN_OR_RETURN(p.num_parallel_reads, OptInt(b[3], "num_parallel_reads"));
  return OpParams(std::move(p));
}

// range(stop) or range(start, stop[, step]): positional only, as in Python.
Result<OpParams> Binder::Range(const Call& call, std::string_view) const {
  if (call.args.empty() || call.args.size() > 3) {
    return ErrorAt(call.pos, fmt::format("range() takes stop, or start, stop and optionally "
                                         "step; got {} arguments",
                                         call.args.size()));
  }
  RangeOp p;
  std::vector<IntArg> v;
  for (const Arg& a : call.args) {
    if (!a.keyword.empty()) return ErrorAt(a.pos, "range() takes positional arguments only");
    TFDIST_ASSIGN_OR_RETURN(IntArg i, Int(a.value, "range"));
    v.push_back(i);
  }
  p.step.value = 1;
  p.step.pos = call.pos;
  p.start.pos = call.pos;
  if (v.size() == 1) {
    p.stop = v[0];
  } else {
    p.start = v[0];
    p.stop = v[1];
    if (v.size() == 3) p.step = v[2];
  }
  return OpParams(std::move(p));
}

Result<OpParams> Binder::Shard(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"num_shards", true}, {"index", true}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  ShardOp p;
  TFDIST_ASSIGN_OR_RETURN(p.num_shards, Int(*b[0], "num_shards"));
  TFDIST_ASSIGN_OR_RETURN(p.index, Int(*b[1], "index"));
  return OpParams(std::move(p));
}

Result<OpParams> Binder::Interleave(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"map_func", true},
                                      {"cycle_length", false},
                                      {"block_length", false},
                                      {"num_parallel_calls", false},
                                      {"deterministic", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  InterleaveOp p;
  TFDIST_ASSIGN_OR_RETURN(p.compression, ReaderFunction(*b[0]));
  TFDIST_ASSIGN_OR_RETURN(p.cycle_length, OptInt(b[1], "cycle_length"));
  TFDIST_ASSIGN_OR_RETURN(p.block_length, OptInt(b[2], "block_length"));
  TFDIST_ASSIGN_OR_RETURN(p.num_parallel_calls, OptInt(b[3], "num_parallel_calls"));
  TFDIST_ASSIGN_OR_RETURN(p.deterministic, OptBool(b[4], "deterministic"));
  return OpParams(std::move(p));
}

Result<OpParams> Binder::FlatMap(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"map_func", true}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  InterleaveOp p;
  TFDIST_ASSIGN_OR_RETURN(p.compression, ReaderFunction(*b[0]));
  p.flat_map = true;
  return OpParams(std::move(p));
}

Result<OpParams> Binder::Shuffle(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {
      {"buffer_size", true}, {"seed", false}, {"reshuffle_each_iteration", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  ShuffleOp p;
  TFDIST_ASSIGN_OR_RETURN(p.buffer_size, Int(*b[0], "buffer_size"));
  TFDIST_ASSIGN_OR_RETURN(p.seed, Seed(b[1]));
  TFDIST_ASSIGN_OR_RETURN(auto reshuffle, OptBool(b[2], "reshuffle_each_iteration"));
  p.reshuffle_each_iteration = reshuffle.value_or(true);
  return OpParams(std::move(p));
}

Result<OpParams> Binder::Repeat(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"count", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  RepeatOp p;
  TFDIST_ASSIGN_OR_RETURN(p.count, OptInt(b[0], "count"));
  return OpParams(std::move(p));
}

// num_parallel_calls and deterministic are checked as TensorFlow checks
// them (ParallelBatchDataset) and kept for the analyses, unused by the
// stage: batching is cheap next to reading.
Result<OpParams> Binder::Batch(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"batch_size", true},
                                      {"drop_remainder", false},
                                      {"num_parallel_calls", false},
                                      {"deterministic", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  BatchOp p;
  TFDIST_ASSIGN_OR_RETURN(p.batch_size, Int(*b[0], "batch_size"));
  TFDIST_ASSIGN_OR_RETURN(auto drop, OptBool(b[1], "drop_remainder"));
  p.drop_remainder = drop.value_or(false);
  // TensorFlow's ParallelBatchDataset: > 0 or AUTOTUNE.
  TFDIST_ASSIGN_OR_RETURN(std::optional<IntArg> calls, OptInt(b[2], "num_parallel_calls"));
  if (calls && calls->symbol == IntArg::Symbol::kLiteral && calls->value <= 0 &&
      calls->value != kAutotune) {
    return ErrorAt(calls->pos, fmt::format("batch(): num_parallel_calls must be greater than zero "
                                           "or AUTOTUNE; got {}",
                                           calls->value));
  }
  p.num_parallel_calls = calls;
  TFDIST_ASSIGN_OR_RETURN(p.deterministic, OptBool(b[3], "deterministic"));
  return OpParams(std::move(p));
}

Result<OpParams> Binder::Take(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"count", true}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  TFDIST_ASSIGN_OR_RETURN(IntArg count, Int(*b[0], "count"));
  return OpParams(TakeOp{count});
}

Result<OpParams> Binder::Skip(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"count", true}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  TFDIST_ASSIGN_OR_RETURN(IntArg count, Int(*b[0], "count"));
  return OpParams(SkipOp{count});
}

Result<OpParams> Binder::Enumerate(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"start", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  TFDIST_ASSIGN_OR_RETURN(IntArg start, IntOr(b[0], "start", 0, call.pos));
  return OpParams(EnumerateOp{start});
}

Result<OpParams> Binder::Prefetch(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"buffer_size", true}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  TFDIST_ASSIGN_OR_RETURN(IntArg size, Int(*b[0], "buffer_size"));
  return OpParams(PrefetchOp{size});
}

Result<std::optional<std::string>> Binder::Opaque(const Expr& e) const {
  if (e.kind != Expr::Kind::kCall || e.text != "opaque") return std::optional<std::string>();
  if (e.args.size() != 1 || !e.args[0].keyword.empty() ||
      e.args[0].value.kind != Expr::Kind::kString) {
    return ErrorAt(e.pos, "opaque() takes the function's name as a string: opaque(\"parse_fn\")");
  }
  return std::optional<std::string>(e.args[0].value.text);
}

Result<OpParams> Binder::Map(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {
      {"map_func", true}, {"num_parallel_calls", false}, {"deterministic", false}, {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  MapOp p;
  TFDIST_ASSIGN_OR_RETURN(std::optional<std::string> opaque, Opaque(*b[0]));
  if (opaque) {
    p.opaque = *opaque;
  } else {
    TFDIST_RETURN_IF_ERROR(BindMapFunction(*this, *b[0], p));
  }
  TFDIST_ASSIGN_OR_RETURN(p.num_parallel_calls, OptInt(b[1], "num_parallel_calls"));
  TFDIST_ASSIGN_OR_RETURN(p.deterministic, OptBool(b[2], "deterministic"));
  return OpParams(std::move(p));
}

// The predicate is not run: the op counts as keeping everything.
Result<OpParams> Binder::Filter(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"predicate", true}, {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  FilterOp p;
  TFDIST_ASSIGN_OR_RETURN(std::optional<std::string> opaque, Opaque(*b[0]));
  p.function = opaque                              ? *opaque
               : b[0]->kind == Expr::Kind::kLambda ? std::string("lambda")
                                                   : ExprText(*b[0]);
  return OpParams(std::move(p));
}

// padded_shapes and padding_values change the shapes of the elements, not
// which elements a batch holds.
Result<OpParams> Binder::PaddedBatch(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"batch_size", true},
                                      {"padded_shapes", false},
                                      {"padding_values", false},
                                      {"drop_remainder", false},
                                      {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  BatchOp p;
  p.padded = true;
  TFDIST_ASSIGN_OR_RETURN(p.batch_size, Int(*b[0], "batch_size"));
  TFDIST_ASSIGN_OR_RETURN(auto drop, OptBool(b[3], "drop_remainder"));
  p.drop_remainder = drop.value_or(false);
  return OpParams(std::move(p));
}

Result<OpParams> Binder::Unbatch(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"name", false}};
  TFDIST_RETURN_IF_ERROR(Bind(call, name, kParams));
  return OpParams(UnbatchOp{});
}

Result<OpParams> Binder::Rebatch(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {
      {"batch_size", true}, {"drop_remainder", false}, {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  RebatchOp p;
  if (b[0]->kind == Expr::Kind::kList || b[0]->kind == Expr::Kind::kTuple) {
    if (b[0]->items.empty()) return ErrorAt(b[0]->pos, "rebatch(): batch_size is an empty list");
    for (const Expr& e : b[0]->items) {
      TFDIST_ASSIGN_OR_RETURN(IntArg size, Int(e, "batch_size"));
      p.sizes.push_back(size);
    }
  } else {
    TFDIST_ASSIGN_OR_RETURN(IntArg size, Int(*b[0], "batch_size"));
    p.sizes.push_back(size);
  }
  TFDIST_ASSIGN_OR_RETURN(auto drop, OptBool(b[1], "drop_remainder"));
  p.drop_remainder = drop.value_or(false);
  return OpParams(std::move(p));
}

Result<OpParams> Binder::Cache(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"filename", false}, {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  CacheOp p;
  if (!IsNone(b[0])) {
    if (b[0]->kind != Expr::Kind::kString) {
      return ErrorAt(b[0]->pos,
                     fmt::format("cache(): filename is a string; got {}", ExprText(*b[0])));
    }
    p.filename = b[0]->text;
  }
  return OpParams(std::move(p));
}

Result<OpParams> Binder::IgnoreErrors(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"log_warning", false}, {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  if (b[0] != nullptr) TFDIST_RETURN_IF_ERROR(OptBool(b[0], "log_warning"));
  return OpParams(IgnoreErrorsOp{});
}

// apply(f) with the transformations of tf.data.experimental that map onto
// ops: parse_example_dataset, ignore_errors and unbatch.
Result<OpParams> Binder::Apply(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"transformation_func", true}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  const Expr& f = *b[0];
  std::string_view fn = f.kind == Expr::Kind::kCall ? std::string_view(f.text) : "";
  for (std::string_view prefix : {"tf.data.experimental.", "data.experimental.", "experimental."}) {
    if (fn.starts_with(prefix)) fn.remove_prefix(prefix.size());
  }
  Call inner{std::string(fn), f.pos, f.pos, f.args};
  if (fn == "ignore_errors") return IgnoreErrors(inner, fn);
  if (fn == "group_by_window") return GroupByWindow(inner, fn);
  if (fn == "bucket_by_sequence_length") return BucketBySequenceLength(inner, fn);
  if (fn == "unbatch") return Unbatch(inner, fn);
  if (fn == "parse_example_dataset") {
    static constexpr Param kParse[] = {
        {"features", true}, {"num_parallel_calls", false}, {"deterministic", false}};
    TFDIST_ASSIGN_OR_RETURN(auto parse, Bind(inner, fn, kParse));
    MapOp p;
    p.parse_dataset = true;
    // A feature spec tfdist cannot see (a traced one from another library):
    // the batches stay batches of the same size, parsed into no columns.
    TFDIST_ASSIGN_OR_RETURN(std::optional<std::string> opaque, Opaque(*parse[0]));
    if (opaque) {
      p.opaque = *opaque;
      return OpParams(std::move(p));
    }
    Expr spec;
    spec.kind = Expr::Kind::kCall;
    spec.pos = f.pos;
    spec.text = "parse_example";
    spec.args.push_back(Arg{"", parse[0]->pos, *parse[0]});
    TFDIST_RETURN_IF_ERROR(BindMapFunction(*this, spec, p));
    TFDIST_ASSIGN_OR_RETURN(p.num_parallel_calls, OptInt(parse[1], "num_parallel_calls"));
    TFDIST_ASSIGN_OR_RETURN(p.deterministic, OptBool(parse[2], "deterministic"));
    return OpParams(std::move(p));
  }
  return ErrorAt(f.pos, fmt::format("apply() takes tf.data.experimental.parse_example_dataset"
                                    "(...), ignore_errors(), unbatch(), group_by_window(...) or "
                                    "bucket_by_sequence_length(...); got {}",
                                    ExprText(f)));
}

// concatenate(dataset): the dataset is a pipeline of its own, written in
// the argument; its positions are in the same text.
Result<OpParams> Binder::Concatenate(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"dataset", true}, {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  const Expr& d = *b[0];
  std::vector<Call> calls;
  if (d.kind == Expr::Kind::kChain) {
    calls = d.calls;
  } else if (d.kind == Expr::Kind::kCall) {
    calls.push_back(Call{d.text, d.pos, d.pos, d.args});
  } else {
    return ErrorAt(d.pos, fmt::format("concatenate() takes a dataset, written as a pipeline "
                                      "(tfrecord(\"b\").map(...)); got {}",
                                      ExprText(d)));
  }
  auto other = std::make_shared<Pipeline>();
  other->text = std::string(text_);
  TFDIST_ASSIGN_OR_RETURN(Op source, Source(calls[0]));
  other->ops.push_back(std::move(source));
  for (size_t i = 1; i < calls.size(); ++i) {
    TFDIST_ASSIGN_OR_RETURN(Op op, Transform(calls[i]));
    other->ops.push_back(std::move(op));
  }
  return OpParams(ConcatenateOp{std::move(other)});
}

namespace {

// How a function argument is named in messages: opaque("name")'s name,
// "lambda", or the expression.
std::string FunctionText(const Expr& e) {
  if (e.kind == Expr::Kind::kCall && e.text == "opaque" && e.args.size() == 1 &&
      e.args[0].value.kind == Expr::Kind::kString) {
    return e.args[0].value.text;
  }
  return e.kind == Expr::Kind::kLambda ? std::string("lambda") : Binder::ExprText(e);
}

}  // namespace

Result<IntArg> Binder::PositiveSize(const Expr& e, std::string_view op,
                                    std::string_view what) const {
  TFDIST_ASSIGN_OR_RETURN(IntArg a, Int(e, what));
  if (a.symbol != IntArg::Symbol::kLiteral) {
    return ErrorAt(e.pos, fmt::format("{}(): tfdist bounds the batches of a {} given as a "
                                      "number; got {}",
                                      op, what, ExprText(e)));
  }
  if (a.value <= 0) {
    return ErrorAt(
        e.pos, fmt::format("{}(): {} must be greater than zero, but got {}", op, what, a.value));
  }
  return a;
}

// The key function is not run. The reduce function must batch its window
// (the second parameter of a lambda): window.batch(N) or
// window.padded_batch(N, ...), with drop_remainder as written.
Result<OpParams> Binder::GroupByWindow(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {{"key_func", true},
                                      {"reduce_func", true},
                                      {"window_size", false},
                                      {"window_size_func", false},
                                      {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  GroupByWindowOp p;
  p.key_func = FunctionText(*b[0]);
  // TensorFlow's check (group_by_window in dataset_ops.py).
  if (IsNone(b[2]) == IsNone(b[3])) {
    return ErrorAt(call.pos, fmt::format("{}(): Either the `window_size` argument or the "
                                         "`window_size_func` argument must be specified.",
                                         name));
  }
  if (!IsNone(b[2])) {
    TFDIST_ASSIGN_OR_RETURN(IntArg w, PositiveSize(*b[2], name, "window_size"));
    p.window_sizes.push_back(w);
  } else {
    p.window_size_func = FunctionText(*b[3]);
  }
  const Expr& reduce = *b[1];
  const std::string_view params = reduce.text;
  const size_t comma = params.rfind(", ");
  const std::string window(comma == std::string_view::npos ? params : params.substr(comma + 2));
  const Expr* body = reduce.kind == Expr::Kind::kLambda && comma != std::string_view::npos
                         ? &reduce.items[0]
                         : nullptr;
  const bool batches = body != nullptr && body->kind == Expr::Kind::kCall &&
                       (body->text == window + ".batch" || body->text == window + ".padded_batch");
  if (!batches) {
    return ErrorAt(reduce.pos,
                   fmt::format("{}(): tfdist lays out a reduce_func that batches its window: "
                               "lambda key, window: window.batch(N) (or window.padded_batch(N, "
                               "...)); got {}",
                               name, ExprText(reduce)));
  }
  const bool padded = body->text.ends_with(".padded_batch");
  static constexpr Param kBatch[] = {{"batch_size", true},
                                     {"drop_remainder", false},
                                     {"num_parallel_calls", false},
                                     {"deterministic", false},
                                     {"name", false}};
  static constexpr Param kPadded[] = {{"batch_size", true},
                                      {"padded_shapes", false},
                                      {"padding_values", false},
                                      {"drop_remainder", false},
                                      {"name", false}};
  Call inner{body->text, body->pos, body->pos, body->args};
  TFDIST_ASSIGN_OR_RETURN(
      auto batch, padded ? Bind(inner, body->text, kPadded) : Bind(inner, body->text, kBatch));
  TFDIST_ASSIGN_OR_RETURN(p.reduce_batch_size, PositiveSize(*batch[0], name, "batch_size"));
  TFDIST_ASSIGN_OR_RETURN(auto drop, OptBool(batch[padded ? 3 : 1], "drop_remainder"));
  p.drop_remainder = drop.value_or(false);
  return OpParams(std::move(p));
}

// TensorFlow's bucket_by_sequence_length: the key is the bucket of the
// element's length (len(bucket_boundaries) + 1 of them), each bucket's
// window of its batch size padded_batch()ed (batch() with no_padding).
Result<OpParams> Binder::BucketBySequenceLength(const Call& call, std::string_view name) const {
  static constexpr Param kParams[] = {
      {"element_length_func", true}, {"bucket_boundaries", true}, {"bucket_batch_sizes", true},
      {"padded_shapes", false},      {"padding_values", false},   {"pad_to_bucket_boundary", false},
      {"no_padding", false},         {"drop_remainder", false},   {"name", false}};
  TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
  GroupByWindowOp p;
  p.buckets = true;
  p.key_func = FunctionText(*b[0]);
  auto list = [&](const Expr& e, std::string_view what) -> Result<const std::vector<Expr>*> {
    if (e.kind != Expr::Kind::kList && e.kind != Expr::Kind::kTuple) {
      return ErrorAt(e.pos,
                     fmt::format("{}(): {} is a list of numbers; got {}", name, what, ExprText(e)));
    }
    return &e.items;
  };
  TFDIST_ASSIGN_OR_RETURN(const std::vector<Expr>* boundaries, list(*b[1], "bucket_boundaries"));
  TFDIST_ASSIGN_OR_RETURN(const std::vector<Expr>* sizes, list(*b[2], "bucket_batch_sizes"));
  for (const Expr& e : *boundaries) TFDIST_RETURN_IF_ERROR(Int(e, "bucket_boundaries"));
  // TensorFlow's check (bucket_by_sequence_length in dataset_ops.py).
  if (sizes->size() != boundaries->size() + 1) {
    return ErrorAt(b[2]->pos, fmt::format("{}(): `len(bucket_batch_sizes)` must equal "
                                          "`len(bucket_boundaries) + 1` but "
                                          "`len(bucket_batch_sizes)={}` and "
                                          "`len(bucket_boundaries)={}`.",
                                          name, sizes->size(), boundaries->size()));
  }
  for (const Expr& e : *sizes) {
    TFDIST_ASSIGN_OR_RETURN(IntArg size, PositiveSize(e, name, "batch_size"));
    p.window_sizes.push_back(size);
  }
  for (size_t i : {size_t{5}, size_t{6}}) {
    if (b[i] != nullptr) TFDIST_RETURN_IF_ERROR(OptBool(b[i], kParams[i].name));
  }
  TFDIST_ASSIGN_OR_RETURN(auto drop, OptBool(b[7], "drop_remainder"));
  p.drop_remainder = drop.value_or(false);
  return OpParams(std::move(p));
}

}  // namespace tfdist::data
