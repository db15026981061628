// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Where the indexes of a folder's files are kept: out of the data folder,
// where a glob such as "*" or "train-*" (tfdist's, and TensorFlow's
// list_files alike) would match them and then fail to read them as records.

#ifndef TFDIST_IO_INDEX_LOCATION_H_
#define TFDIST_IO_INDEX_LOCATION_H_

#include <span>
#include <string>
#include <string_view>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"

namespace tfdist::io {

// By default the indexes of the files of folder D live in a cache keyed by
// D's absolute path, symbolic links resolved:
//   CACHE/tfdist/index/<absolute path of D>/NAME.idx    one per file
//   CACHE/tfdist/index/<absolute path of D>/.tfdist-index  the directory index
// CACHE is $XDG_CACHE_HOME, else $HOME/.cache. A path is only the key: every
// index is checked against its file's stamp (inode, size, modification and
// change times; file_index.h) when it is read, so a file replaced at the same
// path is not described by the old index. (Why a cache and not a folder beside the data: a sibling
// folder is matched by globs over the parent, needs a writable parent, and is left behind when the
// data moves; the cache needs none of that, and works for read-only data.)
// Objects (s3://B/K, gs://B/K) have theirs in the same cache, never in the
// bucket, keyed by the URL of their "folder" (the key up to its last '/'):
//   CACHE/tfdist/index/s3:/B/<key's folders>/NAME.idx
// (an empty part of a key, "." and "..", are spelled "%", "%2E", "%2E%2E",
// and '%' "%25"), each checked against the object's stamp (its URL, size and
// version: the ETag or generation; file_index.h).
//
// SetIndexFolder(F) replaces the cache, for the whole process: every file's
// index is then F/NAME.idx, by base name, and every folder's directory index
// F/.tfdist-index. F holds the indexes of one data folder; it may be the
// data folder itself (the layout of DALI's tfrecord2idx), or a folder
// shared by hosts that mount the data at different paths.
void SetIndexFolder(std::string folder);

// The folder SetIndexFolder named; empty for the cache.
std::string ExplicitIndexFolder();

// CACHE/tfdist/index; empty when neither XDG_CACHE_HOME nor HOME is set.
std::string IndexCacheRoot();

// The folder that holds the indexes of the files of `data_dir` ("" is the
// current folder). Empty when there is none: no cache root, or `data_dir`
// cannot be resolved (it does not exist). Thread-safe; resolves each folder
// once per process.
std::string IndexFolderFor(std::string_view data_dir);

// IndexFolderFor(data_dir), created (with its parents) when missing, for
// an index about to be written.
// Error: InvalidArgument when there is no place for indexes (advice
// Remedy::kIndexFolder), or when the folder cannot be created.
Result<std::string> MakeIndexFolderFor(std::string_view data_dir);

// Whether the base name `name` is one a tfdist index file takes: the
// directory index (or its temporary file), NAME.idx, or its stamp
// NAME.idx.stamp (file_index.h).
bool IsIndexFileName(std::string_view name);

// Error when `matches` (the sorted matches of `pattern`) hold an index file
// in its data folder: a directory index, or NAME.idx or NAME.idx.stamp
// where NAME is a file too (of the matches, or of the folder). InvalidArgument naming the first
// such file, advice Remedy::kMoveIndexes with its folder.
Status CheckNoIndexFiles(std::string_view pattern, std::span<const std::string_view> matches);

}  // namespace tfdist::io

#endif  // TFDIST_IO_INDEX_LOCATION_H_
