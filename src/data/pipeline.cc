// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// From the syntax tree to typed ops: TensorFlow's argument names, defaults
// and checks, with the position of every mistake.

#include "tfdist/data/pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <random>
#include <span>
#include <thread>

#include "expression.h"
#include "stages.h"
#include "tfdist/io/file_list.h"

namespace tfdist::data {
namespace {

struct Param {
  const char* name;
  bool required;
};

class Binder {
 public:
  explicit Binder(std::string_view text) : text_(text) {}

  Status ErrorAt(size_t pos, std::string_view what) const {
    return PositionError(text_, pos, what);
  }

  // "shard() takes num_shards and index" / "batch() takes batch_size (and
  // optionally drop_remainder, ...)".
  static std::string Signature(std::string_view name, std::span<const Param> params) {
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

  // Matches the call's arguments to `params` as Python does: positionals
  // first, then keywords. Returns one Expr per param, nullptr when omitted.
  Result<std::vector<const Expr*>> Bind(const Call& call, std::string_view name,
                                        std::span<const Param> params) {
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
        return ErrorAt(arg.pos, fmt::format("{}() has no argument '{}'; {}", name, arg.keyword,
                                            Signature(name, params)));
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

  static std::string ExprText(const Expr& e) {
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
    }
    return "?";
  }

  static bool EndsWith(std::string_view s, std::string_view suffix) {
    return s == suffix || (s.size() > suffix.size() && s.ends_with(suffix) &&
                           s[s.size() - suffix.size() - 1] == '.');
  }

  static bool IsNone(const Expr* e) {
    return e == nullptr || (e->kind == Expr::Kind::kName && e->text == "None");
  }

  Result<IntArg> Int(const Expr& e, std::string_view what) {
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

  Result<std::optional<IntArg>> OptInt(const Expr* e, std::string_view what) {
    if (IsNone(e)) return std::optional<IntArg>();
    TFDIST_ASSIGN_OR_RETURN(IntArg a, Int(*e, what));
    return std::optional<IntArg>(a);
  }

  Result<IntArg> IntOr(const Expr* e, std::string_view what, int64_t fallback, size_t pos) {
    if (IsNone(e)) {
      IntArg a;
      a.value = fallback;
      a.pos = pos;
      return a;
    }
    return Int(*e, what);
  }

  Result<std::optional<int64_t>> Seed(const Expr* e) {
    if (IsNone(e)) return std::optional<int64_t>();
    if (e->kind != Expr::Kind::kInt) {
      return ErrorAt(e->pos, fmt::format("expected an integer seed or None; got {}", ExprText(*e)));
    }
    return std::optional<int64_t>(e->number);
  }

  Result<std::optional<bool>> OptBool(const Expr* e, std::string_view what) {
    if (IsNone(e)) return std::optional<bool>();
    if (e->kind == Expr::Kind::kName && (e->text == "True" || e->text == "False")) {
      return std::optional<bool>(e->text == "True");
    }
    return ErrorAt(e->pos,
                   fmt::format("expected True or False for {}; got {}", what, ExprText(*e)));
  }

  Result<std::vector<std::string>> Strings(const Expr& e, std::string_view what) {
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

  Result<io::Compression> Compression(const Expr* e) {
    if (IsNone(e)) return io::Compression::kNone;
    if (e->kind != Expr::Kind::kString) {
      return ErrorAt(e->pos, fmt::format("expected compression_type \"\", \"GZIP\", \"ZLIB\" or "
                                         "\"auto\"; got {}",
                                         ExprText(*e)));
    }
    Result<io::Compression> c = io::ParseCompression(e->text);
    if (!c.ok()) return ErrorAt(e->pos, c.status().message());
    return c;
  }

  // TFRecordDataset's buffer_size: tfdist sizes its own reads, but takes
  // only what TensorFlow takes, an integer >= 0 (0: no buffering) or None.
  Status ReaderBufferSize(const Expr* e) {
    TFDIST_ASSIGN_OR_RETURN(std::optional<IntArg> size, OptInt(e, "buffer_size"));
    if (size && size->value < 0) {
      return ErrorAt(
          e->pos, fmt::format("tfrecord(): buffer_size must be at least 0; got {}", ExprText(*e)));
    }
    return Status::OK();
  }

  static bool IsReaderName(std::string_view name) {
    return name == "tfrecord" || name == "TFRecordDataset" || name == "tf.data.TFRecordDataset" ||
           name == "data.TFRecordDataset";
  }

  // The function of interleave()/flat_map(): a TFRecord reader of a file name.
  Result<io::Compression> ReaderFunction(const Expr& e) {
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
      return ErrorAt(e.pos,
                     fmt::format("the lambda must read its argument as TFRecords: lambda {0}: "
                                 "tf.data.TFRecordDataset({0}, ...)",
                                 e.text));
    }
    return ErrorAt(e.pos, fmt::format("expected the reader function tfrecord (or "
                                      "tf.data.TFRecordDataset); got {}",
                                      ExprText(e)));
  }

  // parse_example / parse_single_example under TensorFlow's names; `single`
  // tells which.
  static bool IsParseName(std::string_view name, bool& single) {
    for (std::string_view prefix : {"", "tf.io.", "io.", "tf."}) {
      if (!name.starts_with(prefix)) continue;
      const std::string_view rest = name.substr(prefix.size());
      if (rest == "parse_example" || rest == "parse_single_example") {
        single = rest == "parse_single_example";
        return true;
      }
    }
    return false;
  }

  // The function of map(): parse_example({...}) or
  // lambda x: tf.io.parse_example(x, {...}) (either name, features= allowed).
  Status MapFunction(const Expr& e, MapOp& p) {
    bool single = false;
    static constexpr Param kPartial[] = {{"features", true}, {"name", false}};
    static constexpr Param kFull[] = {
        {"serialized", true}, {"features", true}, {"name", false}, {"example_names", false}};
    if (e.kind == Expr::Kind::kCall && IsParseName(e.text, single)) {
      Call call{e.text, e.pos, e.pos, e.args};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, e.text, kPartial));
      p.single_example = single;
      TFDIST_ASSIGN_OR_RETURN(p.features, Features(*b[0]));
      return Status::OK();
    }
    if (e.kind == Expr::Kind::kLambda) {
      const Expr& body = e.items[0];
      if (body.kind == Expr::Kind::kCall && IsParseName(body.text, single)) {
        Call call{body.text, body.pos, body.pos, body.args};
        TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, body.text, kFull));
        if (b[0]->kind != Expr::Kind::kName || b[0]->text != e.text) {
          return ErrorAt(b[0]->pos, fmt::format("the lambda must parse its argument: lambda {0}: "
                                                "{1}({0}, {{...}})",
                                                e.text, body.text));
        }
        p.single_example = single;
        TFDIST_ASSIGN_OR_RETURN(p.features, Features(*b[1]));
        return Status::OK();
      }
      return ErrorAt(body.pos,
                     fmt::format("tfdist only supports map(parse_example(...)); the lambda "
                                 "computes {}",
                                 ExprText(body)));
    }
    return ErrorAt(
        e.pos, fmt::format("tfdist only supports map(parse_example(...)); got {}", ExprText(e)));
  }

  // {"name": tf.io.FixedLenFeature(shape, dtype, default_value), ...}
  Result<std::vector<FeatureSpec>> Features(const Expr& e) {
    if (e.kind != Expr::Kind::kDict) {
      return ErrorAt(e.pos, fmt::format("expected a dict of feature names to "
                                        "tf.io.FixedLenFeature(...); got {}",
                                        ExprText(e)));
    }
    std::vector<FeatureSpec> out;
    for (size_t i = 0; i + 1 < e.items.size(); i += 2) {
      const Expr& key = e.items[i];
      const Expr& value = e.items[i + 1];
      if (key.kind != Expr::Kind::kString) {
        return ErrorAt(key.pos, fmt::format("feature names are strings; got {}", ExprText(key)));
      }
      for (const FeatureSpec& f : out) {
        if (f.name == key.text) {
          return ErrorAt(key.pos, fmt::format("feature '{}' is declared twice", key.text));
        }
      }
      TFDIST_ASSIGN_OR_RETURN(FeatureSpec spec, Feature(value, key.text));
      out.push_back(std::move(spec));
    }
    if (out.empty()) return ErrorAt(e.pos, "parse_example needs at least one feature");
    if (Status check = CheckFeatures(out); !check.ok()) return ErrorAt(e.pos, check.message());
    return out;
  }

  Result<FeatureSpec> Feature(const Expr& e, const std::string& name) {
    if (e.kind != Expr::Kind::kCall || !EndsWith(e.text, "FixedLenFeature")) {
      for (std::string_view other :
           {"VarLenFeature", "SparseFeature", "RaggedFeature", "FixedLenSequenceFeature"}) {
        if (e.kind == Expr::Kind::kCall && EndsWith(e.text, other)) {
          return ErrorAt(e.pos, fmt::format("feature '{}': tfdist parses dense features only "
                                            "(tf.io.FixedLenFeature); got {}",
                                            name, other));
        }
      }
      return ErrorAt(e.pos, fmt::format("feature '{}': expected tf.io.FixedLenFeature(shape, "
                                        "dtype, default_value=None); got {}",
                                        name, ExprText(e)));
    }
    static constexpr Param kParams[] = {{"shape", true}, {"dtype", true}, {"default_value", false}};
    Call call{e.text, e.pos, e.pos, e.args};
    TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, "FixedLenFeature", kParams));
    FeatureSpec spec;
    spec.name = name;
    TFDIST_ASSIGN_OR_RETURN(spec.shape, Shape(*b[0], name));
    TFDIST_ASSIGN_OR_RETURN(spec.type, Dtype(*b[1], name));
    if (!IsNone(b[2])) {
      FeatureValues values;
      std::vector<size_t> dims;
      TFDIST_RETURN_IF_ERROR(DefaultValues(*b[2], spec.type, name, 0, dims, values));
      const size_t n = spec.type == FeatureType::kInt64   ? values.int64s.size()
                       : spec.type == FeatureType::kFloat ? values.floats.size()
                                                                 : values.bytes.size();
      if (n != static_cast<size_t>(spec.num_values())) {
        return ErrorAt(b[2]->pos,
                       fmt::format("feature '{}': default_value has {} value{}; shape [{}] needs "
                                   "{} (TensorFlow reshapes the default to the shape)",
                                   name, n, n == 1 ? "" : "s", fmt::join(spec.shape, ", "),
                                   spec.num_values()));
      }
      spec.default_value = std::move(values);
    }
    return spec;
  }

  // [], [3], (2, 2), () or 3 (one dimension, as TensorShape(3)).
  Result<std::vector<int64_t>> Shape(const Expr& e, const std::string& name) {
    std::vector<int64_t> shape;
    if (e.kind == Expr::Kind::kInt) {
      shape.push_back(e.number);
    } else if (e.kind == Expr::Kind::kList || e.kind == Expr::Kind::kTuple) {
      for (const Expr& d : e.items) {
        if (d.kind == Expr::Kind::kName && d.text == "None") {
          return ErrorAt(d.pos, fmt::format("feature '{}': a FixedLenFeature shape must be fully "
                                            "defined; got None",
                                            name));
        }
        if (d.kind != Expr::Kind::kInt) {
          return ErrorAt(d.pos, fmt::format("feature '{}': expected an integer dimension; got {}",
                                            name, ExprText(d)));
        }
        shape.push_back(d.number);
      }
    } else {
      return ErrorAt(e.pos, fmt::format("feature '{}': expected a shape such as [], [3] or (2, 2); "
                                        "got {}",
                                        name, ExprText(e)));
    }
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] < 0) {
        const Expr& d = e.kind == Expr::Kind::kInt ? e : e.items[i];
        return ErrorAt(d.pos, fmt::format("feature '{}': dimensions must be non-negative; got {}",
                                          name, shape[i]));
      }
    }
    return shape;
  }

  Result<FeatureType> Dtype(const Expr& e, const std::string& name) {
    std::string_view t = e.kind == Expr::Kind::kName ? std::string_view(e.text) : "";
    for (std::string_view prefix : {"tf.dtypes.", "tf.", "dtypes."}) {
      if (t.starts_with(prefix)) {
        t.remove_prefix(prefix.size());
        break;
      }
    }
    if (t == "int64") return FeatureType::kInt64;
    if (t == "float32") return FeatureType::kFloat;
    if (t == "string") return FeatureType::kBytes;
    if (t == "float") {
      return ErrorAt(e.pos, fmt::format("feature '{}': unknown dtype {} (TensorFlow has no "
                                        "tf.float; use tf.float32)",
                                        name, e.text));
    }
    for (std::string_view other :
         {"int8", "int16", "int32", "uint8", "uint16", "uint32", "uint64", "float16", "half",
          "float64", "double", "bfloat16", "bool", "complex64", "complex128"}) {
      if (t == other) {
        return ErrorAt(e.pos, fmt::format("feature '{}': parse_example parses tf.int64, tf.float32 "
                                          "and tf.string; got {}",
                                          name, e.text));
      }
    }
    return ErrorAt(e.pos, fmt::format("feature '{}': unknown dtype {}; expected tf.int64, "
                                      "tf.float32 or tf.string",
                                      name, ExprText(e)));
  }

  // Flattens a (nested) default_value of `type`; nested lists must be
  // rectangular, as a tensor is. `dims[depth]` is the size seen at each depth.
  Status DefaultValues(const Expr& e, FeatureType type, const std::string& name,
                       size_t depth, std::vector<size_t>& dims, FeatureValues& out) {
    if (e.kind == Expr::Kind::kList || e.kind == Expr::Kind::kTuple) {
      if (depth >= 32) return ErrorAt(e.pos, "default_value nests too deep");
      if (dims.size() <= depth) dims.resize(depth + 1, e.items.size());
      if (dims[depth] != e.items.size()) {
        return ErrorAt(e.pos, fmt::format("feature '{}': default_value is not rectangular (rows "
                                          "of {} and {} values)",
                                          name, dims[depth], e.items.size()));
      }
      for (const Expr& item : e.items) {
        TFDIST_RETURN_IF_ERROR(DefaultValues(item, type, name, depth + 1, dims, out));
      }
      return Status::OK();
    }
    if (dims.size() > depth) {
      return ErrorAt(e.pos, fmt::format("feature '{}': default_value is not rectangular", name));
    }
    switch (type) {
      case FeatureType::kInt64:
        if (e.kind == Expr::Kind::kInt) {
          out.int64s.push_back(e.number);
          return Status::OK();
        }
        break;
      case FeatureType::kFloat:
        if (e.kind == Expr::Kind::kInt || e.kind == Expr::Kind::kFloat) {
          out.floats.push_back(e.kind == Expr::Kind::kInt ? static_cast<float>(e.number)
                                                          : static_cast<float>(e.real));
          return Status::OK();
        }
        break;
      case FeatureType::kBytes:
        if (e.kind == Expr::Kind::kString) {
          out.bytes.push_back(e.text);
          return Status::OK();
        }
        break;
    }
    return ErrorAt(e.pos, fmt::format("feature '{}': default_value for {} cannot hold {}", name,
                                      FeatureDtypeName(type), ExprText(e)));
  }

  Result<Op> Source(const Call& call) {
    // Accept TensorFlow's spellings: tf.data.Dataset.range, Dataset.range, range.
    std::string name = call.name;
    for (std::string_view prefix : {"tf.data.Dataset.", "data.Dataset.", "Dataset."}) {
      if (name.starts_with(prefix)) name = name.substr(prefix.size());
    }
    Op op;
    op.name = name;
    op.pos = call.pos;
    if (name == "list_files") {
      static constexpr Param kParams[] = {
          {"file_pattern", true}, {"shuffle", false}, {"seed", false}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      ListFilesOp p;
      TFDIST_ASSIGN_OR_RETURN(p.patterns, Strings(*b[0], "file_pattern"));
      TFDIST_ASSIGN_OR_RETURN(auto shuffle, OptBool(b[1], "shuffle"));
      p.shuffle = shuffle.value_or(true);
      TFDIST_ASSIGN_OR_RETURN(p.seed, Seed(b[2]));
      op.params = std::move(p);
    } else if (name == "from_tensor_slices") {
      static constexpr Param kParams[] = {{"tensors", true}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      if (b[0]->kind != Expr::Kind::kList) {
        return ErrorAt(b[0]->pos, fmt::format("from_tensor_slices() takes a list of file names; "
                                              "got {}",
                                              ExprText(*b[0])));
      }
      FromTensorSlicesOp p;
      TFDIST_ASSIGN_OR_RETURN(p.names, Strings(*b[0], "tensors"));
      op.params = std::move(p);
    } else if (IsReaderName(call.name) || name == "TFRecordDataset") {
      op.name = "tfrecord";
      static constexpr Param kParams[] = {{"filenames", true},
                                          {"compression_type", false},
                                          {"buffer_size", false},
                                          {"num_parallel_reads", false}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, call.name, kParams));
      TFRecordOp p;
      TFDIST_ASSIGN_OR_RETURN(p.files, Strings(*b[0], "filenames"));
      TFDIST_ASSIGN_OR_RETURN(p.compression, Compression(b[1]));
      TFDIST_RETURN_IF_ERROR(ReaderBufferSize(b[2]));
      TFDIST_ASSIGN_OR_RETURN(p.num_parallel_reads, OptInt(b[3], "num_parallel_reads"));
      op.params = std::move(p);
    } else if (name == "range") {
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
      op.params = p;
    } else {
      return ErrorAt(call.pos, fmt::format("unknown source '{}'; expected list_files, "
                                           "from_tensor_slices, tfrecord or range",
                                           call.name));
    }
    return op;
  }

  Result<Op> Transform(const Call& call) {
    const std::string& name = call.name;
    Op op;
    op.name = name;
    op.pos = call.pos;
    if (name == "shard") {
      static constexpr Param kParams[] = {{"num_shards", true}, {"index", true}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      ShardOp p;
      TFDIST_ASSIGN_OR_RETURN(p.num_shards, Int(*b[0], "num_shards"));
      TFDIST_ASSIGN_OR_RETURN(p.index, Int(*b[1], "index"));
      op.params = p;
    } else if (name == "interleave" || name == "flat_map") {
      InterleaveOp p;
      if (name == "flat_map") {
        static constexpr Param kParams[] = {{"map_func", true}};
        TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
        TFDIST_ASSIGN_OR_RETURN(p.compression, ReaderFunction(*b[0]));
        p.flat_map = true;
      } else {
        static constexpr Param kParams[] = {{"map_func", true},
                                            {"cycle_length", false},
                                            {"block_length", false},
                                            {"num_parallel_calls", false},
                                            {"deterministic", false}};
        TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
        TFDIST_ASSIGN_OR_RETURN(p.compression, ReaderFunction(*b[0]));
        TFDIST_ASSIGN_OR_RETURN(p.cycle_length, OptInt(b[1], "cycle_length"));
        TFDIST_ASSIGN_OR_RETURN(p.block_length, OptInt(b[2], "block_length"));
        TFDIST_ASSIGN_OR_RETURN(p.num_parallel_calls, OptInt(b[3], "num_parallel_calls"));
        TFDIST_ASSIGN_OR_RETURN(p.deterministic, OptBool(b[4], "deterministic"));
      }
      op.params = p;
    } else if (name == "shuffle") {
      static constexpr Param kParams[] = {
          {"buffer_size", true}, {"seed", false}, {"reshuffle_each_iteration", false}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      ShuffleOp p;
      TFDIST_ASSIGN_OR_RETURN(p.buffer_size, Int(*b[0], "buffer_size"));
      TFDIST_ASSIGN_OR_RETURN(p.seed, Seed(b[1]));
      TFDIST_ASSIGN_OR_RETURN(auto reshuffle, OptBool(b[2], "reshuffle_each_iteration"));
      p.reshuffle_each_iteration = reshuffle.value_or(true);
      op.params = p;
    } else if (name == "repeat") {
      static constexpr Param kParams[] = {{"count", false}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      RepeatOp p;
      TFDIST_ASSIGN_OR_RETURN(p.count, OptInt(b[0], "count"));
      op.params = p;
    } else if (name == "batch") {
      static constexpr Param kParams[] = {{"batch_size", true},
                                          {"drop_remainder", false},
                                          {"num_parallel_calls", false},
                                          {"deterministic", false}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      BatchOp p;
      TFDIST_ASSIGN_OR_RETURN(p.batch_size, Int(*b[0], "batch_size"));
      TFDIST_ASSIGN_OR_RETURN(auto drop, OptBool(b[1], "drop_remainder"));
      p.drop_remainder = drop.value_or(false);
      if (b[2] != nullptr) TFDIST_RETURN_IF_ERROR(OptInt(b[2], "num_parallel_calls"));
      if (b[3] != nullptr) TFDIST_RETURN_IF_ERROR(OptBool(b[3], "deterministic"));
      op.params = p;
    } else if (name == "take" || name == "skip") {
      static constexpr Param kParams[] = {{"count", true}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      TFDIST_ASSIGN_OR_RETURN(IntArg count, Int(*b[0], "count"));
      if (name == "take") {
        op.params = TakeOp{count};
      } else {
        op.params = SkipOp{count};
      }
    } else if (name == "enumerate") {
      static constexpr Param kParams[] = {{"start", false}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      TFDIST_ASSIGN_OR_RETURN(IntArg start, IntOr(b[0], "start", 0, call.pos));
      op.params = EnumerateOp{start};
    } else if (name == "prefetch") {
      static constexpr Param kParams[] = {{"buffer_size", true}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      TFDIST_ASSIGN_OR_RETURN(IntArg size, Int(*b[0], "buffer_size"));
      op.params = PrefetchOp{size};
    } else if (name == "map") {
      static constexpr Param kParams[] = {
          {"map_func", true}, {"num_parallel_calls", false}, {"deterministic", false}};
      TFDIST_ASSIGN_OR_RETURN(auto b, Bind(call, name, kParams));
      MapOp p;
      TFDIST_RETURN_IF_ERROR(MapFunction(*b[0], p));
      TFDIST_ASSIGN_OR_RETURN(p.num_parallel_calls, OptInt(b[1], "num_parallel_calls"));
      if (b[2] != nullptr) TFDIST_RETURN_IF_ERROR(OptBool(b[2], "deterministic"));
      op.params = std::move(p);
    } else {
      return ErrorAt(call.pos,
                     fmt::format("unknown method '{}'; expected shard, interleave, flat_map, "
                                 "shuffle, repeat, batch, take, skip, enumerate, prefetch or map",
                                 name));
    }
    return op;
  }

 private:
  std::string_view text_;
};

// Turns ops into datasets, resolving ctx.* names and AUTOTUNE.
class Builder {
 public:
  Builder(const Pipeline& p, const BuildOptions& o) : pipeline_(p), options_(o) {
    cpus_ = o.cpus > 0 ? o.cpus : std::max<int64_t>(1, std::thread::hardware_concurrency());
    seed_ = o.default_seed ? *o.default_seed
                           : (uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
  }

  Status ErrorAt(size_t pos, std::string_view what) const {
    return PositionError(pipeline_.text, pos, what);
  }

  Result<int64_t> Resolve(const IntArg& a, std::string_view op) const {
    auto need_context = [&](std::string_view name) -> Result<int64_t> {
      return ErrorAt(a.pos,
                     fmt::format("{} is only known inside distribute_datasets_from_function", name))
          .WithAdvice(Remedy::kFromFunction);
    };
    switch (a.symbol) {
      case IntArg::Symbol::kLiteral:
        return a.value;
      case IntArg::Symbol::kShardHint:
        return ErrorAt(a.pos, fmt::format("{}(): SHARD_HINT stands for the worker count and index "
                                          "only under the HINT auto-shard policy",
                                          op))
            .WithAdvice(Remedy::kHintPolicy);
      case IntArg::Symbol::kNumInputPipelines:
        if (!options_.context) return need_context("ctx.num_input_pipelines");
        return options_.context->num_input_pipelines;
      case IntArg::Symbol::kInputPipelineId:
        if (!options_.context) return need_context("ctx.input_pipeline_id");
        return options_.context->input_pipeline_id;
      case IntArg::Symbol::kNumReplicasInSync:
        if (!options_.context) return need_context("ctx.num_replicas_in_sync");
        return options_.context->num_replicas_in_sync;
      case IntArg::Symbol::kPerReplicaBatchSize: {
        if (!options_.context) return need_context("ctx.get_per_replica_batch_size()");
        const int64_t n = options_.context->num_replicas_in_sync;
        if (n <= 0 || a.value % n != 0) {
          return ErrorAt(a.pos,
                         fmt::format("get_per_replica_batch_size(): the global batch size {} "
                                     "is not divisible by num_replicas_in_sync {}",
                                     a.value, n));
        }
        return a.value / n;
      }
    }
    return a.value;
  }

  Result<int64_t> AtLeast(const IntArg& a, int64_t min, std::string_view op, std::string_view what,
                          bool autotune = false,
                          int64_t max = std::numeric_limits<int64_t>::max()) const {
    TFDIST_ASSIGN_OR_RETURN(int64_t v, Resolve(a, op));
    if (autotune && v == kAutotune) return std::min(cpus_, max);
    if (v < min) {
      return ErrorAt(a.pos, fmt::format("{}(): {} must be {}{}; got {}", op, what,
                                        min == 1 ? "positive" : fmt::format("at least {}", min),
                                        autotune ? " or AUTOTUNE" : "", v));
    }
    if (v > max) {
      return ErrorAt(a.pos, fmt::format("{}(): {} must be at most {}; got {}", op, what, max, v));
    }
    return v;
  }

  // Files open at once, reader threads, and elements per block: beyond these
  // an interleave would exhaust memory or threads before reading anything.
  static constexpr int64_t kMaxCycleLength = 1 << 16;
  static constexpr int64_t kMaxThreads = 256;
  static constexpr int64_t kMaxBlockLength = int64_t{1} << 30;

  Result<DatasetPtr> Build() {
    DatasetPtr ds;
    for (const Op& op : pipeline_.ops) {
      TFDIST_ASSIGN_OR_RETURN(ds, Apply(op, std::move(ds)));
    }
    return ds;
  }

 private:
  Result<DatasetPtr> Apply(const Op& op, DatasetPtr in) {
    const std::string& name = op.name;
    if (const auto* p = std::get_if<ListFilesOp>(&op.params)) {
      Result<std::vector<std::string>> files = io::ExpandFilePatterns(p->patterns);
      if (!files.ok())
        return ErrorAt(op.pos, fmt::format("list_files: {}", files.status().message()));
      const int64_t n = static_cast<int64_t>(files->size());
      DatasetPtr names = NewNamesDataset(std::move(*files));
      if (!p->shuffle) return names;
      return NewShuffleDataset(std::move(names), n, Seed(p->seed), true);
    }
    if (const auto* p = std::get_if<FromTensorSlicesOp>(&op.params))
      return NewNamesDataset(p->names);
    if (const auto* p = std::get_if<TFRecordOp>(&op.params)) {
      InterleaveOptions o = ReaderOptions();
      o.compression = p->compression;
      if (p->num_parallel_reads) {
        TFDIST_ASSIGN_OR_RETURN(
            int64_t n,
            AtLeast(*p->num_parallel_reads, 1, name, "num_parallel_reads", true, kMaxThreads));
        o.cycle_length = o.parallelism = n;
      }
      return NewInterleaveDataset(NewNamesDataset(p->files), o);
    }
    if (const auto* p = std::get_if<RangeOp>(&op.params)) {
      TFDIST_ASSIGN_OR_RETURN(int64_t start, Resolve(p->start, name));
      TFDIST_ASSIGN_OR_RETURN(int64_t stop, Resolve(p->stop, name));
      TFDIST_ASSIGN_OR_RETURN(int64_t step, Resolve(p->step, name));
      if (step == 0) return ErrorAt(p->step.pos, "range(): step must not be 0");
      return NewRangeDataset(start, stop, step);
    }
    if (const auto* p = std::get_if<ShardOp>(&op.params)) {
      int64_t n, i;
      if (options_.shard_hint && p->num_shards.symbol == IntArg::Symbol::kShardHint) {
        n = options_.shard_hint->first;
      } else {
        TFDIST_ASSIGN_OR_RETURN(n, Resolve(p->num_shards, name));
      }
      if (options_.shard_hint && p->index.symbol == IntArg::Symbol::kShardHint) {
        i = options_.shard_hint->second;
      } else {
        TFDIST_ASSIGN_OR_RETURN(i, Resolve(p->index, name));
      }
      if (n <= 0)
        return ErrorAt(p->num_shards.pos,
                       fmt::format("shard(): num_shards must be positive; got {}", n));
      if (i < 0 || i >= n) {
        return ErrorAt(p->index.pos, fmt::format("shard(): index must be in [0, num_shards); got "
                                                 "index {} for {} shards",
                                                 i, n));
      }
      return NewShardDataset(std::move(in), n, i);
    }
    if (const auto* p = std::get_if<InterleaveOp>(&op.params)) {
      InterleaveOptions o = ReaderOptions();
      o.compression = p->compression;
      if (!p->flat_map) {
        IntArg autotune;
        autotune.value = kAutotune;
        autotune.pos = op.pos;
        TFDIST_ASSIGN_OR_RETURN(o.cycle_length, AtLeast(p->cycle_length.value_or(autotune), 1, name,
                                                        "cycle_length", true, kMaxCycleLength));
        if (p->block_length) {
          TFDIST_ASSIGN_OR_RETURN(o.block_length,
                                  AtLeast(*p->block_length, 1, name, "block_length", false,
                                          kMaxBlockLength));
        }
        if (p->num_parallel_calls) {
          TFDIST_ASSIGN_OR_RETURN(
              o.parallelism,
              AtLeast(*p->num_parallel_calls, 1, name, "num_parallel_calls", true, kMaxThreads));
        }
        o.deterministic = p->deterministic.value_or(true);
      }
      return NewInterleaveDataset(std::move(in), o);
    }
    if (const auto* p = std::get_if<ShuffleOp>(&op.params)) {
      TFDIST_ASSIGN_OR_RETURN(int64_t size, AtLeast(p->buffer_size, 1, name, "buffer_size"));
      return NewShuffleDataset(std::move(in), size, Seed(p->seed), p->reshuffle_each_iteration);
    }
    if (const auto* p = std::get_if<RepeatOp>(&op.params)) {
      int64_t count = -1;
      if (p->count) {
        TFDIST_ASSIGN_OR_RETURN(count, AtLeast(*p->count, -1, name, "count"));
      }
      return NewRepeatDataset(std::move(in), count);
    }
    if (const auto* p = std::get_if<BatchOp>(&op.params)) {
      TFDIST_ASSIGN_OR_RETURN(int64_t size, AtLeast(p->batch_size, 1, name, "batch_size"));
      return NewBatchDataset(std::move(in), size, p->drop_remainder);
    }
    if (const auto* p = std::get_if<TakeOp>(&op.params)) {
      TFDIST_ASSIGN_OR_RETURN(int64_t count, AtLeast(p->count, -1, name, "count"));
      return NewTakeDataset(std::move(in), count);
    }
    if (const auto* p = std::get_if<SkipOp>(&op.params)) {
      TFDIST_ASSIGN_OR_RETURN(int64_t count, AtLeast(p->count, -1, name, "count"));
      return NewSkipDataset(std::move(in), count);
    }
    if (const auto* p = std::get_if<EnumerateOp>(&op.params)) {
      TFDIST_ASSIGN_OR_RETURN(int64_t start, Resolve(p->start, name));
      return NewEnumerateDataset(std::move(in), start);
    }
    if (const auto* p = std::get_if<PrefetchOp>(&op.params)) {
      TFDIST_ASSIGN_OR_RETURN(int64_t size, AtLeast(p->buffer_size, 0, name, "buffer_size", true));
      if (size == 0) return in;
      return NewPrefetchDataset(std::move(in), size);
    }
    if (const auto* p = std::get_if<MapOp>(&op.params)) {
      // Records pass through: they are parsed where batches are staged.
      if (p->num_parallel_calls) {
        TFDIST_RETURN_IF_ERROR(
            AtLeast(*p->num_parallel_calls, 1, name, "num_parallel_calls", true, kMaxThreads));
      }
      return in;
    }
    return ErrorAt(op.pos, fmt::format("{}() cannot be built", name));
  }

  // What every reader stage takes from the build options.
  InterleaveOptions ReaderOptions() const {
    InterleaveOptions o;
    o.deferred = options_.deferred_payloads;
    o.bytes_read = options_.bytes_read;
    return o;
  }

  // A stage's seed: its own, else the run's (random unless given).
  uint64_t Seed(std::optional<int64_t> seed) const {
    return seed ? static_cast<uint64_t>(*seed) : seed_ + ++unseeded_;
  }

  const Pipeline& pipeline_;
  const BuildOptions& options_;
  int64_t cpus_;
  uint64_t seed_;
  mutable uint64_t unseeded_ = 0;
};

// map(parse_example) needs records: follows the kind of element each op
// produces (batches keep their elements' kind).
Status CheckMaps(const Pipeline& pipeline, Binder& binder) {
  enum class Kind { kNames, kRecords, kInts, kPairs, kParsed };
  Kind kind = Kind::kRecords;
  bool batched = false;
  for (const Op& op : pipeline.ops) {
    const OpParams& p = op.params;
    if (std::holds_alternative<ListFilesOp>(p) || std::holds_alternative<FromTensorSlicesOp>(p)) {
      kind = Kind::kNames;
    } else if (std::holds_alternative<TFRecordOp>(p) || std::holds_alternative<InterleaveOp>(p)) {
      kind = Kind::kRecords;
    } else if (std::holds_alternative<RangeOp>(p)) {
      kind = Kind::kInts;
    } else if (std::holds_alternative<EnumerateOp>(p)) {
      kind = Kind::kPairs;
    } else if (std::holds_alternative<BatchOp>(p)) {
      batched = true;
    } else if (const auto* m = std::get_if<MapOp>(&p)) {
      std::string_view what;
      switch (kind) {
        case Kind::kNames:
          what = "file names; apply it after the reader (tfrecord, interleave or flat_map)";
          break;
        case Kind::kInts:
          what = "integers from range()";
          break;
        case Kind::kPairs:
          what = "(index, element) pairs from enumerate(); apply it before enumerate()";
          break;
        case Kind::kParsed:
          what = "already parsed by an earlier map(parse_example); declare every feature in one";
          break;
        case Kind::kRecords:
          break;
      }
      if (!what.empty()) {
        return binder.ErrorAt(op.pos,
                              fmt::format("map(parse_example) parses records; here the elements "
                                          "are {}",
                                          what));
      }
      if (m->single_example && batched) {
        return binder.ErrorAt(op.pos,
                              "parse_single_example parses one record, but after batch() "
                              "each element is a batch; use parse_example");
      }
      kind = Kind::kParsed;
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::shared_ptr<const Dataset>> BuildDataset(const Pipeline& pipeline,
                                                    const BuildOptions& options) {
  if (pipeline.ops.empty()) return Status::InvalidArgument("empty pipeline");
  // ParsePipeline bounds the chain, and distribution adds a few stages; a
  // pipeline made in code gets a bound too, as the stages recurse.
  if (pipeline.ops.size() > 2 * kMaxMethodCalls) {
    return Status::InvalidArgument(
        fmt::format("the pipeline has {} stages; tfdist builds at most {}", pipeline.ops.size(),
                    2 * kMaxMethodCalls));
  }
  return Builder(pipeline, options).Build();
}

Result<Pipeline> ParsePipeline(std::string_view text) {
  TFDIST_ASSIGN_OR_RETURN(Chain chain, ParseChain(text));
  Binder binder(text);
  Pipeline pipeline;
  pipeline.text = std::string(text);
  TFDIST_ASSIGN_OR_RETURN(Op source, binder.Source(chain.calls[0]));
  pipeline.ops.push_back(std::move(source));
  for (size_t i = 1; i < chain.calls.size(); ++i) {
    TFDIST_ASSIGN_OR_RETURN(Op op, binder.Transform(chain.calls[i]));
    pipeline.ops.push_back(std::move(op));
  }
  TFDIST_RETURN_IF_ERROR(CheckMaps(pipeline, binder));
  return pipeline;
}

}  // namespace tfdist::data
