// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Reading a pipeline file or an input function's code within a size limit.

#include "input_text.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "tfdist/base/interrupt.h"

namespace tfdist::cli {

std::string DescribeLimit(size_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1 << 10) && bytes % (1 << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

namespace {

// An error of a system call on the file: the code ErrnoError gives, but a
// file that cannot be read is the user's to name again (exit 2).
Status FileError(int err, std::string_view name, std::string_view what, std::string_view doing) {
  return ErrnoError(err, StatusCode::kInvalidArgument,
                    fmt::format("{}: cannot {} the {}", name, doing, what));
}

}  // namespace

Result<std::string> ReadInputText(const std::string& path, size_t limit, std::string_view what) {
  const bool stdin_text = path == "-";
  const std::string name = stdin_text ? "<stdin>" : path;
  int fd = STDIN_FILENO;
  if (!stdin_text) {
    // A FIFO blocks here until a writer opens it; a signal ends the wait.
    while ((fd = open(path.c_str(), O_RDONLY | O_CLOEXEC)) < 0 && errno == EINTR) {
      if (Interrupted()) return Status::Interrupted();
    }
    if (fd < 0) return FileError(errno, name, what, "open");
  }
  struct Closer {
    int fd;
    bool owned;
    ~Closer() {
      if (owned) close(fd);
    }
  } closer{fd, !stdin_text};
  struct stat st;
  if (fstat(fd, &st) != 0) return FileError(errno, name, what, "read");
  if (S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument(fmt::format("{}: is a folder, not a {}", name, what));
  }
  const auto too_large = [&] {
    return Status::InvalidArgument(fmt::format(
        "{}: the {} is over {}, the most tfdist reads of one", name, what, DescribeLimit(limit)));
  };
  // A regular file says its size: one too large is not read at all.
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > limit) return too_large();
  std::string text;
  // What a regular file holds, else a first block; grown as input comes.
  text.resize(std::min<size_t>(
      limit + 1, S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) + 1 : size_t{64} << 10));
  size_t got = 0;
  for (;;) {
    if (got == text.size()) {
      if (got > limit) break;
      text.resize(std::min(limit + 1, 2 * text.size()));
    }
    const ssize_t n = read(fd, text.data() + got, text.size() - got);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) {
        if (Interrupted()) return Status::Interrupted();
        continue;
      }
      return FileError(errno, name, what, "read");
    }
    got += static_cast<size_t>(n);
  }
  if (got > limit) return too_large();
  text.resize(got);
  return text;
}

}  // namespace tfdist::cli
