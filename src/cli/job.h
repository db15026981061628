// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A command in a job of several ranks (mpirun, srun): which ranks run it,
// the exit status they share, and the split of count's, verify's and
// digest's files across them.

#ifndef TFDIST_CLI_JOB_H_
#define TFDIST_CLI_JOB_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "file_args.h"
#include "tfdist/base/result.h"
#include "tfdist/io/file_index.h"
#include "tfdist/io/record_digest.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::cli {

// How a command takes part in a job of several ranks.
enum class JobPart {
  kSplit,     // count, verify, digest, index, reshard, convert: the ranks share the work,
              // rank 0 prints
  kWorkers,   // run: each rank runs its worker; rank 0 prints the cluster's report
  kEach,      // layout, check: each rank is its own worker of the layout
  kRootOnly,  // the others: rank 0 runs the command, the rest wait for its end
};
JobPart JobPartOf(std::string_view command);

// Joins the job when a launcher started this process with other ranks
// (cluster::Join); in a build without MPI, rank 0 says once that each rank
// runs alone. Returns whether this rank runs `command` (not so for the
// ranks but 0 of a kRootOnly command). Error: a launcher's variables that
// do not name a rank, or MPI that does not start.
Result<bool> StartJob(std::string_view command);

// The exit status of this rank, given its own `rc`: rank 0's for kSplit,
// kWorkers and kRootOnly commands (every rank exits as it does), else `rc`.
// Leaves the job.
int EndJob(int rc);

// The files of a command whose ranks share them.
struct SplitFiles {
  ResolvedFiles resolved;    // every file, as at rank 0
  std::vector<size_t> mine;  // this rank's whole files, indexes into resolved.files, ascending
  std::vector<int> owner;    // each file's rank; -1 for a file read in byte ranges
  // The files read in byte ranges, one range per rank (indexes into
  // resolved.files, ascending), and their sizes.
  std::vector<size_t> ranged;
  std::vector<uint64_t> ranged_sizes;
};
// This rank's whole files of `split`, in their order.
std::vector<std::string> MyFiles(const SplitFiles& split);
// This rank's byte range [from, to) of the k-th file read in ranges.
std::pair<uint64_t, uint64_t> MyRange(const SplitFiles& split, size_t k);

// Every rank's expansion of the same file arguments, `files`: rank 0
// checks that every rank found the same files (the inputs must be on
// storage they all see). OK without a job. An error is rank 0's to report
// (ReportJobError); the others' is Cancelled, silent there.
Status CheckSameFiles(const Result<std::vector<std::string>>& files);

// Every rank expands `args`; rank 0 checks that every rank found the same
// files (the inputs must be on storage they all see) and splits them,
// balanced by their bytes, each file whole, but with `by_ranges` (a command
// that reads every byte of its files) a local uncompressed file of 64 MiB
// or more that is larger than a rank's share: that one is read in byte
// ranges, one per rank. Without a job: every file, this process's. nullopt
// at the other ranks when rank 0 stopped (it reports why); an error is this
// rank's to report (ReportJobError).
Result<std::optional<SplitFiles>> SplitFileArgs(const FileArgs& args, bool by_ranges = false);

// Every rank's scans (ScanFiles of its whole files, and of its ranges of
// the others, read here with `options`), at rank 0 in the files' order,
// each file's as one process finds it; empty at the other ranks.
Result<std::vector<FileScan>> GatherScans(const SplitFiles& split, std::vector<FileScan> mine,
                                          const io::RecordReaderOptions& options);
Result<std::vector<io::FileDigest>> GatherDigests(const SplitFiles& split,
                                                  std::vector<io::FileDigest> mine,
                                                  const io::RecordReaderOptions& options);

// This rank's WriteIndex results (its files in order, up to its first
// error), at rank 0 by file: nullopt for the files after a rank's error.
Result<std::vector<std::optional<Result<io::IndexedCount>>>> GatherIndexes(
    const SplitFiles& split, std::vector<Result<io::IndexedCount>> mine);

// index of the files read in byte ranges (split.ranged): rank 0 stamps
// each (io::IndexInParts::Begin) before any rank scans it, every rank
// writes the index lines of its range beside the index (the index folder
// must be one every rank sees), and rank 0 joins them into the index. At
// rank 0, each such file's result, by split.ranged; empty elsewhere.
Result<std::vector<Result<io::IndexedCount>>> IndexRanges(const SplitFiles& split, bool overwrite);

// Whether the folder `folder` is the same at every rank: rank 0 writes a
// probe file in it, which every other rank must find. Error:
// FailedPrecondition naming the first rank (and host) that does not.
Status CheckSharedFolder(const std::string& folder);

// Reports an error that every rank meets alike (its arguments, or the
// error of work the ranks share through cluster::JobGroup()): at rank 0 as
// ReportError; the others return its exit status silently.
int ReportUsageError(const Status& status, bool json);

// Reports an error of this rank: as ReportError at rank 0; elsewhere on
// standard error only, named "rank R (HOST)", as rank 0 alone prints to
// standard output. Returns the exit status for it.
int ReportJobError(const Status& status, bool json);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_JOB_H_
