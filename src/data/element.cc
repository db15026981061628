// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Element labels and sizes.

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <unordered_set>

#include "tfdist/base/text.h"
#include "tfdist/data/dataset.h"

namespace tfdist::data {

const std::string* InternPath(const std::string& path) {
  static std::mutex mu;
  static auto* paths = new std::unordered_set<std::string>();  // never freed: pointers outlive all
  std::lock_guard<std::mutex> lock(mu);
  return &*paths->insert(path).first;
}

Element Element::Int(int64_t v) {
  Element e;
  e.kind = Kind::kInt;
  e.set_int_value(v);
  return e;
}

Element Element::Name(std::string name) {
  Element e;
  e.kind = Kind::kName;
  e.bytes = std::move(name);
  return e;
}

std::string Element::Label(LabelMode mode) const {
  switch (kind) {
    case Kind::kName:
      return bytes;
    case Kind::kRecord:
      if (mode == LabelMode::kPayload && IsPrintableUtf8(payload())) return std::string(payload());
      return fmt::format("{}:{}", origin.file ? *origin.file : std::string("?"), origin.index);
    case Kind::kInt:
      return fmt::format("{}", int_value());
    case Kind::kPair:
      return fmt::format("{}:{}", pair_index(),
                         items.empty() ? std::string() : items[0].Label(mode));
    case Kind::kRecordId:
      if (mode == LabelMode::kPayload && payload_state == PayloadState::kLabelled) return bytes;
      return fmt::format("{}:{}", origin.file ? *origin.file : std::string("?"), origin.index);
    case Kind::kBatch:
      break;
  }
  return "[batch]";
}

void RecordLabel::Add(std::string_view piece) {
  scan_.Add(piece);
  // Past kLabelChars characters by this many bytes or more, whatever they are.
  constexpr size_t kKeep = 4 * (kLabelChars + 1);
  if (prefix_.size() < kKeep) {
    prefix_.append(piece.substr(0, std::min(piece.size(), kKeep - prefix_.size())));
  }
}

bool RecordLabel::Finish(std::string& label) {
  const bool printable = scan_.printable();
  if (printable) label = Abbreviate(prefix_, kLabelChars);
  scan_ = PrintableUtf8Scan();
  prefix_.clear();
  return printable;
}

uint64_t Element::Leaves() const { return kind != Kind::kBatch ? 1 : data::Leaves(items); }

uint64_t Element::ItemsPayloadBytes() const { return data::PayloadBytes(items); }

uint64_t Leaves(std::span<const Element> elements) {
  uint64_t n = 0;
  for (const Element& e : elements) n += e.Leaves();
  return n;
}

uint64_t PayloadBytes(std::span<const Element> elements) {
  uint64_t n = 0;
  for (const Element& e : elements) n += e.PayloadBytes();
  return n;
}

void OwnSmallPayloads(Element& e) {
  if (e.storage && e.view.size() <= kHeldCopyBytes) {
    e.bytes.assign(e.view);
    e.view = {};
    e.storage.reset();
  }
  for (Element& item : e.items) OwnSmallPayloads(item);
}

}  // namespace tfdist::data
