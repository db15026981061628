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
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>

#include "file_index_internal.h"
#include "file_stamp.h"
#include "fs_util.h"
#include "record_format.h"
#include "record_scan.h"
#include "tfdist/io/atomic_file.h"
#include "tfdist/io/crc32c.h"
#include "tfdist/io/index_location.h"
#include "tfdist/io/storage.h"
#include "unique_fd.h"

namespace tfdist::io {
namespace {

// The most bytes an index of a `file_size`-byte file can hold: a line per
// record of at least kRecordFramingBytes bytes, each two numbers of at most 20 digits
// and a little white space. A larger one is not read.
uint64_t MaxIndexSize(uint64_t file_size) {
  constexpr uint64_t kMaxLineBytes = 2 * 20 + 8;
  return (file_size / kRecordFramingBytes + 1) * kMaxLineBytes;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

constexpr char kStampHeader[] = "tfdist-index-stamp 1";
// More than any stamp line holds (about 190 bytes at most).
constexpr size_t kMaxStampBytes = 512;

// The stamp file beside an index: what the index was written from, and the
// index itself, so that a stamp is never taken for another index's.
struct IndexStamp {
  FileStamp file;
  uint64_t index_bytes = 0;
  uint32_t index_crc = 0;
  std::optional<uint32_t> fingerprint;  // where change times are not trusted
};

std::string FormatStamp(const IndexStamp& s) {
  return fmt::format("{} {} {} {} {} {} {} {:08x} {}\n", kStampHeader, s.file.device, s.file.inode,
                     s.file.size, s.file.mtime_ns, s.file.ctime_ns, s.index_bytes, s.index_crc,
                     s.fingerprint ? fmt::format("{:08x}", *s.fingerprint) : "-");
}

// The fields of a stamp line after its header, each led by one space.
class StampFields {
 public:
  StampFields(std::string_view text, size_t header)
      : p_(text.data() + header), limit_(text.data() + text.size()) {}

  // Reads the next field as a number in `base`.
  template <typename T>
  bool Number(T& v, int base) {
    if (p_ == limit_ || *p_ != ' ') return false;
    ++p_;
    const auto [next, ec] = std::from_chars(p_, limit_, v, base);
    p_ = next;
    return ec == std::errc();
  }

  // What follows, its leading space included.
  std::string_view Rest() const { return {p_, static_cast<size_t>(limit_ - p_)}; }

 private:
  const char* p_;
  const char* const limit_;
};

std::optional<IndexStamp> ParseStamp(std::string_view text) {
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  if (!text.starts_with(kStampHeader)) return std::nullopt;
  StampFields f(text, sizeof kStampHeader - 1);
  auto field = [&](auto& v, int base) { return f.Number(v, base); };
  IndexStamp s;
  if (!field(s.file.device, 10) || !field(s.file.inode, 10) || !field(s.file.size, 10) ||
      !field(s.file.mtime_ns, 10) || !field(s.file.ctime_ns, 10) || !field(s.index_bytes, 10) ||
      !field(s.index_crc, 16)) {
    return std::nullopt;
  }
  if (f.Rest() == " -") return s;
  uint32_t fingerprint = 0;
  if (!field(fingerprint, 16) || !f.Rest().empty()) return std::nullopt;
  s.fingerprint = fingerprint;
  return s;
}

// Reads what the open file `fd` holds, up to `max` bytes. False on a read
// error.
bool ReadWhole(int fd, uint64_t max, std::string& text) {
  text.assign(static_cast<size_t>(max), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = read(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return true;
}

// How an index and what it describes are found: by path, or relative to
// open folders. Each opens read-only, without waiting on a FIFO (-1: not
// there).
struct IndexFiles {
  std::string index_path;  // as messages name it
  std::string path;        // the file it describes, as messages name it
  std::function<int()> open_stamp;
  std::function<bool(struct stat&)> stat_file;
  std::function<int()> open_file;
  // An object's index (path is a URL): the object as a listing or a stat
  // sees it now, whose stamp is its URL, size and version.
  std::optional<ObjectInfo> object;
};

// The stamp of an object's index, one line:
//   tfdist-object-stamp 1 SIZE INDEX_BYTES INDEX_CRC32C VERSION URL
// VERSION is the store's (S3's ETag with its quotes, Cloud Storage's
// generation), "-" when it has none; URL runs to the end of the line.
constexpr char kObjectStampHeader[] = "tfdist-object-stamp 1";

std::string FormatObjectStamp(const ObjectInfo& object, uint64_t index_bytes, uint32_t index_crc) {
  return fmt::format("{} {} {} {:08x} {} {}\n", kObjectStampHeader, object.size, index_bytes,
                     index_crc, object.version.empty() ? "-" : object.version, object.name);
}

// Whether `text` (a stamp file) is the stamp of `object` as it is now and of
// the index `index`; else `stale` says why.
bool ObjectStampFits(std::string_view text, const IndexFiles& f, std::string_view index,
                     std::string* stale) {
  const ObjectInfo& object = *f.object;
  const std::string stamp_path = f.index_path + kIndexStampSuffix;
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  uint64_t size = 0, index_bytes = 0;
  uint32_t index_crc = 0;
  std::string_view version, url;
  bool parsed = text.starts_with(kObjectStampHeader);
  if (parsed) {
    StampFields fields(text, sizeof kObjectStampHeader - 1);
    parsed = fields.Number(size, 10) && fields.Number(index_bytes, 10) &&
             fields.Number(index_crc, 16) && fields.Rest().starts_with(' ');
    if (parsed) {
      const std::string_view rest = fields.Rest().substr(1);
      const size_t space = rest.find(' ');
      parsed = space != std::string_view::npos;
      if (parsed) {
        version = rest.substr(0, space);
        url = rest.substr(space + 1);
      }
    }
  }
  if (!parsed) {
    *stale = fmt::format("{}: is not the stamp of an object's index", stamp_path);
    return false;
  }
  if (index_bytes != index.size() || index_crc != crc32c::Value(index)) {
    *stale =
        fmt::format("{} is not the index its stamp {} was written with", f.index_path, stamp_path);
    return false;
  }
  if (url != object.name) {
    *stale = fmt::format("{} was written for {}, not {}", f.index_path, url, object.name);
    return false;
  }
  const std::string_view now =
      object.version.empty() ? std::string_view("-") : std::string_view(object.version);
  if (version != now || size != object.size) {
    *stale = fmt::format(
        "{} was written for another version of {} (version {}, {} bytes; now {}, {} bytes)",
        f.index_path, object.name, version, size, now, object.size);
    return false;
  }
  return true;
}

// Whether the stamp beside the index describes the file as it is now and
// the index `text`: else `stale` says why.
bool StampFits(const IndexFiles& f, const struct stat& file_st, std::string_view text,
               std::string* stale) {
  const std::string stamp_path = f.index_path + kIndexStampSuffix;
  const UniqueFd stamp_fd(f.open_stamp());
  if (stamp_fd.get() < 0) {
    *stale = fmt::format(
        "{} has no stamp {} (written by an older tfdist, or by another tool), so it cannot be "
        "checked against {}",
        f.index_path, stamp_path, f.path);
    return false;
  }
  // One read: a stamp is one short line (a folder or FIFO there reads as
  // nothing, or fails, and is no stamp).
  char buffer[kMaxStampBytes + 1024];  // an object's stamp holds its URL too
  const ssize_t n = read(stamp_fd.get(), buffer, sizeof buffer);
  if (f.object) {
    return ObjectStampFits(n > 0 ? std::string_view(buffer, static_cast<size_t>(n)) : "", f, text,
                           stale);
  }
  const std::optional<IndexStamp> stamp =
      n > 0 ? ParseStamp(std::string_view(buffer, static_cast<size_t>(n))) : std::nullopt;
  if (!stamp) {
    *stale = fmt::format("{}: is not an index stamp", stamp_path);
    return false;
  }
  if (stamp->index_bytes != text.size() || stamp->index_crc != crc32c::Value(text)) {
    *stale =
        fmt::format("{} is not the index its stamp {} was written with", f.index_path, stamp_path);
    return false;
  }
  const std::string differs = StampDifference(stamp->file, FileStampOf(file_st));
  if (!differs.empty()) {
    *stale = fmt::format("{} was written for another version of {} (its {} changed)", f.index_path,
                         f.path, differs);
    return false;
  }
  if (stamp->fingerprint) {
    const UniqueFd file_fd(f.open_file());
    const std::optional<uint32_t> now =
        file_fd.get() < 0 ? std::nullopt : ContentFingerprint(file_fd.get(), stamp->file.size);
    if (now != stamp->fingerprint) {
      *stale = fmt::format("{} was written for another version of {} (its contents changed)",
                           f.index_path, f.path);
      return false;
    }
  }
  return true;
}

// Reads the index open as `fd` whole, and its stamp. Then checks every line
// against the file, calling on_record(offset, framed size) for each in
// order; on_record may have seen some records when the index turns out
// stale. The one place the format's rules live.
template <typename OnRecord>
std::optional<IndexedCount> ReadOpenIndex(const UniqueFd& fd, const IndexFiles& f,
                                          std::string* stale, OnRecord&& on_record) {
  struct stat file_st, index_st;
  if (fstat(fd.get(), &index_st) != 0 || !f.stat_file(file_st)) return std::nullopt;
  // Only a regular file is an index (a FIFO or device there is not one).
  if (!S_ISREG(index_st.st_mode)) return std::nullopt;
  IndexedCount out;
  out.index_path = f.index_path;
  const std::string_view path = f.path;
  const uint64_t file_size = static_cast<uint64_t>(file_st.st_size);
  const uint64_t index_size = static_cast<uint64_t>(index_st.st_size);
  if (index_size > MaxIndexSize(file_size)) {
    *stale = fmt::format("{} has {} bytes, more than an index of the {} bytes of {} can",
                         out.index_path, index_size, file_size, path);
    return std::nullopt;
  }
  std::string text;
  if (!ReadWhole(fd.get(), index_size, text)) {
    *stale = fmt::format("{}: cannot be read: {}", out.index_path, std::strerror(errno));
    return std::nullopt;
  }
  if (!StampFits(f, file_st, text, stale)) return std::nullopt;
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
    if (offset != end || size < kRecordFramingBytes) {
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
    c.payload_bytes += size - kRecordFramingBytes;
  }
  if (end != file_size) {
    *stale = fmt::format("{} covers {} bytes; {} has {}", out.index_path, end, path, file_size);
    return std::nullopt;
  }
  return out;
}

constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;

// ReadOpenIndex of IndexPathFor(path).
template <typename OnRecord>
std::optional<IndexedCount> ReadIndexOf(const std::string& path, std::string* stale,
                                        OnRecord&& on_record) {
  stale->clear();
  const std::string index_path = IndexPathFor(path);
  if (index_path.empty()) return std::nullopt;
  // O_NONBLOCK: a FIFO in the index's place must not wait for a writer.
  const UniqueFd fd(open(index_path.c_str(), kReadFlags));
  if (fd.get() < 0) return std::nullopt;
  const std::string stamp_path = index_path + kIndexStampSuffix;
  if (IsRemote(path)) {
    // The object as the glob's listing saw it (no request), else a stat.
    Result<ObjectInfo> object = StatObject(path);
    if (!object.ok()) return std::nullopt;
    const IndexFiles f{index_path,
                       path,
                       [&] { return open(stamp_path.c_str(), kReadFlags); },
                       [&](struct stat& st) {
                         st = {};
                         st.st_size = static_cast<off_t>(object->size);
                         return true;
                       },
                       [] { return -1; },
                       *object};
    return ReadOpenIndex(fd, f, stale, on_record);
  }
  const IndexFiles f{index_path,
                     path,
                     [&] { return open(stamp_path.c_str(), kReadFlags); },
                     [&](struct stat& st) { return stat(path.c_str(), &st) == 0; },
                     [&] { return open(path.c_str(), kReadFlags); },
                     std::nullopt};
  return ReadOpenIndex(fd, f, stale, on_record);
}

// Writes the index of `path` from `reader` (at its first record) and then
// its stamp, the line `stamp(index_bytes, index_crc)`, both atomically: the
// index first, so that a reader between the two finds the old stamp, which
// does not match the new index.
// No fsync: an index is derived data, and one torn by a crash no longer
// matches its stamp, so ReadIndex ignores it. (An fsync per file made
// indexing 100,000 small files take a minute.)
// The lines come from `fill(emit, count)`, which hands them to `emit` in
// order and adds their records to `count`.
using IndexLines =
    std::function<Status(const std::function<Status(std::string_view)>& emit, FileRecords& count)>;

Result<IndexedCount> WriteIndexAndStamp(
    const std::string& path, bool overwrite, const IndexLines& fill,
    const std::function<std::string(uint64_t index_bytes, uint32_t index_crc)>& stamp) {
  TFDIST_RETURN_IF_ERROR(MakeIndexFolderFor(DirName(path)));
  IndexedCount out;
  out.index_path = IndexPathFor(path);
  TFDIST_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(out.index_path, overwrite));
  TFDIST_ASSIGN_OR_RETURN(auto stamp_file,
                          AtomicFile::Create(out.index_path + kIndexStampSuffix, true));
  std::unique_ptr<ByteSink> sink = file->TakeSink(/*sync=*/false);
  uint64_t index_bytes = 0;
  uint32_t index_crc = 0;
  TFDIST_RETURN_IF_ERROR(fill(
      [&](std::string_view lines) {
        index_bytes += lines.size();
        index_crc = crc32c::Extend(index_crc, lines.data(), lines.size());
        return sink->Write(lines);
      },
      out.count));
  TFDIST_RETURN_IF_ERROR(sink->Finish());
  sink.reset();
  std::unique_ptr<ByteSink> stamp_sink = stamp_file->TakeSink(/*sync=*/false);
  TFDIST_RETURN_IF_ERROR(stamp_sink->Write(stamp(index_bytes, index_crc)));
  TFDIST_RETURN_IF_ERROR(stamp_sink->Finish());
  stamp_sink.reset();
  TFDIST_RETURN_IF_ERROR(file->Commit());
  TFDIST_RETURN_IF_ERROR(stamp_file->Commit());
  return out;
}

// The index lines of the records `reader` reads from where it is, up to the
// first that starts at or after `stop`, handed to `emit` in blocks of about
// 64 KiB. Error: the reader's.
Status IndexLinesOf(RecordReader& reader, uint64_t stop,
                    const std::function<Status(std::string_view)>& emit, FileRecords& count) {
  std::string lines;
  while (reader.position() < stop && reader.SkipRecord()) {
    lines += fmt::format("{} {}\n", reader.last_record_offset(),
                         reader.last_record_size() + kRecordFramingBytes);
    ++count.records;
    count.payload_bytes += reader.last_record_size();
    if (lines.size() >= (1 << 16)) {
      TFDIST_RETURN_IF_ERROR(emit(lines));
      lines.clear();
    }
  }
  TFDIST_RETURN_IF_ERROR(reader.status());
  return lines.empty() ? Status::OK() : emit(lines);
}

// A reader's lines to its end, for WriteIndexAndStamp.
IndexLines AllLinesOf(RecordReader& reader) {
  return [&reader](const std::function<Status(std::string_view)>& emit, FileRecords& count) {
    return IndexLinesOf(reader, std::numeric_limits<uint64_t>::max(), emit, count);
  };
}

// A reader of the file (or object) `path` to index; InvalidArgument when it
// is compressed (an index holds offsets into the uncompressed file).
Result<std::unique_ptr<RecordReader>> OpenToIndex(const std::string& path) {
  RecordReaderOptions options;
  options.compression = Compression::kAuto;
  TFDIST_ASSIGN_OR_RETURN(auto reader, RecordReader::Open(path, options));
  if (reader->compression() != Compression::kNone) {
    return Status::InvalidArgument(fmt::format(
        "{}: is {}-compressed; index files describe uncompressed TFRecord files (offsets into "
        "the file)",
        path, CompressionName(reader->compression())));
  }
  return reader;
}

// WriteIndex of an object: the index of the version the scan reads (the
// one a listing saw), stamped with its URL, size and version.
Result<IndexedCount> WriteObjectIndex(const std::string& path, bool overwrite) {
  TFDIST_ASSIGN_OR_RETURN(const ObjectInfo object, StatObject(path));
  TFDIST_ASSIGN_OR_RETURN(auto reader, OpenToIndex(path));
  return WriteIndexAndStamp(
      path, overwrite, AllLinesOf(*reader),
      [&](uint64_t bytes, uint32_t crc) { return FormatObjectStamp(object, bytes, crc); });
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
  const UniqueFd fd(openat(folder.index_fd, index_name.c_str(), kReadFlags));
  if (fd.get() < 0) return std::nullopt;
  const std::string stamp_name = index_name + kIndexStampSuffix;
  const IndexFiles f{
      JoinPath(folder.index_dir, index_name),
      JoinPath(folder.data_dir, name),
      [&] { return openat(folder.index_fd, stamp_name.c_str(), kReadFlags); },
      [&](struct stat& st) { return fstatat(folder.data_fd, name.c_str(), &st, 0) == 0; },
      [&] { return openat(folder.data_fd, name.c_str(), kReadFlags); },
      std::nullopt};
  return ReadOpenIndex(fd, f, stale, [](uint64_t, uint64_t) {});
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

Status StampIndex(const std::string& path, std::optional<bool> fingerprint) {
  if (IsRemote(path)) {
    return Status::InvalidArgument(
        fmt::format("{}: the index of an object is stamped as it is written (WriteIndex)", path));
  }
  const std::string index_path = IndexPathFor(path);
  const UniqueFd index_fd(open(index_path.c_str(), kReadFlags));
  const UniqueFd file_fd(open(path.c_str(), kReadFlags));
  struct stat index_st, file_st;
  std::string text;
  if (index_fd.get() < 0 || file_fd.get() < 0 || fstat(index_fd.get(), &index_st) != 0 ||
      fstat(file_fd.get(), &file_st) != 0 ||
      !ReadWhole(index_fd.get(), static_cast<uint64_t>(index_st.st_size), text)) {
    return ErrnoError(errno, StatusCode::kNotFound, index_path);
  }
  IndexStamp stamp;
  stamp.file = FileStampOf(file_st);
  stamp.index_bytes = text.size();
  stamp.index_crc = crc32c::Value(text);
  if (fingerprint.value_or(!CtimeIsTrusted(file_fd.get()))) {
    stamp.fingerprint = ContentFingerprint(file_fd.get(), stamp.file.size);
  }
  TFDIST_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(index_path + kIndexStampSuffix, true));
  std::unique_ptr<ByteSink> sink = file->TakeSink(/*sync=*/false);
  TFDIST_RETURN_IF_ERROR(sink->Write(FormatStamp(stamp)));
  TFDIST_RETURN_IF_ERROR(sink->Finish());
  sink.reset();
  return file->Commit();
}

namespace {

// The stamp of the local file `path` as it is now, before its scan (a
// change during or after it moves the change time, and then the index no
// longer fits), and a reader of it from its start for that scan;
// InvalidArgument when it is compressed (refused before anything is
// written).
struct StampedReader {
  IndexStamp stamp;
  std::unique_ptr<RecordReader> reader;
};
Result<StampedReader> StampBeforeScan(const std::string& path) {
  struct stat before;
  if (stat(path.c_str(), &before) != 0) {
    return ErrnoError(errno, StatusCode::kNotFound, path);
  }
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<RecordReader> reader, OpenToIndex(path));
  const UniqueFd file_fd(open(path.c_str(), kReadFlags));
  if (file_fd.get() < 0 || fstat(file_fd.get(), &before) != 0) {
    return ErrnoError(errno, StatusCode::kNotFound, path);
  }
  IndexStamp stamp;
  stamp.file = FileStampOf(before);
  if (!CtimeIsTrusted(file_fd.get())) {
    stamp.fingerprint = ContentFingerprint(file_fd.get(), stamp.file.size);
    if (!stamp.fingerprint) {
      return ErrnoError(errno, StatusCode::kDataLoss, fmt::format("{}: cannot be read", path));
    }
  }
  return StampedReader{stamp, std::move(reader)};
}

Result<IndexedCount> WriteStampedIndex(const std::string& path, bool overwrite, IndexStamp stamp,
                                       const IndexLines& fill) {
  return WriteIndexAndStamp(path, overwrite, fill, [&](uint64_t bytes, uint32_t crc) {
    stamp.index_bytes = bytes;
    stamp.index_crc = crc;
    return FormatStamp(stamp);
  });
}

}  // namespace

Result<IndexedCount> WriteIndex(const std::string& path, bool overwrite) {
  if (IsRemote(path)) return WriteObjectIndex(path, overwrite);
  TFDIST_ASSIGN_OR_RETURN(StampedReader stamped, StampBeforeScan(path));
  return WriteStampedIndex(path, overwrite, stamped.stamp, AllLinesOf(*stamped.reader));
}

RangeCount WriteIndexPart(const std::string& path, uint64_t from, uint64_t to,
                          const std::string& part_path) {
  RangeCount part;
  RecordReaderOptions options;  // uncompressed, both CRCs checked, as WriteIndex
  part.begin = from == 0 ? std::optional<uint64_t>(0) : FindRecordStart(path, options, from, to);
  part.end = from;
  if (!part.begin) return part;
  options.start_offset = *part.begin;
  auto fail = [&](Status s) {
    part.count.status = std::move(s);
    return part;
  };
  Result<std::unique_ptr<RecordReader>> reader = RecordReader::Open(path, options);
  if (!reader.ok()) return fail(reader.status());
  Result<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(part_path, /*overwrite=*/true);
  if (!file.ok()) return fail(file.status());
  std::unique_ptr<ByteSink> sink = (*file)->TakeSink(/*sync=*/false);
  Status s = IndexLinesOf(
      **reader, to, [&](std::string_view lines) { return sink->Write(lines); }, part.count);
  part.count.error_offset = (*reader)->error_offset();
  if (s.ok()) s = sink->Finish();
  sink.reset();
  if (s.ok()) s = (*file)->Commit();  // the leader removes it (IndexInParts::Finish)
  if (!s.ok()) return fail(s);
  part.end = (*reader)->position();
  return part;
}

struct IndexInParts::Stamp : IndexStamp {};

IndexInParts::IndexInParts(std::string path, bool overwrite, std::unique_ptr<Stamp> stamp)
    : path_(std::move(path)), overwrite_(overwrite), stamp_(std::move(stamp)) {}

IndexInParts::~IndexInParts() = default;

Result<std::unique_ptr<IndexInParts>> IndexInParts::Begin(const std::string& path, bool overwrite) {
  TFDIST_ASSIGN_OR_RETURN(const StampedReader stamped, StampBeforeScan(path));
  auto held = std::make_unique<Stamp>();
  static_cast<IndexStamp&>(*held) = stamped.stamp;
  return std::unique_ptr<IndexInParts>(new IndexInParts(path, overwrite, std::move(held)));
}

Result<IndexedCount> IndexInParts::Finish(std::span<const RangeCount> parts,
                                          std::span<const std::string> part_paths) {
  auto remove_parts = [&] {
    for (const std::string& p : part_paths) unlink(p.c_str());
  };
  Result<IndexedCount> written = WriteStampedIndex(
      path_, overwrite_, *stamp_,
      [&](const std::function<Status(std::string_view)>& emit, FileRecords& count) -> Status {
        uint64_t position = 0;
        for (size_t k = 0; k < parts.size(); ++k) {
          if (parts[k].begin != position) {
            // A part that does not go on from the last: the rest, from here.
            RecordReaderOptions o;
            o.start_offset = position;
            TFDIST_ASSIGN_OR_RETURN(auto reader, RecordReader::Open(path_, o));
            return IndexLinesOf(*reader, std::numeric_limits<uint64_t>::max(), emit, count);
          }
          TFDIST_RETURN_IF_ERROR(parts[k].count.status);
          TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<ByteSource> lines, OpenFileSource(part_paths[k]));
          std::string block(1 << 16, '\0');
          for (;;) {
            TFDIST_ASSIGN_OR_RETURN(const size_t n, lines->Read(block));
            if (n == 0) break;
            TFDIST_RETURN_IF_ERROR(emit(std::string_view(block.data(), n)));
          }
          count.records += parts[k].count.records;
          count.payload_bytes += parts[k].count.payload_bytes;
          position = parts[k].end;
        }
        return Status::OK();
      });
  remove_parts();
  return written;
}

}  // namespace tfdist::io
