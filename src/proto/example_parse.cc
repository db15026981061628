// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A tf.train.Example parser that reads the protobuf wire format directly into dense columns.

#include "tfdist/proto/example_parse.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <limits>
#include <set>

namespace tfdist::proto {

using data::FeatureSpec;
using data::FeatureType;
using data::FeatureValues;
using data::ShapeText;
namespace {

static_assert(std::endian::native == std::endian::little,
              "columns are little-endian and written with memcpy");

// Wire types of the protobuf encoding.
constexpr uint32_t kVarint = 0;
constexpr uint32_t kFixed64 = 1;
constexpr uint32_t kLen = 2;
constexpr uint32_t kStartGroup = 3;
constexpr uint32_t kEndGroup = 4;
constexpr uint32_t kFixed32 = 5;

// Field numbers of feature.proto's Feature oneof; 0 is "no list set".
constexpr int kNoList = 0;
constexpr int kBytesList = 1;
constexpr int kFloatList = 2;
constexpr int kInt64List = 3;

// protobuf's default recursion limit, for skipping nested unknown groups.
constexpr int kMaxGroupDepth = 100;

int ListField(FeatureType type) {
  switch (type) {
    case FeatureType::kBytes:
      return kBytesList;
    case FeatureType::kFloat:
      return kFloatList;
    case FeatureType::kInt64:
      return kInt64List;
  }
  return kNoList;
}

std::string_view ListName(int field) {
  switch (field) {
    case kBytesList:
      return "bytes_list";
    case kFloatList:
      return "float_list";
    case kInt64List:
      return "int64_list";
  }
  return "no list";
}

uint64_t Align8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

// A bounded view of wire bytes: every read checks the end first, so no input
// makes it read outside [p, end).
class Cursor {
 public:
  Cursor() = default;
  Cursor(const uint8_t* p, const uint8_t* end) : p_(p), end_(end) {}

  bool AtEnd() const { return p_ == end_; }
  const uint8_t* pos() const { return p_; }
  const uint8_t* end() const { return end_; }
  size_t size() const { return static_cast<size_t>(end_ - p_); }

  // Up to 10 bytes; bits past 64 are dropped, as protobuf does.
  bool Varint(uint64_t& v) {
    if (p_ != end_ && *p_ < 0x80) {
      v = *p_++;
      return true;
    }
    uint64_t r = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t b = *p_++;
      r |= uint64_t{b & 0x7fu} << shift;
      if (b < 0x80) {
        v = r;
        return true;
      }
    }
    return false;
  }

  // A tag is at most 5 bytes; protobuf keeps its low 32 bits.
  bool Tag(uint32_t& field, uint32_t& wire) {
    uint32_t t = 0;
    for (int i = 0;; ++i) {
      if (i == 5 || p_ == end_) return false;
      const uint8_t b = *p_++;
      t |= static_cast<uint32_t>(b & 0x7fu) << (7 * i);
      if (b < 0x80) break;
    }
    field = t >> 3;
    wire = t & 7;
    return field != 0 && wire <= kFixed32;
  }

  // A length-delimited field's contents.
  bool Delimited(Cursor& sub) {
    uint64_t n;
    if (!Varint(n) || n > size()) return false;
    sub = Cursor(p_, p_ + n);
    p_ += n;
    return true;
  }

  bool Fixed32(uint32_t& v) {
    if (size() < 4) return false;
    std::memcpy(&v, p_, 4);
    p_ += 4;
    return true;
  }

  // Skips the value of a field just tagged (any wire type; groups nest).
  bool Skip(uint32_t field, uint32_t wire, int depth = 0) {
    uint64_t v;
    Cursor sub;
    switch (wire) {
      case kVarint:
        return Varint(v);
      case kFixed64:
        return Advance(8);
      case kLen:
        return Delimited(sub);
      case kFixed32:
        return Advance(4);
      case kStartGroup:
        if (depth >= kMaxGroupDepth) return false;
        for (;;) {
          uint32_t f = 0, w = 0;
          if (!Tag(f, w)) return false;
          if (w == kEndGroup) return f == field;
          if (!Skip(f, w, depth + 1)) return false;
        }
      default:  // an end-group tag outside its group
        return false;
    }
  }

 private:
  bool Advance(size_t n) {
    if (size() < n) return false;
    p_ += n;
    return true;
  }

  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
};

// The Features map entry that decides one declared feature of one record.
struct Winner {
  const uint8_t* begin = nullptr;  // the entry's message bytes
  const uint8_t* end = nullptr;
  int list = kNoList;  // the list its Feature holds; kNoList: the feature is absent
  // The list message's bytes when the entry is encoded as protobuf writes
  // it (its key, then a Feature holding that one list and nothing else), so
  // the columns read it without parsing the entry again; else null.
  const uint8_t* list_begin = nullptr;
  const uint8_t* list_end = nullptr;
};

// A varint of at most 5 bytes (a length) at [p, end): its end, or null when
// it is cut or longer. The fast path's reader; anything else goes the
// general way.
const uint8_t* ShortVarint(const uint8_t* p, const uint8_t* end, uint64_t& v) {
  uint64_t r = 0;
  for (int shift = 0; shift < 35 && p != end; shift += 7) {
    const uint8_t b = *p++;
    r |= uint64_t{b & 0x7fu} << shift;
    if (b < 0x80) {
      v = r;
      return p;
    }
  }
  return nullptr;
}

// An entry in the encoding protobuf writes: tag 1 and the key, tag 2 and a
// Feature holding exactly one list (tag 1, 2 or 3), each length running to
// the end of its container. Sets `key` and `w` and returns true for such an
// entry; false leaves the general parse to decide (and to find any damage).
bool SimpleEntry(const uint8_t* p, const uint8_t* end, std::string_view& key, Winner& w) {
  constexpr uint8_t kKeyTag = (1 << 3) | kLen;
  constexpr uint8_t kValueTag = (2 << 3) | kLen;
  const uint8_t* const begin = p;
  uint64_t n;
  if (p == end || *p++ != kKeyTag || (p = ShortVarint(p, end, n)) == nullptr ||
      n >= static_cast<uint64_t>(end - p)) {
    return false;
  }
  key = std::string_view(reinterpret_cast<const char*>(p), n);
  p += n;
  if (*p++ != kValueTag || (p = ShortVarint(p, end, n)) == nullptr ||
      n != static_cast<uint64_t>(end - p) || p == end) {
    return false;
  }
  const uint8_t tag = *p++;
  const int list = tag >> 3;
  if ((tag & 7) != kLen || list < kBytesList || list > kInt64List ||
      (p = ShortVarint(p, end, n)) == nullptr || n != static_cast<uint64_t>(end - p)) {
    return false;
  }
  w = Winner{begin, end, list, p, end};
  return true;
}

uint64_t HashKey(const char* p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  if (i < n) {
    uint64_t w = 0;
    std::memcpy(&w, p + i, n - i);
    h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 32;
  }
  return h * 0x9e3779b97f4a7c15ull;
}

// Key equality without a call to memcmp: feature names are short, so
// they are compared in at most two loads of each side where they fit in 8
// bytes (overlapping when shorter than that), never reading past either.
bool SameKey(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* p = a.data();
  const char* q = b.data();
  auto same = [&](size_t at, auto word) {
    decltype(word) x, y;
    std::memcpy(&x, p + at, sizeof x);
    std::memcpy(&y, q + at, sizeof y);
    return x == y;
  };
  if (n >= 8) {
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (!same(i, uint64_t{})) return false;
    }
    return same(n - 8, uint64_t{});
  }
  if (n >= 4) return same(0, uint32_t{}) && same(n - 4, uint32_t{});
  if (n >= 2) return same(0, uint16_t{}) && same(n - 2, uint16_t{});
  return n == 0 || *p == *q;
}

std::string RecordName(const data::Element& e) {
  return fmt::format("{}:{} at byte {}", e.origin.file ? *e.origin.file : "<unnamed>",
                     e.origin.index, e.origin.offset);
}

Status Malformed(const data::Element& e, const uint8_t* payload, const uint8_t* at,
                 std::string_view what) {
  return Status::DataLoss(
      fmt::format("{}: cannot parse the serialized tf.train.Example: {} "
                  "(byte {} of the record)",
                  RecordName(e), what, at - payload));
}

// Output bytes per payload byte that `spec`'s values may take at most (the
// fixed part of a column aside). A VarLenFeature's values are as many as
// its encoding allows: a packed int64 takes 1 byte (8 in the column), a
// bytes value 2 or more (an 8-byte offset, then its data), a float 4.
uint64_t PayloadFactor(const FeatureSpec& spec) {
  switch (spec.type) {
    case FeatureType::kInt64:
      return spec.var_len ? 8 : 0;
    case FeatureType::kFloat:
      return spec.var_len ? 1 : 0;
    case FeatureType::kBytes:
      return spec.var_len ? 4 : 1;
  }
  return 8;
}

}  // namespace

DenseParser::DenseParser(std::vector<FeatureSpec> features) : features_(std::move(features)) {
  size_t slots = 8;
  while (slots < 2 * features_.size()) slots *= 2;
  slots_.assign(slots, 0);
  for (size_t f = 0; f < features_.size(); ++f) {
    const std::string& name = features_[f].name;
    size_t s = HashKey(name.data(), name.size()) & (slots - 1);
    while (slots_[s] != 0) s = (s + 1) & (slots - 1);
    slots_[s] = static_cast<uint32_t>(f + 1);
    const FeatureSpec& spec = features_[f];
    if (spec.type == FeatureType::kBytes && spec.default_value) {
      for (const std::string& b : spec.default_value->bytes) default_bytes_ += b.size();
    }
    payload_factor_ = std::max(payload_factor_, PayloadFactor(spec));
  }
}

Result<DenseParser> DenseParser::Create(std::vector<FeatureSpec> features) {
  TFDIST_RETURN_IF_ERROR(data::CheckFeatures(features));
  return DenseParser(std::move(features));
}

int DenseParser::Find(std::string_view name) const {
  const size_t mask = slots_.size() - 1;
  for (size_t s = HashKey(name.data(), name.size()) & mask;; s = (s + 1) & mask) {
    const uint32_t f = slots_[s];
    if (f == 0) return -1;
    if (SameKey(features_[f - 1].name, name)) return static_cast<int>(f - 1);
  }
}

uint64_t DenseParser::MaxBatchBytes(uint64_t n, uint64_t payload_bytes) const {
  uint64_t total = 0;
  for (const FeatureSpec& f : features_) {
    if (f.var_len) {
      // Row splits, a bytes column's last offset, padding; the values come
      // from the payload (payload_factor_).
      total += 8 * (n + 1) + 16;
      continue;
    }
    const uint64_t values = n * static_cast<uint64_t>(f.num_values());
    switch (f.type) {
      case FeatureType::kInt64:
        total += 8 * values;
        break;
      case FeatureType::kFloat:
        total += Align8(4 * values);
        break;
      case FeatureType::kBytes:
        total += 8 * (values + 1) + 8;  // offsets, and the data's padding
        break;
    }
  }
  // The values read from one record come from distinct map entries of its
  // payload (bytes values also from defaults): the columns together hold no
  // more than the densest encoding's factor times the payload.
  return total + payload_factor_ * payload_bytes + n * default_bytes_;
}

namespace {

// Parses one batch; holds the per-call state so DenseParser stays const.
class BatchParser {
 public:
  BatchParser(const std::vector<FeatureSpec>& features, std::span<const data::Element> records,
              std::span<char> out)
      : features_(features), records_(records), out_(out) {}

  // Phase 1: checks each record's structure down to its Features entries and
  // finds the entry that decides each declared feature.
  template <typename FindFn>
  Status Scan(const FindFn& find) {
    const size_t nf = features_.size();
    winners_.assign(records_.size() * nf, Winner{});
    for (size_t i = 0; i < records_.size(); ++i) {
      const data::Element& e = records_[i];
      const std::string_view payload = e.payload();
      const auto* base = reinterpret_cast<const uint8_t*>(payload.data());
      Winner* w = &winners_[i * nf];
      Cursor ex(base, base + payload.size());
      while (!ex.AtEnd()) {
        const uint8_t* at = ex.pos();
        uint32_t field = 0, wire = 0;
        if (!ex.Tag(field, wire)) return Malformed(e, base, at, "bad field tag");
        if (field != 1 || wire != kLen) {  // not Example.features
          if (!ex.Skip(field, wire)) return Malformed(e, base, at, "bad unknown field");
          continue;
        }
        Cursor fs;
        if (!ex.Delimited(fs)) return Malformed(e, base, at, "features run past the end");
        for (size_t ordinal = 0; !fs.AtEnd(); ++ordinal) {
          at = fs.pos();
          if (!fs.Tag(field, wire)) return Malformed(e, base, at, "bad field tag in features");
          if (field != 1 || wire != kLen) {  // not a map entry
            if (!fs.Skip(field, wire)) return Malformed(e, base, at, "bad unknown field");
            continue;
          }
          Cursor entry;
          if (!fs.Delimited(entry)) return Malformed(e, base, at, "map entry runs past the end");
          TFDIST_RETURN_IF_ERROR(ScanEntry(e, base, entry, ordinal, find, w));
        }
      }
      for (size_t f = 0; f < nf; ++f) {
        const FeatureSpec& spec = features_[f];
        if (w[f].list == kNoList) {
          // As in TensorFlow, a default with no values (shape with a 0) is no
          // default; a VarLenFeature needs none (it has no values there).
          if (!spec.var_len && (!spec.default_value || spec.num_values() == 0)) {
            return Status::InvalidArgument(
                fmt::format("{}: feature '{}' ({}) is required but not in the Example, and has "
                            "no default_value",
                            RecordName(e), spec.name, FeatureDtypeName(spec.type)));
          }
        } else if (w[f].list != ListField(spec.type)) {
          return Status::InvalidArgument(
              fmt::format("{}: feature '{}' is declared {} but holds a {}", RecordName(e),
                          spec.name, FeatureDtypeName(spec.type), ListName(w[f].list)));
        }
      }
    }
    return Status::OK();
  }

  // Phase 2: writes the columns, feature by feature.
  Result<ColumnLayout> Write() {
    ColumnLayout layout;
    layout.offsets.reserve(features_.size());
    layout.row_splits_offsets.reserve(features_.size());
    uint64_t pos = 0;
    for (size_t f = 0; f < features_.size(); ++f) {
      uint64_t size = 0;
      if (features_[f].var_len) {
        layout.row_splits_offsets.push_back(pos);
        layout.offsets.push_back(pos + 8 * (records_.size() + 1));
        TFDIST_ASSIGN_OR_RETURN(size, WriteVarLenColumn(f, pos));
      } else {
        layout.row_splits_offsets.push_back(ColumnLayout::kNoColumn);
        layout.offsets.push_back(pos);
        TFDIST_ASSIGN_OR_RETURN(size, WriteColumn(f, pos));
      }
      const uint64_t end = pos + size;
      const uint64_t padded = Align8(end);
      if (padded > out_.size()) return Overflow();
      std::memset(out_.data() + end, 0, padded - end);
      pos = padded;
    }
    layout.total_bytes = pos;
    return layout;
  }

 private:
  template <typename FindFn>
  Status ScanEntry(const data::Element& e, const uint8_t* base, Cursor entry, size_t ordinal,
                   const FindFn& find, Winner* w) {
    const Cursor start = entry;
    std::string_view key;
    Winner simple;
    if (SimpleEntry(entry.pos(), entry.end(), key, simple)) {
      const int f = find(key, ordinal);
      if (f >= 0) w[f] = simple;
      return Status::OK();
    }
    bool has_value = false;
    while (!entry.AtEnd()) {
      const uint8_t* at = entry.pos();
      uint32_t field = 0, wire = 0;
      if (!entry.Tag(field, wire)) return Malformed(e, base, at, "bad field tag in a map entry");
      Cursor sub;
      if (field <= 2 && wire == kLen) {
        if (!entry.Delimited(sub)) return Malformed(e, base, at, "map entry runs past the end");
        if (field == 1) {
          key = std::string_view(reinterpret_cast<const char*>(sub.pos()), sub.size());
        } else {
          has_value = true;
        }
      } else if (!entry.Skip(field, wire)) {
        return Malformed(e, base, at, "bad unknown field in a map entry");
      }
    }
    const int f = find(key, ordinal);
    if (f < 0 || !has_value) return Status::OK();
    // The Feature of a declared key: which list it holds (the last one set,
    // as a oneof keeps; value fields repeated in the entry merge).
    int list = kNoList;
    entry = start;
    while (!entry.AtEnd()) {
      uint32_t field = 0, wire = 0;
      Cursor value;
      (void)entry.Tag(field, wire);  // checked above
      if (field != 2 || wire != kLen) {
        (void)entry.Skip(field, wire);
        continue;
      }
      (void)entry.Delimited(value);
      while (!value.AtEnd()) {
        const uint8_t* at = value.pos();
        if (!value.Tag(field, wire)) {
          return Malformed(e, base, at, fmt::format("bad field tag in feature '{}'", key));
        }
        if (field >= kBytesList && field <= kInt64List && wire == kLen) {
          list = static_cast<int>(field);
        }
        if (!value.Skip(field, wire)) {
          return Malformed(e, base, at, fmt::format("feature '{}' runs past its end", key));
        }
      }
    }
    // A Feature with no list set does not count (TensorFlow skips it), so
    // an earlier entry for the key may still decide.
    if (list != kNoList) w[f] = Winner{start.pos(), start.end(), list};
    return Status::OK();
  }

  Status Overflow() const {
    return Status::Internal(
        fmt::format("dense parse: the output block of {} bytes is too small", out_.size()));
  }

  // Calls `on_list(cursor)` for each list of the winning kind in the entry,
  // after `on_reset()` whenever another kind came in between (a oneof keeps
  // only the last run of one kind).
  template <typename ResetFn, typename ListFn>
  static bool ForEachList(const Winner& w, const ResetFn& on_reset, const ListFn& on_list) {
    if (w.list_begin != nullptr) return on_list(Cursor(w.list_begin, w.list_end));
    Cursor entry(w.begin, w.end);
    int last = kNoList;
    while (!entry.AtEnd()) {
      uint32_t field = 0, wire = 0;
      Cursor value;
      if (!entry.Tag(field, wire)) return false;
      if (field != 2 || wire != kLen) {
        if (!entry.Skip(field, wire)) return false;
        continue;
      }
      if (!entry.Delimited(value)) return false;
      while (!value.AtEnd()) {
        if (!value.Tag(field, wire)) return false;
        if (field < kBytesList || field > kInt64List || wire != kLen) {
          if (!value.Skip(field, wire)) return false;
          continue;
        }
        Cursor list;
        if (!value.Delimited(list)) return false;
        const int kind = static_cast<int>(field);
        if (kind != w.list) {
          last = kind;
          continue;
        }
        if (last != kind) on_reset();
        last = kind;
        if (!on_list(list)) return false;
      }
    }
    return true;
  }

  Status CountError(size_t i, const FeatureSpec& spec, uint64_t count) const {
    return Status::InvalidArgument(
        fmt::format("{}: feature '{}' holds {} {} value{}; its shape {} needs {}",
                    RecordName(records_[i]), spec.name, count, FeatureTypeName(spec.type),
                    count == 1 ? "" : "s", ShapeText(spec.shape), spec.num_values()));
  }

  Status ValueError(size_t i, const FeatureSpec& spec, const Winner& w) const {
    const auto* base = reinterpret_cast<const uint8_t*>(records_[i].payload().data());
    return Malformed(records_[i], base, w.begin,
                     fmt::format("the {} of feature '{}' is damaged", ListName(w.list), spec.name));
  }

  // Decodes an Int64List message, packed or not, calling put(value) for each value.
  template <typename PutFn>
  static bool ReadInt64s(Cursor list, const PutFn& put) {
    uint64_t v;
    const uint8_t* p = list.pos();
    // As protobuf writes it: one packed field.
    if (list.size() >= 2 && p[0] == ((1 << 3) | kLen) && p[1] == list.size() - 2) {
      Cursor packed(p + 2, list.end());
      while (!packed.AtEnd()) {
        if (!packed.Varint(v)) return false;
        put(v);
      }
      return true;
    }
    while (!list.AtEnd()) {
      uint32_t field = 0, wire = 0;
      if (!list.Tag(field, wire)) return false;
      if (field == 1 && wire == kVarint) {
        if (!list.Varint(v)) return false;
        put(v);
      } else if (field == 1 && wire == kLen) {
        Cursor packed;
        if (!list.Delimited(packed)) return false;
        while (!packed.AtEnd()) {
          if (!packed.Varint(v)) return false;
          put(v);
        }
      } else if (!list.Skip(field, wire)) {
        return false;
      }
    }
    return true;
  }

  // Decodes a FloatList message: put_one(bits) for an unpacked value,
  // put_packed(p, m) for m packed values at p.
  template <typename OneFn, typename PackedFn>
  static bool ReadFloats(Cursor list, const OneFn& put_one, const PackedFn& put_packed) {
    while (!list.AtEnd()) {
      uint32_t field = 0, wire = 0;
      if (!list.Tag(field, wire)) return false;
      if (field == 1 && wire == kFixed32) {
        uint32_t v;
        if (!list.Fixed32(v)) return false;
        put_one(v);
      } else if (field == 1 && wire == kLen) {
        Cursor packed;
        if (!list.Delimited(packed) || packed.size() % 4 != 0) return false;
        put_packed(packed.pos(), packed.size() / 4);
      } else if (!list.Skip(field, wire)) {
        return false;
      }
    }
    return true;
  }

  // Decodes a BytesList message, calling put(cursor) for each value.
  template <typename PutFn>
  static bool ReadBytes(Cursor list, const PutFn& put) {
    while (!list.AtEnd()) {
      uint32_t field = 0, wire = 0;
      if (!list.Tag(field, wire)) return false;
      if (field == 1 && wire == kLen) {
        Cursor value;
        if (!list.Delimited(value)) return false;
        put(value);
      } else if (!list.Skip(field, wire)) {
        return false;
      }
    }
    return true;
  }

  // Writes FixedLenFeature f's column at `pos`; returns its size before padding.
  Result<uint64_t> WriteColumn(size_t f, uint64_t pos) {
    const FeatureSpec& spec = features_[f];
    const uint64_t k = static_cast<uint64_t>(spec.num_values());
    const uint64_t n = records_.size();
    const size_t nf = features_.size();
    char* col = out_.data() + pos;
    if (spec.type == FeatureType::kBytes) return WriteBytesColumn<false>(f, pos, nullptr);
    const uint64_t width = spec.type == FeatureType::kInt64 ? 8 : 4;
    if (pos + width * n * k > out_.size()) return Overflow();
    for (size_t i = 0; i < n; ++i) {
      const Winner& w = winners_[i * nf + f];
      char* row = col + width * k * i;
      if (w.list == kNoList) {
        const FeatureValues& d = *spec.default_value;
        if (k != 0) {
          std::memcpy(row,
                      spec.type == FeatureType::kInt64 ? static_cast<const void*>(d.int64s.data())
                                                       : static_cast<const void*>(d.floats.data()),
                      width * k);
        }
        continue;
      }
      uint64_t count = 0;
      auto reset = [&] { count = 0; };
      bool ok;
      if (spec.type == FeatureType::kInt64) {
        ok = ForEachList(w, reset, [&](Cursor list) {
          return ReadInt64s(list, [&](uint64_t v) {
            if (count < k) std::memcpy(row + 8 * count, &v, 8);
            ++count;
          });
        });
      } else {
        ok = ForEachList(w, reset, [&](Cursor list) {
          return ReadFloats(
              list,
              [&](uint32_t v) {
                if (count < k) std::memcpy(row + 4 * count, &v, 4);
                ++count;
              },
              [&](const uint8_t* p, uint64_t m) {
                if (count < k) std::memcpy(row + 4 * count, p, 4 * std::min(m, k - count));
                count += m;
              });
        });
      }
      if (!ok) return ValueError(i, spec, w);
      if (count != k) return CountError(i, spec, count);
    }
    return width * n * k;
  }

  // Writes VarLenFeature f's row splits at `pos` and its values right after
  // them; returns their size before padding. Out of line: inlined into
  // Write(), it kept GCC from inlining WriteColumn, and FixedLen parsing
  // lost 8% (tools/bench-parse).
  [[gnu::noinline]] Result<uint64_t> WriteVarLenColumn(size_t f, uint64_t pos) {
    const FeatureSpec& spec = features_[f];
    const uint64_t n = records_.size();
    const size_t nf = features_.size();
    const uint64_t splits_size = 8 * (n + 1);
    if (pos + splits_size > out_.size()) return Overflow();
    char* splits = out_.data() + pos;
    const uint64_t values_pos = pos + splits_size;
    if (spec.type == FeatureType::kBytes) {
      TFDIST_ASSIGN_OR_RETURN(const uint64_t size, WriteBytesColumn<true>(f, values_pos, splits));
      return splits_size + size;
    }
    const uint64_t width = spec.type == FeatureType::kInt64 ? 8 : 4;
    // No value takes less than one byte of its entry (a packed varint) or
    // four (a packed float): checked once per record, not per value.
    const uint64_t min_bytes = spec.type == FeatureType::kInt64 ? 1 : 4;
    const uint64_t room = (out_.size() - values_pos) / width;
    char* col = out_.data() + values_pos;
    uint64_t m = 0;  // values so far
    std::memcpy(splits, &m, 8);
    for (size_t i = 0; i < n; ++i) {
      const Winner& w = winners_[i * nf + f];
      if (w.list != kNoList) {  // else no values (TensorFlow: missing is empty)
        if (static_cast<uint64_t>(w.end - w.begin) / min_bytes > room - m) return Overflow();
        char* row = col + width * m;
        uint64_t count = 0;
        auto reset = [&] { count = 0; };
        bool ok;
        if (spec.type == FeatureType::kInt64) {
          ok = ForEachList(w, reset, [&](Cursor list) {
            return ReadInt64s(list, [&](uint64_t v) { std::memcpy(row + 8 * count++, &v, 8); });
          });
        } else {
          ok = ForEachList(w, reset, [&](Cursor list) {
            return ReadFloats(
                list, [&](uint32_t v) { std::memcpy(row + 4 * count++, &v, 4); },
                [&](const uint8_t* p, uint64_t k) {
                  if (k != 0) std::memcpy(row + 4 * count, p, 4 * k);
                  count += k;
                });
          });
        }
        if (!ok) return ValueError(i, spec, w);
        m += count;
      }
      std::memcpy(splits + 8 * (i + 1), &m, 8);
    }
    return splits_size + width * m;
  }

  // Counts each record's values of bytes VarLenFeature f into its row
  // splits: the offsets come before the data, so their number is needed
  // before the data is copied.
  Status CountBytes(size_t f, char* splits) {
    const size_t nf = features_.size();
    uint64_t m = 0;
    std::memcpy(splits, &m, 8);
    for (size_t i = 0; i < records_.size(); ++i) {
      const Winner& w = winners_[i * nf + f];
      if (w.list != kNoList) {
        uint64_t count = 0;
        const bool ok = ForEachList(
            w, [&] { count = 0; },
            [&](Cursor list) { return ReadBytes(list, [&](Cursor) { ++count; }); });
        if (!ok) return ValueError(i, features_[f], w);
        m += count;
      }
      std::memcpy(splits + 8 * (i + 1), &m, 8);
    }
    return Status::OK();
  }

  // Writes the bytes column of feature f at `pos`: offsets, then data. For a
  // VarLenFeature, `splits` are its row splits (written here first);
  // otherwise each record has num_values() values. Returns its size before
  // padding.
  template <bool kVarLen>
  Result<uint64_t> WriteBytesColumn(size_t f, uint64_t pos, char* splits) {
    const FeatureSpec& spec = features_[f];
    const uint64_t n = records_.size();
    const size_t nf = features_.size();
    const uint64_t k = kVarLen ? 0 : static_cast<uint64_t>(spec.num_values());
    uint64_t values = n * k;
    auto split = [&](size_t i) {
      uint64_t s;
      std::memcpy(&s, splits + 8 * i, 8);
      return s;
    };
    if constexpr (kVarLen) {
      TFDIST_RETURN_IF_ERROR(CountBytes(f, splits));
      values = split(n);
    }
    if (values >= out_.size() / 8 || pos + 8 * (values + 1) > out_.size()) return Overflow();
    const uint64_t offsets_size = 8 * (values + 1);
    char* offsets = out_.data() + pos;
    char* data = offsets + offsets_size;
    const uint64_t capacity = out_.size() - pos - offsets_size;
    uint64_t dpos = 0;
    bool overflow = false;
    auto append = [&](uint64_t slot, const void* p, uint64_t len) {
      if (len > capacity - dpos) {
        overflow = true;
        return;
      }
      std::memcpy(offsets + 8 * slot, &dpos, 8);
      if (len != 0) std::memcpy(data + dpos, p, len);
      dpos += len;
    };
    for (size_t i = 0; i < n; ++i) {
      const Winner& w = winners_[i * nf + f];
      const uint64_t first = kVarLen ? split(i) : i * k;
      const uint64_t want = kVarLen ? split(i + 1) - first : k;
      if (w.list == kNoList) {
        if constexpr (!kVarLen) {
          for (uint64_t j = 0; j < k; ++j) {
            const std::string& v = spec.default_value->bytes[j];
            append(first + j, v.data(), v.size());
          }
          if (overflow) return Overflow();
        }
        continue;
      }
      const uint64_t record_start = dpos;
      uint64_t count = 0;
      auto reset = [&] {
        count = 0;
        dpos = record_start;
      };
      const bool ok = ForEachList(w, reset, [&](Cursor list) {
        return ReadBytes(list, [&](Cursor value) {
          if (count < want) append(first + count, value.pos(), value.size());
          ++count;
        });
      });
      if (overflow) return Overflow();
      if (!ok) return ValueError(i, spec, w);
      if (count != want) return CountError(i, spec, count);
    }
    std::memcpy(offsets + 8 * values, &dpos, 8);
    return offsets_size + dpos;
  }

  const std::vector<FeatureSpec>& features_;
  std::span<const data::Element> records_;
  std::span<char> out_;
  std::vector<Winner> winners_;  // [record * features + feature]
};

}  // namespace

Result<ColumnLayout> DenseParser::ParseBatch(std::span<const data::Element> records,
                                             std::span<char> out) const {
  uint64_t payload_bytes = 0;
  for (const data::Element& e : records) {
    if (e.kind != data::Element::Kind::kRecord) {
      return Status::InvalidArgument(
          "parse_example needs records; got an element that is not a record");
    }
    payload_bytes += e.payload().size();
  }
  const uint64_t need = MaxBatchBytes(records.size(), payload_bytes);
  if (out.size() < need) {
    return Status::InvalidArgument(
        fmt::format("dense parse: the output block holds {} bytes; {} records need up to {}",
                    out.size(), records.size(), need));
  }
  BatchParser batch(features_, records, out);
  // Records of one dataset often list their features in the same order
  // (protobuf's map order is not fixed, so not always): the key the previous
  // record had at an entry's position, and what it was found to be, are
  // tried first: one comparison instead of a hash and a probe, also for keys
  // nobody declared. Guessing stops for the batch once misses outnumber
  // hits, as a mispredicted guess costs more than it saves. (The keys are
  // views into the batch's records, which outlive the parse.)
  struct Guess {
    std::string_view key;
    int feature = -1;
  };
  constexpr size_t kMaxGuesses = 256;
  std::array<Guess, kMaxGuesses> guesses{};
  int64_t score = 0;  // hits - misses
  TFDIST_RETURN_IF_ERROR(batch.Scan([&](std::string_view key, size_t ordinal) {
    if (ordinal >= kMaxGuesses || score < -16) return Find(key);
    Guess& g = guesses[ordinal];
    if (g.key.data() != nullptr) {
      if (SameKey(g.key, key)) {
        ++score;
        return g.feature;
      }
      --score;  // (the first record has nothing to guess from: no miss)
    }
    g = Guess{key, Find(key)};
    return g.feature;
  }));
  return batch.Write();
}

}  // namespace tfdist::proto
