// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// FILE.idx: one reader of the DALI format for counts, extents and
// boundaries, trusting an index only while it fits its file; and the writer.

#include "tfdist/io/file_index.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <string_view>

#include "file_index_internal.h"
#include "fs_util.h"
#include "record_format.h"
#include "tfdist/io/atomic_file.h"
#include "tfdist/io/index_location.h"
#include "unique_fd.h"

namespace tfdist::io {
namespace {

constexpr uint64_t kFraming = kRecordHeaderSize + kRecordFooterSize;

// The most bytes an index of a `file_size`-byte file can hold: a line per
// record of at least kFraming bytes, each two numbers of at most 20 digits
// and a little white space. A larger one is not read.
uint64_t MaxIndexSize(uint64_t file_size) {
  constexpr uint64_t kMaxLineBytes = 2 * 20 + 8;
  return (file_size / kFraming + 1) * kMaxLineBytes;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Reads the index open as `fd` whole; `stat_file` stats the file it
// describes. Then checks every line against the file, calling
// on_record(offset, framed size) for each in order; on_record may have seen
// some records when the index turns out stale. The one place the format's
// rules live.
template <typename StatFile, typename OnRecord>
std::optional<IndexedCount> ReadOpenIndex(const UniqueFd& fd, StatFile stat_file,
                                          std::string index_path, std::string_view path,
                                          std::string* stale, OnRecord&& on_record) {
  struct stat file_st, index_st;
  if (fstat(fd.get(), &index_st) != 0 || !stat_file(file_st)) return std::nullopt;
  // Only a regular file is an index (a FIFO or device there is not one).
  if (!S_ISREG(index_st.st_mode)) return std::nullopt;
  IndexedCount out;
  out.index_path = std::move(index_path);
  // What can be judged from the stats is, before a byte is read.
  if (MtimeNs(index_st) < MtimeNs(file_st)) {
    *stale = fmt::format("{} is older than {}", out.index_path, path);
    return std::nullopt;
  }
  const uint64_t file_size = static_cast<uint64_t>(file_st.st_size);
  const uint64_t index_size = static_cast<uint64_t>(index_st.st_size);
  if (index_size > MaxIndexSize(file_size)) {
    *stale = fmt::format("{} has {} bytes, more than an index of the {} bytes of {} can",
                         out.index_path, index_size, file_size, path);
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(index_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = read(fd.get(), text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  uint64_t end = 0;
  const char* p = text.data();
  const char* const limit = p + text.size();
  auto number = [&](uint64_t& v) {
    while (p < limit && IsSpace(*p)) ++p;
    const auto [next, ec] = std::from_chars(p, limit, v);
    p = next;
    return ec == std::errc();
  };
  FileRecords& c = out.count;
  for (;;) {
    while (p < limit && IsSpace(*p)) ++p;
    if (p == limit) break;
    uint64_t offset = 0, size = 0;
    if (!number(offset) || !number(size)) {
      *stale = fmt::format("{}: line {} is not \"offset size\"", out.index_path, c.records + 1);
      return std::nullopt;
    }
    if (offset != end || size < kFraming) {
      *stale =
          fmt::format("{}: record {} does not follow the one before", out.index_path, c.records);
      return std::nullopt;
    }
    // end <= file_size here; a size past the file (which could wrap
    // offset + size around 2^64) does not describe it.
    if (size > file_size - end) {
      *stale = fmt::format("{}: record {} ends past the {} bytes of {}", out.index_path, c.records,
                           file_size, path);
      return std::nullopt;
    }
    on_record(offset, size);
    end = offset + size;
    ++c.records;
    c.payload_bytes += size - kFraming;
  }
  if (end != file_size) {
    *stale = fmt::format("{} covers {} bytes; {} has {}", out.index_path, end, path, file_size);
    return std::nullopt;
  }
  return out;
}

// ReadOpenIndex of IndexPathFor(path).
template <typename OnRecord>
std::optional<IndexedCount> ReadIndexOf(const std::string& path, std::string* stale,
                                        OnRecord&& on_record) {
  stale->clear();
  std::string index_path = IndexPathFor(path);
  if (index_path.empty()) return std::nullopt;
  // O_NONBLOCK: a FIFO in the index's place must not wait for a writer.
  const UniqueFd fd(open(index_path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return std::nullopt;
  auto stat_file = [&](struct stat& st) { return stat(path.c_str(), &st) == 0; };
  return ReadOpenIndex(fd, stat_file, std::move(index_path), path, stale, on_record);
}

}  // namespace

std::string IndexPathFor(const std::string& path) {
  const std::string folder = IndexFolderFor(DirName(path));
  if (folder.empty()) return "";
  return fmt::format("{}/{}.idx", folder, BaseName(path));
}

std::optional<IndexedCount> ReadIndex(const std::string& path, std::string* stale) {
  return ReadIndexOf(path, stale, [](uint64_t, uint64_t) {});
}

std::optional<IndexedCount> ReadIndexAt(const IndexedFolder& folder, const std::string& name,
                                        std::string* stale) {
  stale->clear();
  if (folder.index_fd < 0 || folder.data_fd < 0) return std::nullopt;
  const std::string index_name = name + ".idx";
  const UniqueFd fd(
      openat(folder.index_fd, index_name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return std::nullopt;
  auto stat_file = [&](struct stat& st) {
    return fstatat(folder.data_fd, name.c_str(), &st, 0) == 0;
  };
  return ReadOpenIndex(fd, stat_file, JoinPath(folder.index_dir, index_name),
                       JoinPath(folder.data_dir, name), stale, [](uint64_t, uint64_t) {});
}

std::optional<std::vector<RecordExtent>> ReadRecordExtents(const std::string& path,
                                                           std::string* stale) {
  std::vector<RecordExtent> extents;
  auto add = [&](uint64_t offset, uint64_t size) { extents.push_back({offset, size}); };
  if (!ReadIndexOf(path, stale, add)) return std::nullopt;
  return extents;
}

std::optional<std::vector<uint64_t>> ReadRecordBoundaries(const std::string& path,
                                                          std::string* stale) {
  std::vector<uint64_t> ends{0};
  auto add = [&](uint64_t offset, uint64_t size) { ends.push_back(offset + size); };
  if (!ReadIndexOf(path, stale, add)) return std::nullopt;
  return ends;
}

Result<IndexedCount> WriteIndex(const std::string& path, bool overwrite) {
  struct stat before;
  if (stat(path.c_str(), &before) != 0) {
    return ErrnoError(errno, StatusCode::kNotFound, path);
  }
  RecordReaderOptions options;
  options.compression = Compression::kAuto;
  TFDIST_ASSIGN_OR_RETURN(auto reader, RecordReader::Open(path, options));
  if (reader->compression() != Compression::kNone) {
    return Status::InvalidArgument(fmt::format(
        "{}: is {}-compressed; index files describe uncompressed TFRecord files (offsets into "
        "the file)",
        path, CompressionName(reader->compression())));
  }
  TFDIST_RETURN_IF_ERROR(MakeIndexFolderFor(DirName(path)));
  IndexedCount out;
  out.index_path = IndexPathFor(path);
  TFDIST_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(out.index_path, overwrite));
  // No fsync: an index is derived data, and one torn by a crash no longer
  // ends at its file's size, so ReadIndex ignores it. (An fsync per file made
  // indexing 100,000 small files take a minute.)
  std::unique_ptr<ByteSink> sink = file->TakeSink(/*sync=*/false);
  std::string lines;
  while (reader->SkipRecord()) {
    lines += fmt::format("{} {}\n", reader->last_record_offset(), reader->last_record_size() + 16);
    ++out.count.records;
    out.count.payload_bytes += reader->last_record_size();
    if (lines.size() >= (1 << 16)) {
      TFDIST_RETURN_IF_ERROR(sink->Write(lines));
      lines.clear();
    }
  }
  TFDIST_RETURN_IF_ERROR(reader->status());
  TFDIST_RETURN_IF_ERROR(sink->Write(lines));
  TFDIST_RETURN_IF_ERROR(sink->Finish());
  sink.reset();
  TFDIST_RETURN_IF_ERROR(file->CloseFile());
  // The file's time as it was before the scan: the index then describes
  // the file exactly while the file's mtime has not moved past it.
  const struct timespec times[2] = {{0, UTIME_NOW}, before.st_mtim};
  if (utimensat(AT_FDCWD, file->temp_path().c_str(), times, 0) != 0) {
    return ErrnoError(errno, StatusCode::kInvalidArgument,
                      fmt::format("{}: cannot set its time", file->temp_path()));
  }
  TFDIST_RETURN_IF_ERROR(file->Commit());
  return out;
}

}  // namespace tfdist::io
