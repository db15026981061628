// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// File and memory byte sources, and string sinks.

#include "tfdist/io/byte_stream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "tfdist/base/interrupt.h"

namespace tfdist::io {
namespace {

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

class FileSource final : public ByteSource {
 public:
  FileSource(std::string path, int fd, std::optional<uint64_t> size, bool owns_fd)
      : path_(std::move(path)), fd_(fd), size_(size), owns_fd_(owns_fd) {
    if (size_) posix_fadvise(fd_, 0, 0, POSIX_FADV_SEQUENTIAL);
  }
  ~FileSource() override {
    if (owns_fd_) close(fd_);
  }

  Result<size_t> Read(std::span<char> dst) override {
    // Once at the end, no read again: a terminal would wait for more input.
    if (eof_) return 0;
    size_t done = 0;
    while (done < dst.size()) {
      const ssize_t n = read(fd_, dst.data() + done, dst.size() - done);
      if (n == 0) {
        eof_ = true;
        break;
      }
      if (n < 0) {
        if (errno == EINTR) {
          if (Interrupted()) return Status::Interrupted();
          continue;
        }
        return ErrnoError(errno, StatusCode::kNotFound,
                          fmt::format("{}: read failed at byte {}", path_, position_ + done));
      }
      done += static_cast<size_t>(n);
    }
    position_ += done;
    return done;
  }

  const std::string& name() const override { return path_; }
  std::optional<uint64_t> size() const override { return size_; }

 private:
  std::string path_;
  int fd_;
  std::optional<uint64_t> size_;
  bool owns_fd_;
  uint64_t position_ = 0;
  bool eof_ = false;
};

class MemorySource final : public ByteSource {
 public:
  MemorySource(std::string name, std::string data)
      : name_(std::move(name)), data_(std::move(data)) {}

  Result<size_t> Read(std::span<char> dst) override {
    const size_t n = std::min(dst.size(), data_.size() - pos_);
    std::memcpy(dst.data(), data_.data() + pos_, n);
    pos_ += n;
    return n;
  }
  const std::string& name() const override { return name_; }
  std::optional<uint64_t> size() const override { return data_.size(); }

 private:
  std::string name_;
  std::string data_;
  size_t pos_ = 0;
};

class PrefixedSource final : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> inner)
      : prefix_(std::move(prefix)), inner_(std::move(inner)) {}

  Result<size_t> Read(std::span<char> dst) override {
    const size_t n = std::min(dst.size(), prefix_.size() - pos_);
    std::memcpy(dst.data(), prefix_.data() + pos_, n);
    pos_ += n;
    if (n == dst.size()) return n;
    Result<size_t> rest = inner_->Read(dst.subspan(n));
    if (!rest.ok()) return rest.status();
    return n + *rest;
  }
  const std::string& name() const override { return inner_->name(); }
  std::optional<uint64_t> size() const override { return inner_->size(); }

 private:
  std::string prefix_;
  size_t pos_ = 0;
  std::unique_ptr<ByteSource> inner_;
};

class StringSink final : public ByteSink {
 public:
  explicit StringSink(std::string* out) : out_(out) {}
  Status Write(std::string_view data) override {
    out_->append(data);
    return Status::OK();
  }
  Status Finish() override { return Status::OK(); }

 private:
  std::string* out_;
};

}  // namespace

Result<Compression> ParseCompression(std::string_view text) {
  if (text.empty() || EqualsIgnoreCase(text, "none")) return Compression::kNone;
  if (EqualsIgnoreCase(text, "gzip")) return Compression::kGzip;
  if (EqualsIgnoreCase(text, "zlib")) return Compression::kZlib;
  if (EqualsIgnoreCase(text, "auto")) return Compression::kAuto;
  return Status::InvalidArgument(
      fmt::format("unknown compression '{}'; expected one of \"\", none, GZIP, ZLIB, auto", text));
}

std::string_view CompressionName(Compression c) {
  switch (c) {
    case Compression::kNone:
      return "none";
    case Compression::kGzip:
      return "GZIP";
    case Compression::kZlib:
      return "ZLIB";
    case Compression::kAuto:
      return "auto";
  }
  return "?";
}

namespace {
std::atomic<bool> cold_reads{false};
}  // namespace

void SetColdReads(bool cold) { cold_reads.store(cold, std::memory_order_relaxed); }
bool ColdReads() { return cold_reads.load(std::memory_order_relaxed); }

Result<std::unique_ptr<ByteSource>> OpenFileSource(const std::string& path, uint64_t offset) {
  if (path == "-") {
    return std::unique_ptr<ByteSource>(
        std::make_unique<FileSource>("<stdin>", STDIN_FILENO, std::nullopt, false));
  }
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoError(errno, StatusCode::kNotFound, fmt::format("{}: cannot open", path));
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    const int err = errno;
    close(fd);
    return ErrnoError(err, StatusCode::kNotFound, fmt::format("{}: cannot stat", path));
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    return Status::NotFound(fmt::format("{}: is a directory, not a TFRecord file", path));
  }
  std::optional<uint64_t> size;
  if (S_ISREG(st.st_mode)) {
    size = static_cast<uint64_t>(st.st_size) - std::min<uint64_t>(offset, st.st_size);
    // Advice only: a failure leaves the pages cached, not the read wrong.
    if (offset == 0 && ColdReads()) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  }
  if (offset > 0 && lseek(fd, static_cast<off_t>(offset), SEEK_SET) < 0) {
    const int err = errno;
    close(fd);
    return ErrnoError(err, StatusCode::kNotFound,
                      fmt::format("{}: cannot seek to byte {}", path, offset));
  }
  return std::unique_ptr<ByteSource>(std::make_unique<FileSource>(path, fd, size, true));
}

std::unique_ptr<ByteSource> NewMemorySource(std::string name, std::string data) {
  return std::make_unique<MemorySource>(std::move(name), std::move(data));
}

std::unique_ptr<ByteSource> NewPrefixedSource(std::string prefix,
                                              std::unique_ptr<ByteSource> inner) {
  return std::make_unique<PrefixedSource>(std::move(prefix), std::move(inner));
}

std::unique_ptr<ByteSink> NewStringSink(std::string* out) {
  return std::make_unique<StringSink>(out);
}

}  // namespace tfdist::io
