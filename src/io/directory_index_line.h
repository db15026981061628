// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The listing line of a directory index, shared by its reader and its
// writer (private to src/io).

#ifndef TFDIST_IO_DIRECTORY_INDEX_LINE_H_
#define TFDIST_IO_DIRECTORY_INDEX_LINE_H_

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "fs_util.h"
#include "tfdist/io/directory_index.h"

namespace tfdist::io {

inline constexpr char kListingPrefix[] = "listing ";

// Whether an index line can hold `name` (a base name) and read it back the
// same: a line ends at a newline, a CR before it is a CRLF line end, and a
// NUL is no file name's. The writer and the parser both keep to it.
inline bool IndexableName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\n\r\0", 4)) == std::string_view::npos;
}

// The listing line, newline included. Fixed widths, so that the writer can
// fill the line in in place.
inline std::string ListingLine(const FolderStamp& f) {
  return fmt::format("{}{:019} {:019} {:020} {:020}\n", kListingPrefix,
                     std::max<int64_t>(f.ctime_ns, 0), std::max<int64_t>(f.mtime_ns, 0), f.inode,
                     f.device);
}

inline FolderStamp StampOf(const struct stat& st) {
  FolderStamp f;
  f.ctime_ns = CtimeNs(st);
  f.mtime_ns = MtimeNs(st);
  f.inode = static_cast<uint64_t>(st.st_ino);
  f.device = static_cast<uint64_t>(st.st_dev);
  return f;
}

}  // namespace tfdist::io

#endif  // TFDIST_IO_DIRECTORY_INDEX_LINE_H_
