// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The dense Example parser against protobuf's own decoding, on random and damaged records.

#include "tfdist/proto/example_parse.h"

#include <doctest/doctest.h>
#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/unknown_field_set.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>

#include "example.pb.h"
#include "tfdist/proto/synthetic.h"

namespace tfdist::proto {

using data::FeatureSpec;
using data::FeatureType;
using data::FeatureValues;
namespace {

// ---- Wire encoding, written by hand so tests can produce every valid form.

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}
void PutTag(std::string& out, uint32_t field, uint32_t wire) {
  PutVarint(out, (uint64_t{field} << 3) | wire);
}
std::string Len(uint32_t field, std::string_view body) {
  std::string out;
  PutTag(out, field, 2);
  PutVarint(out, body.size());
  out += body;
  return out;
}
std::string Fixed32(uint32_t field, uint32_t v) {
  std::string out;
  PutTag(out, field, 5);
  out.append(reinterpret_cast<const char*>(&v), 4);
  return out;
}
std::string VarintField(uint32_t field, uint64_t v) {
  std::string out;
  PutTag(out, field, 0);
  PutVarint(out, v);
  return out;
}

// An unknown field of a random wire type (groups included) with a field
// number from `min_field` up.
std::string RandomUnknownField(Rng& rng, uint32_t min_field) {
  const uint32_t field = static_cast<uint32_t>(rng.Uniform(min_field, min_field + 20));
  std::string out;
  switch (rng.Uniform(0, 4)) {
    case 0:
      return VarintField(field, rng.Next() >> rng.Uniform(0, 63));
    case 1: {
      PutTag(out, field, 1);
      const uint64_t v = rng.Next();
      out.append(reinterpret_cast<const char*>(&v), 8);
      return out;
    }
    case 2: {
      std::string body(rng.Uniform(0, 12), 'u');
      return Len(field, body);
    }
    case 3:
      return Fixed32(field, static_cast<uint32_t>(rng.Next()));
    default:
      PutTag(out, field, 3);
      out += VarintField(1, 7);
      out += Len(2, "g");
      PutTag(out, field, 4);
      return out;
  }
}

// Values of one list, before encoding.
struct Values {
  int kind = 0;  // 1 bytes, 2 float, 3 int64 (feature.proto's field numbers)
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> bytes;
  size_t size() const { return kind == 1 ? bytes.size() : kind == 2 ? floats.size() : ints.size(); }
};

float RandomFloat(Rng& rng) {
  switch (rng.Uniform(0, 9)) {
    case 0:
      return std::numeric_limits<float>::infinity();
    case 1:
      return -0.0f;
    case 2:
      return std::numeric_limits<float>::quiet_NaN();
    default:
      return static_cast<float>(static_cast<int64_t>(rng.Next() % 2000001) - 1000000) / 7.0f;
  }
}

Values RandomValues(Rng& rng, int kind, size_t n) {
  Values v;
  v.kind = kind;
  for (size_t i = 0; i < n; ++i) {
    if (kind == 1) {
      std::string b(rng.Uniform(0, 20), '\0');
      for (char& c : b) c = static_cast<char>(rng.Next());
      v.bytes.push_back(b);
    } else if (kind == 2) {
      v.floats.push_back(RandomFloat(rng));
    } else {
      const uint64_t r = rng.Next();
      v.ints.push_back(rng.Uniform(0, 1) ? static_cast<int64_t>(r)
                                         : static_cast<int64_t>(r % 1000) - 500);
    }
  }
  return v;
}

// The fields of one list message holding values [from, to) of `v`:
// packed or unpacked (in chunks), with unknown fields between.
std::vector<std::string> ListFields(Rng& rng, const Values& v, size_t from, size_t to) {
  std::vector<std::string> fields;
  size_t i = from;
  while (i < to) {
    if (rng.Uniform(0, 9) == 0) fields.push_back(RandomUnknownField(rng, 2));
    const size_t chunk = rng.Uniform(1, to - i);
    const bool packed = v.kind != 1 && rng.Uniform(0, 1);
    if (packed) {
      std::string body;
      for (size_t j = i; j < i + chunk; ++j) {
        if (v.kind == 2) {
          body.append(reinterpret_cast<const char*>(&v.floats[j]), 4);
        } else {
          PutVarint(body, static_cast<uint64_t>(v.ints[j]));
        }
      }
      fields.push_back(Len(1, body));
    } else {
      for (size_t j = i; j < i + chunk; ++j) {
        if (v.kind == 1) {
          fields.push_back(Len(1, v.bytes[j]));
        } else if (v.kind == 2) {
          uint32_t bits;
          std::memcpy(&bits, &v.floats[j], 4);
          fields.push_back(Fixed32(1, bits));
        } else {
          fields.push_back(VarintField(1, static_cast<uint64_t>(v.ints[j])));
        }
      }
    }
    i += chunk;
  }
  if (rng.Uniform(0, 9) == 0) fields.push_back(RandomUnknownField(rng, 2));
  return fields;
}

std::string Join(const std::vector<std::string>& parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += parts[i];
  return out;
}

// The fields of a Feature holding `v` (kind 0: none set). The list may be
// split over several list fields of the same kind (protobuf merges them),
// preceded by a list of another kind (the oneof keeps the last).
std::vector<std::string> FeatureFields(Rng& rng, const Values& v) {
  std::vector<std::string> fields;
  if (rng.Uniform(0, 7) == 0) fields.push_back(RandomUnknownField(rng, 4));
  if (v.kind == 0) return fields;
  if (rng.Uniform(0, 7) == 0) {
    const int other = static_cast<int>(rng.Uniform(1, 3));
    const Values decoy = RandomValues(rng, other, rng.Uniform(0, 3));
    const std::vector<std::string> lf = ListFields(rng, decoy, 0, decoy.size());
    fields.push_back(Len(other, Join(lf, 0, lf.size())));
  }
  const size_t n = v.size();
  size_t split = n;
  if (n >= 2 && rng.Uniform(0, 4) == 0) split = rng.Uniform(1, n - 1);
  std::vector<std::pair<size_t, size_t>> parts = {{0, split}};
  if (split < n) parts.emplace_back(split, n);
  for (auto [from, to] : parts) {
    const std::vector<std::string> lf = ListFields(rng, v, from, to);
    fields.push_back(Len(v.kind, Join(lf, 0, lf.size())));
  }
  if (rng.Uniform(0, 7) == 0) fields.push_back(RandomUnknownField(rng, 4));
  return fields;
}

// A map entry: key and value in either order, the value possibly split in
// two value fields (merged), unknown fields between.
std::string Entry(Rng& rng, const std::string& key, const Values& v) {
  std::vector<std::string> ff = FeatureFields(rng, v);
  std::vector<std::string> fields;
  fields.push_back(Len(1, key));
  if (ff.size() >= 2 && rng.Uniform(0, 5) == 0) {
    const size_t cut = rng.Uniform(1, ff.size() - 1);
    fields.push_back(Len(2, Join(ff, 0, cut)));
    fields.push_back(Len(2, Join(ff, cut, ff.size())));
  } else {
    fields.push_back(Len(2, Join(ff, 0, ff.size())));
  }
  if (rng.Uniform(0, 3) == 0) std::swap(fields[0], fields[1]);
  if (rng.Uniform(0, 9) == 0) fields.insert(fields.begin() + 1, RandomUnknownField(rng, 3));
  return Len(1, Join(fields, 0, fields.size()));
}

int KindOf(FeatureType t) {
  return t == FeatureType::kBytes ? 1 : t == FeatureType::kFloat ? 2 : 3;
}

// Random FixedLenFeatures; with `var_len`, about half are VarLenFeatures.
std::vector<FeatureSpec> RandomSpecs(Rng& rng, bool var_len = false) {
  std::vector<FeatureSpec> specs;
  const size_t n = rng.Uniform(1, 5);
  for (size_t i = 0; i < n; ++i) {
    FeatureSpec s;
    static const char* kNames[] = {"", "a", "label", "image/encoded", "a_rather_long_feature_name"};
    s.name = rng.Uniform(0, 2) == 0 ? fmt::format("{}{}", kNames[rng.Uniform(0, 4)], i)
                                    : fmt::format("f{}", i);
    if (i == 0 && rng.Uniform(0, 9) == 0) s.name = "";
    s.type = static_cast<FeatureType>(rng.Uniform(0, 2));
    switch (rng.Uniform(0, 3)) {
      case 0:
        break;
      case 1:
        s.shape = {static_cast<int64_t>(rng.Uniform(1, 4))};
        break;
      case 2:
        s.shape = {static_cast<int64_t>(rng.Uniform(1, 3)),
                   static_cast<int64_t>(rng.Uniform(1, 3))};
        break;
      default:
        s.shape = {static_cast<int64_t>(rng.Uniform(0, 2))};
        break;
    }
    if (rng.Uniform(0, 2) == 0) {
      const Values d = RandomValues(rng, KindOf(s.type), static_cast<size_t>(s.num_values()));
      s.default_value = FeatureValues{d.ints, d.floats, d.bytes};
    }
    if (var_len && rng.Uniform(0, 1) == 0) {
      s.var_len = true;
      s.shape.clear();
      s.default_value.reset();
    }
    specs.push_back(std::move(s));
  }
  return specs;
}

// A random valid Example for `specs`; `error_rate` (per mille) steers how
// often a declared feature is missing, mistyped or of the wrong size.
std::string RandomExample(Rng& rng, const std::vector<FeatureSpec>& specs, int error_rate) {
  std::vector<std::vector<std::string>> keys;  // the entries of each key, in order
  for (const FeatureSpec& s : specs) {
    // A VarLenFeature takes any number of values; missing or with no list,
    // it is empty, and only another list kind is an error.
    const size_t k = s.var_len ? rng.Uniform(0, 6) : static_cast<size_t>(s.num_values());
    int kind = KindOf(s.type);
    size_t n = k;
    const bool bad = static_cast<int>(rng.Uniform(0, 999)) < error_rate;
    if (bad) {
      switch (rng.Uniform(0, 3)) {
        case 0:
          continue;  // missing
        case 1:
          kind = 0;  // present, no list set
          break;
        case 2:
          kind = static_cast<int>(rng.Uniform(1, 3));
          break;
        default:
          n = rng.Uniform(0, k + 2);
          break;
      }
    }
    keys.emplace_back();
    // Earlier entries of the same key lose to the last one with a list.
    if (rng.Uniform(0, 5) == 0) {
      const int decoy = static_cast<int>(rng.Uniform(0, 3));
      keys.back().push_back(Entry(rng, s.name, RandomValues(rng, decoy, rng.Uniform(0, 4))));
    }
    keys.back().push_back(Entry(rng, s.name, RandomValues(rng, kind, n)));
  }
  for (uint64_t x = rng.Uniform(0, 4); x > 0; --x) {
    const int kind = static_cast<int>(rng.Uniform(0, 3));
    keys.push_back(
        {Entry(rng, fmt::format("extra{}", x), RandomValues(rng, kind, rng.Uniform(0, 5)))});
  }
  // Map order is free: interleave the keys at random, each key's entries in order.
  std::vector<std::string> entries;
  std::vector<size_t> next(keys.size(), 0);
  for (size_t left = keys.size(); left > 0;) {
    const size_t k = rng.Uniform(0, keys.size() - 1);
    if (next[k] == keys[k].size()) continue;
    entries.push_back(keys[k][next[k]++]);
    if (next[k] == keys[k].size()) --left;
  }
  // Features may come in several pieces (merged), between unknown fields.
  std::string out;
  size_t i = 0;
  while (i < entries.size() || (i == 0 && out.empty())) {
    if (rng.Uniform(0, 7) == 0) out += RandomUnknownField(rng, 2);
    const size_t take = rng.Uniform(0, 3) == 0
                            ? rng.Uniform(1, std::max<size_t>(1, entries.size() - i))
                            : entries.size() - i;
    std::string body;
    for (size_t j = i; j < std::min(entries.size(), i + take); ++j) {
      if (rng.Uniform(0, 19) == 0) body += RandomUnknownField(rng, 2);
      body += entries[j];
    }
    out += Len(1, body);
    i += std::max<size_t>(take, 1);
  }
  return out;
}

std::string Hex(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += fmt::format("{:02x}", c);
  return out;
}

// ---- The reference: protobuf's parse, then TensorFlow's rules.
//
// protobuf's map keeps only the last entry of a key, but TensorFlow skips an
// entry whose Feature has no list (an earlier one then decides), so the
// entries are read as protobuf's UnknownFieldSet, each Feature decoded by
// tensorflow::Feature (its value fields merged, as protobuf merges them).

struct Parsed {
  Status status;
  ColumnLayout layout;
  std::string bytes;  // [0, layout.total_bytes)
};

void Pad8(std::string& s) { s.resize((s.size() + 7) & ~size_t{7}, '\0'); }

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

// The deciding Feature of each key: the last entry with a list set.
std::map<std::string, tensorflow::Feature> Winners(const std::string& payload,
                                                   const tensorflow::Example& parsed) {
  std::map<std::string, tensorflow::Feature> winners;
  UnknownFieldSet example;
  REQUIRE(example.ParseFromString(payload));
  for (int i = 0; i < example.field_count(); ++i) {
    const UnknownField& fs = example.field(i);
    if (fs.number() != 1 || fs.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
    UnknownFieldSet features;
    REQUIRE(features.ParseFromString(fs.length_delimited()));
    for (int j = 0; j < features.field_count(); ++j) {
      const UnknownField& e = features.field(j);
      if (e.number() != 1 || e.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
      UnknownFieldSet entry;
      REQUIRE(entry.ParseFromString(e.length_delimited()));
      std::string key, value;
      for (int k = 0; k < entry.field_count(); ++k) {
        const UnknownField& f = entry.field(k);
        if (f.type() != UnknownField::TYPE_LENGTH_DELIMITED) continue;
        if (f.number() == 1) key = f.length_delimited();
        if (f.number() == 2) value += f.length_delimited();
      }
      tensorflow::Feature feature;
      REQUIRE(feature.ParseFromString(value));
      if (feature.kind_case() != tensorflow::Feature::KIND_NOT_SET) winners[key] = feature;
    }
  }
  // Where the last entry decides, this is protobuf's own map value.
  for (const auto& [key, feature] : parsed.features().feature()) {
    if (feature.kind_case() == tensorflow::Feature::KIND_NOT_SET) continue;
    REQUIRE(winners.count(key) == 1);
    CHECK(winners[key].SerializeAsString() == feature.SerializeAsString());
  }
  return winners;
}

Parsed Reference(const std::vector<FeatureSpec>& specs, const std::vector<std::string>& payloads) {
  Parsed p;
  std::vector<std::map<std::string, tensorflow::Feature>> records;
  for (const std::string& payload : payloads) {
    tensorflow::Example ex;
    if (!ex.ParseFromArray(payload.data(), static_cast<int>(payload.size()))) {
      p.status = Status::DataLoss("protobuf cannot parse it");
      return p;
    }
    records.push_back(Winners(payload, ex));
  }
  for (const FeatureSpec& s : specs) {
    const size_t k = static_cast<size_t>(s.num_values());
    std::vector<Values> rows;  // each record's values
    for (const auto& map : records) {
      auto it = map.find(s.name);
      Values v;
      v.kind = KindOf(s.type);
      if (it == map.end()) {
        if (s.var_len) {
          rows.push_back(v);  // TensorFlow: a missing VarLenFeature is empty
          continue;
        }
        if (!s.default_value || k == 0) {
          p.status = Status::InvalidArgument("required");
          return p;
        }
        v.ints = s.default_value->int64s;
        v.floats = s.default_value->floats;
        v.bytes = s.default_value->bytes;
      } else {
        const tensorflow::Feature& f = it->second;
        v.kind = f.kind_case();
        if (v.kind != KindOf(s.type)) {
          p.status = Status::InvalidArgument("type");
          return p;
        }
        v.ints.assign(f.int64_list().value().begin(), f.int64_list().value().end());
        v.floats.assign(f.float_list().value().begin(), f.float_list().value().end());
        v.bytes.assign(f.bytes_list().value().begin(), f.bytes_list().value().end());
        if (!s.var_len && v.size() != k) {
          p.status = Status::InvalidArgument("count");
          return p;
        }
      }
      rows.push_back(std::move(v));
    }
    if (s.var_len) {
      p.layout.row_splits_offsets.push_back(p.bytes.size());
      uint64_t split = 0;
      p.bytes.append(reinterpret_cast<const char*>(&split), 8);
      for (const Values& v : rows) {
        split += v.size();
        p.bytes.append(reinterpret_cast<const char*>(&split), 8);
      }
    } else {
      p.layout.row_splits_offsets.push_back(ColumnLayout::kNoColumn);
    }
    p.layout.offsets.push_back(p.bytes.size());
    std::string data;
    std::vector<uint64_t> offsets;
    for (const Values& v : rows) {
      for (size_t j = 0; j < v.size(); ++j) {
        if (s.type == FeatureType::kInt64) {
          p.bytes.append(reinterpret_cast<const char*>(&v.ints[j]), 8);
        } else if (s.type == FeatureType::kFloat) {
          p.bytes.append(reinterpret_cast<const char*>(&v.floats[j]), 4);
        } else {
          offsets.push_back(data.size());
          data += v.bytes[j];
        }
      }
    }
    if (s.type == FeatureType::kBytes) {
      offsets.push_back(data.size());
      p.bytes.append(reinterpret_cast<const char*>(offsets.data()), 8 * offsets.size());
      p.bytes += data;
    }
    Pad8(p.bytes);
  }
  p.layout.total_bytes = p.bytes.size();
  return p;
}

// ---- The parser under test, on exactly sized buffers (so a sanitizer
// catches any read or write outside them).

std::vector<data::Element> Records(const std::vector<std::string>& payloads) {
  std::vector<data::Element> records;
  static const std::string* file = data::InternPath("test.tfrecord");
  for (size_t i = 0; i < payloads.size(); ++i) {
    data::Element e;
    e.kind = data::Element::Kind::kRecord;
    std::shared_ptr<char[]> buf(new char[std::max<size_t>(1, payloads[i].size())]);
    std::memcpy(buf.get(), payloads[i].data(), payloads[i].size());
    e.view = std::string_view(buf.get(), payloads[i].size());
    e.storage = std::shared_ptr<const void>(buf, buf.get());
    e.origin = data::Origin{file, i, 100 * i};
    records.push_back(std::move(e));
  }
  return records;
}

Parsed Fast(const DenseParser& parser, const std::vector<std::string>& payloads) {
  const std::vector<data::Element> records = Records(payloads);
  uint64_t total = 0;
  for (const std::string& p : payloads) total += p.size();
  const uint64_t bound = parser.MaxBatchBytes(payloads.size(), total);
  std::unique_ptr<char[]> out(new char[std::max<uint64_t>(1, bound)]);
  Result<ColumnLayout> r = parser.ParseBatch(records, std::span<char>(out.get(), bound));
  Parsed p;
  if (!r.ok()) {
    p.status = r.status();
    return p;
  }
  p.layout = *r;
  REQUIRE(p.layout.total_bytes <= bound);
  p.bytes.assign(out.get(), p.layout.total_bytes);
  return p;
}

void CheckSame(const std::vector<FeatureSpec>& specs, const std::vector<std::string>& payloads) {
  auto parser = DenseParser::Create(specs);
  REQUIRE(parser.ok());
  const Parsed want = Reference(specs, payloads);
  const Parsed got = Fast(*parser, payloads);
  INFO("reference: " << want.status.ToString());
  INFO("fast: " << got.status.ToString());
  REQUIRE(got.status.code() == want.status.code());
  if (want.status.ok()) {
    CHECK(got.layout.offsets == want.layout.offsets);
    CHECK(got.layout.row_splits_offsets == want.layout.row_splits_offsets);
    CHECK(got.layout.total_bytes == want.layout.total_bytes);
    CHECK(got.bytes == want.bytes);
  }
}

// Rounds of random specs and Examples (a third of them damaged) compared
// with protobuf's decoding: how many parsed, failed, and were VarLen specs.
struct RandomRounds {
  int ok = 0, errors = 0, var_len = 0;
};

RandomRounds CompareRandomRounds(uint64_t seed, bool var_len) {
  Rng rng(seed);
  RandomRounds out;
  for (int round = 0; round < 5000; ++round) {
    const std::vector<FeatureSpec> specs = RandomSpecs(rng, var_len);
    for (const FeatureSpec& spec : specs) out.var_len += spec.var_len;
    std::vector<std::string> payloads;
    const int error_rate = round % 3 == 0 ? 30 : 0;
    for (uint64_t n = rng.Uniform(0, 8); n > 0; --n) {
      payloads.push_back(RandomExample(rng, specs, error_rate));
    }
    CAPTURE(round);
    CheckSame(specs, payloads);
    (Reference(specs, payloads).status.ok() ? out.ok : out.errors)++;
  }
  return out;
}

TEST_CASE("random Examples in every valid encoding parse as protobuf decodes them") {
  const RandomRounds r = CompareRandomRounds(20260501, false);
  // Both outcomes are exercised in quantity.
  CHECK(r.ok > 2500);
  CHECK(r.errors > 100);
}

TEST_CASE("random Examples for VarLenFeatures (and FixedLen ones beside) parse as protobuf does") {
  const RandomRounds r = CompareRandomRounds(20260502, true);
  CHECK(r.var_len > 5000);
  CHECK(r.ok > 2500);
  CHECK(r.errors > 100);
}

TEST_CASE("damaged and random bytes: never a crash; protobuf's valid parses agree") {
  // protobuf logs invalid UTF-8 in map keys; the test expects it.
  google::protobuf::LogSilencer silence;
  Rng rng(77);
  int compared = 0;
  for (int round = 0; round < 40000; ++round) {
    const std::vector<FeatureSpec> specs = RandomSpecs(rng, /*var_len=*/round % 2 == 1);
    std::string p = RandomExample(rng, specs, 20);
    switch (rng.Uniform(0, 4)) {
      case 0:  // flip bytes
        for (uint64_t n = rng.Uniform(1, 3); n > 0 && !p.empty(); --n) {
          p[rng.Uniform(0, p.size() - 1)] ^= static_cast<char>(1 << rng.Uniform(0, 7));
        }
        break;
      case 1:  // truncate
        p.resize(rng.Uniform(0, p.size()));
        break;
      case 2:  // overwrite a byte with anything
        if (!p.empty()) p[rng.Uniform(0, p.size() - 1)] = static_cast<char>(rng.Next());
        break;
      case 3:  // insert random bytes
        p.insert(rng.Uniform(0, p.size()),
                 std::string(rng.Uniform(1, 4), static_cast<char>(rng.Next())));
        break;
      default:  // pure noise
        p.assign(rng.Uniform(0, 64), '\0');
        for (char& c : p) c = static_cast<char>(rng.Next());
        break;
    }
    auto parser = DenseParser::Create(specs);
    REQUIRE(parser.ok());
    const Parsed got = Fast(*parser, {p});
    CHECK((got.status.ok() || got.status.code() == StatusCode::kDataLoss ||
           got.status.code() == StatusCode::kInvalidArgument));
    const Parsed want = Reference(specs, {p});
    if (want.status.code() == StatusCode::kDataLoss) continue;  // we may read more leniently
    ++compared;
    INFO("round " << round << ": reference " << want.status.ToString() << ", fast "
                  << got.status.ToString() << ", record " << Hex(p));
    REQUIRE(got.status.code() == want.status.code());
    if (want.status.ok()) CHECK(got.bytes == want.bytes);
  }
  CHECK(compared > 6000);
}

// ---- Hand-made cases: TensorFlow's rules and the messages.

FeatureSpec Spec(std::string name, FeatureType type, std::vector<int64_t> shape = {}) {
  FeatureSpec s;
  s.name = std::move(name);
  s.type = type;
  s.shape = std::move(shape);
  return s;
}

std::string Example(const std::vector<std::string>& entries) {
  std::string body;
  for (const std::string& e : entries) body += e;
  return Len(1, body);
}
std::string IntEntry(const std::string& key, std::vector<uint64_t> values) {
  std::string list;
  for (uint64_t v : values) list += VarintField(1, v);
  return Len(1, Len(1, key) + Len(2, Len(3, list)));
}
std::string EmptyEntry(const std::string& key) { return Len(1, Len(1, key) + Len(2, "")); }

int64_t Int64At(const Parsed& p, uint64_t offset) {
  int64_t v;
  REQUIRE(offset + 8 <= p.bytes.size());
  std::memcpy(&v, p.bytes.data() + offset, 8);
  return v;
}

TEST_CASE("a repeated key: the last entry with a list wins; one with no list is skipped") {
  auto parser = DenseParser::Create({Spec("x", FeatureType::kInt64)});
  REQUIRE(parser.ok());
  Parsed p = Fast(*parser, {Example({IntEntry("x", {1}), IntEntry("x", {2})})});
  REQUIRE(p.status.ok());
  CHECK(Int64At(p, 0) == 2);
  // TensorFlow skips a Feature with no list, so the earlier entry decides.
  p = Fast(*parser, {Example({IntEntry("x", {1}), EmptyEntry("x")})});
  REQUIRE(p.status.ok());
  CHECK(Int64At(p, 0) == 1);
  // Alone, a Feature with no list is a missing feature.
  p = Fast(*parser, {Example({EmptyEntry("x")})});
  CHECK(p.status.code() == StatusCode::kInvalidArgument);
  CHECK(p.status.message().find("required") != std::string::npos);
}

TEST_CASE("errors name the record (file:index at byte offset) and the feature") {
  FeatureSpec ids = Spec("ids", FeatureType::kInt64, {2});
  auto parser = DenseParser::Create({ids, Spec("w", FeatureType::kFloat)});
  REQUIRE(parser.ok());
  const std::string ok_w = Len(1, Len(1, "w") + Len(2, Len(2, Fixed32(1, 0))));
  Parsed p = Fast(
      *parser, {Example({IntEntry("ids", {1, 2}), ok_w}), Example({IntEntry("ids", {1}), ok_w})});
  CHECK(p.status.message() ==
        "test.tfrecord:1 at byte 100: feature 'ids' holds 1 int64 value; its shape [2] needs 2");
  p = Fast(*parser, {Example({IntEntry("ids", {1, 2})})});
  CHECK(p.status.message() ==
        "test.tfrecord:0 at byte 0: feature 'w' (tf.float32) is required but not in the "
        "Example, and has no default_value");
  p = Fast(*parser, {Example({IntEntry("ids", {1, 2}), IntEntry("w", {3})})});
  CHECK(p.status.message() ==
        "test.tfrecord:0 at byte 0: feature 'w' is declared tf.float32 but holds a int64_list");
  p = Fast(*parser, {"\x0a\x05\x0a\x03"});
  CHECK(p.status.code() == StatusCode::kDataLoss);
  CHECK(
      p.status.message().starts_with("test.tfrecord:0 at byte 0: cannot parse the serialized "
                                     "tf.train.Example"));
  // A damaged list of a declared feature names it.
  const std::string bad_floats = Len(1, Len(1, "w") + Len(2, Len(2, Len(1, "abc"))));
  p = Fast(*parser, {Example({IntEntry("ids", {1, 2}), bad_floats})});
  CHECK(p.status.code() == StatusCode::kDataLoss);
  CHECK(p.status.message().find("the float_list of feature 'w' is damaged") != std::string::npos);
}

TEST_CASE("undeclared features are skipped without looking inside them") {
  auto parser = DenseParser::Create({Spec("x", FeatureType::kInt64)});
  REQUIRE(parser.ok());
  // "junk" holds a packed float list of 3 bytes: invalid, but never parsed
  // (as TensorFlow's fast parser; protobuf would refuse the record).
  const std::string junk = Len(1, Len(1, "junk") + Len(2, Len(2, Len(1, "abc"))));
  const Parsed p = Fast(*parser, {Example({junk, IntEntry("x", {9})})});
  REQUIRE(p.status.ok());
  CHECK(Int64At(p, 0) == 9);
}

TEST_CASE("defaults fill missing features; bytes columns hold offsets then data") {
  FeatureSpec s = Spec("s", FeatureType::kBytes, {2});
  s.default_value = FeatureValues{{}, {}, {"dflt", ""}};
  FeatureSpec f = Spec("f", FeatureType::kFloat, {3});
  f.default_value = FeatureValues{{}, {1.5f, 2.5f, 3.5f}, {}};
  auto parser = DenseParser::Create({f, s});
  REQUIRE(parser.ok());
  const std::string given = Len(1, Len(1, "s") + Len(2, Len(1, Len(1, "ab") + Len(1, "c"))));
  const Parsed p = Fast(*parser, {Example({given}), Example({})});
  REQUIRE(p.status.ok());
  // f: 2 records x 3 floats = 24 bytes; s starts at 24: 5 offsets, then "abcdflt".
  CHECK(p.layout.offsets == std::vector<uint64_t>{0, 24});
  float fv[6];
  std::memcpy(fv, p.bytes.data(), 24);
  CHECK(fv[3] == 1.5f);
  CHECK(fv[5] == 3.5f);
  uint64_t off[5];
  std::memcpy(off, p.bytes.data() + 24, 40);
  CHECK(std::vector<uint64_t>(off, off + 5) == std::vector<uint64_t>{0, 2, 3, 7, 7});
  CHECK(p.bytes.substr(64, 7) == "abcdflt");
  CHECK(p.layout.total_bytes == 72);
  CHECK(p.bytes[71] == '\0');
}

FeatureSpec VarLen(std::string name, FeatureType type) {
  FeatureSpec s = Spec(std::move(name), type);
  s.var_len = true;
  return s;
}

// Map entries of each list kind, packed or one field per value.
std::string PackedIntEntry(const std::string& key, std::vector<uint64_t> values) {
  std::string packed;
  for (uint64_t v : values) PutVarint(packed, v);
  return Len(1, Len(1, key) + Len(2, Len(3, Len(1, packed))));
}
std::string FloatEntry(const std::string& key, std::vector<float> values, bool packed) {
  std::string list;
  for (float v : values) {
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    if (packed) {
      list.append(reinterpret_cast<const char*>(&bits), 4);
    } else {
      list += Fixed32(1, bits);
    }
  }
  if (packed) list = Len(1, list);
  return Len(1, Len(1, key) + Len(2, Len(2, list)));
}
std::string BytesEntry(const std::string& key, std::vector<std::string> values) {
  std::string list;
  for (const std::string& v : values) list += Len(1, v);
  return Len(1, Len(1, key) + Len(2, Len(1, list)));
}

std::vector<uint64_t> Uint64sAt(const Parsed& p, uint64_t offset, size_t n) {
  std::vector<uint64_t> v(n);
  REQUIRE(offset + 8 * n <= p.bytes.size());
  if (n != 0) std::memcpy(v.data(), p.bytes.data() + offset, 8 * n);
  return v;
}

TEST_CASE("VarLenFeatures of each dtype: row splits, then every record's values") {
  auto parser =
      DenseParser::Create({VarLen("ids", FeatureType::kInt64), VarLen("w", FeatureType::kFloat),
                           VarLen("s", FeatureType::kBytes)});
  REQUIRE(parser.ok());
  const Parsed p =
      Fast(*parser,
           {// Unpacked int64s, packed floats.
            Example({IntEntry("ids", {1, 2, 3}), FloatEntry("w", {1.5f, 2.5f}, true),
                     BytesEntry("s", {"a", "bc"})}),
            // Missing everywhere: empty rows, no error.
            Example({}),
            // Packed int64s (one negative: 10 bytes), unpacked floats, an empty string.
            Example({PackedIntEntry("ids", {7, static_cast<uint64_t>(-5)}),
                     FloatEntry("w", {-1.0f}, false), BytesEntry("s", {""})}),
            // Features with no list set count as missing; an empty list is empty.
            Example({EmptyEntry("ids"), EmptyEntry("w"), BytesEntry("s", {})})});
  REQUIRE_MESSAGE(p.status.ok(), p.status.ToString());
  // 4 records: 5 row splits (40 bytes) before each values column.
  CHECK(p.layout.row_splits_offsets == std::vector<uint64_t>{0, 80, 136});
  CHECK(p.layout.offsets == std::vector<uint64_t>{40, 120, 176});
  CHECK(Uint64sAt(p, 0, 5) == std::vector<uint64_t>{0, 3, 3, 5, 5});
  CHECK(Int64At(p, 40) == 1);
  CHECK(Int64At(p, 56) == 3);
  CHECK(Int64At(p, 64) == 7);
  CHECK(Int64At(p, 72) == -5);
  CHECK(Uint64sAt(p, 80, 5) == std::vector<uint64_t>{0, 2, 2, 3, 3});
  float fv[4];
  std::memcpy(fv, p.bytes.data() + 120, 16);
  CHECK(fv[0] == 1.5f);
  CHECK(fv[1] == 2.5f);
  CHECK(fv[2] == -1.0f);
  CHECK(fv[3] == 0.0f);  // padding
  CHECK(Uint64sAt(p, 136, 5) == std::vector<uint64_t>{0, 2, 2, 3, 3});
  CHECK(Uint64sAt(p, 176, 4) == std::vector<uint64_t>{0, 1, 3, 3});
  CHECK(p.bytes.substr(208, 3) == "abc");
  CHECK(p.layout.total_bytes == 216);
}

TEST_CASE("FixedLen and VarLen features mix in one batch; packed and unpacked agree") {
  FeatureSpec label = Spec("label", FeatureType::kInt64);
  label.default_value = FeatureValues{{-1}, {}, {}};
  const std::vector<FeatureSpec> specs = {label, VarLen("ids", FeatureType::kInt64),
                                          Spec("emb", FeatureType::kFloat, {2}),
                                          VarLen("tags", FeatureType::kBytes)};
  auto parser = DenseParser::Create(specs);
  REQUIRE(parser.ok());
  const std::string emb = FloatEntry("emb", {0.5f, 0.25f}, true);
  const std::vector<std::string> unpacked = {
      Example({IntEntry("label", {1}), IntEntry("ids", {10, 20}), emb, BytesEntry("tags", {"x"})}),
      Example({emb, IntEntry("ids", {30})}),
      Example({BytesEntry("tags", {"y", "zz"}), emb, IntEntry("label", {0})})};
  const std::vector<std::string> packed = {
      Example({IntEntry("label", {1}), PackedIntEntry("ids", {10, 20}),
               FloatEntry("emb", {0.5f, 0.25f}, false), BytesEntry("tags", {"x"})}),
      Example({emb, PackedIntEntry("ids", {30})}),
      Example({BytesEntry("tags", {"y", "zz"}), emb, PackedIntEntry("label", {0})})};
  const Parsed p = Fast(*parser, unpacked);
  REQUIRE_MESSAGE(p.status.ok(), p.status.ToString());
  const Parsed q = Fast(*parser, packed);
  REQUIRE_MESSAGE(q.status.ok(), q.status.ToString());
  CHECK(p.bytes == q.bytes);
  CheckSame(specs, unpacked);
  CheckSame(specs, packed);
  // label: 3 int64 at 0; ids: splits at 24, values at 56; emb: 6 floats at
  // 80; tags: splits at 104, 4 offsets at 136, then "xyzz".
  constexpr uint64_t kNo = ColumnLayout::kNoColumn;
  CHECK(p.layout.row_splits_offsets == std::vector<uint64_t>{kNo, 24, kNo, 104});
  CHECK(p.layout.offsets == std::vector<uint64_t>{0, 56, 80, 136});
  CHECK(Uint64sAt(p, 0, 3) == std::vector<uint64_t>{1, static_cast<uint64_t>(-1), 0});
  CHECK(Uint64sAt(p, 24, 4) == std::vector<uint64_t>{0, 2, 3, 3});
  CHECK(Uint64sAt(p, 56, 3) == std::vector<uint64_t>{10, 20, 30});
  CHECK(Uint64sAt(p, 104, 4) == std::vector<uint64_t>{0, 1, 1, 3});
  CHECK(Uint64sAt(p, 136, 4) == std::vector<uint64_t>{0, 1, 2, 4});
  CHECK(p.bytes.substr(168, 4) == "xyzz");
  CHECK(p.layout.total_bytes == 176);
}

TEST_CASE("a VarLenFeature holding another list kind is an error naming the feature") {
  auto parser = DenseParser::Create({VarLen("ids", FeatureType::kInt64)});
  REQUIRE(parser.ok());
  Parsed p =
      Fast(*parser, {Example({IntEntry("ids", {1})}), Example({FloatEntry("ids", {1.0f}, true)})});
  CHECK(p.status.code() == StatusCode::kInvalidArgument);
  CHECK(p.status.message() ==
        "test.tfrecord:1 at byte 100: feature 'ids' is declared tf.int64 but holds a float_list");
  // A damaged list of a VarLenFeature names it, for each dtype.
  for (FeatureType type : {FeatureType::kInt64, FeatureType::kFloat, FeatureType::kBytes}) {
    auto q = DenseParser::Create({VarLen("v", type)});
    REQUIRE(q.ok());
    const int kind = KindOf(type);
    // A field of the list's own number whose length runs past its end.
    const std::string bad = Len(1, Len(1, "v") + Len(2, Len(kind,
                                                            "\x0a\x05"
                                                            "ab")));
    p = Fast(*q, {Example({bad})});
    CHECK(p.status.code() == StatusCode::kDataLoss);
    CHECK(p.status.message().find("of feature 'v' is damaged") != std::string::npos);
  }
}

TEST_CASE("MaxBatchBytes bounds VarLen columns in their densest encodings") {
  // Packed zeros (1 byte each, 8 in the column), empty strings (2 bytes
  // each, an 8-byte offset), unpacked floats; Fast sizes the block exactly.
  std::vector<uint64_t> zeros(1000, 0);
  std::vector<std::string> empties(700);
  std::vector<float> floats(300, 1.0f);
  for (const auto& specs :
       {std::vector<FeatureSpec>{VarLen("i", FeatureType::kInt64)},
        std::vector<FeatureSpec>{VarLen("b", FeatureType::kBytes)},
        std::vector<FeatureSpec>{VarLen("f", FeatureType::kFloat)},
        std::vector<FeatureSpec>{VarLen("i", FeatureType::kInt64), VarLen("b", FeatureType::kBytes),
                                 VarLen("f", FeatureType::kFloat),
                                 Spec("s", FeatureType::kBytes)}}) {
    auto parser = DenseParser::Create(specs);
    REQUIRE(parser.ok());
    const std::vector<std::string> payloads = {
        Example({PackedIntEntry("i", zeros), BytesEntry("b", empties),
                 FloatEntry("f", floats, false), BytesEntry("s", {"s"})}),
        Example({BytesEntry("s", {""})}),
        Example({PackedIntEntry("i", {0}), BytesEntry("b", {""}), FloatEntry("f", {2.0f}, true),
                 BytesEntry("s", {std::string(100, 's')})})};
    const Parsed p = Fast(*parser, payloads);
    REQUIRE_MESSAGE(p.status.ok(), p.status.ToString());
    CheckSame(specs, payloads);
  }
}

TEST_CASE("Create checks names, shapes and defaults") {
  CHECK(DenseParser::Create({Spec("a", FeatureType::kInt64), Spec("a", FeatureType::kFloat)})
            .status()
            .message() == "feature 'a' is declared twice");
  CHECK(DenseParser::Create({Spec("a", FeatureType::kInt64, {-1})}).status().code() ==
        StatusCode::kInvalidArgument);
  FeatureSpec d = Spec("d", FeatureType::kInt64, {3});
  d.default_value = FeatureValues{{0}, {}, {}};
  CHECK(DenseParser::Create({d}).status().message() ==
        "feature 'd': default_value has 1 value; shape [3] needs 3");
  d.default_value = FeatureValues{{}, {0, 0, 0}, {}};
  CHECK(DenseParser::Create({d}).status().code() == StatusCode::kInvalidArgument);
  CHECK(
      DenseParser::Create({Spec("big", FeatureType::kInt64, {1 << 20, 1 << 20})}).status().code() ==
      StatusCode::kInvalidArgument);
  FeatureSpec v = VarLen("v", FeatureType::kInt64);
  v.shape = {2};
  CHECK(DenseParser::Create({v}).status().message() ==
        "feature 'v': a VarLenFeature has no shape; got [2]");
  v.shape.clear();
  v.default_value = FeatureValues{{0}, {}, {}};
  CHECK(DenseParser::Create({v}).status().message() ==
        "feature 'v': a VarLenFeature has no default_value");
  CHECK(DenseParser::Create({VarLen("v", FeatureType::kBytes), VarLen("v", FeatureType::kFloat)})
            .status()
            .message() == "feature 'v' is declared twice");
}

TEST_CASE("an output block smaller than MaxBatchBytes is refused, not overrun") {
  auto parser = DenseParser::Create({Spec("x", FeatureType::kInt64)});
  REQUIRE(parser.ok());
  const auto records = Records({Example({IntEntry("x", {1})})});
  char small[4];
  CHECK(parser->ParseBatch(records, std::span<char>(small, 4)).status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("entries one step from the encoding protobuf writes parse as protobuf decodes them") {
  // The parser reads key, value and list in one go when an entry is laid
  // out as protobuf writes it; each case here differs from that layout in
  // one place and must give protobuf's answer all the same.
  std::string packed;
  for (int i = 0; i < 70; ++i) PutVarint(packed, 1u << (i % 20));  // a list over 127 bytes
  const std::string ints = Len(1, packed);
  const std::string one = Len(1, std::string(1, '\x07'));
  std::string long_key(200, 'k');
  std::string wide_len;  // the key "x" with its length in two bytes (0x81 0x00)
  PutTag(wide_len, 1, 2);
  wide_len += "\x81";
  wide_len += '\0';
  wide_len += "x";
  const std::vector<std::string> entries = {
      Len(1, Len(1, "x") + Len(2, Len(3, one))),                                // as written
      Len(1, Len(1, "x") + Len(2, Len(3, ints))),                               // long list
      Len(1, Len(1, "x") + Len(2, Len(3, ""))),                                 // empty list
      Len(1, Len(1, "x") + Len(2, "")),                                         // no list
      Len(1, Len(1, "x") + Len(2, Len(3, one)) + VarintField(9, 1)),            // field after
      Len(1, Len(1, "x") + Len(2, Len(3, one) + VarintField(9, 1))),            // in the value
      Len(1, Len(1, "x") + Len(2, Len(3, one) + Len(3, one))),                  // two lists
      Len(1, Len(1, "x") + Len(2, Len(3, one)) + Len(2, Len(1, Len(1, "b")))),  // two values
      Len(1, Len(2, Len(3, one)) + Len(1, "x")),                                // value first
      Len(1, wide_len + Len(2, Len(3, one))),                                   // wide length
      Len(1, Len(1, long_key) + Len(2, Len(3, one))),                           // long key
      Len(1, Len(1, "x") + Len(2, Len(1, Len(1, "b")))),                        // other kind
      Len(1, Len(1, "x")),                                                      // no value
  };
  for (size_t i = 0; i < entries.size(); ++i) {
    for (bool var_len : {false, true}) {
      CAPTURE(i);
      CAPTURE(var_len);
      FeatureSpec x = Spec("x", FeatureType::kInt64);
      x.var_len = var_len;
      if (!var_len) {
        x.default_value = FeatureValues{};
        x.default_value->int64s = {-1};
      }
      FeatureSpec k = Spec(long_key, FeatureType::kInt64);
      k.var_len = true;
      // Alone, after a plain entry of the same key, and with the key's
      // value cut short by one byte (damage found by the general parse).
      CheckSame({x, k}, {Example({entries[i]}), Example({IntEntry("x", {5}), entries[i]})});
      std::string cut = entries[i];
      cut.pop_back();
      CheckSame({x, k}, {Example({cut})});
    }
  }
}

TEST_CASE("synthetic Examples (tfdist gen) parse into their id, label and data") {
  PayloadOptions options;
  options.size = {64, 600};
  options.seed = 9;
  PayloadGenerator gen(options);
  std::vector<std::string> payloads(100);
  for (uint64_t i = 0; i < payloads.size(); ++i) REQUIRE(gen.Next(0, i, i, payloads[i]).ok());
  CheckSame({Spec("id", FeatureType::kInt64), Spec("label", FeatureType::kInt64),
             Spec("data", FeatureType::kBytes)},
            payloads);
}

}  // namespace
}  // namespace tfdist::proto
