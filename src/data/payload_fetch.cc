// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// PayloadFetcher: the payloads of record ids read by index, fetched by
// offset once DATA sharding has kept a worker's share.

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <numeric>

#include "tfdist/data/dataset.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/record_fetch.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::data {
namespace {

// The records `requests` name, by their index in the file (`index`,
// parallel to `requests`), read by scanning `path` from its start with both
// CRCs checked, because what is at the offsets its index `index_path` gave
// is not what the index says (`disagreement`): the file was rewritten since
// it was indexed, or is damaged. The scan tells which.
// Error: the scan's (a damaged file fails it as it would any read);
// DataLoss naming the index when a record asked for is past the file's end.
Status FetchByScanning(const std::string& path, const std::string& index_path,
                       const Status& disagreement, std::span<const uint64_t> index,
                       std::span<io::FetchRequest> requests, uint64_t& bytes_read) {
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return index[a] < index[b]; });
  io::RecordReaderOptions options;
  options.compression = io::Compression::kNone;
  TFDIST_ASSIGN_OR_RETURN(auto reader, io::RecordReader::Open(path, options));
  size_t next = 0;
  std::string_view record;
  while (next < order.size() && reader->ReadRecord(record)) {
    const uint64_t at = reader->records_read() - 1;
    if (index[order[next]] != at) continue;
    auto payload = std::make_shared<const std::string>(record);
    for (; next < order.size() && index[order[next]] == at; ++next) {
      requests[order[next]].storage = payload;
      requests[order[next]].payload = *payload;
    }
  }
  bytes_read += reader->position();
  TFDIST_RETURN_IF_ERROR(reader->status());
  if (next < order.size()) {
    return Status::DataLoss(fmt::format("{}: has {} records, and record {} was planned from {}, "
                                        "which does not describe the file ({})",
                                        path, reader->records_read(), index[order[next]],
                                        index_path, disagreement.message()))
        .WithAdvice(Remedy::kRewriteFileIndex, path);
  }
  return Status::OK();
}

}  // namespace

void PayloadFetcher::Add(Element& e) {
  if (e.kind == Element::Kind::kRecordId) {
    if (e.payload_state == Element::PayloadState::kUnread) pending_.push_back(&e);
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
  std::vector<uint64_t> indexes;  // each request's record index in its file
  RecordLabel label;
  for (size_t first = 0; first < pending_.size();) {
    const std::string* file = pending_[first]->origin.file;
    size_t last = first;
    requests.clear();
    indexes.clear();
    for (; last < pending_.size() && pending_[last]->origin.file == file; ++last) {
      io::FetchRequest r;
      r.offset = pending_[last]->origin.offset;
      r.payload_size = pending_[last]->payload_size();
      requests.push_back(std::move(r));
      indexes.push_back(pending_[last]->origin.index);
    }
    if (file == nullptr) return Status::Internal("a record to fetch names no file");
    Status s = io::FetchRecords(*file, requests, &bytes_read_);
    if (!s.ok() && s.code() == StatusCode::kDataLoss) {
      // Planned from FILE.idx, the records are not where it says: read
      // them by scanning, and say which index was wrong.
      const std::string index_path = io::IndexPathFor(*file);
      Status scanned = FetchByScanning(*file, index_path, s, indexes, requests, bytes_read_);
      if (scanned.ok()) {
        std::string note = fmt::format(
            "{} does not describe {} ({}): its records were read by scanning the file; write "
            "the index again",
            index_path, *file, s.message());
        if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) {
          notes_.push_back(std::move(note));
        }
      }
      s = std::move(scanned);
    }
    if (!s.ok()) {
      pending_.clear();
      return s;
    }
    for (size_t k = first; k < last; ++k) {
      Element& e = *pending_[k];
      io::FetchRequest& r = requests[k - first];
      if (record_ids_ != RecordIds::kNone) {  // read and checked: its id stays
        e.payload_state = Element::PayloadState::kChecked;
        e.bytes.clear();
        if (record_ids_ == RecordIds::kLabelled) {
          label.Add(r.payload);
          if (label.Finish(e.bytes)) e.payload_state = Element::PayloadState::kLabelled;
        }
        continue;
      }
      e.kind = Element::Kind::kRecord;
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
