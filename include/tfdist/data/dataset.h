// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Pipeline elements and the pull-iterator interface of every tf.data stage.

#ifndef TFDIST_DATA_DATASET_H_
#define TFDIST_DATA_DATASET_H_

#include <atomic>
#include <cassert>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/base/text.h"

namespace tfdist::data {

// Returns a pointer to a process-wide copy of `path` that lives until exit:
// records name their file without a reference count (copying an Element
// between reader and consumer threads touches no shared counter).
// Thread-safe.
const std::string* InternPath(const std::string& path);

// Where a record came from.
struct Origin {
  const std::string* file = nullptr;  // the path as the pipeline named it (InternPath)
  uint64_t index = 0;                 // record index in the file
  uint64_t offset = 0;                // byte offset of its header (uncompressed)
};

// How elements are labelled in layouts and listings (doc/semantics.md, "Elements and labels").
enum class LabelMode {
  kPayload,  // the record's bytes when printable UTF-8, else "file:index"
  kRef,      // always "file:index" for records
};

// The characters of a printable payload that a layout's label shows: a
// longer one shows its first kLabelChars and "..." (RecordLabel).
inline constexpr size_t kLabelChars = 64;

// The label LabelMode::kPayload gives a record in a layout, made as its
// payload is read, in pieces (io::RecordReader::ScanRecord): memory holds
// what the label shows (at most 4 * kLabelChars + 4 bytes), whatever the
// record's size.
class RecordLabel {
 public:
  // The next piece of the payload.
  void Add(std::string_view piece);
  // Whether the payload is printable UTF-8; if so, `label` is set to it, or
  // to its first kLabelChars characters and "..." when it has more. Then
  // ready for the next payload.
  bool Finish(std::string& label);

 private:
  PrintableUtf8Scan scan_;
  std::string prefix_;
};

// One element of a pipeline: a file name, a record, an integer (range), a
// batch of elements, or an (index, element) pair made by enumerate(); or a
// record id (Kind::kRecordId): a record carried without its payload, as its
// origin and its payload's size. A record id's payload is not
// read yet (read by index, BuildOptions::read_by_index: a PayloadFetcher
// reads it later), or was read, checked and dropped (BuildOptions::
// record_ids: a layout's records).
struct Element {
  enum class Kind { kName, kRecord, kInt, kBatch, kPair, kRecordId };
  // kRecordId: what became of the payload.
  enum class PayloadState : uint8_t {
    kUnread,    // not read yet: a PayloadFetcher reads it
    kChecked,   // read, checked and dropped
    kLabelled,  // the same, and `bytes` holds its label (RecordLabel): it is printable UTF-8
  };

  Kind kind = Kind::kInt;
  PayloadState payload_state = PayloadState::kUnread;  // kRecordId only
  std::string bytes;           // kName: the file name; kRecord: the payload (unless shared);
                               // kRecordId (kLabelled): the payload's label
  Origin origin;               // kRecord and kRecordId only
  std::vector<Element> items;  // kBatch: the elements; kPair: the one element
  // kRecord read by a parallel interleave: the payload is `view`, inside a
  // buffer shared with the records read in the same go (kept alive here).
  std::shared_ptr<const void> storage;
  std::string_view view;

  // A record's payload or a name: `view` when shared, else `bytes`.
  std::string_view payload() const { return storage ? view : std::string_view(bytes); }

  // The number an element holds, one accessor per meaning; each asserts
  // the kind. kInt: the integer.
  int64_t int_value() const {
    assert(kind == Kind::kInt);
    return number_;
  }
  void set_int_value(int64_t v) {
    assert(kind == Kind::kInt);
    number_ = v;
  }
  // kPair: the index enumerate() gave the element.
  int64_t pair_index() const {
    assert(kind == Kind::kPair);
    return number_;
  }
  void set_pair_index(int64_t i) {
    assert(kind == Kind::kPair);
    number_ = i;
  }
  // kRecordId: the size of the record's payload (read or not).
  uint64_t payload_size() const {
    assert(kind == Kind::kRecordId);
    return static_cast<uint64_t>(number_);
  }
  void set_payload_size(uint64_t size) {
    assert(kind == Kind::kRecordId);
    number_ = static_cast<int64_t>(size);
  }

  static Element Int(int64_t v);
  static Element Name(std::string name);

  // The label of doc/semantics.md, "Elements and labels": a file name as is; a record's payload
  // (printable UTF-8) or "file:index"; an integer in decimal; "index:label"
  // for a pair; for a record id, the label kept with it
  // (PayloadState::kLabelled), else "file:index". A batch has no single label:
  // REQUIRES kind != kBatch.
  std::string Label(LabelMode mode = LabelMode::kPayload) const;

  // Leaf elements held: 1, or those of a batch's items (batches of batches
  // counted through).
  uint64_t Leaves() const;

  // Payload bytes (records, names; a record id counts its payload's size),
  // batches summed. Inline for the common leaf (a record), which
  // callers sum over whole batches.
  uint64_t PayloadBytes() const {
    if (kind == Kind::kRecordId) return payload_size();
    return payload().size() + (items.empty() ? 0 : ItemsPayloadBytes());
  }
  // PayloadBytes() of the items, summed.
  uint64_t ItemsPayloadBytes() const;

 private:
  // kInt: the integer; kPair: the index; kRecordId: the payload's size.
  // Read and written only through the accessors above, which say which.
  int64_t number_ = 0;
};

// Leaves() and PayloadBytes() summed over `elements` (a batch's items).
uint64_t Leaves(std::span<const Element> elements);
uint64_t PayloadBytes(std::span<const Element> elements);

// Records of at most this many bytes whose payload is shared (Element::
// storage: a parallel interleave's packet of up to 256 KiB, a read by index's
// buffer) are copied out of it by a stage that holds them long (shuffle()'s
// buffer): otherwise each held record keeps its whole buffer alive, and a
// buffer of 1000 small records pins up to 1000 packets. A larger record is
// a fifth of its buffer or more, and copying it would cost more.
inline constexpr size_t kHeldCopyBytes = size_t{64} << 10;

// Gives each record in `e` (batches and pairs looked through) whose payload
// is shared and at most kHeldCopyBytes a copy of its own in `bytes`, letting
// go of the shared buffer. The payload and everything else stay the same.
void OwnSmallPayloads(Element& e);

// Whether the records of a built pipeline are record ids
// (BuildOptions::record_ids).
enum class RecordIds {
  kNone,      // no: records hold their payloads (take, run)
  kLabelled,  // record ids (Kind::kRecordId), each with its label when printable (layouts)
  kPlain,     // record ids alone
};

// Reads the payloads of record ids not read yet (Kind::kRecordId,
// PayloadState::kUnread) by offset and turns them into records (Kind::kRecord,
// the payload shared with the records read in the same go), or, unless
// `record_ids` is kNone, into record ids read and checked
// (PayloadState::kChecked, or kLabelled). Used after DATA sharding's filter
// when reading by index, so that a worker reads only the records it keeps.
// Not thread-safe.
class PayloadFetcher {
 public:
  explicit PayloadFetcher(RecordIds record_ids = RecordIds::kNone) : record_ids_(record_ids) {}

  // Notes the record ids not read yet in `e` (batches and pairs looked through).
  // `e` must stay in place until Fetch().
  void Add(Element& e);
  void Add(std::span<Element> elements) {
    for (Element& e : elements) Add(e);
  }

  // Reads every record noted since the last call, file by file in offset
  // order (see io::FetchRecords), and fills them in. Where a file's records
  // are not where its index said (it was rewritten since it was indexed, or
  // is damaged), the file's records are read by scanning it instead, by
  // their index in the file, and notes() names the index.
  // Error: NotFound; the scan's DataLoss naming the file and the record's
  // offset (a damaged file); DataLoss naming the index when a record planned
  // from it is past the file's end.
  Status Fetch();

  // Bytes read from files so far.
  uint64_t bytes_read() const { return bytes_read_; }

  // The indexes found not to describe their files, one line each ("F.idx
  // does not describe F (...): its records were read by scanning ...").
  const std::vector<std::string>& notes() const { return notes_; }

 private:
  RecordIds record_ids_;
  std::vector<Element*> pending_;
  uint64_t bytes_read_ = 0;
  std::vector<std::string> notes_;
};

// A stage's iterator (tf.data's IteratorBase::GetNext).
// Not thread-safe; one consumer.
class Iterator {
 public:
  virtual ~Iterator() = default;

  // Produces the next element into `out`.
  // Return values:
  //  * OK, end_of_sequence == false - `out` holds an element
  //  * OK, end_of_sequence == true  - the stage is done (and stays done)
  //  * an error                     - the stage failed (DataLoss names file and offset)
  virtual Status GetNext(Element& out, bool& end_of_sequence) = 0;

  // Passes over the next `n` elements, as n calls of GetNext would; sets
  // `skipped` to how many there were (fewer only at the end, which sets
  // `end_of_sequence`). A stage that can jump (a list of names) does so
  // without making the elements: a shard() over many names then costs its
  // share, not the whole list.
  virtual Status Skip(uint64_t n, uint64_t& skipped, bool& end_of_sequence);
};

// A stage's description: makes fresh iterators (one per epoch for repeat(),
// one per input element for interleave()). Immutable after construction and
// safe to share between threads.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual Result<std::unique_ptr<Iterator>> MakeIterator() const = 0;
};

// What the readers of several pipelines (the workers of a from-function
// layout) took from each file, as record counts: a reader takes a prefix of
// its file's records, so the records of a file read by anyone are those
// below the largest count, and those read by more than one worker those
// below the second largest of the workers' own. Memory: one entry per
// distinct file read (whose name is interned anyway), whatever the workers.
// Thread-safe.
class FileReadTally {
 public:
  // Worker `worker` closed `file` after taking its first `records` records.
  void Add(const std::string* file, int64_t worker, uint64_t records);

  struct Totals {
    uint64_t distinct = 0;  // records read by at least one worker
    uint64_t shared = 0;    // of those, read by more than one worker
  };
  Totals totals() const;
  // Whether some worker closed `file` (an interned path).
  bool Read(const std::string* file) const;

 private:
  struct Entry {
    int64_t best_worker = -1;
    uint64_t best = 0;    // the most records a worker took
    uint64_t second = 0;  // the most that another worker took
  };
  mutable std::mutex mu_;
  std::unordered_map<const std::string*, Entry> files_;
};

// The buffers of a build's live shuffle iterators, for a resume's cursor:
// each iterator registers itself while it lives (BuildOptions::
// shuffle_watch), and Snapshot() copies what each holds. Thread-safe.
class ShuffleWatch {
 public:
  // What a shuffle iterator shows of itself.
  class Buffer {
   public:
    virtual ~Buffer() = default;
    // The elements buffered, oldest first.
    virtual void CopyTo(std::vector<Element>& out) const = 0;
  };
  struct State {
    size_t pos = 0;      // the shuffle's byte offset in the pipeline text
    int64_t worker = 0;  // the worker whose pipeline it is in (ReadCounters::worker)
    std::vector<Element> elements;
  };
  void Register(const Buffer* buffer, size_t pos, int64_t worker);
  void Unregister(const Buffer* buffer);
  // Every live iterator's buffer, in the order they were made.
  std::vector<State> Snapshot() const;

 private:
  struct Entry {
    const Buffer* buffer;
    size_t pos;
    int64_t worker;
  };
  mutable std::mutex mu_;
  std::vector<Entry> live_;
};

// What a built pipeline's stages did, counted as they run: shared by every
// iterator of the build (thread-safe). Layouts account for every record
// with them; runs report the bytes.
struct ReadCounters {
  // Bytes of the records the readers consumed: framed, added per file as
  // it is closed; not the payloads fetched after a read by index
  // (PayloadFetcher).
  std::atomic<uint64_t> bytes_read{0};
  // File names the readers took (each file opened once per name).
  std::atomic<uint64_t> files{0};
  // Records in the short final batches that batch(drop_remainder=True) dropped.
  std::atomic<uint64_t> dropped_remainder{0};
  // Records skip() passed over (file names skipped before a reader are no
  // records and are not counted).
  std::atomic<uint64_t> skipped{0};
  // Records the readers took from their files (each read of a file counted).
  std::atomic<uint64_t> records_read{0};
  // The worker whose pipeline counts here; when `tally` is set, each file
  // closed is told to it as read by that worker.
  std::shared_ptr<FileReadTally> tally;
  int64_t worker = 0;

  // A reader closed `file` (may be null: not a named file) after taking
  // `bytes` framed bytes and its first `records` records.
  void FileClosed(const std::string* file, uint64_t bytes, uint64_t records);
};

}  // namespace tfdist::data

#endif  // TFDIST_DATA_DATASET_H_
