// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A file descriptor closed when it goes out of scope.

#ifndef TFDIST_IO_UNIQUE_FD_H_
#define TFDIST_IO_UNIQUE_FD_H_

#include <unistd.h>

namespace tfdist::io {

class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace tfdist::io

#endif  // TFDIST_IO_UNIQUE_FD_H_
