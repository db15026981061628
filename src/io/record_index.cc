// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// DALI-format record indexes and directory indexes: writing them from a
// scan, and trusting them only when they fit their files.

#include "tfdist/io/record_index.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <iterator>
#include <limits>
#include <numeric>
#include <random>
#include <thread>

#include "fs_util.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/io/byte_stream.h"
#include "unique_fd.h"

namespace tfdist::io {
namespace {

// A base name a folder can hold.
bool ValidName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}

// Parses "SIZE MTIME_NS RECORDS PAYLOAD_BYTES NAME" from [p, end) (no newline).
bool ParseEntryLine(const char* p, const char* end, uint64_t& size, int64_t& mtime_ns,
                    FileRecords& count, std::string_view& name) {
  auto number = [&](auto& v) {
    const auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || next == end || *next != ' ') return false;
    p = next + 1;
    return true;
  };
  if (!number(size) || !number(mtime_ns) || !number(count.records) ||
      !number(count.payload_bytes)) {
    return false;
  }
  if (end > p && end[-1] == '\r') --end;
  name = std::string_view(p, static_cast<size_t>(end - p));
  return ValidName(name);
}

}  // namespace

namespace {

constexpr char kListingPrefix[] = "listing ";

// Fixed widths, so that the writer can fill the line in in place.
std::string ListingLine(const FolderStamp& f) {
  return fmt::format("{}{:019} {:019} {:020} {:020}\n", kListingPrefix,
                     std::max<int64_t>(f.ctime_ns, 0), std::max<int64_t>(f.mtime_ns, 0), f.inode,
                     f.device);
}

FolderStamp StampOf(const struct stat& st) {
  FolderStamp f;
  f.ctime_ns = CtimeNs(st);
  f.mtime_ns = MtimeNs(st);
  f.inode = static_cast<uint64_t>(st.st_ino);
  f.device = static_cast<uint64_t>(st.st_dev);
  return f;
}

// The header of `text` and where the lines after it start: kNone for
// another header.
enum class Version { kNone, kV1, kV2 };
Version HeaderOf(std::string_view text, size_t& body) {
  const size_t end = text.find('\n');
  std::string_view header = text.substr(0, end);
  if (!header.empty() && header.back() == '\r') header.remove_suffix(1);
  body = end == std::string_view::npos ? text.size() : end + 1;
  if (header == kDirectoryIndexHeader) return Version::kV2;
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
  return ValidName(name);
}

std::string BadLine(size_t line) {
  return fmt::format(
      "line {} is not \"SIZE MTIME_NS RECORDS PAYLOAD_BYTES NAME\" or \"- NAME\"", line);
}

std::string BadListing() {
  return fmt::format("line 2 is not \"{}CTIME_NS MTIME_NS INODE DEVICE\"", kListingPrefix);
}

std::string BadHeader() {
  return fmt::format("line 1 is not \"{}\" (another format or version)", kDirectoryIndexHeader);
}

}  // namespace

std::string FormatDirectoryIndex(const DirectoryIndexContents& contents) {
  std::string text = fmt::format("{}\n", kDirectoryIndexHeader);
  text += ListingLine(contents.listing);
  text.reserve(text.size() + contents.entries.size() * 64 + contents.others.size() * 32);
  // Both lists are sorted: merged, every line after the listing is sorted.
  auto e = contents.entries.begin();
  auto o = contents.others.begin();
  while (e != contents.entries.end() || o != contents.others.end()) {
    if (o == contents.others.end() || (e != contents.entries.end() && e->name < *o)) {
      fmt::format_to(std::back_inserter(text), "{} {} {} {} {}\n", e->size, e->mtime_ns,
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
  size_t at = 0;
  const Version version = HeaderOf(text, at);
  if (version == Version::kNone) return Status::InvalidArgument(BadHeader());
  DirectoryIndexContents out;
  size_t line = 1;
  if (version == Version::kV2) {
    ++line;
    if (!ParseListingLine(text, at, out.listing)) return Status::InvalidArgument(BadListing());
  }
  while (at < text.size()) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    ++line;
    DirectoryIndexEntry e;
    std::string_view name;
    if (version == Version::kV2 && ParseOtherLine(text.data() + at, text.data() + end, name)) {
      out.others.emplace_back(name);
    } else if (ParseEntryLine(text.data() + at, text.data() + end, e.size, e.mtime_ns, e.count,
                              name)) {
      e.name = name;
      out.entries.push_back(std::move(e));
    } else {
      return Status::InvalidArgument(BadLine(line));
    }
    at = end + 1;
  }
  return out;
}

namespace {

// One file examined for a directory index.
struct Examined {
  std::string name;
  DirectoryIndexEntry entry;
  bool from_file_index = false;
  std::string skipped;  // why it is left out; empty when it is listed
  bool regular = true;
  bool racy = false;  // its mtime is not older than the examination's start
};

// Stats, counts and stats `e` again; the counts hold only when both stats agree.
// `before_ns`: the file system's clock before the examination began.
void Examine(int dir_fd, const std::string& dir, int64_t before_ns, Examined& e) {
  e.skipped.clear();
  e.racy = false;
  struct stat st;
  if (fstatat(dir_fd, e.name.c_str(), &st, 0) != 0) {
    e.skipped = fmt::format("cannot stat: {}", std::strerror(errno));
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    e.regular = false;
    return;
  }
  e.entry.name = e.name;
  e.entry.size = static_cast<uint64_t>(st.st_size);
  e.entry.mtime_ns = MtimeNs(st);
  const std::string path = JoinPath(dir, e.name);
  std::string stale;
  if (std::optional<IndexedCount> c = ReadIndexAt(dir_fd, dir, e.name, &stale)) {
    e.entry.count = c->count;
    e.from_file_index = true;
  } else {
    e.from_file_index = false;
    RecordReaderOptions options;
    options.compression = Compression::kAuto;
    Result<std::unique_ptr<RecordReader>> reader = RecordReader::Open(path, options);
    // The reasons are listed after the path: drop it from the messages.
    auto reason = [&](const Status& status) {
      std::string_view m = status.message();
      if (m.starts_with(path) && m.substr(path.size()).starts_with(": "))
        m.remove_prefix(path.size() + 2);
      return std::string(m);
    };
    if (!reader.ok()) {
      e.skipped = reason(reader.status());
      return;
    }
    if ((*reader)->compression() != Compression::kNone) {
      e.skipped = fmt::format("{}-compressed", CompressionName((*reader)->compression()));
      return;
    }
    e.entry.count = {};
    while ((*reader)->SkipRecord()) {
      ++e.entry.count.records;
      e.entry.count.payload_bytes += (*reader)->last_record_size();
    }
    if (!(*reader)->status().ok()) {
      e.skipped = reason((*reader)->status());
      return;
    }
  }
  struct stat after;
  if (fstatat(dir_fd, e.name.c_str(), &after, 0) != 0 || after.st_size != st.st_size ||
      MtimeNs(after) != e.entry.mtime_ns) {
    e.skipped = "changed while it was counted";
    return;
  }
  e.racy = e.entry.mtime_ns >= before_ns;
}

const std::string& Name(const std::string& s) { return s; }
const std::string& Name(const DirectoryIndexEntry& e) { return e.name; }

// The names in the folder open as `dir_fd` but "." and ".." and `except`.
Result<std::vector<std::string>> ListNames(int dir_fd, const std::string& dir,
                                           std::string_view except) {
  const int fd = dup(dir_fd);
  DIR* d = fd < 0 ? nullptr : fdopendir(fd);
  if (d == nullptr) {
    if (fd >= 0) close(fd);
    return Status::NotFound(
        fmt::format("{}: cannot list the folder: {}", dir.empty() ? "." : dir, std::strerror(errno)));
  }
  rewinddir(d);  // the duplicate shares its offset with dir_fd
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string_view name(e->d_name);
    if (name == "." || name == ".." || name == except) continue;
    names.emplace_back(name);
  }
  closedir(d);
  return names;
}

// Whether `out_dir` is the folder open as `dir_fd`.
bool SameFolder(int dir_fd, const std::string& out_dir) {
  struct stat a, b;
  return fstat(dir_fd, &a) == 0 && stat(out_dir.empty() ? "." : out_dir.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Whether `name` can be written on an index line (and read back the same).
bool Writable(std::string_view name) {
  return name.find('\n') == std::string_view::npos && name.find('\r') == std::string_view::npos;
}

// The clock that stamps a folder's files: the time a file of it gets when
// touched, read back (so, on NFS, the server's clock, and in whole seconds
// where the file system keeps those). Uses the index being written.
class FsClock {
 public:
  explicit FsClock(int fd) : fd_(fd) {}
  bool Now(int64_t& ns) const {
    struct stat st;
    if (fd_ < 0 || futimens(fd_, nullptr) != 0 || fstat(fd_, &st) != 0) return false;
    ns = CtimeNs(st);
    return true;
  }
  // Waits (up to 3 s) until Now() > t.
  bool WaitPast(int64_t t) const {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3);
    for (int64_t now = 0; Now(now);) {
      if (now > t) return true;
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return false;
  }

 private:
  int fd_;
};

// Fills in the listing line of the index `index_fd` (the file just renamed
// into the folder open as `dir_fd`, listed as `names`: sorted, the index
// included). Returns whether it did. The names must be current for as long
// as the folder's change time stays what is recorded, so:
// 1. A probe file is created, then removed, and each must move the folder's
//    change time (some network and FUSE file systems never change it), to a
//    time between two readings of `clock` (the same clock stamps the folder).
// 2. `clock` must pass the folder's change time: any later change of an
//    entry gets a later one, also where times are kept in whole seconds.
// 3. Then the folder is listed again: it must hold exactly `names`, and its
//    stamp must be as it was after the probe.
bool RecordListing(int dir_fd, const std::string& dir, int index_fd, const FsClock& clock,
                   const std::vector<std::string>& names) {
  struct stat st;
  if (fstat(dir_fd, &st) != 0 || !clock.WaitPast(CtimeNs(st))) return false;
  int64_t first = 0, second = 0, third = 0;
  std::random_device rd;
  const std::string probe =
      fmt::format("{}.tmp-probe-{}-{:08x}", kDirectoryIndexName, getpid(), rd());
  if (!clock.Now(first)) return false;
  // A temporary file like any other: a forced exit (a second Ctrl-C) removes it.
  const std::string probe_path = JoinPath(dir, probe);
  RegisterTempFile(probe_path);
  struct Unregister {
    const std::string& path;
    ~Unregister() { UnregisterTempFile(path); }
  } unregister{probe_path};
  const int probe_fd = openat(dir_fd, probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (probe_fd < 0) return false;
  close(probe_fd);
  const bool made = fstat(dir_fd, &st) == 0;
  const int64_t with_probe = CtimeNs(st);
  const bool timed = clock.Now(second) && clock.WaitPast(with_probe);
  const bool removed = unlinkat(dir_fd, probe.c_str(), 0) == 0 && fstat(dir_fd, &st) == 0;
  const FolderStamp stamp = StampOf(st);
  if (!made || !timed || !removed || !clock.Now(third) || with_probe < first ||
      with_probe > second || stamp.ctime_ns <= with_probe || stamp.ctime_ns > third) {
    return false;
  }
  if (!clock.WaitPast(stamp.ctime_ns)) return false;
  Result<std::vector<std::string>> now = ListNames(dir_fd, dir, "");
  if (!now.ok()) return false;
  std::sort(now->begin(), now->end());
  if (*now != names || fstat(dir_fd, &st) != 0 || !(StampOf(st) == stamp)) return false;
  const std::string line = ListingLine(stamp);
  const off_t at = static_cast<off_t>(sizeof kDirectoryIndexHeader);  // after the header's \n
  return pwrite(index_fd, line.data(), line.size() - 1, at) ==
         static_cast<ssize_t>(line.size() - 1);
}

}  // namespace

Result<DirectoryIndexReport> WriteDirectoryIndex(const std::string& dir_in,
                                                 const std::string& output_dir, bool overwrite) {
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const UniqueFd dir_fd(open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0) {
    return Status::NotFound(
        fmt::format("{}: cannot open the folder: {}", dir, std::strerror(errno)));
  }
  DirectoryIndexReport report;
  const std::string& out_dir = output_dir.empty() ? dir : output_dir;
  report.index_path = JoinPath(out_dir, kDirectoryIndexName);
  // Fail before counting anything when the index exists.
  TFDIST_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(report.index_path, overwrite));

  // The folder's names, but for our own temporary file (it becomes the
  // index). Those of the files to count, and all of them for the listing.
  const std::string_view own_temp = BaseName(file->temp_path());
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::string> names, ListNames(dir_fd.get(), dir, own_temp));
  std::vector<Examined> files;
  for (const std::string& name : names) {
    if (name == kDirectoryIndexName || name.ends_with(".idx") ||
        !Writable(name) ||
        (name.starts_with('.') && name.find(".tmp-") != std::string::npos)) {
      continue;
    }
    files.emplace_back().name = name;
  }
  // The folder's clock, read from the index being written (its temporary
  // file, then the index itself; only its times are changed).
  const UniqueFd clock_fd(open(file->temp_path().c_str(), O_WRONLY | O_CLOEXEC));
  const FsClock clock(clock_fd.get());
  int64_t before_ns = 0;
  if (!clock.Now(before_ns)) {
    return Status::Internal(fmt::format("{}: cannot read the folder's clock: {}",
                                        file->temp_path(), std::strerror(errno)));
  }
  tbb::parallel_for(size_t{0}, files.size(),
                    [&](size_t i) { Examine(dir_fd.get(), dir, before_ns, files[i]); });
  // A file whose mtime is not older than the examination's start could change
  // again within that mtime's tick without changing size or mtime: count it
  // again once the folder's clock has passed its mtime. Then every entry is
  // older than its examination, and any later change of the file shows.
  // (Not for an mtime more than a second ahead: the file is left out.)
  int64_t racy_until = 0;
  for (const Examined& e : files) {
    if (e.regular && e.skipped.empty() && e.racy && e.entry.mtime_ns <= before_ns + 1'000'000'000)
      racy_until = std::max(racy_until, e.entry.mtime_ns);
  }
  if (racy_until > 0 && clock.WaitPast(racy_until) && clock.Now(before_ns)) {
    for (Examined& e : files) {
      if (e.regular && e.skipped.empty() && e.racy && e.entry.mtime_ns <= racy_until) {
        Examine(dir_fd.get(), dir, before_ns, e);
      }
    }
  }
  for (Examined& e : files) {  // still racy (or the clock could not pass it)
    if (e.regular && e.skipped.empty() && e.racy) {
      e.skipped = "modified while it was counted, or in the future";
    }
  }

  std::vector<DirectoryIndexEntry> entries;
  for (Examined& e : files) {
    if (!e.regular) continue;
    if (!e.skipped.empty()) {
      report.skipped.emplace_back(JoinPath(dir, e.name), std::move(e.skipped));
      continue;
    }
    ++report.files;
    report.total.records += e.entry.count.records;
    report.total.payload_bytes += e.entry.count.payload_bytes;
    report.from_file_indexes += e.from_file_index ? 1 : 0;
    entries.push_back(std::move(e.entry));
  }
  std::sort(
      entries.begin(), entries.end(),
      [](const DirectoryIndexEntry& a, const DirectoryIndexEntry& b) { return a.name < b.name; });
  std::sort(report.skipped.begin(), report.skipped.end());
  DirectoryIndexContents contents;
  contents.entries = std::move(entries);
  // Every other name of the folder, and the index's own, for the listing.
  names.emplace_back(kDirectoryIndexName);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::set_difference(names.begin(), names.end(), contents.entries.begin(),
                      contents.entries.end(), std::back_inserter(contents.others),
                      [](const auto& a, const auto& b) { return Name(a) < Name(b); });
  const bool listable = std::all_of(names.begin(), names.end(), Writable);
  if (!listable) contents.others.clear();  // a name the text cannot hold: no listing
  // No fsync, as for FILE.idx: the index is derived data, checked entry by
  // entry against its files when read.
  std::unique_ptr<ByteSink> sink = file->TakeSink(/*sync=*/false);
  TFDIST_RETURN_IF_ERROR(sink->Write(FormatDirectoryIndex(contents)));
  TFDIST_RETURN_IF_ERROR(sink->Finish());
  sink.reset();
  TFDIST_RETURN_IF_ERROR(file->Commit());
  // clock_fd is the index now. Found again by name, it must still be the
  // same file: another tfdist index may have replaced it meanwhile.
  struct stat written, now;
  if (listable && SameFolder(dir_fd.get(), out_dir) && fstat(clock_fd.get(), &written) == 0 &&
      fstatat(dir_fd.get(), kDirectoryIndexName, &now, 0) == 0 && now.st_ino == written.st_ino &&
      now.st_dev == written.st_dev) {
    report.listing = RecordListing(dir_fd.get(), dir, clock_fd.get(), clock, names);
  }
  return report;
}

DirectoryIndex::~DirectoryIndex() {
  if (map_ != nullptr) munmap(map_, map_size_);
  if (dir_fd_ >= 0) close(dir_fd_);
}

DirectoryIndex::State DirectoryIndex::CheckEntry(const Entry& e) const {
  // fstatat needs the name NUL-terminated; the text is not written to, so
  // that checks can run while other threads read it.
  char name[NAME_MAX + 1];
  if (e.name.size() > NAME_MAX) return State::kStale;
  std::memcpy(name, e.name.data(), e.name.size());
  name[e.name.size()] = '\0';
  struct stat st;
  const bool matches = fstatat(dir_fd_, name, &st, 0) == 0 && S_ISREG(st.st_mode) &&
                       static_cast<uint64_t>(st.st_size) == e.size && MtimeNs(st) == e.mtime_ns &&
                       e.mtime_ns < index_mtime_ns_;
  return matches ? State::kMatches : State::kStale;
}

std::unique_ptr<DirectoryIndex> DirectoryIndex::Open(const std::string& dir) {
  std::unique_ptr<DirectoryIndex> index(new DirectoryIndex());
  index->dir_fd_ = open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (index->dir_fd_ < 0) return index;
  const UniqueFd fd(openat(index->dir_fd_, kDirectoryIndexName, O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return index;
  index->found_ = true;
  struct stat index_st;
  if (fstat(fd.get(), &index_st) != 0) {
    index->problem_ = fmt::format("cannot be read: {}", std::strerror(errno));
    return index;
  }
  index->index_mtime_ns_ = MtimeNs(index_st);
  // Mapped, not read: tens of megabytes for a million files, used in place.
  if (index_st.st_size > 0) {
    void* map = mmap(nullptr, static_cast<size_t>(index_st.st_size), PROT_READ,
                     MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
    if (map == MAP_FAILED) {
      index->problem_ = fmt::format("cannot be read: {}", std::strerror(errno));
      return index;
    }
    index->map_ = map;
    index->map_size_ = static_cast<size_t>(index_st.st_size);
  }
  const std::string_view text(static_cast<const char*>(index->map_), index->map_size_);
  size_t body = 0;
  const Version version = HeaderOf(text, body);
  if (version == Version::kNone) {
    index->problem_ = BadHeader();
    return index;
  }
  FolderStamp listing;
  if (version == Version::kV2 && !ParseListingLine(text, body, listing)) {
    index->problem_ = BadListing();
    return index;
  }
  struct stat dir_st;
  index->listing_current_ =
      !listing.empty() && fstat(index->dir_fd_, &dir_st) == 0 && StampOf(dir_st) == listing;
  // Chunks of whole lines, parsed in parallel, each into its own part of
  // entries_ (sized by counting lines first).
  constexpr size_t kChunk = 1 << 18;
  std::vector<size_t> starts;
  for (size_t at = body; at < text.size();) {
    starts.push_back(at);
    const size_t nl = text.find('\n', std::min(text.size(), at + kChunk));
    at = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  starts.push_back(text.size());
  const size_t num_chunks = starts.size() - 1;
  std::vector<size_t> first(num_chunks + 1, 0);  // each chunk's first entry
  tbb::parallel_for(size_t{0}, num_chunks, [&](size_t c) {
    const std::string_view chunk = text.substr(starts[c], starts[c + 1] - starts[c]);
    first[c + 1] = static_cast<size_t>(std::count(chunk.begin(), chunk.end(), '\n')) +
                   (chunk.ends_with('\n') ? 0 : 1);
  });
  std::partial_sum(first.begin(), first.end(), first.begin());
  index->entries_.resize(first.back());
  std::atomic<size_t> bad_line_at{std::numeric_limits<size_t>::max()};
  tbb::parallel_for(size_t{0}, num_chunks, [&](size_t c) {
    Entry* e = index->entries_.data() + first[c];
    for (size_t at = starts[c]; at < starts[c + 1]; ++e) {
      size_t end = text.find('\n', at);
      if (end == std::string_view::npos || end > starts[c + 1]) end = starts[c + 1];
      const char* p = text.data() + at;
      const char* q = text.data() + end;
      bool ok;
      if (version == Version::kV2 && ParseOtherLine(p, q, e->name)) {
        e->counted = false;
        e->state = State::kStale;
        ok = true;
      } else {
        ok = ParseEntryLine(p, q, e->size, e->mtime_ns, e->count, e->name);
      }
      if (!ok) {
        size_t seen = bad_line_at.load();
        while (at < seen && !bad_line_at.compare_exchange_weak(seen, at)) {
        }
        break;
      }
      at = end + 1;
    }
  });
  if (const size_t at = bad_line_at.load(); at != std::numeric_limits<size_t>::max()) {
    index->problem_ =
        BadLine(1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n'));
    index->entries_.clear();
    index->listing_current_ = false;
    return index;
  }
  auto by_name = [](const Entry& a, const Entry& b) { return a.name < b.name; };
  if (!std::is_sorted(index->entries_.begin(), index->entries_.end(), by_name)) {
    std::stable_sort(index->entries_.begin(), index->entries_.end(), by_name);
  }
  return index;
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
  out.found = found_;
  out.problem = problem_;
  out.matched.assign(names.size(), 0);
  out.counts.resize(names.size());
  if (!problem_.empty()) return out;
  // Merge the sorted names with the sorted entries (a repeated entry name:
  // the first one counts).
  std::vector<std::pair<size_t, size_t>> unchecked;  // name, entry
  size_t e = 0;
  for (size_t i = 0; i < names.size() && e < entries_.size(); ++i) {
    while (e < entries_.size() && entries_[e].name < names[i]) ++e;
    if (e == entries_.size() || entries_[e].name != names[i]) continue;
    if (!entries_[e].counted) {  // listed, not counted: no entry for the file
      ++e;
      continue;
    }
    switch (entries_[e].state) {
      case State::kMatches:
        out.matched[i] = 1;
        out.counts[i] = entries_[e].count;
        break;
      case State::kStale:
        ++out.stale;
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
      out.matched[i] = 1;
      out.counts[i] = entries_[j].count;
    } else {
      ++stale;
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
