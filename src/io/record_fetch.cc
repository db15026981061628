// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Positioned reads of chosen records.

#include "tfdist/io/record_fetch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <numeric>

#include "record_format.h"
#include "tfdist/io/storage.h"
#include "unique_fd.h"

namespace tfdist::io {
namespace {

// Records this close are read together. 0: only adjacent records, so that
// a worker reads no byte of another worker's records.
constexpr uint64_t kMaxGap = 0;
// The most one read covers (a single larger record is read alone).
constexpr uint64_t kMaxRun = uint64_t{4} << 20;

// Reads [offset, offset + n) into `dst`; returns the bytes read before the
// end of the file, or -1 (errno set) on an error.
int64_t ReadAt(int fd, char* dst, uint64_t n, uint64_t offset) {
  uint64_t done = 0;
  while (done < n) {
    const ssize_t got = pread(fd, dst + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    if (got == 0) break;
    done += static_cast<uint64_t>(got);
  }
  return static_cast<int64_t>(done);
}

}  // namespace

Status FetchRecords(const std::string& path, std::span<FetchRequest> requests,
                    uint64_t* bytes_read) {
  if (requests.empty()) return Status::OK();
  // The bytes come from a file (pread) or an object (ReadAt of the version
  // a listing saw).
  std::unique_ptr<RandomAccessObject> object;
  uint64_t file_size = 0;
  if (IsRemote(path)) {
    TFDIST_ASSIGN_OR_RETURN(const Location loc, ParseLocation(path));
    TFDIST_ASSIGN_OR_RETURN(const ObjectInfo info, StatObject(path));
    TFDIST_ASSIGN_OR_RETURN(object, StorageFor(loc.scheme).Open(info));
    file_size = info.size;
  }
  const UniqueFd fd(object ? -1 : open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!object) {
    if (fd.get() < 0) {
      return ErrnoError(errno, StatusCode::kNotFound, fmt::format("{}: cannot open", path));
    }
    struct stat st;
    if (fstat(fd.get(), &st) != 0) {
      return ErrnoError(errno, StatusCode::kDataLoss, fmt::format("{}: cannot stat", path));
    }
    file_size = static_cast<uint64_t>(st.st_size);
  }
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return requests[a].offset < requests[b].offset; });
  // Saturates: a payload_size no file can hold must not wrap around 2^64.
  auto end_of = [&](size_t i) {
    const FetchRequest& r = requests[i];
    if (r.offset > UINT64_MAX - kRecordFramingBytes ||
        r.payload_size > UINT64_MAX - kRecordFramingBytes - r.offset) {
      return UINT64_MAX;
    }
    return r.offset + r.payload_size + kRecordFramingBytes;
  };
  for (size_t first = 0; first < order.size();) {
    // A run: records in offset order, each starting within kMaxGap of the
    // end so far, up to kMaxRun bytes.
    const uint64_t begin = requests[order[first]].offset;
    uint64_t end = end_of(order[first]);
    size_t last = first + 1;
    while (last < order.size()) {
      const FetchRequest& r = requests[order[last]];
      const uint64_t next_end = std::max(end, end_of(order[last]));
      // (A record inside the run so far, a duplicate, always joins it.)
      if (r.offset > end + kMaxGap || (next_end > end && next_end - begin > kMaxRun)) break;
      end = next_end;
      ++last;
    }
    // Only bytes the file has are read: what a request claims past its end
    // is reported as truncation below, never allocated.
    const uint64_t n = std::min(end, std::max(begin, file_size)) - begin;
    auto buffer = std::make_shared<std::string>();
    buffer->resize(n);
    int64_t got = static_cast<int64_t>(n);
    if (object) {
      TFDIST_RETURN_IF_ERROR(object->ReadAt(begin, std::span<char>(buffer->data(), n)));
    } else if ((got = ReadAt(fd.get(), buffer->data(), n, begin)) < 0) {
      return ErrnoError(errno, StatusCode::kDataLoss,
                        fmt::format("{}: read error at {}", path, begin));
    }
    if (bytes_read != nullptr) *bytes_read += static_cast<uint64_t>(got);
    const uint64_t available = static_cast<uint64_t>(got);
    for (size_t k = first; k < last; ++k) {
      FetchRequest& r = requests[order[k]];
      const uint64_t at = r.offset - begin;
      const uint64_t data_offset = r.offset + kRecordHeaderSize;
      if (at > available || available - at < kRecordHeaderSize) {
        return Status::DataLoss(fmt::format(
            "{}: truncated record at {}: {} of the {} header bytes before the end of the file",
            path, r.offset, available > at ? available - at : 0, kRecordHeaderSize));
      }
      const char* header = buffer->data() + at;
      const uint64_t length = DecodeFixed64(header);
      if (!HeaderIsValid(std::string_view(header, kRecordHeaderSize))) {
        return Status::DataLoss(
            fmt::format("{}: corrupted record at {}: length CRC mismatch (length field {:#018x})",
                        path, r.offset, length));
      }
      if (length != r.payload_size) {
        return Status::DataLoss(fmt::format("{}: corrupted record at {}: the length field says {} "
                                            "bytes, the index {}; the index does not describe "
                                            "the file",
                                            path, r.offset, length, r.payload_size))
            .WithAdvice(Remedy::kRewriteFileIndex, path);
      }
      const uint64_t rest = available - at - kRecordHeaderSize;
      if (rest < kRecordFooterSize || rest - kRecordFooterSize < length) {
        return Status::DataLoss(fmt::format(
            "{}: truncated record at {}: {} of the {} payload and footer bytes before the end "
            "of the file",
            path, rest == 0 ? r.offset : data_offset, rest, PayloadAndFooterBytes(length)));
      }
      const char* payload = header + kRecordHeaderSize;
      const uint32_t crc = crc32c::Value(payload, length);
      if (crc32c::Unmask(DecodeFixed32(payload + length)) != crc) {
        return Status::DataLoss(fmt::format(
            "{}: corrupted record at {}: data CRC mismatch in the {}-byte payload of the record "
            "at {}",
            path, data_offset, length, r.offset));
      }
      r.storage = buffer;
      r.payload = std::string_view(payload, length);
    }
    first = last;
  }
  return Status::OK();
}

}  // namespace tfdist::io
