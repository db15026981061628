// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// File stamps compared, file systems judged, contents fingerprinted.

#include "file_stamp.h"

#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "tfdist/io/crc32c.h"

namespace tfdist::io {

std::string StampDifference(const FileStamp& indexed, const FileStamp& now) {
  std::string out;
  auto note = [&](bool differs, const char* what) {
    if (!differs) return;
    if (!out.empty()) out += ", ";
    out += what;
  };
  note(indexed.device != now.device || indexed.inode != now.inode, "inode");
  note(indexed.size != now.size, "size");
  note(indexed.mtime_ns != now.mtime_ns, "modification time");
  note(indexed.ctime_ns != now.ctime_ns, "change time");
  return out;
}

bool CtimeIsTrusted(int fd) {
  struct statfs fs;
  if (fstatfs(fd, &fs) != 0) return false;
  switch (static_cast<uint64_t>(fs.f_type)) {
    case FUSE_SUPER_MAGIC:
    case MSDOS_SUPER_MAGIC:
    case EXFAT_SUPER_MAGIC:
    case SMB_SUPER_MAGIC:
    case CIFS_SUPER_MAGIC:
    case SMB2_SUPER_MAGIC:
    case V9FS_MAGIC:
      return false;
    default:
      return true;
  }
}

std::optional<uint32_t> ContentFingerprint(int fd, uint64_t size) {
  std::vector<char> block(kFingerprintBlock);
  uint32_t crc = 0;
  auto add = [&](uint64_t offset, uint64_t n) {
    for (uint64_t done = 0; done < n;) {
      const ssize_t got = pread(fd, block.data(), n - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) return false;  // shorter than its size: changed, or unreadable
      crc = crc32c::Extend(crc, block.data(), static_cast<size_t>(got));
      done += static_cast<uint64_t>(got);
    }
    return true;
  };
  if (size <= kFingerprintBlock * kFingerprintBlocks) {
    for (uint64_t at = 0; at < size; at += kFingerprintBlock) {
      if (!add(at, std::min(kFingerprintBlock, size - at))) return std::nullopt;
    }
    return crc;
  }
  const uint64_t last = size - kFingerprintBlock;
  for (uint64_t i = 0; i < kFingerprintBlocks; ++i) {
    const uint64_t at = i + 1 == kFingerprintBlocks ? last : last / (kFingerprintBlocks - 1) * i;
    if (!add(at, kFingerprintBlock)) return std::nullopt;
  }
  return crc;
}

}  // namespace tfdist::io
