// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// PayloadFetcher: the payloads of records planned from index files, read by
// offset once DATA sharding has kept a worker's share.

#include <algorithm>
#include <functional>

#include "tfdist/data/dataset.h"
#include "tfdist/io/record_fetch.h"

namespace tfdist::data {

void PayloadFetcher::Add(Element& e) {
  if (e.kind == Element::Kind::kRecordRef) {
    pending_.push_back(&e);
    return;
  }
  for (Element& item : e.items) Add(item);
}

Status PayloadFetcher::Fetch() {
  // File by file (paths are interned: one pointer per path).
  std::stable_sort(pending_.begin(), pending_.end(), [](const Element* a, const Element* b) {
    return std::less<const std::string*>()(a->origin.file, b->origin.file);
  });
  std::vector<io::FetchRequest> requests;
  for (size_t first = 0; first < pending_.size();) {
    const std::string* file = pending_[first]->origin.file;
    size_t last = first;
    requests.clear();
    for (; last < pending_.size() && pending_[last]->origin.file == file; ++last) {
      io::FetchRequest r;
      r.offset = pending_[last]->origin.offset;
      r.payload_size = static_cast<uint64_t>(pending_[last]->value);
      requests.push_back(std::move(r));
    }
    if (file == nullptr) return Status::Internal("a record to fetch names no file");
    Status s = io::FetchRecords(*file, requests, &bytes_read_);
    if (!s.ok()) {
      pending_.clear();
      return s;
    }
    for (size_t k = first; k < last; ++k) {
      Element& e = *pending_[k];
      io::FetchRequest& r = requests[k - first];
      e.kind = Element::Kind::kRecord;
      e.value = 0;
      e.bytes.clear();
      e.storage = std::move(r.storage);
      e.view = r.payload;
    }
    first = last;
  }
  pending_.clear();
  return Status::OK();
}

}  // namespace tfdist::data
