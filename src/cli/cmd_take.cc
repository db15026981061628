// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// tfdist take: the first elements (or batches) of a pipeline expression.

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "pipeline_args.h"
#include "report.h"
#include "tfdist/base/text.h"
#include "tfdist/data/pipeline.h"
#include "validators.h"
#include "vocabulary.h"

namespace tfdist::cli {
namespace {

struct TakeOptions {
  PipelineArgs pipeline;
  int64_t limit = 100;
  FormatArgs format;
  std::string label = "payload";
  int64_t workers = 1;
  int64_t worker = 0;
  int64_t replicas = 1;
  int64_t epochs = 1;
};

nlohmann::ordered_json ElementJson(const data::Element& e, data::LabelMode mode) {
  if (e.kind != data::Element::Kind::kBatch) return e.Label(mode);
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const data::Element& item : e.items) items.push_back(ElementJson(item, mode));
  return items;
}

// The label escaped for a terminal: a file:index label names a file, and a
// file name may hold anything.
std::string ElementText(const data::Element& e, data::LabelMode mode) {
  if (e.kind != data::Element::Kind::kBatch) return TerminalText(e.Label(mode));
  std::string out = "[";
  for (size_t i = 0; i < e.items.size(); ++i) {
    out += (i ? ", " : "") + ElementText(e.items[i], mode);
  }
  return out + "]";
}

int RunTake(const TakeOptions& o) {
  const bool json = o.format.json();
  const bool summary = o.format.summary();
  if (o.workers < 1 || o.replicas < 1 || o.worker < 0 || o.worker >= o.workers ||
      o.workers > (1 << 20) || o.replicas > (1 << 12)) {
    return ReportError(Status::InvalidArgument(fmt::format(
                           "--worker must be in [0, --workers), with at most 1048576 workers and "
                           "4096 replicas; got worker {} of {} (replicas {})",
                           o.worker, o.workers, o.replicas)),
                       json);
  }
  Result<LoadedPipeline> loaded =
      LoadPipeline(o.pipeline, TraceContext{o.workers, o.worker, o.replicas, ""}, json);
  if (!loaded.ok()) return ExitCodeFor(loaded.status());
  data::BuildOptions build = o.pipeline.build_options(*loaded);
  build.context = data::InputContext{o.workers, o.worker, o.workers * o.replicas};
  // What a traced function assumed goes to stderr: stdout holds the elements.
  if (loaded->trace && !json) {
    std::string header = TraceHeader(*loaded);
    fmt::print(stderr, "{}", header);
  }
  Result<std::shared_ptr<const data::Dataset>> dataset = BuildPipeline(*loaded, build, json);
  if (!dataset.ok()) return ExitCodeFor(dataset.status());
  const data::LabelMode mode = o.label == "ref" ? data::LabelMode::kRef : data::LabelMode::kPayload;
  // Said on stderr (stdout holds the elements), and in the JSON.
  nlohmann::ordered_json warnings = nlohmann::ordered_json::array();
  if (!build.global_seed && data::HasUnseededShuffle(loaded->pipeline)) {
    const std::string note =
        Describe(data::kUnseededShuffleMessage, Advice{Remedy::kSeedShuffles, ""});
    if (json) {
      warnings.push_back(note);
    } else {
      PrintMessage("warning", note);
    }
  }
  // The stores' (S3_VERIFY_SSL=0), made by the pipeline's list_files.
  std::vector<std::string> remote;
  PrintRemoteWarnings(&remote);
  for (std::string& w : remote) warnings.push_back(std::move(w));
  auto with_warnings = [&](nlohmann::ordered_json out) {
    if (!warnings.empty()) out["warnings"] = warnings;
    return out;
  };

  nlohmann::ordered_json elements = nlohmann::ordered_json::array();
  data::Element e;
  uint64_t count = 0, leaves = 0, bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  // Each epoch is a new pass over the one dataset, as fit(epochs=N) makes
  // them: its shuffles' seed generators carry on from pass to pass.
  int64_t n = 0;
  for (int64_t epoch = 0; epoch < o.epochs && (o.limit < 0 || n < o.limit); ++epoch) {
    Result<std::unique_ptr<data::Iterator>> it = (*dataset)->MakeIterator();
    if (!it.ok()) return ReportError(it.status(), json);
    for (; o.limit < 0 || n < o.limit; ++n) {
      bool end = false;
      if (Status s = (*it)->GetNext(e, end); !s.ok()) {
        if (json) {
          nlohmann::ordered_json out = TraceJson(*loaded);
          out["elements"] = std::move(elements);
          out["error"] = ErrorJson(s);
          PrintJson(with_warnings(std::move(out)));
          FlushStdout();
          PrintMessage("error", Describe(s));
          return ExitCodeFor(s);
        }
        return ReportError(s, false);
      }
      if (end) break;
      ++count;
      if (summary) {
        leaves += e.Leaves();
        bytes += e.PayloadBytes();
      } else if (json) {
        elements.push_back(ElementJson(e, mode));
      } else {
        fmt::print("{}\n", ElementText(e, mode));
      }
    }
  }
  if (summary) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (json) {
      nlohmann::ordered_json out = TraceJson(*loaded);
      out["elements"] = count;
      out["records"] = leaves;
      out["bytes"] = bytes;
      out["seconds"] = seconds;
      PrintJson(with_warnings(std::move(out)));
    } else {
      fmt::print(
          "{} elements ({} records, {} payload bytes) in {:.3f} s: {:.0f} records/s, "
          "{:.1f} MB/s\n",
          count, leaves, bytes, seconds, leaves / std::max(seconds, 1e-9),
          bytes / std::max(seconds, 1e-9) / 1e6);
    }
    return 0;
  }
  if (json) {
    nlohmann::ordered_json out = TraceJson(*loaded);
    out["elements"] = std::move(elements);
    PrintJson(with_warnings(std::move(out)));
  }
  return 0;
}

}  // namespace

void AddTakeCommand(CLI::App& app, Action* action) {
  auto o = std::make_shared<TakeOptions>();
  CLI::App* cmd = app.add_subcommand(
      "take",
      "Print the first elements (or batches) of a tf.data pipeline expression, in TensorFlow's "
      "order");
  AddPipelineArgs(*cmd, &o->pipeline);
  cmd->add_option("-n,--limit", o->limit, "Print at most N elements or batches; -1: all")
      ->default_val(100)
      ->check(IntAtLeast(-1));
  AddFormatOptions(*cmd, &o->format, "a line per element, a batch as [labels]",
                   "{\"elements\": [...]}, a batch as a list of labels",
                   "only the number of elements, records and bytes, and the time taken (with "
                   "-n -1, of the whole pipeline)");

  cmd->add_option("--label", o->label,
                  "payload: a record's text when printable UTF-8, else file:index; ref: always "
                  "file:index")
      ->check(CLI::IsMember({"payload", "ref"}))
      ->default_str("payload");
  cmd->add_option("--workers", o->workers, "ctx.num_input_pipelines (ctx.* names only)")
      ->default_val(1);
  cmd->add_option("--worker", o->worker, "ctx.input_pipeline_id (ctx.* names only)")
      ->default_val(0);
  cmd->add_option("--epochs", o->epochs,
                  "Passes over the dataset, one after another (as fit(epochs=N) makes them; "
                  "reshuffling shuffles draw a new order each); -n limits the total")
      ->default_val(1)
      ->check(IntAtLeast(1));
  cmd->add_option("--replicas", o->replicas,
                  "Replicas per worker: ctx.num_replicas_in_sync is workers x replicas")
      ->default_val(1);
  cmd->callback([o, action] { *action = [o] { return RunTake(*o); }; });
}

}  // namespace tfdist::cli
