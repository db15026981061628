// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Benchmark for tools/bench-parse: DenseParser against protobuf parsing of the same Examples.

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "example.pb.h"
#include "tfdist/proto/example_parse.h"
#include "tfdist/proto/synthetic.h"

namespace {

using tfdist::data::FeatureSpec;
using tfdist::data::FeatureType;
using tfdist::proto::DenseParser;

struct DataSet {
  std::string name;
  std::vector<FeatureSpec> features;
  std::vector<std::string> payloads;
};

FeatureSpec Spec(std::string name, FeatureType type, std::vector<int64_t> shape) {
  FeatureSpec s;
  s.name = std::move(name);
  s.type = type;
  s.shape = std::move(shape);
  return s;
}

// `tfdist gen --kind example`: {id: int64, label: int64, data: bytes of the size}.
DataSet Generated(uint64_t n, uint64_t size) {
  DataSet d;
  d.name = fmt::format("tfdist gen Examples, {} B (id, label, data)", size);
  d.features = {Spec("id", FeatureType::kInt64, {}), Spec("label", FeatureType::kInt64, {}),
                Spec("data", FeatureType::kBytes, {})};
  tfdist::proto::PayloadOptions o;
  o.size = {size, size};
  o.seed = 1;
  tfdist::proto::PayloadGenerator gen(o);
  d.payloads.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    if (tfdist::Status s = gen.Next(0, i, i, d.payloads[i]); !s.ok()) {
      fmt::print(stderr, "bench_parse: {}\n", s);
      std::exit(1);
    }
  }
  return d;
}

// A feature-rich record: 4 float[16], 2 int64[4], a label, a short string,
// and 3 features nobody declared.
DataSet Dense(uint64_t n) {
  DataSet d;
  d.name = "dense features (4 float[16], 2 int64[4], 2 scalars, 3 undeclared)";
  for (int i = 0; i < 4; ++i)
    d.features.push_back(Spec(fmt::format("emb/{}", i), FeatureType::kFloat, {16}));
  for (int i = 0; i < 2; ++i)
    d.features.push_back(Spec(fmt::format("ids/{}", i), FeatureType::kInt64, {4}));
  d.features.push_back(Spec("label", FeatureType::kInt64, {}));
  d.features.push_back(Spec("name", FeatureType::kBytes, {}));
  tfdist::Rng rng(2);
  for (uint64_t r = 0; r < n; ++r) {
    tensorflow::Example ex;
    auto& m = *ex.mutable_features()->mutable_feature();
    for (int i = 0; i < 4; ++i) {
      auto* l = m[fmt::format("emb/{}", i)].mutable_float_list();
      for (int j = 0; j < 16; ++j) l->add_value(static_cast<float>(rng.Uniform(0, 1000)) / 7.0f);
    }
    for (int i = 0; i < 2; ++i) {
      auto* l = m[fmt::format("ids/{}", i)].mutable_int64_list();
      for (int j = 0; j < 4; ++j) l->add_value(static_cast<int64_t>(rng.Uniform(0, 1 << 30)));
    }
    m["label"].mutable_int64_list()->add_value(static_cast<int64_t>(rng.Uniform(0, 9)));
    m["name"].mutable_bytes_list()->add_value(fmt::format("record-{}", r));
    m["unused/a"].mutable_float_list()->add_value(1.0f);
    m["unused/b"].mutable_bytes_list()->add_value(std::string(40, 'b'));
    m["unused/c"].mutable_int64_list()->add_value(7);
    d.payloads.push_back(ex.SerializeAsString());
  }
  return d;
}

// The baseline: protobuf's ParseFromArray into reused Examples, then the
// declared features copied into the same columns DenseParser writes.
bool ProtobufBatch(const std::vector<FeatureSpec>& features,
                   const std::vector<const std::string*>& batch,
                   std::vector<tensorflow::Example>& examples, std::vector<char>& out) {
  const size_t n = batch.size();
  if (examples.size() < n) examples.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (!examples[i].ParseFromArray(batch[i]->data(), static_cast<int>(batch[i]->size()))) {
      return false;
    }
  }
  uint64_t pos = 0;
  for (const FeatureSpec& f : features) {
    const uint64_t k = static_cast<uint64_t>(f.num_values());
    char* col = out.data() + pos;
    uint64_t size = 0;
    if (f.type == FeatureType::kBytes) {
      char* data = col + 8 * (n * k + 1);
      uint64_t dpos = 0;
      for (size_t i = 0; i < n; ++i) {
        const auto& m = examples[i].features().feature();
        auto it = m.find(f.name);
        if (it == m.end() || !it->second.has_bytes_list() ||
            static_cast<uint64_t>(it->second.bytes_list().value_size()) != k) {
          return false;
        }
        for (uint64_t j = 0; j < k; ++j) {
          const std::string& v = it->second.bytes_list().value(static_cast<int>(j));
          std::memcpy(col + 8 * (i * k + j), &dpos, 8);
          std::memcpy(data + dpos, v.data(), v.size());
          dpos += v.size();
        }
      }
      std::memcpy(col + 8 * n * k, &dpos, 8);
      size = 8 * (n * k + 1) + dpos;
    } else {
      const uint64_t width = f.type == FeatureType::kInt64 ? 8 : 4;
      for (size_t i = 0; i < n; ++i) {
        const auto& m = examples[i].features().feature();
        auto it = m.find(f.name);
        if (it == m.end()) return false;
        if (f.type == FeatureType::kInt64) {
          if (!it->second.has_int64_list() ||
              static_cast<uint64_t>(it->second.int64_list().value_size()) != k) {
            return false;
          }
          std::memcpy(col + width * k * i, it->second.int64_list().value().data(), width * k);
        } else {
          if (!it->second.has_float_list() ||
              static_cast<uint64_t>(it->second.float_list().value_size()) != k) {
            return false;
          }
          std::memcpy(col + width * k * i, it->second.float_list().value().data(), width * k);
        }
      }
      size = width * n * k;
    }
    const uint64_t end = pos + size;
    pos = (end + 7) & ~uint64_t{7};
    std::memset(out.data() + end, 0, pos - end);
  }
  return true;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t records = 200000, batch_size = 256;
  int repeat = 5;
  int only = -1;  // --set K: only the K-th data set (0, 1, 2)
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const uint64_t v = std::strtoull(argv[i + 1], nullptr, 10);
    if (flag == "--records") records = v;
    if (flag == "--batch") batch_size = v;
    if (flag == "--repeat") repeat = static_cast<int>(v);
    if (flag == "--set") only = static_cast<int>(v);
  }
  std::vector<DataSet> sets;
  if (only < 0 || only == 0) sets.push_back(Generated(records, 100));
  if (only < 0 || only == 1) sets.push_back(Generated(records, 1024));
  if (only < 0 || only == 2) sets.push_back(Dense(records));

  fmt::print("{:<66} {:>12} {:>12} {:>7}\n", "records", "dense rec/s", "protobuf/s", "ratio");
  for (const DataSet& d : sets) {
    auto parser = DenseParser::Create(d.features);
    if (!parser.ok()) {
      fmt::print(stderr, "bench_parse: {}\n", parser.status());
      return 1;
    }
    std::vector<tfdist::data::Element> elements(d.payloads.size());
    static const std::string* file = tfdist::data::InternPath("bench");
    for (size_t i = 0; i < d.payloads.size(); ++i) {
      elements[i].kind = tfdist::data::Element::Kind::kRecord;
      elements[i].bytes = d.payloads[i];
      elements[i].origin = {file, i, 0};
    }
    uint64_t max_batch_payload = 0;
    for (size_t b = 0; b < elements.size(); b += batch_size) {
      uint64_t sum = 0;
      for (size_t i = b; i < std::min(elements.size(), b + batch_size); ++i) {
        sum += d.payloads[i].size();
      }
      max_batch_payload = std::max(max_batch_payload, sum);
    }
    std::vector<char> out(parser->MaxBatchBytes(batch_size, max_batch_payload));
    std::vector<char> reference(out.size());
    std::vector<tensorflow::Example> examples;
    double best_fast = 1e30, best_proto = 1e30;
    for (int r = 0; r < repeat; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      uint64_t checksum = 0;
      for (size_t b = 0; b < elements.size(); b += batch_size) {
        const size_t n = std::min<size_t>(batch_size, elements.size() - b);
        auto layout = parser->ParseBatch(std::span(elements).subspan(b, n), out);
        if (!layout.ok()) {
          fmt::print(stderr, "bench_parse: {}\n", layout.status());
          return 1;
        }
        checksum += layout->total_bytes;
      }
      best_fast = std::min(best_fast, Seconds(t0));
      t0 = std::chrono::steady_clock::now();
      uint64_t proto_checksum = 0;
      std::vector<const std::string*> batch;
      for (size_t b = 0; b < d.payloads.size(); b += batch_size) {
        const size_t n = std::min<size_t>(batch_size, d.payloads.size() - b);
        batch.clear();
        for (size_t i = b; i < b + n; ++i) batch.push_back(&d.payloads[i]);
        if (!ProtobufBatch(d.features, batch, examples, reference)) {
          fmt::print(stderr, "bench_parse: protobuf baseline failed\n");
          return 1;
        }
        proto_checksum += static_cast<unsigned char>(reference[0]);
      }
      best_proto = std::min(best_proto, Seconds(t0));
      if (checksum == 0 || proto_checksum == ~uint64_t{0}) return 1;  // keep the work
    }
    // Same bytes from both, on the last batch.
    const size_t last = (elements.size() - 1) / batch_size * batch_size;
    auto layout = parser->ParseBatch(std::span(elements).subspan(last), out);
    if (!layout.ok() || std::memcmp(out.data(), reference.data(), layout->total_bytes) != 0) {
      fmt::print(stderr, "bench_parse: the two parsers disagree on {}\n", d.name);
      return 1;
    }
    const double n = static_cast<double>(d.payloads.size());
    fmt::print("{:<66} {:>12.0f} {:>12.0f} {:>6.2f}x\n", d.name, n / best_fast, n / best_proto,
               best_proto / best_fast);
  }
  return 0;
}
