// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Path and stat helpers shared by the index code (private to src/io).

#ifndef TFDIST_IO_FS_UTIL_H_
#define TFDIST_IO_FS_UTIL_H_

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tfdist::io {

inline int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

inline int64_t CtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_ctim.tv_sec) * 1'000'000'000 + st.st_ctim.tv_nsec;
}

// `name` in folder `dir` ("" is the current folder).
inline std::string JoinPath(std::string_view dir, std::string_view name) {
  if (dir.empty()) return std::string(name);
  return fmt::format("{}{}{}", dir, dir.ends_with('/') ? "" : "/", name);
}

// What follows the last '/' of `path` (all of it when there is none).
inline std::string_view BaseName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// The folder of `path` as it spells it: "" when it names none (the current
// folder), "/" for the root, else up to its last '/'.
inline std::string_view DirName(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string_view()
         : slash == 0                    ? path.substr(0, 1)
                                         : path.substr(0, slash);
}

}  // namespace tfdist::io

#endif  // TFDIST_IO_FS_UTIL_H_
