// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist resume: where a preempted job stands after global step N, and the
// rest of that epoch written as data plain TensorFlow reads (doc/resume.md).

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <variant>

#include "commands.h"
#include "distribute_args.h"
#include "file_args.h"
#include "layout_render.h"
#include "pipeline_args.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/data/ops.h"
#include "tfdist/distribute/resume.h"
#include "tfdist/io/output_set.h"
#include "tfdist/io/record_writer.h"
#include "tfdist/io/storage.h"
#include "validators.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct ResumeArgs {
  PipelineArgs pipeline;
  DistributeArgs distribute;
  FormatArgs format;
  int64_t at_step = 0;
  std::optional<int64_t> epoch;
  int64_t epochs = 1;
  bool detail = false;
  std::string write;
  bool force = false;
  bool no_fsync = false;
  std::string manifest;
  std::optional<int64_t> to_workers, to_replicas;
  int64_t epochs_ahead = 0;
  std::optional<int64_t> steps_per_epoch;
};

// The manifest's format version (doc/resume.md).
constexpr int kManifestVersion = 1;

// A file of the dataset as it is now: what the fingerprint covers.
struct DatasetFile {
  std::string name;
  uint64_t size = 0;
  // Local files: inode and times (ns), the index-validity stamp; objects:
  // the store's version (ETag or generation).
  uint64_t inode = 0;
  int64_t mtime_ns = 0, ctime_ns = 0;
  std::string version;
};

std::string Hex128(XXH128_hash_t h) { return fmt::format("{:016x}{:016x}", h.high64, h.low64); }

// Appends the file names `pipeline` reads (a reader's names: list_files'
// matches, from_tensor_slices' names, TFRecordDataset's files) to `out`.
Status AddDatasetNames(const data::Pipeline& pipeline, std::vector<std::string>& out) {
  bool reads = false;
  for (const data::Op& op : pipeline.ops) {
    reads = reads || std::holds_alternative<data::TFRecordOp>(op.params) ||
            std::holds_alternative<data::InterleaveOp>(op.params);
  }
  for (const data::Op& op : pipeline.ops) {
    if (std::holds_alternative<data::ListFilesOp>(op.params)) {
      TFDIST_ASSIGN_OR_RETURN(std::vector<data::Op> lowered,
                              data::LowerListFiles(op, pipeline.text));
      for (const data::Op& l : lowered) {
        if (const auto* f = std::get_if<data::FromTensorSlicesOp>(&l.params)) {
          for (std::string_view n : f->names) out.emplace_back(n);
        }
      }
    } else if (const auto* f = std::get_if<data::FromTensorSlicesOp>(&op.params);
               f && reads && !f->integers) {
      for (std::string_view n : f->names) out.emplace_back(n);
    } else if (const auto* t = std::get_if<data::TFRecordOp>(&op.params)) {
      for (std::string_view n : t->files) out.emplace_back(n);
    } else if (const auto* c = std::get_if<data::ConcatenateOp>(&op.params); c && c->dataset) {
      TFDIST_RETURN_IF_ERROR(AddDatasetNames(*c->dataset, out));
    }
  }
  return Status::OK();
}

// The first reader of `pipeline` (a concatenate()'s looked through) told
// its files are compressed; null when none is.
const data::Op* CompressedReader(const data::Pipeline& pipeline) {
  for (const data::Op& op : pipeline.ops) {
    io::Compression c = io::Compression::kNone;
    if (const auto* t = std::get_if<data::TFRecordOp>(&op.params)) c = t->compression;
    if (const auto* i = std::get_if<data::InterleaveOp>(&op.params)) c = i->compression;
    if (c == io::Compression::kGzip || c == io::Compression::kZlib) return &op;
    if (const auto* k = std::get_if<data::ConcatenateOp>(&op.params); k && k->dataset) {
      if (const data::Op* inner = CompressedReader(*k->dataset)) return inner;
    }
  }
  return nullptr;
}

// Every file the workers' pipelines read, sorted, each once, as it is now.
Result<std::vector<DatasetFile>> DatasetFiles(const data::Pipeline& pipeline,
                                              const dist::DistributeOptions& d) {
  std::vector<std::string> names;
  if (d.worker_pipelines) {
    for (const data::Pipeline& p : *d.worker_pipelines) {
      TFDIST_RETURN_IF_ERROR(AddDatasetNames(p, names));
    }
  } else {
    TFDIST_RETURN_IF_ERROR(AddDatasetNames(pipeline, names));
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::vector<DatasetFile> files;
  files.reserve(names.size());
  for (std::string& name : names) {
    DatasetFile f;
    if (io::IsRemote(name)) {
      TFDIST_ASSIGN_OR_RETURN(io::ObjectInfo info, io::StatObject(name));
      f.size = info.size;
      f.version = std::move(info.version);
    } else {
      struct stat st;
      if (stat(name.c_str(), &st) != 0) {
        return ErrnoError(errno, StatusCode::kNotFound, name);
      }
      f.size = static_cast<uint64_t>(st.st_size);
      f.inode = static_cast<uint64_t>(st.st_ino);
      f.mtime_ns = int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec;
      f.ctime_ns = int64_t{st.st_ctim.tv_sec} * 1000000000 + st.st_ctim.tv_nsec;
    }
    f.name = std::move(name);
    files.push_back(std::move(f));
  }
  return files;
}

// One line per file, hashed: names, sizes, inodes, times and versions.
std::string DatasetFingerprint(const std::vector<DatasetFile>& files) {
  XXH3_state_t* state = XXH3_createState();
  XXH3_128bits_reset(state);
  for (const DatasetFile& f : files) {
    const std::string line = fmt::format("{}\t{}\t{}\t{}\t{}\t{}\n", f.name, f.size, f.inode,
                                         f.mtime_ns, f.ctime_ns, f.version);
    XXH3_128bits_update(state, line.data(), line.size());
  }
  const std::string out = Hex128(XXH3_128bits_digest(state));
  XXH3_freeState(state);
  return out;
}

// What decides the order: the pipelines, the topology, the policy and
// split asked for, the epochs and every seed.
std::string PipelineFingerprint(const data::Pipeline& pipeline, const dist::DistributeOptions& d,
                                const data::BuildOptions& build) {
  std::string text = pipeline.text;
  if (d.worker_pipelines) {
    for (const data::Pipeline& p : *d.worker_pipelines) text += "\n--\n" + p.text;
  }
  text += fmt::format("\n{} {} {} {} {} {} {}", dist::PolicyName(d.policy),
                      dist::SplitName(d.split), d.api == dist::Api::kFromFunction ? "fn" : "ds",
                      d.topology.workers, d.topology.replicas, d.epochs,
                      build.default_seed ? fmt::format("{}", *build.default_seed) : "-");
  // AUTOTUNE's cycle lengths follow the CPUs, and the order with them.
  text += fmt::format(" cpus {}", data::AutotuneCpus(build));
  if (build.global_seed) {
    text += fmt::format(" {} {}", build.global_seed->seed, build.global_seed->op_seed_offset);
  }
  return Hex128(XXH3_128bits(text.data(), text.size()));
}

nlohmann::ordered_json RunsJson(const dist::SizeRuns& runs) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const auto& [sizes, count] : runs) out.push_back({sizes, count});
  return out;
}

double Percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

nlohmann::ordered_json TopologyJson(const dist::Topology& t) {
  return {{"workers", t.workers}, {"replicas", t.replicas}};
}

nlohmann::ordered_json WorkersJson(const std::vector<dist::WorkerCursor>& workers) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const dist::WorkerCursor& w : workers) {
    out.push_back({{"worker", w.worker},
                   {"consumed", w.consumed},
                   {"remaining", w.remaining},
                   {"remaining_bytes", w.remaining_bytes},
                   {"remaining_batches", w.remaining_batches},
                   {"replica_consumed", w.replica_consumed},
                   {"replica_remaining", w.replica_remaining},
                   {"batch_sizes", RunsJson(w.batch_sizes)},
                   {"first_remaining", w.first_remaining},
                   {"last_remaining", w.last_remaining}});
  }
  return out;
}

// What happens after the epoch, in words (doc/resume.md, "After the epoch").
std::string AfterText(const dist::ResumeCursor& c, int64_t epochs) {
  if (c.epoch >= epochs) {
    return fmt::format("epoch {} is the last of the {} planned: the remainder ends the run",
                       c.epoch, epochs);
  }
  const int64_t next = c.epoch + 1;
  return fmt::format(
      "{} follow{}: a fresh process that builds the original pipeline starts at epoch 1's "
      "order, not epoch {}'s; --write with --epochs-ahead {} writes {} whole in {} order",
      next == epochs ? fmt::format("epoch {}", next) : fmt::format("epochs {} to {}", next, epochs),
      next == epochs ? "s" : "", next, epochs - c.epoch, next == epochs ? "it" : "them",
      next == epochs ? "its" : "their");
}

// The summary --json prints (at most 1 KB) and the manifest holds.
nlohmann::ordered_json CursorJson(const dist::ResumeCursor& c, const ResumeArgs& o,
                                  const data::BuildOptions& build, const std::string& dataset_fp,
                                  size_t files, const std::string& pipeline_fp) {
  nlohmann::ordered_json j;
  j["epoch"] = c.epoch;
  j["epochs"] = o.epochs;
  j["at_step"] = c.at_step ? nlohmann::ordered_json(*c.at_step) : nullptr;
  j["step_in_epoch"] = c.step_in_epoch;
  j["epoch_steps"] = c.epoch_steps;
  j["first_step"] = c.first_step ? nlohmann::ordered_json(*c.first_step) : nullptr;
  j["earlier_epochs"] = c.epoch == 1 ? "none" : c.passes_skipped ? "opened unread" : "replayed";
  if (o.steps_per_epoch) j["steps_per_epoch"] = *o.steps_per_epoch;
  j["topology"] = TopologyJson(c.topology);
  j["policy"] = dist::PolicyName(c.decision.applied);
  j["split"] = dist::SplitName(c.decision.split);
  j["global_batch_size"] = c.decision.global_batch_size
                               ? nlohmann::ordered_json(*c.decision.global_batch_size)
                               : nullptr;
  j["seeds"] = {{"global_seed",
                 build.global_seed ? nlohmann::ordered_json(build.global_seed->seed) : nullptr},
                {"op_seed_offset", build.global_seed ? build.global_seed->op_seed_offset : 0}};
  j["records"] = {{"consumed", c.consumed},
                  {"remaining", c.remaining},
                  {"remaining_percent", Percent(c.remaining, c.consumed + c.remaining)}};
  if (c.to) {
    j["to"] = TopologyJson(*c.to);
    j["to_steps"] = c.to_steps;
    j["to_global_batch_size"] = c.to_global_batch;
  }
  j["fingerprint"] = {{"dataset", dataset_fp}, {"files", files}, {"pipeline", pipeline_fp}};
  return j;
}

// Reads an earlier resume's JSON (its --json, or DIR/manifest.json) and
// compares the dataset's fingerprint with the one it recorded.
// Error: InvalidArgument when the files differ (naming the first that
// does), or the file is not a resume's JSON.
Status CheckManifest(const std::string& path, const std::vector<DatasetFile>& files,
                     const std::string& fingerprint) {
  std::ifstream in(path);
  if (!in) {
    return Status::InvalidArgument(
        fmt::format("--manifest {}: cannot read it: {}", path, std::strerror(errno)));
  }
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  const nlohmann::json* fp = nullptr;
  if (j.is_object()) {
    const nlohmann::json& cursor = j.contains("cursor") ? j["cursor"] : j;
    if (cursor.is_object() && cursor.contains("fingerprint") && cursor["fingerprint"].is_object() &&
        cursor["fingerprint"].contains("dataset") && cursor["fingerprint"]["dataset"].is_string()) {
      fp = &cursor["fingerprint"]["dataset"];
    }
  }
  if (fp == nullptr) {
    return Status::InvalidArgument(fmt::format(
        "{}: not a resume's JSON (tfdist resume --json, or the manifest.json of --write)", path));
  }
  if (fp->get<std::string>() == fingerprint) return Status::OK();
  std::string what = "the dataset's files changed";
  if (j.contains("dataset") && j["dataset"].is_object() && j["dataset"].contains("files") &&
      j["dataset"]["files"].is_array()) {
    // Name the first file that differs.
    std::map<std::string, const nlohmann::json*> then;
    for (const nlohmann::json& f : j["dataset"]["files"]) {
      if (f.is_object() && f.contains("name") && f["name"].is_string()) {
        then[f["name"].get<std::string>()] = &f;
      }
    }
    for (const DatasetFile& f : files) {
      auto it = then.find(f.name);
      if (it == then.end()) {
        what = fmt::format("{} is new", f.name);
        break;
      }
      const nlohmann::json& t = *it->second;
      auto differs = [&](const char* key, auto now) {
        return !t.contains(key) || t[key] != nlohmann::json(now);
      };
      std::vector<std::string> changed;
      if (differs("size", f.size)) changed.push_back("size");
      if (differs("mtime_ns", f.mtime_ns)) changed.push_back("modification time");
      if (differs("ctime_ns", f.ctime_ns)) changed.push_back("change time");
      if (differs("inode", f.inode)) changed.push_back("inode");
      if (differs("version", f.version)) changed.push_back("version");
      then.erase(it);
      if (!changed.empty()) {
        what = fmt::format("{} changed ({})", f.name, fmt::join(changed, ", "));
        break;
      }
    }
    if (what == "the dataset's files changed" && !then.empty()) {
      what = fmt::format("{} is gone", then.begin()->first);
    }
  }
  return Status::InvalidArgument(fmt::format(
      "cannot resume exactly: the dataset is not the one {} was made for: {} (its fingerprint "
      "was {}, it is {} now)",
      path, what, fp->get<std::string>(), fingerprint));
}

// The names of epoch `e`'s files, written whole by --epochs-ahead.
std::string EpochPrefix(int64_t e) { return fmt::format("epoch-{:05d}-", e); }

// The input function --write leaves beside the records (doc/resume.md,
// "The input function").
constexpr char kInputFn[] = R"PY(# Written by tfdist resume: the rest of an epoch, for
# tf.distribute.Strategy.distribute_datasets_from_function(input_fn).
#
# Worker i (input_context.input_pipeline_id) reads worker-i's file, whose
# records are those it delivers after the resume step, in delivery order,
# and regroups them into the per-replica batches of the uninterrupted run:
# manifest.json lists their sizes (empty and partial batches included), and
# rebatch() cycles through that list, so its i-th batch goes to local replica
# i mod R in step i // R + 1. The element spec is TensorSpec([None], tf.string).
import json
import os

import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
MANIFEST = "manifest.json"


def manifest():
    with open(os.path.join(HERE, MANIFEST)) as f:
        return json.load(f)


def input_fn(input_context):
    m = manifest()
    worker = m["workers"][input_context.input_pipeline_id]
    # Runs of steps: [the worker's batch sizes in one step, steps in a row].
    sizes = [size for step, count in worker["batch_sizes"] for _ in range(count) for size in step]
    dataset = tf.data.TFRecordDataset(os.path.join(HERE, worker["file"]))
    if not sizes:
        return dataset.batch(1)
    # rebatch() cycles through its sizes, and finds the end of its input only
    # when a size above 0 needs a record: the 1 after the last size ends the
    # dataset there, rather than at sizes of 0 from the list's start again.
    return dataset.batch(1).rebatch(sizes + [1])
)PY";

// Writes each worker's remaining records, fetched by offset with both CRCs
// checked, into its file of the output set, a chunk at a time.
class RemainderWriter : public dist::RemainderSink {
 public:
  RemainderWriter(io::OutputSet& set, std::string dir, std::string prefix, int64_t workers,
                  bool sync)
      : set_(set), dir_(std::move(dir)), prefix_(std::move(prefix)), sync_(sync) {
    workers_.resize(static_cast<size_t>(workers));
    // Chunks of at most 64 MiB of payload and 256 Ki records in all.
    chunk_records_ = std::max<uint64_t>(16, (uint64_t{1} << 18) / workers_.size());
    chunk_bytes_ = std::max<uint64_t>(uint64_t{1} << 20, (uint64_t{64} << 20) / workers_.size());
  }

  // A worker's file: PREFIXworker-IIIII-of-WWWWW.tfrecord.
  static std::string FileName(std::string_view prefix, int64_t worker, int64_t workers) {
    return fmt::format("{}worker-{:05d}-of-{:05d}.tfrecord", prefix, worker, workers);
  }

  Status OnBatch(int64_t worker, int64_t /*replica*/,
                 std::vector<data::Element>& elements) override {
    Worker& w = workers_[static_cast<size_t>(worker)];
    for (data::Element& e : elements) {
      if (e.kind != data::Element::Kind::kRecordId) {
        return Status::InvalidArgument(fmt::format(
            "--write writes records, and the pipeline's elements are not records (\"{}\")",
            e.kind == data::Element::Kind::kBatch ? "[batch]" : e.Label(data::LabelMode::kRef)));
      }
      w.bytes += e.payload_size();
      e.payload_state = data::Element::PayloadState::kUnread;
      w.chunk.push_back(std::move(e));
    }
    if (w.chunk.size() >= chunk_records_ || w.bytes >= chunk_bytes_) {
      return Flush(worker);
    }
    return Status::OK();
  }

  // Flushes every chunk and finishes every file.
  Status Finish() {
    for (size_t i = 0; i < workers_.size(); ++i) {
      TFDIST_RETURN_IF_ERROR(Flush(static_cast<int64_t>(i)));
      Worker& w = workers_[i];
      TFDIST_RETURN_IF_ERROR(w.writer->Finish());
      set_.Add(w.writer->TakeFile());
      w.writer.reset();
    }
    return Status::OK();
  }

  uint64_t records(int64_t worker) const {
    const Worker& w = workers_[static_cast<size_t>(worker)];
    return w.written;
  }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  struct Worker {
    std::unique_ptr<io::RecordWriter> writer;
    std::vector<data::Element> chunk;
    uint64_t bytes = 0;  // payload bytes in the chunk
    uint64_t written = 0;
  };

  Status Flush(int64_t worker) {
    Worker& w = workers_[static_cast<size_t>(worker)];
    if (!w.writer) {
      TFDIST_ASSIGN_OR_RETURN(
          std::unique_ptr<io::AtomicFile> file,
          set_.Create(fmt::format(
              "{}/{}", dir_, FileName(prefix_, worker, static_cast<int64_t>(workers_.size())))));
      io::RecordWriterOptions options;
      options.sync = sync_;
      TFDIST_ASSIGN_OR_RETURN(w.writer, io::RecordWriter::Open(std::move(file), options));
    }
    if (w.chunk.empty()) return Status::OK();
    data::PayloadFetcher fetcher;
    fetcher.Add(std::span<data::Element>(w.chunk));
    TFDIST_RETURN_IF_ERROR(fetcher.Fetch());
    bytes_read_ += fetcher.bytes_read();
    for (const data::Element& e : w.chunk) TFDIST_RETURN_IF_ERROR(w.writer->Write(e.payload()));
    w.written += w.chunk.size();
    w.chunk.clear();
    w.bytes = 0;
    return Status::OK();
  }

  io::OutputSet& set_;
  std::string dir_;
  std::string prefix_;
  bool sync_;
  std::vector<Worker> workers_;
  uint64_t chunk_records_ = 0, chunk_bytes_ = 0;
  uint64_t bytes_read_ = 0;
};

// --write keeps a file open per worker while the epoch streams by: the
// soft limit on open files is raised to fit them and the readers (up to
// the hard limit). Error: ResourceExhausted naming both numbers when even
// the hard limit is too low.
Status EnoughFiles(int64_t workers) {
  constexpr rlim_t kSpare = 256;  // the readers, the index files, the set's own
  const rlim_t need = static_cast<rlim_t>(workers) + kSpare;
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= need) return Status::OK();
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < need) {
    return Status::ResourceExhausted(fmt::format(
        "--write keeps one file open per worker: {} workers and the readers need about {} open "
        "files, and this process may open at most {} (ulimit -Hn)",
        workers, need, limit.rlim_max));
  }
  limit.rlim_cur = need;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    return ErrnoError(errno, StatusCode::kResourceExhausted, "raising the open-file limit");
  }
  return Status::OK();
}

// A text file of the output set.
Status WriteText(io::OutputSet& set, const std::string& path, std::string_view text, bool sync) {
  TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<io::AtomicFile> file, set.Create(path));
  std::unique_ptr<io::ByteSink> sink = file->TakeSink(sync);
  Status s = sink->Write(text);
  if (s.ok()) s = sink->Finish();
  sink.reset();
  if (s.ok()) s = file->CloseFile();
  if (!s.ok()) return s;
  set.Add(std::move(file));
  return Status::OK();
}

// How the epochs before the step's were passed, in words.
std::string ReplayText(const dist::ResumeCursor& c, const ResumeArgs& o) {
  if (c.epoch == 1) return "epoch 1 from its start";
  if (c.passes_skipped) {
    return fmt::format(
        "epoch {} alone; the epoch{} before it opened and closed unread, which moves the "
        "shuffles' seeds as reading {} would",
        c.epoch, c.epoch == 2 ? "" : "s", c.epoch == 2 ? "it" : "them");
  }
  if (o.steps_per_epoch) {
    return fmt::format("the pass from step 1, whose first {} steps are epochs 1 to {}",
                       (c.epoch - 1) * *o.steps_per_epoch, c.epoch - 1);
  }
  const std::string before = c.epoch == 2 ? "epoch 1" : fmt::format("epochs 1 to {}", c.epoch - 1);
  if (o.epoch) {
    return fmt::format(
        "epoch {} and {} before it: a shuffle before repeat() or cache(), or in a concatenate(), "
        "draws its seeds as its pass is read, so an epoch cannot be passed unread",
        c.epoch, before);
  }
  return fmt::format("epoch {} and {} before it, to count steps (--epoch E replays only epoch E)",
                     c.epoch, before);
}

// The buffered elements the text shows of each shuffle (--json shows all).
constexpr size_t kShownBuffered = 6;

void PrintCursor(const dist::ResumeCursor& c, const ResumeArgs& o) {
  const uint64_t epoch_records = c.consumed + c.remaining;
  if (c.at_step) {
    fmt::print("resume after step {} (epoch {} of {}: its step {} of {}{})\n", *c.at_step, c.epoch,
               o.epochs, c.step_in_epoch, c.epoch_steps,
               c.epoch_steps == 0 ? ""
                                  : fmt::format(", steps {}..{}", *c.first_step,
                                                *c.first_step + c.epoch_steps - 1));
  } else {
    fmt::print("resume after step {} of epoch {} of {} (its {} step{})\n", c.step_in_epoch, c.epoch,
               o.epochs, c.epoch_steps, c.epoch_steps == 1 ? "" : "s");
  }
  fmt::print("replayed: {}\n", ReplayText(c, o));
  fmt::print(
      "topology: {} worker{} x {} replica{}; {}; split {}{}\n", c.topology.workers,
      c.topology.workers == 1 ? "" : "s", c.topology.replicas, c.topology.replicas == 1 ? "" : "s",
      dist::PolicyName(c.decision.applied), dist::SplitName(c.decision.split),
      c.decision.global_batch_size ? fmt::format("; global batch {}", *c.decision.global_batch_size)
                                   : "");
  fmt::print("records of the epoch: {} received up to the step, {} to come ({:.1f}%)\n", c.consumed,
             c.remaining, Percent(c.remaining, epoch_records));
  fmt::print("{:>8}  {:>10}  {:>10}  {:>8}  {}\n", "worker", "consumed", "remaining", "batches",
             "next record .. last");
  for (const dist::WorkerCursor& w : c.workers) {
    if (o.distribute.worker && w.worker != *o.distribute.worker) continue;
    fmt::print("{:>8}  {:>10}  {:>10}  {:>8}  {}\n", w.worker, w.consumed, w.remaining,
               w.remaining_batches,
               w.remaining == 0 ? "-"
                                : fmt::format("{} .. {}", TerminalText(w.first_remaining),
                                              TerminalText(w.last_remaining)));
    if (o.detail) {
      for (size_t r = 0; r < w.replica_consumed.size(); ++r) {
        fmt::print("{:>8}  {:>10}  {:>10}  replica {}\n", "", w.replica_consumed[r],
                   w.replica_remaining[r], r);
      }
    }
  }
  if (o.detail) {
    for (const dist::ShuffleBuffer& b : c.shuffles) {
      if (o.distribute.worker && !c.shared_reading && b.worker != *o.distribute.worker) continue;
      std::string shown;
      for (size_t i = 0; i < b.elements.size() && i < kShownBuffered; ++i) {
        shown += fmt::format("{}{}", i ? ", " : "", TerminalText(b.elements[i]));
      }
      if (b.elements.size() > kShownBuffered) shown += ", ...";
      fmt::print("shuffle at column {} ({}): {} buffered{}{}\n", b.pos + 1,
                 c.shared_reading ? "every worker's reading" : fmt::format("worker {}", b.worker),
                 b.elements.size(), shown.empty() ? "" : ": ", shown);
    }
  }
  if (c.to) {
    fmt::print(
        "to: {} worker{} x {} replica{}: the {} records to come, in {} step{} of global "
        "batch {}\n",
        c.to->workers, c.to->workers == 1 ? "" : "s", c.to->replicas,
        c.to->replicas == 1 ? "" : "s", c.remaining, c.to_steps, c.to_steps == 1 ? "" : "s",
        c.to_global_batch);
    fmt::print("{:>8}  {:>10}  {:>8}  {}\n", "worker", "remaining", "batches",
               "next record .. last");
    for (const dist::WorkerCursor& w : c.to_workers) {
      fmt::print("{:>8}  {:>10}  {:>8}  {}\n", w.worker, w.remaining, w.remaining_batches,
                 w.remaining == 0 ? "-"
                                  : fmt::format("{} .. {}", TerminalText(w.first_remaining),
                                                TerminalText(w.last_remaining)));
    }
  }
  fmt::print(
      "naive restart: rerunning the epoch from its start trains {} records twice ({:.1f}% of "
      "it); skipping to the next epoch leaves {} never seen in it ({:.1f}%)\n",
      c.consumed, Percent(c.consumed, epoch_records), c.remaining,
      Percent(c.remaining, epoch_records));
  fmt::print("after: {}\n", AfterText(c, o.epochs));
}

int RunResume(const ResumeArgs& o) {
  const bool json = o.format.json();
  Result<ResolvedDistribute> resolved = ResolveDistributeArgs(o.distribute, !o.distribute.worker);
  if (!resolved.ok()) return ReportError(resolved.status(), json);
  dist::DistributeOptions& d = resolved->options;
  d.epochs = o.epochs;
  Result<LoadedPipeline> loaded = LoadDistributedPipeline(o.pipeline, o.distribute, d, json);
  if (!loaded.ok()) return ExitCodeFor(loaded.status());
  const data::Pipeline& pipeline = loaded->pipeline;
  const data::BuildOptions build = o.pipeline.build_options(*loaded);

  Result<std::vector<DatasetFile>> files = DatasetFiles(pipeline, d);
  if (!files.ok()) return ReportPipelineError(files.status(), pipeline.text, json);
  const std::string dataset_fp = DatasetFingerprint(*files);
  const std::string pipeline_fp = PipelineFingerprint(pipeline, d, build);
  if (!o.manifest.empty()) {
    if (Status s = CheckManifest(o.manifest, *files, dataset_fp); !s.ok()) {
      return ReportError(s, json);
    }
  }

  dist::ResumeOptions ro;
  ro.at_step = o.at_step;
  ro.epoch = o.epoch;
  ro.steps_per_epoch = o.steps_per_epoch;
  ro.shuffle_buffers = o.detail;
  if (o.to_workers || o.to_replicas) {
    ro.to = dist::Topology{o.to_workers.value_or(d.topology.workers),
                           o.to_replicas.value_or(d.topology.replicas)};
  }
  const dist::Topology out_topology = ro.to.value_or(d.topology);

  if (o.epochs_ahead > 0) {
    if (o.write.empty()) {
      return ReportError(Status::InvalidArgument("--epochs-ahead writes epochs: it needs --write"),
                         json);
    }
  }
  std::unique_ptr<io::OutputSet> set;
  std::unique_ptr<RemainderWriter> writer;
  if (!o.write.empty()) {
    // The records written are fetched by their offsets, which a compressed
    // stream does not allow.
    const data::Pipeline* compressed = CompressedReader(pipeline) ? &pipeline : nullptr;
    if (d.worker_pipelines) {
      for (const data::Pipeline& p : *d.worker_pipelines) {
        if (CompressedReader(p)) compressed = &p;
      }
    }
    if (compressed != nullptr) {
      const data::Op* op = CompressedReader(*compressed);
      return ReportPipelineError(
          data::PositionError(compressed->text, op->pos,
                              "--write fetches each record to come by its offset, and this "
                              "reader's files are compressed: write an uncompressed copy first "
                              "(tfdist convert --output-compression none) and resume from it"),
          compressed->text, json);
    }
    if (Status s = EnoughFiles(out_topology.workers); !s.ok()) return ReportError(s, json);
    io::OutputSetOptions so;
    so.replace = o.force;
    so.sync = !o.no_fsync;
    so.command = "resume";
    so.note = PrintNote;
    Result<std::unique_ptr<io::OutputSet>> begun = io::OutputSet::Begin({&o.write, 1}, so);
    if (!begun.ok()) return ReportError(begun.status(), json);
    set = std::move(*begun);
    if (Status s = set->ExpectFamily({o.write + "/worker", ".tfrecord"}); !s.ok()) {
      return ReportError(s, json);
    }
    writer =
        std::make_unique<RemainderWriter>(*set, o.write, "", out_topology.workers, !o.no_fsync);
  }
  Result<dist::ResumeCursor> cursor = dist::LocateResume(pipeline, d, build, ro, writer.get());
  if (!cursor.ok()) return ReportPipelineError(cursor.status(), pipeline.text, json);
  const dist::ResumeCursor& c = *cursor;
  nlohmann::ordered_json summary = CursorJson(c, o, build, dataset_fp, files->size(), pipeline_fp);

  // What --write leaves for one epoch's batches: the workers' files (done
  // by `w`), PREFIXmanifest.json and PREFIXinput_fn.py.
  nlohmann::ordered_json dataset_json = nlohmann::ordered_json::array();
  if (set) {
    for (const DatasetFile& f : *files) {
      dataset_json.push_back({{"name", f.name},
                              {"size", f.size},
                              {"inode", f.inode},
                              {"mtime_ns", f.mtime_ns},
                              {"ctime_ns", f.ctime_ns},
                              {"version", f.version}});
    }
  }
  // `cursor_json` is CursorJson of `part`.
  auto write_part = [&](const std::string& prefix, RemainderWriter& w,
                        const dist::ResumeCursor& part,
                        const nlohmann::ordered_json& cursor_json) -> Status {
    TFDIST_RETURN_IF_ERROR(w.Finish());
    nlohmann::ordered_json manifest;
    manifest["tfdist_resume"] = kManifestVersion;
    manifest["cursor"] = cursor_json;
    manifest["after"] = AfterText(part, o.epochs);
    manifest["pipeline"] = {{"text", pipeline.text}, {"fingerprint", pipeline_fp}};
    manifest["dataset"] = {{"fingerprint", dataset_fp}, {"files", dataset_json}};
    manifest["topology"] = TopologyJson(out_topology);
    nlohmann::ordered_json workers = nlohmann::ordered_json::array();
    for (const dist::WorkerCursor& wc : part.to ? part.to_workers : part.workers) {
      workers.push_back(
          {{"worker", wc.worker},
           {"file", RemainderWriter::FileName(prefix, wc.worker, out_topology.workers)},
           {"records", wc.remaining},
           {"bytes", wc.remaining_bytes},
           {"batches", wc.remaining_batches},
           {"batch_sizes", RunsJson(wc.batch_sizes)}});
    }
    manifest["workers"] = std::move(workers);
    std::string input_fn = kInputFn;
    const std::string name = "MANIFEST = \"manifest.json\"";
    input_fn.replace(input_fn.find(name), name.size(),
                     fmt::format("MANIFEST = \"{}manifest.json\"", prefix));
    TFDIST_RETURN_IF_ERROR(WriteText(*set, fmt::format("{}/{}manifest.json", o.write, prefix),
                                     manifest.dump(1) + "\n", !o.no_fsync));
    return WriteText(*set, fmt::format("{}/{}input_fn.py", o.write, prefix), input_fn, !o.no_fsync);
  };
  if (writer) {
    if (Status s = write_part("", *writer, c, summary); !s.ok()) return ReportError(s, json);
    // The epochs after, whole: each replayed alone (ResumeOptions::epoch).
    if (c.epoch + o.epochs_ahead > o.epochs) {
      return ReportError(
          Status::InvalidArgument(fmt::format(
              "--epochs-ahead {}: epoch {} is followed by {} of the {} planned (--epochs)",
              o.epochs_ahead, c.epoch, o.epochs - c.epoch, o.epochs)),
          json);
    }
    for (int64_t e = c.epoch + 1; e <= c.epoch + o.epochs_ahead; ++e) {
      const std::string prefix = EpochPrefix(e);
      if (Status s = set->ExpectFamily({o.write + "/" + prefix + "worker", ".tfrecord"}); !s.ok()) {
        return ReportError(s, json);
      }
      RemainderWriter ahead(*set, o.write, prefix, out_topology.workers, !o.no_fsync);
      dist::ResumeOptions whole = ro;
      whole.epoch = e;
      whole.at_step = 0;
      Result<dist::ResumeCursor> next = dist::LocateResume(pipeline, d, build, whole, &ahead);
      if (!next.ok()) return ReportPipelineError(next.status(), pipeline.text, json);
      if (Status s =
              write_part(prefix, ahead, *next,
                         CursorJson(*next, o, build, dataset_fp, files->size(), pipeline_fp));
          !s.ok()) {
        return ReportError(s, json);
      }
    }
    if (Status s = set->Commit(); !s.ok()) return ReportError(s, json);
  }

  if (json) {
    if (o.detail) {
      std::vector<dist::WorkerCursor> shown;
      for (const dist::WorkerCursor& w : c.workers) {
        if (!o.distribute.worker || w.worker == *o.distribute.worker) shown.push_back(w);
      }
      summary["workers"] = WorkersJson(shown);
      if (c.to) summary["to_workers"] = WorkersJson(c.to_workers);
      nlohmann::ordered_json buffers = nlohmann::ordered_json::array();
      for (const dist::ShuffleBuffer& b : c.shuffles) {
        if (o.distribute.worker && !c.shared_reading && b.worker != *o.distribute.worker) continue;
        buffers.push_back({{"worker", c.shared_reading ? nlohmann::ordered_json(nullptr)
                                                       : nlohmann::ordered_json(b.worker)},
                           {"column", b.pos + 1},
                           {"elements", b.elements}});
      }
      summary["shuffle_buffers"] = std::move(buffers);
      summary["after"] = AfterText(c, o.epochs);
    }
    PrintJson(summary);
    return 0;
  }
  PrintCursor(c, o);
  if (!o.write.empty()) {
    std::string folder = o.write;
    while (folder.size() > 1 && folder.back() == '/') folder.pop_back();
    fmt::print("wrote: {}/ ({} worker file{}, manifest.json, input_fn.py){}\n",
               TerminalText(folder), out_topology.workers, out_topology.workers == 1 ? "" : "s",
               o.epochs_ahead == 0
                   ? ""
                   : fmt::format("; epoch{} {} whole: {}*", o.epochs_ahead == 1 ? "" : "s",
                                 o.epochs_ahead == 1 ? fmt::format("{}", c.epoch + 1)
                                                     : fmt::format("{} to {}", c.epoch + 1,
                                                                   c.epoch + o.epochs_ahead),
                                 o.epochs_ahead == 1 ? EpochPrefix(c.epoch + 1) : "epoch-*-"));
  }
  return 0;
}

}  // namespace

void AddResumeCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<ResumeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "resume",
      "Where a preempted job stands after global step N (epoch, step, each worker's records "
      "received and to come), and the rest of that epoch written as TFRecord files with an "
      "input function that feeds every replica exactly what the uninterrupted run would");
  AddPipelineArgs(*cmd, &o->pipeline);
  AddIndexDirOption(*cmd);
  AddDistributeArgs(*cmd, &o->distribute,
                    "Show only this worker's cursor (every worker is replayed)", "");
  // The replay runs to the end of the step's epoch: no --steps bounds it.
  cmd->remove_option(cmd->get_option("--steps"));
  AddFormatOptions(*cmd, &o->format, "the cursor, one line per worker",
                   "the cursor as one JSON object of at most 1 KB (--detail adds every worker)");
  cmd->add_option("--at-step", o->at_step,
                  "The last global step the job completed (0: none), counted across epochs as "
                  "the training loop counts them, or within --epoch")
      ->required()
      ->check(IntAtLeast(0));
  cmd->add_option("--epoch", o->epoch,
                  "The epoch --at-step counts within: only that epoch is replayed")
      ->check(IntAtLeast(1));
  cmd->add_option("--epochs", o->epochs,
                  "Passes over the data, one after another, as fit(epochs=N) makes them")
      ->default_val(1)
      ->check(IntAtLeast(1));
  cmd->add_flag(
      "--detail", o->detail,
      "Every worker's and replica's counts, each shuffle's buffer at the step, and (JSON) "
      "the runs of batch sizes to come");
  cmd->add_option("--write", o->write,
                  "Write the rest of the epoch into this folder: a TFRecord file per worker, "
                  "manifest.json and input_fn.py, all or none");
  cmd->add_flag("-f,--force", o->force, "With --write: replace an earlier remainder in the folder");
  cmd->add_flag("--no-fsync", o->no_fsync, "With --write: do not fsync what is written");
  cmd->add_option("--manifest", o->manifest,
                  "An earlier resume's JSON (--json, or --write's manifest.json): refuse unless "
                  "the dataset's files are the same as then");
  cmd->add_option("--steps-per-epoch", o->steps_per_epoch,
                  "A pipeline that repeats forever, iterated once and cut into epochs of S steps "
                  "(fit(steps_per_epoch=S)): the epoch of step N is ceil(N / S)")
      ->check(IntAtLeast(1));
  cmd->add_option("--epochs-ahead", o->epochs_ahead,
                  "With --write: also write the next K epochs whole, each in its exact order "
                  "(epoch-EEEEE-* files with their own manifest and input function)")
      ->default_val(0)
      ->check(IntAtLeast(0));
  cmd->add_option("--to-workers", o->to_workers,
                  "Deal the rest of the epoch to this many workers instead")
      ->check(IntAtLeast(1));
  cmd->add_option("--to-replicas", o->to_replicas,
                  "Deal the rest of the epoch to this many replicas per worker instead")
      ->check(IntAtLeast(1));
  cmd->callback([o, action] { *action = [o] { return RunResume(*o); }; });
}

}  // namespace tfdist::cli
