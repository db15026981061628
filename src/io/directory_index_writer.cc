// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Directory indexes written: every file of a folder counted, and the
// folder's names recorded once they are proven current.

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <tbb/parallel_for.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <random>
#include <thread>

#include "directory_index_line.h"
#include "file_stamp.h"
#include "fs_util.h"
#include "storage_listed.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/io/atomic_file.h"
#include "tfdist/io/directory_index.h"
#include "tfdist/io/file_count.h"
#include "tfdist/io/index_location.h"
#include "tfdist/io/storage.h"
#include "unique_fd.h"

namespace tfdist::io {
namespace {

// One file examined for a directory index.
struct Examined {
  std::string name;
  DirectoryIndexEntry entry;
  bool from_file_index = false;
  std::string skipped;  // why it is left out; empty when it is listed
  bool regular = true;
  bool racy = false;  // its change time is not older than the examination's start
};

// Stats, counts and stats `e` again; the counts hold only when both stats
// agree. `before_ns`: the file system's clock before the examination began;
// `fingerprint`: the folder's change times are not trusted
// (CtimeIsTrusted), so the entry gets its file's ContentFingerprint.
void Examine(const IndexedFolder& folder, int64_t before_ns, bool fingerprint, Examined& e) {
  const int dir_fd = folder.data_fd;
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
  const FileStamp stamp = FileStampOf(st);
  e.entry.name = e.name;
  e.entry.size = stamp.size;
  e.entry.mtime_ns = stamp.mtime_ns;
  e.entry.ctime_ns = stamp.ctime_ns;
  e.entry.inode = stamp.inode;
  e.entry.device = stamp.device;
  e.entry.fingerprint.reset();
  if (fingerprint) {
    const UniqueFd fd(openat(dir_fd, e.name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    e.entry.fingerprint = fd.get() < 0 ? std::nullopt : ContentFingerprint(fd.get(), stamp.size);
    if (!e.entry.fingerprint) {
      e.skipped = fmt::format("cannot be read: {}", std::strerror(errno));
      return;
    }
  }
  // Only uncompressed files, from FILE.idx or a scan with both CRCs checked.
  CountOptions options;
  options.scan.compression = Compression::kAuto;
  options.uncompressed_only = true;
  const FileCount c = CountFileAt(folder, e.name, options);
  e.from_file_index = c.source == CountSource::kFileIndex;
  if (!c.count.status.ok()) {
    // The reasons are listed after the path: drop it from the messages.
    const std::string path = JoinPath(folder.data_dir, e.name);
    std::string_view m = c.count.status.message();
    if (m.starts_with(path) && m.substr(path.size()).starts_with(": ")) {
      m.remove_prefix(path.size() + 2);
    }
    e.skipped = m;
    return;
  }
  if (c.count.compression != Compression::kNone) {
    e.skipped = fmt::format("{}-compressed", CompressionName(c.count.compression));
    return;
  }
  e.entry.count = c.count;
  struct stat after;
  if (fstatat(dir_fd, e.name.c_str(), &after, 0) != 0 || !(FileStampOf(after) == stamp)) {
    e.skipped = "changed while it was counted";
    return;
  }
  // Within the change time's tick, a change of the same size leaves the
  // stamp as it is: the entry holds only once the clock has moved past it.
  e.racy = stamp.ctime_ns >= before_ns;
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
    return ErrnoError(errno, StatusCode::kNotFound,
                      fmt::format("{}: cannot list the folder", dir.empty() ? "." : dir));
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

// Whether the open files `a` and `b` are on one file system.
bool SameFileSystem(int a, int b) {
  struct stat sa, sb;
  return a >= 0 && b >= 0 && fstat(a, &sa) == 0 && fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev;
}

// Whether `out_dir` is the folder open as `dir_fd`.
bool SameFolder(int dir_fd, const std::string& out_dir) {
  struct stat a, b;
  return fstat(dir_fd, &a) == 0 && stat(out_dir.empty() ? "." : out_dir.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// Whether `name` can be written on an index line (and read back the same).
bool Writable(std::string_view name) { return IndexableName(name); }

// The clock that stamps a folder's files: the time a file of it gets when
// touched, read back (so, on NFS, the server's clock, and in whole seconds
// where the file system keeps those), from the index being written when it
// is on the folder's file system. Without one (fd -1): this machine's clock
// less kForeignClockMargin.
class FsClock {
 public:
  explicit FsClock(int fd) : fd_(fd) {}
  bool Now(int64_t& ns) const {
    if (fd_ < 0) {
      struct timespec now;
      if (clock_gettime(CLOCK_REALTIME, &now) != 0) return false;
      ns = static_cast<int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec - kForeignClockMargin;
      return true;
    }
    struct stat st;
    if (futimens(fd_, nullptr) != 0 || fstat(fd_, &st) != 0) return false;
    ns = CtimeNs(st);
    return true;
  }
  // Waits (up to 3 s, and the margin) until Now() > t.
  bool WaitPast(int64_t t) const {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(3) +
                         std::chrono::nanoseconds(fd_ < 0 ? kForeignClockMargin : 0);
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

// The names to count: not the index, FILE.idx files, names an index line
// cannot hold, or hidden temporary files.
std::vector<Examined> FilesToCount(const std::vector<std::string>& names) {
  std::vector<Examined> files;
  for (const std::string& name : names) {
    if (IsIndexFileName(name) || !Writable(name) ||
        (name.starts_with('.') && name.find(".tmp-") != std::string::npos)) {
      continue;
    }
    files.emplace_back().name = name;
  }
  return files;
}

// Examines every file, in parallel. A file whose change time is not older
// than the examination's start (`before_ns` by `clock`) could change again
// within that tick without changing its stamp: it is counted again once the
// clock has passed its change time. Then every entry is older than its
// examination, and any later change of the file shows. (Not for a change
// time more than a second ahead: the file is left out.) A modification time
// in the future is no reason for trust, nor for doubt: the change time is
// the file system's "now", whatever mtime was set.
void ExamineAll(const IndexedFolder& folder, const FsClock& clock, int64_t before_ns,
                bool fingerprint, std::vector<Examined>& files) {
  tbb::parallel_for(size_t{0}, files.size(),
                    [&](size_t i) { Examine(folder, before_ns, fingerprint, files[i]); });
  int64_t racy_until = 0;
  for (const Examined& e : files) {
    if (e.regular && e.skipped.empty() && e.racy && e.entry.ctime_ns <= before_ns + 1'000'000'000)
      racy_until = std::max(racy_until, e.entry.ctime_ns);
  }
  if (racy_until > 0 && clock.WaitPast(racy_until) && clock.Now(before_ns)) {
    for (Examined& e : files) {
      if (e.regular && e.skipped.empty() && e.racy && e.entry.ctime_ns <= racy_until) {
        Examine(folder, before_ns, fingerprint, e);
      }
    }
  }
  for (Examined& e : files) {  // still racy (or the clock could not pass it)
    if (e.regular && e.skipped.empty() && e.racy) {
      e.skipped = "changed while it was counted, or its change time is in the future";
    }
  }
}

// The index's contents from the examined files and all the folder's `names`
// (and `own_name`, the index's own when it is in the folder); the totals and
// the files left out go to `report`. `listable`: every name can be written (else no listing).
DirectoryIndexContents Tally(const std::string& dir, std::vector<Examined>& files,
                             std::vector<std::string>& names, DirectoryIndexReport& report,
                             std::string_view own_name, bool& listable) {
  DirectoryIndexContents contents;
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
    contents.entries.push_back(std::move(e.entry));
  }
  std::sort(
      contents.entries.begin(), contents.entries.end(),
      [](const DirectoryIndexEntry& a, const DirectoryIndexEntry& b) { return a.name < b.name; });
  std::sort(report.skipped.begin(), report.skipped.end());
  // Every other name of the folder, and the index's own, for the listing.
  if (!own_name.empty()) names.emplace_back(own_name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::set_difference(names.begin(), names.end(), contents.entries.begin(), contents.entries.end(),
                      std::back_inserter(contents.others),
                      [](const auto& a, const auto& b) { return Name(a) < Name(b); });
  listable = std::all_of(names.begin(), names.end(), Writable);
  if (!listable) contents.others.clear();  // a name the text cannot hold: no listing
  return contents;
}

// WriteDirectoryIndex of an object folder (`url`; see directory_index.h):
// listed once, its objects counted by CountFiles (NAME.idx, else a scan of
// the listed version, read ahead), the entries stamped with what the
// listing saw.
Result<DirectoryIndexReport> WriteObjectDirectoryIndex(std::string url, bool overwrite) {
  TFDIST_ASSIGN_OR_RETURN(const Location location, ParseLocation(url));
  if (url.ends_with('/')) url.pop_back();
  TFDIST_ASSIGN_OR_RETURN(const std::string out_dir, MakeIndexFolderFor(url));
  DirectoryIndexReport report;
  report.index_path = JoinPath(out_dir, kDirectoryIndexName);
  // Fail before listing anything when the index exists.
  TFDIST_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(report.index_path, overwrite));
  const std::string prefix = url + "/";
  std::vector<ObjectInfo> objects;
  TFDIST_RETURN_IF_ERROR(
      StorageFor(location.scheme).List(prefix, [&](std::span<const ObjectInfo> page) {
        for (const ObjectInfo& o : page) {
          const std::string_view name = std::string_view(o.name).substr(prefix.size());
          // Only the folder's own objects; index-like names and names a
          // line cannot hold, silently, as for a local folder.
          if (!o.name.starts_with(prefix) || name.find('/') != std::string_view::npos ||
              IsIndexFileName(name) || !Writable(name)) {
            continue;
          }
          objects.push_back(o);
        }
        return Status::OK();
      }));
  // The reads below take the versions this listing saw (StatObject).
  RememberListed(objects);
  std::vector<std::string> names;
  names.reserve(objects.size());
  for (const ObjectInfo& o : objects) {
    if (o.version.empty() || o.version.find_first_of(" \t\r\n") != std::string::npos) {
      report.skipped.emplace_back(o.name, o.version.empty()
                                              ? "has no version (ETag or generation) to check "
                                                "an entry against"
                                              : "its version cannot be written on an index line");
      continue;
    }
    names.push_back(o.name);
  }
  CountOptions options;
  options.scan.compression = Compression::kAuto;
  const std::vector<FileCount> counts = CountFiles(names, options);
  std::vector<DirectoryIndexEntry> entries;
  entries.reserve(names.size());
  size_t next = 0;  // objects and names are both in listing order
  for (size_t i = 0; i < names.size(); ++i) {
    while (objects[next].name != names[i]) ++next;
    const ObjectInfo& o = objects[next];
    const FileCount& c = counts[i];
    if (!c.count.status.ok()) {
      std::string_view m = c.count.status.message();
      if (m.starts_with(o.name) && m.substr(o.name.size()).starts_with(": ")) {
        m.remove_prefix(o.name.size() + 2);
      }
      report.skipped.emplace_back(o.name, std::string(m));
      continue;
    }
    DirectoryIndexEntry& e = entries.emplace_back();
    e.name = BaseName(o.name);
    e.size = o.size;
    e.version = o.version;
    e.compression = c.source == CountSource::kScan ? c.count.compression : Compression::kNone;
    e.count = c.count;
    ++report.files;
    report.total.records += e.count.records;
    report.total.payload_bytes += e.count.payload_bytes;
    report.from_file_indexes += c.source == CountSource::kFileIndex ? 1 : 0;
  }
  std::sort(
      entries.begin(), entries.end(),
      [](const DirectoryIndexEntry& a, const DirectoryIndexEntry& b) { return a.name < b.name; });
  std::sort(report.skipped.begin(), report.skipped.end());
  TFDIST_ASSIGN_OR_RETURN(const std::string text, FormatObjectDirectoryIndex(url, entries));
  std::unique_ptr<ByteSink> sink = file->TakeSink(/*sync=*/false);
  TFDIST_RETURN_IF_ERROR(sink->Write(text));
  TFDIST_RETURN_IF_ERROR(sink->Finish());
  sink.reset();
  TFDIST_RETURN_IF_ERROR(file->Commit());
  return report;
}

}  // namespace

Result<DirectoryIndexReport> WriteDirectoryIndex(const std::string& dir_in, bool overwrite) {
  if (IsRemote(dir_in)) return WriteObjectDirectoryIndex(dir_in, overwrite);
  std::string dir = dir_in;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  const UniqueFd dir_fd(open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir_fd.get() < 0) {
    return ErrnoError(errno, StatusCode::kNotFound, fmt::format("{}: cannot open the folder", dir));
  }
  TFDIST_ASSIGN_OR_RETURN(const std::string out_dir, MakeIndexFolderFor(dir));
  DirectoryIndexReport report;
  report.index_path = JoinPath(out_dir, kDirectoryIndexName);
  // Fail before counting anything when the index exists.
  TFDIST_ASSIGN_OR_RETURN(auto file, AtomicFile::Create(report.index_path, overwrite));
  const bool in_folder = SameFolder(dir_fd.get(), out_dir);

  // The folder's names, but for our own temporary file (it becomes the
  // index). Those of the files to count, and all of them for the listing.
  const std::string_view own_temp = in_folder ? BaseName(file->temp_path()) : std::string_view();
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::string> names, ListNames(dir_fd.get(), dir, own_temp));
  std::vector<Examined> files = FilesToCount(names);
  // The folder's clock, read from the index being written (its temporary
  // file, then the index itself; only its times are changed) when it is on
  // the folder's file system.
  const UniqueFd clock_fd(open(file->temp_path().c_str(), O_WRONLY | O_CLOEXEC));
  const FsClock clock(SameFileSystem(dir_fd.get(), clock_fd.get()) ? clock_fd.get() : -1);
  int64_t before_ns = 0;
  if (!clock.Now(before_ns)) {
    return ErrnoError(errno, StatusCode::kInternal,
                      fmt::format("{}: cannot read the folder's clock", file->temp_path()));
  }
  const UniqueFd index_fd(open(out_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ExamineAll(IndexedFolder{dir_fd.get(), dir, index_fd.get(), out_dir}, clock, before_ns,
             !CtimeIsTrusted(dir_fd.get()), files);
  bool listable = false;
  const DirectoryIndexContents contents = Tally(
      dir, files, names, report, in_folder ? std::string_view(kDirectoryIndexName) : "", listable);
  // No fsync, as for FILE.idx: the index is derived data, checked entry by
  // entry against its files when read.
  std::unique_ptr<ByteSink> sink = file->TakeSink(/*sync=*/false);
  TFDIST_ASSIGN_OR_RETURN(const std::string text, FormatDirectoryIndex(contents));
  TFDIST_RETURN_IF_ERROR(sink->Write(text));
  TFDIST_RETURN_IF_ERROR(sink->Finish());
  sink.reset();
  TFDIST_RETURN_IF_ERROR(file->Commit());
  // clock_fd is the index now. Found again by name, it must still be the
  // same file: another tfdist index may have replaced it meanwhile.
  struct stat written, now;
  if (listable && in_folder && fstat(clock_fd.get(), &written) == 0 &&
      fstatat(dir_fd.get(), kDirectoryIndexName, &now, 0) == 0 && now.st_ino == written.st_ino &&
      now.st_dev == written.st_dev) {
    report.listing = RecordListing(dir_fd.get(), dir, clock_fd.get(), clock, names);
  }
  return report;
}

}  // namespace tfdist::io
