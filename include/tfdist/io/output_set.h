// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A set of output files that replaces the old set whole, or leaves it as
// it was: staged outside the destination, committed through a journal that
// the next writer completes or undoes, under a lock on each output folder.
// doc/outputs.md describes the protocol and where each file lives.

#ifndef TFDIST_IO_OUTPUT_SET_H_
#define TFDIST_IO_OUTPUT_SET_H_

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/atomic_file.h"

namespace tfdist::io {

// The names of one set of shards: PREFIX-NNNNN-of-MMMMM + suffix, for any
// N and M of five digits or more (".tfrecord", ".tfrecord.gz", ...).
struct ShardFamily {
  std::string prefix;  // a path: "ds/train"
  std::string suffix;  // ".tfrecord"

  // Whether `name`, a file name without folder, belongs to the family.
  bool Matches(std::string_view name) const;
};

// The folder that holds `path`, as OutputSet::Begin takes it: "." for a
// bare name, "/" for a file at the root.
std::string OutputFolderOf(const std::string& path);

struct OutputSetOptions {
  // The files of the old set are removed in the commit (--force). Without
  // it, the commit never removes or replaces a file.
  bool replace = false;
  // fsync the staged files' folders and the journal; the staged files
  // themselves are fsynced by their writers. Default: true.
  bool sync = true;
  // Who writes, for the lock's holder line: "reshard".
  std::string command = "tfdist";
  // Where notes go (a wait for a lock, a dead writer's commit completed or
  // undone). Default: none.
  std::function<void(std::string_view)> note;
};

// One commit of a set of new files, which replace the old set (with
// `replace`) in one step as far as any tfdist process can tell.
//
//   auto set = OutputSet::Begin(folders, options);  // locks, recovers
//   set->ExpectNone(family);                        // or replaces it
//   auto file = set->Create("ds/s-00000-of-00002.tfrecord");  // staged
//   ... write, finish, close; set->Add(std::move(file)); ...
//   set->Commit();                                  // the whole set, or none
//
// Whenever tfdist exits, the output names hold the whole old set or the
// whole new set: a failure or a signal before the commit's last step puts
// the old set back; SIGKILL or a power loss leaves a journal that the next
// OutputSet on that folder (Begin) completes or undoes first. Not
// thread-safe.
class OutputSet {
 public:
  // Takes the lock of every folder in `folders` (waiting while another
  // writer holds it, with a note naming it), then completes or undoes what
  // a writer that died there left, and opens this set's staging folder.
  // Error: InvalidArgument for a folder that is missing, not a folder or
  // not writable, or folders on several file systems; Cancelled while
  // waiting; Internal (or ResourceExhausted) for a failed call.
  static Result<std::unique_ptr<OutputSet>> Begin(std::span<const std::string> folders,
                                                  OutputSetOptions options);
  // Another process's view of the set `transaction()` of a process that
  // called Begin (its leader), on a file system both see: Create() and
  // CreateScratch() stage files in it, under names that start with `tag`
  // (one tag per process), for the leader to Adopt() and commit. A member
  // takes no lock and commits nothing; its destructor removes the files it
  // staged and still holds.
  static std::unique_ptr<OutputSet> JoinTransaction(std::string transaction, std::string tag);
  ~OutputSet();  // without a commit: removes what was staged; unlocks
  OutputSet(const OutputSet&) = delete;
  OutputSet& operator=(const OutputSet&) = delete;

  // Declares a family of names the new set belongs to: its files already
  // in the folder are the old set. Without `replace`, an existing one is an
  // error that names its files (InvalidArgument, advice kOverwrite): a new
  // set beside it would double the dataset. Checked again by Commit().
  Status ExpectFamily(const ShardFamily& family);

  // A new file that Commit() puts at `path` (in one of the folders). Also
  // an error when a file already exists there and !replace. Thread-safe,
  // as are CreateScratch() and Add().
  Result<std::unique_ptr<AtomicFile>> Create(const std::string& path);

  // A scratch file in the staging folder, removed with the set.
  Result<std::unique_ptr<AtomicFile>> CreateScratch(std::string_view name);

  // Hands back a file from Create(), complete and closed (or closable).
  void Add(std::unique_ptr<AtomicFile> file);

  // Adds a file a member staged (its Create(), complete and closed, then
  // released by it) to what Commit() puts in place: `staged` is its staged
  // path, `path` its final one. From here on the set removes it unless it
  // commits. Error: InvalidArgument when `staged` is not a file directly in
  // this set's transaction folder. REQUIRES: not a member.
  Status Adopt(const std::string& path, const std::string& staged);

  // Replaces the old set (the family's files and any file under a new name;
  // only with `replace`) by the new one. Error: Cancelled when a signal came
  // before the commit's last step, or anything that fails (a rename, a full
  // disk): then the old set is back as it was and nothing new is left.
  // InvalidArgument when the old set is there and !replace.
  // REQUIRES: not a member.
  Status Commit();

  // The folder holding this set's staging folder (for messages and tests).
  const std::string& staging_folder() const { return staging_; }
  // The folder this set's files are staged in, which members join.
  const std::string& transaction() const { return txn_; }

 private:
  struct Lock;
  OutputSet() = default;
  OutputSetOptions options_;
  std::vector<std::unique_ptr<Lock>> locks_;
  std::string staging_;  // the locked staging folder the transaction is in
  std::string txn_;      // the transaction folder
  // Links to txn_ in the other folders' staging folders.
  std::vector<std::string> links_;
  std::vector<ShardFamily> families_;
  std::vector<std::unique_ptr<AtomicFile>> files_;
  std::mutex mu_;  // guards files_ and next_id_
  uint64_t next_id_ = 0;
  bool committed_ = false;
  std::string tag_;      // the prefix of a member's staged names
  bool member_ = false;  // JoinTransaction: txn_ is the leader's
};

}  // namespace tfdist::io

#endif  // TFDIST_IO_OUTPUT_SET_H_
