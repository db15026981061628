// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Directory indexes: the record counts of a folder's files, and its names,
// in one file (.tfdist-index): the format, the writer and the reader.

#ifndef TFDIST_IO_DIRECTORY_INDEX_H_
#define TFDIST_IO_DIRECTORY_INDEX_H_

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::io {

// The directory index: one file per folder, named kDirectoryIndexName, in
// the folder's index folder (IndexFolderFor, index_location.h), holding the
// record counts of the folder's uncompressed TFRecord files, so that a FILE
// layout summary checks each file with one stat instead of opening and
// reading its FILE.idx; and, when the index is in the folder itself and the
// folder is unchanged since it was indexed, all the folder's names, so that
// its glob need not list it.
// Text, one line each:
//   tfdist-directory-index 3
//   listing CTIME_NS MTIME_NS INODE DEVICE
//   SIZE MTIME_NS CTIME_NS INODE DEVICE FINGERPRINT RECORDS PAYLOAD_BYTES NAME
//   - NAME
// The listing line stamps the folder (FolderStamp: its change and
// modification times, inode and device, fixed widths) once the names below
// were checked to be all its entries; all zeros when they were not. Adding,
// removing or renaming an entry sets the folder's change time, which no
// program can set back, so the names are current while the stamp equals the
// folder's. (The writer first proves that the folder's times move when an
// entry changes, and waits until the file system's clock has passed them
// before it checks the names; see WriteDirectoryIndex.)
// An entry line describes a file: its stamp as it was when it was counted
// (SIZE in bytes, MTIME_NS and CTIME_NS its modification and change times
// in nanoseconds since the epoch, INODE, DEVICE; see FileStamp in
// src/io/file_stamp.h) and FINGERPRINT, "-", or on a file system whose
// change times are not trusted its ContentFingerprint in hex; RECORDS, and
// PAYLOAD_BYTES, the sum of the record payloads; NAME is the file's base
// name, to the end of the line (last, so that it may hold spaces). A
// "- NAME" line is an entry of the folder that is not counted: a folder, a
// compressed or damaged file, an index file, the index itself. Names holding
// a newline or a carriage return are not written, and then there is no
// listing. Lines after the listing line are sorted byte-wise by NAME. An
// entry line describes its file while the file's stamp EQUALS it (and the
// fingerprint, where there is one): a rewrite of the same size with the
// same or a future mtime (cp -p, rsync -t, touch -r) has moved the change
// time. Versions 1 and 2 (written by older tfdists; no change time, inode or
// device) are read, but none of their entries describes its file: they are
// all stale. Version 2's listing still stands in for the folder's names.
//
// Objects (s3://B/K, gs://B/K) have a directory index too, of their
// "folder" (the URL up to the key's last '/'), in the local index cache
// (IndexFolderFor, never in the bucket), in a format of its own:
//   tfdist-object-directory-index 1 FOLDER_URL
//   SIZE COMPRESSION RECORDS PAYLOAD_BYTES VERSION NAME
// one line per object counted, sorted byte-wise by NAME: its size and
// version (S3's ETag with its quotes, Cloud Storage's generation) as the
// listing it was counted from saw them, the compression its scan detected
// (none, GZIP or ZLIB: counts need no offsets, so compressed objects have
// entries too), its records and payload bytes, and its base name, to the
// end of the line. An entry describes the object FOLDER_URL/NAME while
// that object's size and version EQUAL the entry's (what the glob's
// listing saw, else a stat: no byte of the object is read); a replaced
// object has another version, and its entry is stale. An object without a
// version gets no entry.
inline constexpr char kDirectoryIndexName[] = ".tfdist-index";
inline constexpr char kObjectDirectoryIndexHeader[] = "tfdist-object-directory-index 1";
inline constexpr char kDirectoryIndexHeader[] = "tfdist-directory-index 3";
inline constexpr char kDirectoryIndexHeaderV2[] = "tfdist-directory-index 2";
inline constexpr char kDirectoryIndexHeaderV1[] = "tfdist-directory-index 1";

struct DirectoryIndexEntry {
  std::string name;  // base name
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  FileRecords count;
  // The rest of the file's stamp (versions 1 and 2: zeros).
  int64_t ctime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;
  std::optional<uint32_t> fingerprint = std::nullopt;
  // An object's (the object format): its version, and the compression its
  // records were counted through; a local file's are "" and kNone.
  std::string version = std::string();
  Compression compression = Compression::kNone;

  bool operator==(const DirectoryIndexEntry&) const = default;
};

// A folder as a listing saw it. All zero: no listing.
struct FolderStamp {
  int64_t ctime_ns = 0;
  int64_t mtime_ns = 0;
  uint64_t inode = 0;
  uint64_t device = 0;

  bool empty() const { return ctime_ns == 0; }
  bool operator==(const FolderStamp&) const = default;
};

// A directory index's contents.
struct DirectoryIndexContents {
  std::vector<DirectoryIndexEntry> entries;  // sorted by name
  std::vector<std::string> others;           // "- NAME" lines, sorted
  FolderStamp listing;                       // empty: no listing

  bool operator==(const DirectoryIndexContents&) const = default;
};

// The text of an index, which ParseDirectoryIndex reads back the same.
// REQUIRES: entries and others sorted by name.
// Error: InvalidArgument for a name no line can hold, so that it would read
// back otherwise or not at all: one with a newline, a carriage return or a
// NUL, an empty one, ".", "..", or one with a '/'.
Result<std::string> FormatDirectoryIndex(const DirectoryIndexContents& contents);

// The contents of an index's text, lines in the text's order, parsed by
// the parser DirectoryIndex::Open reads the index file with.
// Error: InvalidArgument for another header (format version), a bad
// listing line, or a line that is not an entry line of its version or
// "- NAME" (or names "." or ".."), naming the first such line's number; its
// message is what DirectoryIndex::problem() says of that index.
Result<DirectoryIndexContents> ParseDirectoryIndex(std::string_view text);

// The text of an object folder's index (the object format above), and
// back. REQUIRES: entries sorted by name, each with a version.
// Error: InvalidArgument for a name no line can hold (as
// FormatDirectoryIndex), or a version that is empty or holds white space;
// for the parser, another header or a bad line, naming its number.
Result<std::string> FormatObjectDirectoryIndex(std::string_view folder_url,
                                               std::span<const DirectoryIndexEntry> entries);
Result<std::vector<DirectoryIndexEntry>> ParseObjectDirectoryIndex(std::string_view text,
                                                                   std::string* folder_url);

// What WriteDirectoryIndex did.
struct DirectoryIndexReport {
  std::string index_path;
  uint64_t files = 0;              // entries written
  FileRecords total;               // over all entries
  uint64_t from_file_indexes = 0;  // entries taken from an up-to-date FILE.idx
  bool listing = false;            // the folder's names were recorded (the listing line)
  // Regular files left out, with the reason: compressed, not TFRecord or
  // damaged (the scan's error), or changed while counted. FILE.idx files,
  // hidden temporary files and the index itself are left out silently.
  std::vector<std::pair<std::string, std::string>> skipped;
};

// Counts the records of every regular file in `dir` (from its FILE.idx when
// ReadIndex trusts it, else by a scan with both CRCs checked; files in
// parallel) and writes the index to IndexFolderFor(dir)/kDirectoryIndexName
// atomically (the index folder is created when missing). A file whose change time
// is not older than the start of its examination, by the file system's own
// clock, is counted again once that clock has passed its change time (or left
// out, if that is more than a second away), so that no entry can miss a
// later change of the same size within the same tick. The clock is read by
// stamping the index being written when it is on the folder's file system;
// otherwise it is this machine's clock less kForeignClockMargin (nothing is
// written into the data folder).
// When the index is in the folder itself, the listing line is then filled
// in (in place, in the file just renamed into place): once a probe file
// created and removed there has moved the folder's change time, the file
// system's own clock (read by stamping the index) has passed it, and a
// second listing shows the same names with the folder's change time
// unchanged. A change after that gets a later change time; one before
// shows in the second listing.
// Error: NotFound when `dir` cannot be listed; InvalidArgument when the
// index exists and !overwrite, or there is no index folder.
//
// `dir` a URL (s3://B/PREFIX, gs://B/PREFIX; one trailing '/' is dropped):
// the objects directly in that folder (listed under "DIR/", not in its
// sub-folders) are counted, each from its NAME.idx when that describes it,
// else by a scan (both CRCs checked; gzip and zlib detected and counted
// too) of the version the listing saw, objects read ahead concurrently;
// the index (the object format) goes to the local index cache. Objects
// without a version or that fail their scan (damaged, replaced while read)
// are left out and named in `skipped`; NAME.idx-like names and names a
// line cannot hold are left out silently. No listing line.
// Error: also Unavailable / NotFound from the listing.
Result<DirectoryIndexReport> WriteDirectoryIndex(const std::string& dir, bool overwrite);

// How far behind this machine's clock a data folder's clock is assumed to
// be at most, when it cannot be read (see WriteDirectoryIndex).
inline constexpr int64_t kForeignClockMargin = 2'000'000'000;  // ns

// What a directory index says about some files of its folder.
struct DirectoryLookup {
  bool found = false;               // the folder has an index
  std::string problem;              // why the index was ignored as a whole (then nothing matched)
  std::vector<uint8_t> matched;     // per name: 1 when its entry describes the file
  std::vector<FileRecords> counts;  // per name, where matched
  uint64_t stale = 0;               // names whose entry does not describe the file
};

// A folder's directory index, read, and checked entry by entry against the
// folder: one fstatat per checked entry, relative to the open folder (no
// path resolution), in parallel; no file is opened. Checking can start
// before the names it will be asked about are known (while a glob lists the
// folder), for the entries a filter accepts. Thread-compatible.
class DirectoryIndex {
 public:
  // Reads the index of `dir` ("" is the current folder) from its index
  // folder (IndexFolderFor, index_location.h); no entry is checked yet.
  // For a URL (an object folder) the object format, whose entries are
  // checked against StatObject; one written for another folder (a shared
  // --index-dir) has a problem().
  // Never fails: without an index found() is false; a damaged one has a
  // problem() and no entries, and so has one that changed while it was
  // read ("changed while read"): it is read, not mapped, so that another
  // process truncating it cannot crash this one.
  static std::unique_ptr<DirectoryIndex> Open(const std::string& dir);

  // Frees the index text that Open reads into a malloc'ed buffer (shrunk in
  // place to the entries' names once parsed).
  struct FreeText {
    void operator()(char* p) const { std::free(p); }
  };
  ~DirectoryIndex();
  DirectoryIndex(const DirectoryIndex&) = delete;
  DirectoryIndex& operator=(const DirectoryIndex&) = delete;

  bool found() const { return found_; }
  // The folder and its index folder (IndexFolderFor), open where they could
  // be (else their fds are -1).
  const IndexedFolder& folder() const { return folder_; }
  // The index file's path ("" when the folder has no index folder).
  const std::string& index_path() const { return index_path_; }
  const std::string& problem() const { return problem_; }

  // The counts for `names` (base names, sorted byte-wise, no duplicates).
  // Entries not checked by Check are checked now.
  DirectoryLookup LookUp(std::span<const std::string_view> names) const;

  // LookUp without its per-name vectors, for many names: `name(i)` is the
  // i-th of `count` names (sorted, no duplicates), and keep(i, records,
  // compression) is called for each name an entry describes, from any
  // thread, once. `read_as`: how the files will be read; an entry counted
  // through another compression is passed over (neither kept nor stale),
  // unless read_as is kAuto. `stale(i)` (when set) is called for each name
  // whose entry no longer describes its file, from any thread.
  struct LookUpStats {
    uint64_t stale = 0;  // names whose entry does not describe the file
  };
  LookUpStats LookUpEach(size_t count, const std::function<std::string_view(size_t)>& name,
                         const std::function<void(size_t, const FileRecords&, Compression)>& keep,
                         Compression read_as = Compression::kAuto,
                         const std::function<void(size_t)>& stale = {}) const;

  // Checks the entries `check` accepts, in parallel. Not concurrently with
  // LookUp; Listing() may be read meanwhile.
  void Check(const std::function<bool(std::string_view)>& check);

  // Whether the index of `dir` has a listing that is current (see
  // Listing()), from its first lines alone.
  static bool ListingIsCurrent(const std::string& dir);

  // All the folder's names (sorted, into the index), when the index has a
  // listing and the folder's mtime still equals it; else nullopt.
  std::optional<std::vector<std::string_view>> Listing() const;

 private:
  enum class State : uint8_t;
  struct Entry;  // an index line and its state (directory_index.cc)
  DirectoryIndex() = default;
  State CheckEntry(const Entry& e) const;
  // Open's part for an object folder (folder_.data_dir a URL).
  static std::unique_ptr<DirectoryIndex> OpenObjects(std::unique_ptr<DirectoryIndex> index);
  // Keeps the entries' names (and versions) of `text`, read into
  // `buffer`, in names_, and points the entries at them.
  void KeepNames(std::unique_ptr<char[], FreeText> buffer, std::string_view text);

  IndexedFolder folder_;
  std::string index_path_;
  bool found_ = false;
  std::string problem_;
  // The entries' names, back to back (they point into it), malloc'ed.
  std::unique_ptr<char[], FreeText> names_;
  bool objects_ = false;          // an object folder's index (the object format)
  bool listing_current_ = false;  // a listing stamp equal to the folder's
  std::vector<Entry> entries_;    // sorted by name
};

// DirectoryIndex::Open(dir)->LookUp(names), with found and problem.
DirectoryLookup LookUpDirectoryIndex(const std::string& dir,
                                     std::span<const std::string_view> names);

}  // namespace tfdist::io

#endif  // TFDIST_IO_DIRECTORY_INDEX_H_
