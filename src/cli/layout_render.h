// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The renderers of `tfdist layout` (and of what check shows of a layout):
// what a layout, its summary and a comparison of policies look like as
// text, as JSON and as an HTML page. cmd_layout.cc decides; these only
// draw what they are given.
//
//   layout_facts.cc  the figures the renderers share (read amplification, imbalance)
//   layout_text.cc   the table, the summary and the comparison as text
//   layout_json.cc   the same as JSON (the contract for scripts)
//   layout_html.cc   one self-contained page, drawn from that JSON

#ifndef TFDIST_CLI_LAYOUT_RENDER_H_
#define TFDIST_CLI_LAYOUT_RENDER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report.h"
#include "tfdist/base/result.h"
#include "tfdist/data/dataset.h"
#include "tfdist/distribute/layout.h"
#include "tfdist/distribute/recommend.h"

namespace tfdist::cli {

// What a header says beside the decision: where the topology came from,
// what AUTOTUNE resolved to, and what tracing a Python input function found.
struct HeaderNotes {
  std::string source_text;               // " (from Open MPI: worker 1 of 4)" or empty
  std::string autotune;                  // "autotune: ..." or empty
  std::vector<std::string> threads;      // data::ThreadNotes(): "note: ..." lines
  std::string trace;                     // TraceHeader(): "input:" and "assumed:" lines, or empty
  nlohmann::ordered_json source;         // JSON topology_source
  nlohmann::ordered_json autotune_json;  // JSON autotune, or null
  nlohmann::ordered_json trace_json;     // TraceJson(): input and assumptions, or {}
};

// ---- The figures every renderer shows alike (layout_facts.cc).

// How many times over the workers read the input, and why: W under DATA and
// OFF over several workers, 1 under FILE; from-function, as measured from
// the records each worker's readers took (W where the function does not
// shard). `why` is empty where there is nothing to say (one worker).
struct ReadAmplification {
  double factor = 1;
  std::string why;
};
ReadAmplification AmplificationOf(const dist::LayoutSummary& l, dist::Api api);

// Max over mean records per worker; 1 with no records.
double Imbalance(const dist::LayoutSummary& l);

// "2", "1.5", "1.33": as the text and the JSON give a factor.
std::string FactorText(double f);
nlohmann::ordered_json FactorJson(double f);

// The most bytes one worker read, or "-" where records were counted, not read.
std::string ReadPerWorker(const dist::LayoutSummary& l);

// Empty per-replica batches and idle worker-steps, over every worker.
struct EmptyAndIdle {
  uint64_t empty_batches = 0;
  uint64_t idle_steps = 0;
};
EmptyAndIdle EmptyAndIdleOf(const dist::LayoutSummary& l);

// FILE, DATA and OFF side by side, the policy AUTO applies and the one to
// use (cmd_layout.cc's Compare fills it in).
struct Comparison {
  struct Row {
    dist::AutoShardPolicy policy;
    Result<dist::LayoutSummary> summary;
  };
  std::vector<Row> rows;                 // FILE, DATA, OFF; at least one ok
  std::optional<dist::Decision> picked;  // what AUTO applies, where it decides
  std::optional<dist::Recommendation> recommended;
  std::string recommend_text;  // its "recommend:" line, or empty

  // The first row that has a summary.
  const dist::LayoutSummary& AnySummary() const;
};

// ---- Text (layout_text.cc).

// "topology: ..." (after the traced input's lines).
std::string TopologyText(const dist::Topology& t, const HeaderNotes& notes);
// The topology, the decision and the notes; its warnings apart (WarningsText).
std::string HeaderText(const dist::Decision& d, const dist::Topology& t, const HeaderNotes& notes);
// The decision's warnings from the `from`th on, a line each.
std::string WarningsText(const dist::Decision& d, size_t from);

// --format summary: rows for `only` (all when nullopt); the totals always
// cover every worker.
void PrintSummary(const dist::LayoutSummary& l, dist::Api api, const HeaderNotes& notes,
                  std::optional<int64_t> only);
// --compare.
void PrintComparison(const Comparison& c, const dist::DistributeOptions& d,
                     const HeaderNotes& notes);

// The table, printed as the layout streams: steps down, worker/replica
// across (a row per worker and step past kWideColumns replicas); an
// unbatched pipeline as a line per worker.
class TableSink : public dist::LayoutSink {
 public:
  TableSink(const dist::Topology& t, std::optional<int64_t> only, int64_t epochs,
            data::LabelMode mode, const HeaderNotes& notes);

  Status Begin(const dist::Decision& d) override;
  Status OnStep(const dist::Step& s) override;
  Status OnElement(int64_t worker, const data::Element& e) override;
  Status OnWorkerEnd(const dist::WorkerSummary& r) override;
  Status End(const dist::LayoutSummary& summary) override;
  // After an error: ends the line being written.
  void Abort();

 private:
  std::string Cell(const dist::ReplicaBatch& b);
  void Row(std::vector<std::string> row);
  void Flush();
  void Print(const std::vector<std::string>& row) const;

  dist::Topology topology_;
  std::optional<int64_t> only_;
  int64_t epochs_ = 1;  // > 1: an epoch column
  data::LabelMode mode_;
  const HeaderNotes& notes_;
  bool per_worker_rows_ = false;
  size_t warnings_shown_ = 0;
  std::vector<std::string> heads_;
  std::vector<std::vector<std::string>> pending_;
  std::vector<size_t> widths_;
  bool widths_fixed_ = false;
  bool any_padding_ = false;
  bool any_steps_ = false;
  bool abbreviated_ = false;
  bool line_started_ = false;
  std::optional<int64_t> last_dropped_;
};

// ---- JSON (layout_json.cc).

// The members of every layout document before the layout: the decision
// and the topology.
nlohmann::ordered_json HeadJson(const dist::Decision& d, const dist::DistributeOptions& o,
                                const HeaderNotes& notes);
// The "summary" member.
nlohmann::ordered_json SummaryJson(const dist::LayoutSummary& l, dist::Api api);
// What --format summary --json prints.
nlohmann::ordered_json SummaryDocument(const dist::LayoutSummary& l,
                                       const dist::DistributeOptions& d, const HeaderNotes& notes);
// What --compare --json prints.
nlohmann::ordered_json ComparisonJson(const Comparison& c, const dist::DistributeOptions& d,
                                      const HeaderNotes& notes);

// The JSON document, written as the layout streams (one line) to standard
// output, or kept in a string of at most `limit` bytes (Capture). An error
// part way closes it with an "error" member, so the output stays one valid
// JSON object.
class JsonSink : public dist::LayoutSink {
 public:
  JsonSink(const dist::DistributeOptions& o, const HeaderNotes& notes, data::LabelMode mode);

  // Keeps the document in `*out` instead of printing it, as long as it
  // stays within `limit` bytes; beyond, *out is emptied and overflowed()
  // says so (the layout streams on).
  void Capture(std::string* out, size_t limit);
  bool overflowed() const { return overflowed_; }

  Status Begin(const dist::Decision& d) override;
  Status OnStep(const dist::Step& s) override;
  Status OnElement(int64_t worker, const data::Element& e) override;
  Status OnWorkerEnd(const dist::WorkerSummary& r) override;
  Status End(const dist::LayoutSummary& summary) override;

  // After an error: closes what is open and adds the error. False when
  // nothing was printed yet (the caller prints the error object alone).
  bool Fail(const Status& status);

 private:
  void Out(std::string_view text);

  const dist::DistributeOptions& options_;
  const HeaderNotes& notes_;
  data::LabelMode mode_;
  std::string* capture_ = nullptr;
  size_t limit_ = 0;
  bool overflowed_ = false;
  bool started_ = false, ended_ = false;
  bool open_array_ = false, worker_open_ = false;
  uint64_t items_ = 0, elements_ = 0;
};

// ---- HTML (layout_html.cc).

// The heat map of a batched layout as it streams: records per replica by
// row (workers, or one worker's replicas) and step, steps gathered into
// columns of 2^k steps so that at most kMaxColumns columns are kept, and
// past kMaxRows workers, consecutive workers gathered into one row.
class HeatMap : public dist::LayoutSink {
 public:
  static constexpr size_t kMaxColumns = 1000;
  static constexpr int64_t kMaxRows = 256;

  // What a cell counts, over its steps and the row's replicas.
  struct Cell {
    uint64_t records = 0;  // received
    uint64_t batches = 0;  // per-replica batches (replicas x steps)
    uint64_t empty = 0;    // of those, empty ones (padding included)
    uint64_t idle = 0;     // steps in which none of the row's replicas had data
    uint64_t dropped = 0;  // records in dropped steps
    uint64_t steps = 0;    // steps in the cell
    bool operator==(const Cell&) const = default;
    Cell& operator+=(const Cell& c) {
      records += c.records;
      batches += c.batches;
      empty += c.empty;
      idle += c.idle;
      dropped += c.dropped;
      steps += c.steps;
      return *this;
    }
  };

  // One worker shown (or one in all): its replicas are the rows.
  HeatMap(const dist::Topology& t, std::optional<int64_t> only);

  Status OnStep(const dist::Step& s) override;

  bool by_replica() const { return by_replica_; }
  // The first worker (or replica) of each row, and how many a row gathers.
  const std::vector<int64_t>& row_ids() const { return row_ids_; }
  int64_t per_row() const { return per_row_; }
  uint64_t steps_per_column() const { return per_column_; }
  uint64_t steps() const { return steps_; }
  int64_t first_step() const { return first_step_; }
  // cells()[row][column]
  const std::vector<std::vector<Cell>>& cells() const { return cells_; }
  // Gathers pairs of columns: twice the steps per column. False when every
  // row is one column already.
  bool Coarsen();

 private:
  bool by_replica_ = false;
  std::vector<int64_t> row_ids_;
  int64_t per_row_ = 1;
  int64_t shown_ = 0;       // workers or replicas
  std::vector<Cell> step_;  // OnStep's, per worker or replica
  uint64_t per_column_ = 1;
  uint64_t steps_ = 0;
  int64_t first_step_ = 1;
  std::vector<std::vector<Cell>> cells_;
};

// Gathers the map's steps into wider columns until it draws as at most a
// few thousand runs of equal cells (the page's size bound).
void FitHeatMap(HeatMap& map);

// The grid a HeatMap draws, as the page's JSON holds it when the layout
// itself does not fit: per row, runs of equal cells.
nlohmann::ordered_json HeatMapJson(const HeatMap& map);

// The page of a layout: the JSON embedded (what --json prints, or the
// summary document with the grid), the summary it holds, the heat map
// (nullptr: an unbatched layout), and why the JSON does not list every
// batch (empty where it does).
struct LayoutPageInput {
  std::string_view document_text;
  const dist::LayoutSummary* summary = nullptr;
  const HeatMap* map = nullptr;
  std::string header;     // HeaderText + WarningsText
  std::string aggregate;  // why the batches are not listed, or empty
  dist::Api api = dist::Api::kDistribute;
  int64_t replicas = 1;
};
std::string LayoutPage(const LayoutPageInput& in);

// The page of a comparison.
std::string ComparisonPage(const Comparison& c, const dist::DistributeOptions& d,
                           const HeaderNotes& notes);

// The page's bound: at most this many bytes of JSON listing every batch are
// embedded; beyond, the summary and the aggregated grid.
constexpr size_t kPageJsonLimit = size_t{900} << 10;

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_LAYOUT_RENDER_H_
