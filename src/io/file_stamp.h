// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// What an index records of the file it describes, so that it is trusted only
// while the file is that very file, unchanged (private to src/io).

#ifndef TFDIST_IO_FILE_STAMP_H_
#define TFDIST_IO_FILE_STAMP_H_

#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <string>

#include "fs_util.h"

namespace tfdist::io {

// A file as stat saw it: what no copy tool can set back. cp -p, rsync -t
// and touch -r restore a modification time, never a change time (the
// kernel sets it to "now" on every change, the time-setting call included);
// a file renamed into place (rsync's way, or an editor's) is another inode.
// So a file whose stamp equals the one an index recorded was not written to
// since, provided its file system keeps change times (CtimeIsTrusted).
struct FileStamp {
  uint64_t device = 0;
  uint64_t inode = 0;
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t ctime_ns = 0;

  bool operator==(const FileStamp&) const = default;
};

inline FileStamp FileStampOf(const struct stat& st) {
  FileStamp s;
  s.device = static_cast<uint64_t>(st.st_dev);
  s.inode = static_cast<uint64_t>(st.st_ino);
  s.size = static_cast<uint64_t>(st.st_size);
  s.mtime_ns = MtimeNs(st);
  s.ctime_ns = CtimeNs(st);
  return s;
}

// What differs between the stamp an index recorded and the file's now,
// in words ("size, change time"); empty when they are equal.
std::string StampDifference(const FileStamp& indexed, const FileStamp& now);

// Whether the file system of the open file `fd` keeps change times that no
// program can set back. Not trusted: FUSE file systems (s3fs, gcsfuse,
// sshfs, rclone mount, ntfs-3g: the daemon reports whatever it likes, often
// the mtime or a constant), FAT and exFAT (no change time on disk: after a
// remount it reads as the mtime), SMB/CIFS and 9p (the server's notion,
// which some servers derive from the mtime). Elsewhere (ext4, XFS, Btrfs,
// ZFS, tmpfs, overlayfs, NFS: the server's change attribute) it is trusted.
// When fstatfs fails, not trusted.
bool CtimeIsTrusted(int fd);

// A fingerprint of the contents of the open file `fd` of `size` bytes: the
// CRC-32C of kFingerprintBlocks blocks of kFingerprintBlock bytes spread
// evenly over it, first and last included (the whole file when it is
// smaller). For a file system whose change times are not trusted: it
// catches a rewrite that changes any sampled byte (a TFRecord rewritten
// with other records moves its headers and CRCs), not every rewrite.
// nullopt when the file cannot be read.
inline constexpr uint64_t kFingerprintBlock = 4096;
inline constexpr uint64_t kFingerprintBlocks = 16;
std::optional<uint32_t> ContentFingerprint(int fd, uint64_t size);

}  // namespace tfdist::io

#endif  // TFDIST_IO_FILE_STAMP_H_
