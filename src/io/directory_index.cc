// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Directory indexes read: one parser of the text, in parallel chunks, for
// DirectoryIndex (the index in place) and ParseDirectoryIndex (its copy).

#include "tfdist/io/directory_index.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>

#include "directory_index_line.h"
#include "file_stamp.h"
#include "fs_util.h"
#include "tfdist/io/index_location.h"
#include "tfdist/io/storage.h"
#include "unique_fd.h"

namespace tfdist::io {
namespace {

// A line after the listing: an entry, or (counted false) a "- NAME" line.
struct IndexLine {
  std::string_view name;  // into the text
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;
  uint32_t fingerprint = 0;
  bool has_fingerprint = false;
  bool stamped = false;  // version 3: change time, inode and device are there
  FileRecords count;
  bool counted = true;
  // An object's entry (the object format): its version, into the text,
  // and the compression it was counted through.
  std::string_view version;
  Compression compression = Compression::kNone;
};

// Parses an entry line from [p, end) (no newline): "SIZE MTIME_NS CTIME_NS
// INODE DEVICE FINGERPRINT RECORDS PAYLOAD_BYTES NAME" when `stamped`, else
// (versions 1 and 2) "SIZE MTIME_NS RECORDS PAYLOAD_BYTES NAME".
bool ParseEntryLine(const char* p, const char* end, bool stamped, IndexLine& e) {
  auto number = [&](auto& v, int base = 10) {
    const auto [next, ec] = std::from_chars(p, end, v, base);
    if (ec != std::errc() || next == end || *next != ' ') return false;
    p = next + 1;
    return true;
  };
  e.stamped = stamped;
  if (!number(e.size) || !number(e.mtime_ns)) return false;
  if (stamped) {
    if (!number(e.ctime_ns) || !number(e.inode) || !number(e.device)) return false;
    if (end - p >= 2 && p[0] == '-' && p[1] == ' ') {
      p += 2;
    } else if (!number(e.fingerprint, 16)) {
      return false;
    } else {
      e.has_fingerprint = true;
    }
  }
  if (!number(e.count.records) || !number(e.count.payload_bytes)) return false;
  if (end > p && end[-1] == '\r') --end;
  e.name = std::string_view(p, static_cast<size_t>(end - p));
  return IndexableName(e.name);
}

// The header of `text` and where the lines after it start: kNone for
// another header.
enum class Version { kNone, kV1, kV2, kV3 };
Version HeaderOf(std::string_view text, size_t& body) {
  const size_t end = text.find('\n');
  std::string_view header = text.substr(0, end);
  if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
  body = end == std::string_view::npos ? text.size() : end + 1;
  if (header == kDirectoryIndexHeader) return Version::kV3;
  if (header == kDirectoryIndexHeaderV2) return Version::kV2;
  if (header == kDirectoryIndexHeaderV1) return Version::kV1;
  return Version::kNone;
}

// Parses the listing line of a version 2 index at `body`, and moves `body`
// past it. False when it is not one.
bool ParseListingLine(std::string_view text, size_t& body, FolderStamp& f) {
  size_t end = text.find('\n', body);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(body, end - body);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  if (!line.starts_with(kListingPrefix)) return false;
  line.remove_prefix(sizeof kListingPrefix - 1);
  const char* p = line.data();
  const char* const limit = p + line.size();
  auto number = [&](auto& v, bool last) {
    const auto [next, ec] = std::from_chars(p, limit, v);
    if (ec != std::errc() || (last ? next != limit : next == limit || *next != ' ')) return false;
    p = last ? next : next + 1;
    return true;
  };
  if (!number(f.ctime_ns, false) || !number(f.mtime_ns, false) || !number(f.inode, false) ||
      !number(f.device, true) || f.ctime_ns < 0 || f.mtime_ns < 0) {
    return false;
  }
  body = std::min(text.size(), end + 1);
  return true;
}

// A "- NAME" line: a name of the folder that is not counted.
bool ParseOtherLine(const char* p, const char* end, std::string_view& name) {
  if (end - p < 2 || p[0] != '-' || p[1] != ' ') return false;
  if (end[-1] == '\r') --end;
  name = std::string_view(p + 2, static_cast<size_t>(end - p - 2));
  return IndexableName(name);
}

std::string BadLine(size_t line) {
  return fmt::format(
      "line {} is not \"SIZE MTIME_NS CTIME_NS INODE DEVICE FINGERPRINT RECORDS PAYLOAD_BYTES "
      "NAME\" or \"- NAME\"",
      line);
}

std::string BadListing() {
  return fmt::format("line 2 is not \"{}CTIME_NS MTIME_NS INODE DEVICE\"", kListingPrefix);
}

std::string BadHeader() {
  return fmt::format("line 1 is not \"{}\" (another format or version)", kDirectoryIndexHeader);
}

// Parses an object index's `text` into `lines` (in the text's order; Line
// is an IndexLine) and the folder its header names. Sequential: an object
// folder is listed page by page anyway, and 100,000 lines parse in
// milliseconds. Error: InvalidArgument naming the first bad line.
template <typename Line>
Status ParseObjectIndexText(std::string_view text, std::string_view& folder,
                            std::vector<Line>& lines) {
  size_t at = text.find('\n');
  std::string_view header = text.substr(0, at);
  if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
  const std::string_view prefix = kObjectDirectoryIndexHeader;
  if (!header.starts_with(prefix) || header.size() < prefix.size() + 2 ||
      header[prefix.size()] != ' ') {
    return Status::InvalidArgument(
        fmt::format("line 1 is not \"{} FOLDER_URL\" (another format or version)", prefix));
  }
  folder = header.substr(prefix.size() + 1);
  size_t number = 1;
  while (at != std::string_view::npos && at + 1 < text.size()) {
    const size_t begin = at + 1;
    at = text.find('\n', begin);
    std::string_view line = text.substr(begin, at == std::string_view::npos ? at : at - begin);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    IndexLine& e = lines.emplace_back();
    const char* p = line.data();
    const char* const end = p + line.size();
    auto number_field = [&](uint64_t& v) {
      const auto [next, ec] = std::from_chars(p, end, v);
      if (ec != std::errc() || next == end || *next != ' ') return false;
      p = next + 1;
      return true;
    };
    auto word = [&](std::string_view& w) {
      const char* space = std::find(p, end, ' ');
      if (space == end || space == p) return false;
      w = std::string_view(p, static_cast<size_t>(space - p));
      p = space + 1;
      return true;
    };
    std::string_view compression;
    bool ok = number_field(e.size) && word(compression);
    if (ok) {
      const Result<Compression> c = ParseCompression(compression);
      ok = c.ok() && *c != Compression::kAuto;
      if (ok) e.compression = *c;
    }
    ok = ok && number_field(e.count.records) && number_field(e.count.payload_bytes) &&
         word(e.version);
    if (ok) {
      e.name = std::string_view(p, static_cast<size_t>(end - p));
      ok = IndexableName(e.name);
    }
    if (!ok) {
      lines.clear();
      return Status::InvalidArgument(fmt::format(
          "line {} is not \"SIZE COMPRESSION RECORDS PAYLOAD_BYTES VERSION NAME\"", number));
    }
  }
  return Status::OK();
}

// Parses `text` into its listing and `lines` (in the text's order; Line
// is an IndexLine). The lines are cut into chunks of whole lines, parsed in
// parallel, each into its own part of `lines` (sized by counting lines
// first). Error: InvalidArgument naming the first bad line.
template <typename Line>
Status ParseIndexText(std::string_view text, FolderStamp& listing, std::vector<Line>& lines) {
  size_t body = 0;
  const Version version = HeaderOf(text, body);
  if (version == Version::kNone) return Status::InvalidArgument(BadHeader());
  if (version != Version::kV1 && !ParseListingLine(text, body, listing)) {
    return Status::InvalidArgument(BadListing());
  }
  constexpr size_t kChunk = 1 << 18;
  std::vector<size_t> starts;
  for (size_t at = body; at < text.size();) {
    starts.push_back(at);
    const size_t nl = text.find('\n', std::min(text.size(), at + kChunk));
    at = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  starts.push_back(text.size());
  const size_t num_chunks = starts.size() - 1;
  std::vector<size_t> first(num_chunks + 1, 0);  // each chunk's first line
  tbb::parallel_for(size_t{0}, num_chunks, [&](size_t c) {
    const std::string_view chunk = text.substr(starts[c], starts[c + 1] - starts[c]);
    first[c + 1] = static_cast<size_t>(std::count(chunk.begin(), chunk.end(), '\n')) +
                   (chunk.ends_with('\n') ? 0 : 1);
  });
  std::partial_sum(first.begin(), first.end(), first.begin());
  lines.resize(first.back());
  std::atomic<size_t> bad_line_at{std::numeric_limits<size_t>::max()};
  tbb::parallel_for(size_t{0}, num_chunks, [&](size_t c) {
    Line* e = lines.data() + first[c];
    for (size_t at = starts[c]; at < starts[c + 1]; ++e) {
      size_t end = text.find('\n', at);
      if (end == std::string_view::npos || end > starts[c + 1]) end = starts[c + 1];
      const char* p = text.data() + at;
      const char* q = text.data() + end;
      IndexLine& line = *e;
      line.counted = !(version != Version::kV1 && ParseOtherLine(p, q, line.name));
      if (line.counted && !ParseEntryLine(p, q, version == Version::kV3, line)) {
        size_t seen = bad_line_at.load();
        while (at < seen && !bad_line_at.compare_exchange_weak(seen, at)) {
        }
        break;
      }
      at = end + 1;
    }
  });
  if (const size_t at = bad_line_at.load(); at != std::numeric_limits<size_t>::max()) {
    lines.clear();
    return Status::InvalidArgument(BadLine(
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')));
  }
  return Status::OK();
}

Status UnindexableName(std::string_view name) {
  std::string shown;  // the name with its control bytes escaped, as a C string
  for (const char c : name) {
    shown += c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\0' ? "\\0" : std::string(1, c);
  }
  return Status::InvalidArgument(
      fmt::format("a directory index line cannot hold the name \"{}\"", shown));
}

// Reads the index open as `fd`, a regular file, whole into `text`
// (malloc'ed, so that it can be shrunk in place once parsed), of `size`
// bytes. Error: InvalidArgument "not a regular file", or for a stat or read
// error; FailedPrecondition "changed while read" when what was read is not
// what the stats before and after say the file holds (another process
// truncated or rewrote it meanwhile).
Status ReadIndexFile(int fd, std::unique_ptr<char[], DirectoryIndex::FreeText>& text,
                     size_t& size) {
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return Status::InvalidArgument(fmt::format("cannot be read: {}", std::strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) return Status::InvalidArgument("not a regular file");
  size = static_cast<size_t>(st.st_size);
  text.reset(static_cast<char*>(std::malloc(size + 1)));  // one more byte, to see it grow
  if (text == nullptr) return Status::ResourceExhausted("cannot be read: out of memory");
  size_t done = 0;
  while (done < size + 1) {
    const ssize_t n = pread(fd, text.get() + done, size + 1 - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return Status::InvalidArgument(fmt::format("cannot be read: {}", std::strerror(errno)));
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  struct stat after;
  if (done != size || fstat(fd, &after) != 0 || after.st_size != st.st_size ||
      MtimeNs(after) != MtimeNs(st) || CtimeNs(after) != CtimeNs(st)) {
    return Status::FailedPrecondition("changed while read");
  }
  return Status::OK();
}

}  // namespace

Result<std::string> FormatDirectoryIndex(const DirectoryIndexContents& contents) {
  for (const std::string& name : contents.others) {
    if (!IndexableName(name)) return UnindexableName(name);
  }
  for (const DirectoryIndexEntry& e : contents.entries) {
    if (!IndexableName(e.name)) return UnindexableName(e.name);
  }
  std::string text = fmt::format("{}\n", kDirectoryIndexHeader);
  text += ListingLine(contents.listing);
  text.reserve(text.size() + contents.entries.size() * 64 + contents.others.size() * 32);
  // Both lists are sorted: merged, every line after the listing is sorted.
  auto e = contents.entries.begin();
  auto o = contents.others.begin();
  while (e != contents.entries.end() || o != contents.others.end()) {
    if (o == contents.others.end() || (e != contents.entries.end() && e->name < *o)) {
      fmt::format_to(std::back_inserter(text), "{} {} {} {} {} {} {} {} {}\n", e->size, e->mtime_ns,
                     e->ctime_ns, e->inode, e->device,
                     e->fingerprint ? fmt::format("{:08x}", *e->fingerprint) : "-",
                     e->count.records, e->count.payload_bytes, e->name);
      ++e;
    } else {
      fmt::format_to(std::back_inserter(text), "- {}\n", *o);
      ++o;
    }
  }
  return text;
}

Result<DirectoryIndexContents> ParseDirectoryIndex(std::string_view text) {
  DirectoryIndexContents out;
  std::vector<IndexLine> lines;
  TFDIST_RETURN_IF_ERROR(ParseIndexText(text, out.listing, lines));
  for (const IndexLine& line : lines) {
    if (line.counted) {
      DirectoryIndexEntry& e = out.entries.emplace_back();
      e.name = line.name;
      e.size = line.size;
      e.mtime_ns = line.mtime_ns;
      e.ctime_ns = line.ctime_ns;
      e.inode = line.inode;
      e.device = line.device;
      if (line.has_fingerprint) e.fingerprint = line.fingerprint;
      e.count = line.count;
    } else {
      out.others.emplace_back(line.name);
    }
  }
  return out;
}

Result<std::string> FormatObjectDirectoryIndex(std::string_view folder_url,
                                               std::span<const DirectoryIndexEntry> entries) {
  std::string text = fmt::format("{} {}\n", kObjectDirectoryIndexHeader, folder_url);
  text.reserve(text.size() + entries.size() * 96);
  for (const DirectoryIndexEntry& e : entries) {
    if (!IndexableName(e.name)) return UnindexableName(e.name);
    if (e.version.empty() || e.version.find_first_of(" \t\r\n") != std::string::npos) {
      return Status::InvalidArgument(
          fmt::format("{}: an index line cannot hold the version \"{}\"", e.name, e.version));
    }
    fmt::format_to(std::back_inserter(text), "{} {} {} {} {} {}\n", e.size,
                   CompressionName(e.compression), e.count.records, e.count.payload_bytes,
                   e.version, e.name);
  }
  return text;
}

Result<std::vector<DirectoryIndexEntry>> ParseObjectDirectoryIndex(std::string_view text,
                                                                   std::string* folder_url) {
  std::vector<IndexLine> lines;
  std::string_view folder;
  TFDIST_RETURN_IF_ERROR(ParseObjectIndexText(text, folder, lines));
  *folder_url = folder;
  std::vector<DirectoryIndexEntry> out;
  out.reserve(lines.size());
  for (const IndexLine& line : lines) {
    DirectoryIndexEntry& e = out.emplace_back();
    e.name = line.name;
    e.size = line.size;
    e.count = line.count;
    e.version = line.version;
    e.compression = line.compression;
  }
  return out;
}

enum class DirectoryIndex::State : uint8_t { kUnchecked, kMatches, kStale };

// The state of an uncounted ("- NAME") line is never looked at.
struct DirectoryIndex::Entry : IndexLine {
  State state = State::kUnchecked;
};

DirectoryIndex::~DirectoryIndex() {
  if (folder_.data_fd >= 0) close(folder_.data_fd);
  if (folder_.index_fd >= 0) close(folder_.index_fd);
}

DirectoryIndex::State DirectoryIndex::CheckEntry(const Entry& e) const {
  if (objects_) {
    // The object as the glob's listing saw it (else a stat): its size and
    // version, no byte of it.
    const Result<ObjectInfo> now = StatObject(JoinPath(folder_.data_dir, e.name));
    return now.ok() && !e.version.empty() && now->version == e.version && now->size == e.size
               ? State::kMatches
               : State::kStale;
  }
  // fstatat needs the name NUL-terminated; the text is not written to, so
  // that checks can run while other threads read it.
  char name[NAME_MAX + 1];
  if (e.name.size() > NAME_MAX) return State::kStale;
  std::memcpy(name, e.name.data(), e.name.size());
  name[e.name.size()] = '\0';
  struct stat st;
  if (!e.stamped || fstatat(folder_.data_fd, name, &st, 0) != 0 || !S_ISREG(st.st_mode)) {
    return State::kStale;
  }
  const FileStamp indexed{e.device, e.inode, e.size, e.mtime_ns, e.ctime_ns};
  if (!(FileStampOf(st) == indexed)) return State::kStale;
  if (!e.has_fingerprint) return State::kMatches;
  const UniqueFd fd(openat(folder_.data_fd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  const std::optional<uint32_t> now =
      fd.get() < 0 ? std::nullopt : ContentFingerprint(fd.get(), e.size);
  return now == e.fingerprint ? State::kMatches : State::kStale;
}

std::unique_ptr<DirectoryIndex> DirectoryIndex::Open(const std::string& dir) {
  std::unique_ptr<DirectoryIndex> index(new DirectoryIndex());
  IndexedFolder& folder = index->folder_;
  folder.data_dir = dir;
  // An object folder's index is in the cache (the object format); a local
  // "s3:" folder is not theirs.
  if (IsRemote(dir)) return OpenObjects(std::move(index));
  folder.data_fd = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder.data_fd < 0) return index;
  folder.index_dir = IndexFolderFor(dir);
  if (folder.index_dir.empty()) return index;
  folder.index_fd = open(folder.index_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (folder.index_fd < 0) return index;
  index->index_path_ = JoinPath(folder.index_dir, kDirectoryIndexName);
  // O_NONBLOCK: a FIFO in the index's place must not wait for a writer.
  const UniqueFd fd(
      openat(folder.index_fd, kDirectoryIndexName, O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return index;
  index->found_ = true;
  // Read, not mapped: another process may truncate the file meanwhile, and
  // a mapped page past the new end would kill this one with SIGBUS. Then
  // the text no longer is what the stats said, and the index is ignored.
  std::unique_ptr<char[], FreeText> buffer;
  size_t size = 0;
  if (Status s = ReadIndexFile(fd.get(), buffer, size); !s.ok()) {
    index->problem_ = s.message();
    return index;
  }
  const std::string_view text(buffer.get(), size);
  FolderStamp listing;
  if (Status s = ParseIndexText(text, listing, index->entries_); !s.ok()) {
    index->problem_ = s.message();
    return index;
  }
  // The names alone, moved to the front of the text (the lines are in text
  // order, and a name never starts before the names moved so far end), which
  // is then shrunk to them: the text and its names are never both held.
  index->KeepNames(std::move(buffer), text);
  struct stat dir_st;
  index->listing_current_ =
      !listing.empty() && fstat(folder.data_fd, &dir_st) == 0 && StampOf(dir_st) == listing;
  auto by_name = [](const Entry& a, const Entry& b) { return a.name < b.name; };
  if (!std::is_sorted(index->entries_.begin(), index->entries_.end(), by_name)) {
    std::stable_sort(index->entries_.begin(), index->entries_.end(), by_name);
  }
  return index;
}

void DirectoryIndex::KeepNames(std::unique_ptr<char[], FreeText> buffer, std::string_view text) {
  // Each entry's name (and an object's version, which comes before it in
  // the line) moved to the front of the text: the lines are in text order,
  // and a field never starts before the bytes moved so far end.
  size_t kept = 0;
  auto move = [&](std::string_view field) {
    if (field.empty()) return;  // (a local entry's version)
    const size_t from = static_cast<size_t>(field.data() - text.data());
    std::memmove(buffer.get() + kept, buffer.get() + from, field.size());
    kept += field.size();
  };
  for (const Entry& e : entries_) {
    move(e.version);
    move(e.name);
  }
  if (char* shrunk = static_cast<char*>(std::realloc(buffer.get(), std::max<size_t>(kept, 1)))) {
    static_cast<void>(buffer.release());
    buffer.reset(shrunk);
  }
  names_ = std::move(buffer);
  kept = 0;
  for (Entry& e : entries_) {
    e.version = std::string_view(names_.get() + kept, e.version.size());
    kept += e.version.size();
    e.name = std::string_view(names_.get() + kept, e.name.size());
    kept += e.name.size();
  }
}

std::unique_ptr<DirectoryIndex> DirectoryIndex::OpenObjects(std::unique_ptr<DirectoryIndex> index) {
  index->objects_ = true;
  const std::string& dir = index->folder_.data_dir;
  index->folder_.index_dir = IndexFolderFor(dir);
  if (index->folder_.index_dir.empty()) return index;
  index->index_path_ = JoinPath(index->folder_.index_dir, kDirectoryIndexName);
  const UniqueFd fd(open(index->index_path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) return index;
  index->found_ = true;
  std::unique_ptr<char[], FreeText> buffer;
  size_t size = 0;
  if (Status s = ReadIndexFile(fd.get(), buffer, size); !s.ok()) {
    index->problem_ = s.message();
    return index;
  }
  const std::string_view text(buffer.get(), size);
  std::string_view folder;
  if (Status s = ParseObjectIndexText(text, folder, index->entries_); !s.ok()) {
    index->problem_ = s.message();
    return index;
  }
  if (folder != dir) {
    index->entries_.clear();
    index->problem_ = fmt::format("it is the index of {}, not of {}", folder, dir);
    return index;
  }
  index->KeepNames(std::move(buffer), text);
  auto by_name = [](const Entry& a, const Entry& b) { return a.name < b.name; };
  if (!std::is_sorted(index->entries_.begin(), index->entries_.end(), by_name)) {
    std::stable_sort(index->entries_.begin(), index->entries_.end(), by_name);
  }
  return index;
}

bool DirectoryIndex::ListingIsCurrent(const std::string& dir) {
  if (IsRemote(dir)) return false;  // an object folder is listed, always
  const std::string index_dir = IndexFolderFor(dir);
  if (index_dir.empty()) return false;
  const UniqueFd fd(
      open(JoinPath(index_dir, kDirectoryIndexName).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat index_st;
  if (fd.get() < 0 || fstat(fd.get(), &index_st) != 0 || !S_ISREG(index_st.st_mode)) return false;
  char head[512];
  const ssize_t n = pread(fd.get(), head, sizeof head, 0);
  if (n <= 0) return false;
  const std::string_view text(head, static_cast<size_t>(n));
  size_t body = 0;
  FolderStamp listing;
  struct stat dir_st;
  const Version version = HeaderOf(text, body);
  return (version == Version::kV2 || version == Version::kV3) &&
         text.find('\n', body) != std::string_view::npos && ParseListingLine(text, body, listing) &&
         !listing.empty() && stat(dir.empty() ? "." : dir.c_str(), &dir_st) == 0 &&
         StampOf(dir_st) == listing;
}

void DirectoryIndex::Check(const std::function<bool(std::string_view)>& check) {
  tbb::parallel_for(tbb::blocked_range<size_t>(0, entries_.size(), 1024),
                    [&](const tbb::blocked_range<size_t>& r) {
                      for (size_t i = r.begin(); i != r.end(); ++i) {
                        Entry& e = entries_[i];
                        if (e.counted && e.state == State::kUnchecked && check(e.name)) {
                          e.state = CheckEntry(e);
                        }
                      }
                    });
}

std::optional<std::vector<std::string_view>> DirectoryIndex::Listing() const {
  if (!listing_current_ || !problem_.empty()) return std::nullopt;
  std::vector<std::string_view> names;
  names.reserve(entries_.size());
  for (const Entry& e : entries_) names.push_back(e.name);
  return names;
}

DirectoryLookup DirectoryIndex::LookUp(std::span<const std::string_view> names) const {
  DirectoryLookup out;
  out.matched.assign(names.size(), 0);
  out.counts.resize(names.size());
  const LookUpStats stats = LookUpEach(
      names.size(), [&](size_t i) { return names[i]; },
      [&](size_t i, const FileRecords& records, Compression) {
        out.matched[i] = 1;
        out.counts[i] = records;
      });
  out.found = found_;
  out.problem = problem_;
  out.stale = stats.stale;
  return out;
}

DirectoryIndex::LookUpStats DirectoryIndex::LookUpEach(
    size_t count, const std::function<std::string_view(size_t)>& name,
    const std::function<void(size_t, const FileRecords&, Compression)>& keep, Compression read_as,
    const std::function<void(size_t)>& stale_name) const {
  LookUpStats out;
  if (!problem_.empty()) return out;
  // Merge the sorted names with the sorted entries (a repeated entry name:
  // the first one counts).
  std::vector<std::pair<size_t, size_t>> unchecked;  // name, entry
  size_t e = 0;
  for (size_t i = 0; i < count && e < entries_.size(); ++i) {
    const std::string_view n = name(i);
    while (e < entries_.size() && entries_[e].name < n) ++e;
    if (e == entries_.size() || entries_[e].name != n) continue;
    if (!entries_[e].counted ||  // listed, not counted: no entry for the file
        (read_as != Compression::kAuto && read_as != entries_[e].compression)) {
      ++e;
      continue;
    }
    switch (entries_[e].state) {
      case State::kMatches:
        keep(i, entries_[e].count, entries_[e].compression);
        break;
      case State::kStale:
        ++out.stale;
        if (stale_name) stale_name(i);
        break;
      case State::kUnchecked:
        unchecked.emplace_back(i, e);
        break;
    }
    ++e;
  }
  std::atomic<uint64_t> stale{0};
  tbb::parallel_for(size_t{0}, unchecked.size(), [&](size_t k) {
    const auto [i, j] = unchecked[k];
    if (CheckEntry(entries_[j]) == State::kMatches) {
      keep(i, entries_[j].count, entries_[j].compression);
    } else {
      ++stale;
      if (stale_name) stale_name(i);
    }
  });
  out.stale += stale.load();
  return out;
}

DirectoryLookup LookUpDirectoryIndex(const std::string& dir,
                                     std::span<const std::string_view> names) {
  return DirectoryIndex::Open(dir)->LookUp(names);
}

}  // namespace tfdist::io
