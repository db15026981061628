// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The tf.data stages as Datasets (private to src/data; built by BuildDataset).

#ifndef TFDIST_DATA_STAGES_H_
#define TFDIST_DATA_STAGES_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tfdist/base/string_list.h"
#include "tfdist/data/dataset.h"
#include "tfdist/data/seeds.h"
#include "tfdist/io/byte_stream.h"
#include "tfdist/io/record_reader.h"

namespace tfdist::data {

using DatasetPtr = std::shared_ptr<const Dataset>;

// File names (from_tensor_slices, and list_files after expansion), in order.
DatasetPtr NewNamesDataset(StringList names);

// Integers, in order (from_tensor_slices of integers).
DatasetPtr NewIntsDataset(std::vector<int64_t> values);

// range(start, stop, step). REQUIRES: step != 0.
DatasetPtr NewRangeDataset(int64_t start, int64_t stop, int64_t step);

// The reader of one file named by `name`, as the interleave function opens
// it: blocks of kIdBlockBytes when it gives `record_ids`.
// Error: InvalidArgument when `name` is not a file name; NotFound.
Result<std::unique_ptr<io::RecordReader>> OpenRecordReader(const Element& name,
                                                           io::Compression compression,
                                                           int read_ahead,
                                                           RecordIds record_ids = RecordIds::kNone);

// The block a reader of record ids reads at a time: as it keeps no payload,
// memory holds this much per open file, whatever the records' sizes.
inline constexpr size_t kIdBlockBytes = size_t{64} << 10;

// A reader's records as record ids (BuildOptions::record_ids):
// each read and checked as ReadRecord would, its label made on the way
// with RecordIds::kLabelled. REQUIRES: record_ids != kNone.
class RecordIdReader {
 public:
  explicit RecordIdReader(RecordIds record_ids);
  RecordIdReader(const RecordIdReader&) = delete;
  RecordIdReader& operator=(const RecordIdReader&) = delete;

  // The next record of `reader`: returns as RecordReader::ReadRecord; on
  // success sets `labelled` and, when set, `label` (RecordLabel).
  bool Next(io::RecordReader& reader, bool& labelled, std::string& label);

 private:
  RecordIds record_ids_;
  RecordLabel label_;
  std::function<void(std::string_view)> add_;
};

// The records of one file, as the interleave function opens them: records,
// or record ids (Element::Kind::kRecordId) as `record_ids` says.
// `read_ahead`: see RecordReaderOptions. `counters` (when not null) is told
// the bytes and records the reader consumed once the iterator is destroyed
// (ReadCounters::FileClosed).
// Error: NotFound/DataLoss.
Result<std::unique_ptr<Iterator>> OpenRecords(const Element& name, io::Compression compression,
                                              int read_ahead, ReadCounters* counters = nullptr,
                                              RecordIds record_ids = RecordIds::kNone);

// Read by index: the records of one file as record ids not read yet
// (Element::Kind::kRecordId, PayloadState::kUnread), from its up-to-date
// index, when the file is uncompressed
// (or `compression` is kAuto) and has one; otherwise OpenRecords(name,
// compression, 0, counters, record_ids).
Result<std::unique_ptr<Iterator>> OpenRecordIdsByIndex(const Element& name,
                                                       io::Compression compression,
                                                       ReadCounters* counters,
                                                       RecordIds record_ids = RecordIds::kNone);

// Called with the number of elements of an input too short for a shard that
// must not be empty; returns the error to report.
using TooFewForShards = std::function<Status(int64_t found)>;

// Elements at positions p % num_shards == index. REQUIRES: 0 <= index < num_shards.
// With `too_few` set, the shard is one an auto-shard rewrite made, which
// TensorFlow requires to be non-empty (require_non_empty): an input of `n`
// elements with 0 < n < num_shards fails with too_few(n). As TensorFlow's, a
// shard that gets an element fails at its first GetNext, before giving it;
// one that gets none (index >= n), which TensorFlow lets end, fails at the
// end of its input, so that every worker reports what fails the job.
DatasetPtr NewShardDataset(DatasetPtr input, int64_t num_shards, int64_t index,
                           TooFewForShards too_few = nullptr);

// count < 0: forever (an epoch with no element ends it, as in TensorFlow).
DatasetPtr NewRepeatDataset(DatasetPtr input, int64_t count);

// count < 0: everything.
DatasetPtr NewTakeDataset(DatasetPtr input, int64_t count);

// count < 0: everything is skipped. `counters` (when not null) counts the
// records skipped.
DatasetPtr NewSkipDataset(DatasetPtr input, int64_t count,
                          std::shared_ptr<ReadCounters> counters = nullptr);

DatasetPtr NewEnumerateDataset(DatasetPtr input, int64_t start);

// REQUIRES: batch_size > 0. `counters` (when not null) counts the records
// of a short final batch dropped by drop_remainder.
DatasetPtr NewBatchDataset(DatasetPtr input, int64_t batch_size, bool drop_remainder,
                           std::shared_ptr<ReadCounters> counters = nullptr);

// shuffle(buffer_size) with the kernel's seeds, in TensorFlow's order: each
// new iterator draws its own pair from the dataset's seed generator when
// `reshuffle_each_iteration` (TensorFlow's RandomSeedGenerator), else uses
// `seeds`; see doc/semantics.md, "Seeded shuffles". REQUIRES: buffer_size > 0.
// With `watch`, each iterator registers its buffer there while it lives, as
// the shuffle at `pos` of worker `worker`'s pipeline.
DatasetPtr NewShuffleDataset(DatasetPtr input, int64_t buffer_size, SeedPair seeds,
                             bool reshuffle_each_iteration,
                             std::shared_ptr<ShuffleWatch> watch = nullptr, size_t pos = 0,
                             int64_t worker = 0);

struct InterleaveOptions {
  io::Compression compression = io::Compression::kNone;
  int64_t cycle_length = 1;
  int64_t block_length = 1;
  // 0: sequential. Otherwise the number of reading threads; the output order
  // is the sequential one unless !deterministic.
  int64_t parallelism = 0;
  bool deterministic = true;
  // Read by index: record ids from the index where one allows (BuildOptions::
  // read_by_index); read sequentially, as nothing is read ahead.
  bool read_by_index = false;
  // BuildOptions::record_ids: what the records read hold.
  RecordIds record_ids = RecordIds::kNone;
  // BuildOptions::counters: bytes read and files taken.
  std::shared_ptr<ReadCounters> counters;
  // ignore_errors() follows: a file that fails to open or read ends where
  // it fails, and the error is dropped.
  bool end_file_on_error = false;
};
DatasetPtr NewInterleaveDataset(DatasetPtr input, const InterleaveOptions& options);

// unbatch(): each item of each input batch, in order.
// Error: InvalidArgument for an input element that is not a batch.
DatasetPtr NewUnbatchDataset(DatasetPtr input);

// rebatch(): the items of consecutive input batches regrouped into batches
// of sizes[0], sizes[1], ... in turn (cycling), crossing input batches; the
// last batch may be short, or is dropped (and its records counted in
// `counters`) with `drop_remainder`. REQUIRES: sizes non-empty, each >= 0,
// one > 0.
DatasetPtr NewRebatchDataset(DatasetPtr input, std::vector<int64_t> sizes, bool drop_remainder,
                             std::shared_ptr<ReadCounters> counters = nullptr);

// cache(): the first iterator reads `input`; each later one reads a fresh
// dataset from `rebuild` (the same pipeline built again), which gives the
// first pass's elements in its order without holding them in memory.
DatasetPtr NewCacheDataset(DatasetPtr input, std::function<Result<DatasetPtr>()> rebuild);

// concatenate(): the elements of `first`, then those of `second`.
DatasetPtr NewConcatenateDataset(DatasetPtr first, DatasetPtr second);

// Whether `batch`, filled from its input up to `size` items, ends the
// batches: it is empty (the input ended), or short with `drop_remainder`,
// when its records are counted as dropped (`counters` may be null).
bool EndsBatches(const Element& batch, size_t size, bool drop_remainder, ReadCounters* counters);

// The records an element holds: its leaves, file names not counted.
uint64_t RecordLeaves(const Element& e);

// Produces up to `buffer_size` elements ahead on a thread. REQUIRES: > 0.
DatasetPtr NewPrefetchDataset(DatasetPtr input, int64_t buffer_size);

}  // namespace tfdist::data

#endif  // TFDIST_DATA_STAGES_H_
