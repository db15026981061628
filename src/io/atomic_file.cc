// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Atomic files: a temporary file renamed into place, registered for
// removal by a forced exit until then.

#include "tfdist/io/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <set>

#include "tfdist/base/interrupt.h"

namespace tfdist::io {
namespace {

// Buffered writes to a file descriptor it does not own.
class FdSink final : public ByteSink {
 public:
  FdSink(std::string path, int fd, bool sync) : path_(std::move(path)), fd_(fd), sync_(sync) {
    buffer_.reserve(kBufferSize);
  }

  Status Write(std::string_view data) override {
    if (buffer_.size() + data.size() > kBufferSize) {
      TFDIST_RETURN_IF_ERROR(Flush());
      if (data.size() >= kBufferSize) return WriteAll(data);
    }
    buffer_.append(data);
    return Status::OK();
  }

  Status Finish() override {
    TFDIST_RETURN_IF_ERROR(Flush());
    if (sync_ && fsync(fd_) != 0) {
      return ErrnoError(errno, StatusCode::kInternal, fmt::format("{}: fsync failed", path_));
    }
    return Status::OK();
  }

 private:
  static constexpr size_t kBufferSize = 1 << 20;

  Status Flush() {
    Status s = WriteAll(buffer_);
    buffer_.clear();
    return s;
  }

  Status WriteAll(std::string_view data) {
    while (!data.empty()) {
      if (Interrupted()) return Status::Interrupted();
      const ssize_t n = write(fd_, data.data(), data.size());
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError(errno, StatusCode::kInternal, fmt::format("{}: write failed", path_));
      }
      data.remove_prefix(static_cast<size_t>(n));
    }
    return Status::OK();
  }

  std::string path_;
  int fd_;
  bool sync_;
  std::string buffer_;
};

// The folder of `path`: "" for the current one.
std::string FolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash == 0 ? 1 : slash);
}

}  // namespace

Result<std::unique_ptr<AtomicFile>> AtomicFile::Create(std::string path, bool overwrite) {
  struct stat st;
  if (!overwrite && stat(path.c_str(), &st) == 0) {
    return Status::InvalidArgument(fmt::format("{}: already exists", path))
        .WithAdvice(Remedy::kOverwrite);
  }
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  std::random_device rd;
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string temp = fmt::format("{}.{}.tmp-{}-{:08x}", dir, base, getpid(), rd());
    // Registered before it exists: a second signal between the open and the
    // registration would otherwise exit and leave the file. Removing a name
    // that was never created does no harm.
    RegisterTempFile(temp);
    const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) {
      return std::unique_ptr<AtomicFile>(new AtomicFile(std::move(path), std::move(temp), fd));
    }
    const int open_errno = errno;
    UnregisterTempFile(temp);
    if (open_errno != EEXIST) {
      return ErrnoError(
          open_errno, StatusCode::kInvalidArgument,
          fmt::format("{}: cannot create a file in '{}'", path, dir.empty() ? "." : dir));
    }
  }
  return Status::Internal(fmt::format("{}: cannot pick a temporary name", path));
}

Result<std::unique_ptr<AtomicFile>> AtomicFile::CreateAt(std::string path, std::string temp_path) {
  RegisterTempFile(temp_path);  // before it exists: see Create()
  const int fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int open_errno = errno;
    UnregisterTempFile(temp_path);
    return ErrnoError(open_errno, StatusCode::kInternal,
                      fmt::format("{}: cannot create the staged file {}", path, temp_path));
  }
  return std::unique_ptr<AtomicFile>(new AtomicFile(std::move(path), std::move(temp_path), fd));
}

std::unique_ptr<AtomicFile> AtomicFile::Adopt(std::string path, std::string temp_path) {
  RegisterTempFile(temp_path);
  return std::unique_ptr<AtomicFile>(new AtomicFile(std::move(path), std::move(temp_path), -1));
}

void AtomicFile::Release() {
  committed_ = true;
  UnregisterTempFile(temp_path_);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) close(fd_);
  if (!committed_) {
    unlink(temp_path_.c_str());
    UnregisterTempFile(temp_path_);
  }
}

std::unique_ptr<ByteSink> AtomicFile::TakeSink(bool sync) {
  return std::make_unique<FdSink>(temp_path_, fd_, sync);
}

Status AtomicFile::CloseFile() {
  if (fd_ < 0) return Status::OK();
  const int rc = close(fd_);
  fd_ = -1;
  if (rc != 0) {
    return ErrnoError(errno, StatusCode::kInternal, fmt::format("{}: close failed", temp_path_));
  }
  return Status::OK();
}

Status AtomicFile::Commit() {
  if (Interrupted()) return Status::Interrupted();
  TFDIST_RETURN_IF_ERROR(CloseFile());
  if (rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return ErrnoError(errno, StatusCode::kInternal,
                      fmt::format("cannot rename {} to {}", temp_path_, path_));
  }
  committed_ = true;
  // The name is gone. (Unregistered now rather than with the object, which
  // keeps the registry short while a set commits: its scans are linear.)
  UnregisterTempFile(temp_path_);
  return Status::OK();
}

Status CheckNewFiles(std::span<const std::string> paths, bool overwrite) {
  std::set<std::string> folders;
  for (const std::string& p : paths) {
    struct stat st;
    if (!overwrite && stat(p.c_str(), &st) == 0) {
      return Status::InvalidArgument(fmt::format("{}: already exists", p))
          .WithAdvice(Remedy::kOverwrite);
    }
    folders.insert(FolderOf(p));
  }
  for (const std::string& dir : folders) {
    struct stat st;
    const std::string d = dir.empty() ? "." : dir;
    if (stat(d.c_str(), &st) != 0) {
      return Status::InvalidArgument(fmt::format("{}: the output folder does not exist", d));
    }
    if (!S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument(fmt::format("{}: is not a folder", d));
    }
    if (access(d.c_str(), W_OK) != 0) {
      return Status::InvalidArgument(fmt::format("{}: cannot write in the output folder", d));
    }
  }
  return Status::OK();
}

}  // namespace tfdist::io
