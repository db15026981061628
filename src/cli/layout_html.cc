// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A layout as one self-contained HTML page: the header as text, a heat map
// of records per replica by worker (or replica) and step, the per-worker
// totals as sorted bars and a table, and the JSON the page draws from,
// embedded. Static SVG and tables; the script only adds hover and zoom.
// Every number drawn is one the embedded JSON holds (doc/pictures.md).

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <iterator>
#include <numeric>
#include <string_view>

#include "distribute_args.h"
#include "html_page.h"
#include "layout_render.h"

namespace tfdist::cli {
namespace {

// Runs of equal cells drawn, at most: each is a <rect> of about 100 bytes.
// Past it the map gathers more steps into a column.
constexpr size_t kMaxRuns = 8000;

// A colour of a sequential scale (viridis' ends and midpoints), for t in [0, 1].
std::string ScaleColour(double t) {
  static constexpr std::array<std::array<double, 3>, 5> kStops = {{
      {68, 1, 84},
      {59, 82, 139},
      {33, 145, 140},
      {94, 201, 98},
      {253, 231, 37},
  }};
  t = std::clamp(t, 0.0, 1.0) * (kStops.size() - 1);
  const size_t i = std::min(static_cast<size_t>(t), kStops.size() - 2);
  const double f = t - static_cast<double>(i);
  auto mix = [&](int c) {
    return static_cast<int>(std::lround(kStops[i][c] + (kStops[i + 1][c] - kStops[i][c]) * f));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(0), mix(1), mix(2));
}

constexpr std::string_view kEmptyColour = "#f4a6a6";    // no record: empty batches
constexpr std::string_view kDroppedColour = "#222222";  // a dropped step

// Runs of equal cells in a row: (first column, columns).
std::vector<std::pair<size_t, size_t>> Runs(const std::vector<HeatMap::Cell>& row) {
  std::vector<std::pair<size_t, size_t>> runs;
  for (size_t c = 0; c < row.size();) {
    size_t e = c + 1;
    while (e < row.size() && row[e] == row[c]) ++e;
    runs.emplace_back(c, e - c);
    c = e;
  }
  return runs;
}

size_t CountRuns(const HeatMap& map) {
  size_t n = 0;
  for (const auto& row : map.cells()) n += Runs(row).size();
  return n;
}

// Records reach more than one worker: every worker feeds everything (OFF),
// or the input functions' readers shared records.
bool Duplicated(const dist::LayoutSummary& l, dist::Api api) {
  if (l.topology.workers <= 1) return false;
  if (api == dist::Api::kDistribute) return l.decision.applied == dist::AutoShardPolicy::kOff;
  return l.reads && l.reads->shared > 0;
}

// The script: hover on the heat map and zoom. The page is whole without it.
constexpr std::string_view kScript = R"(
(function () {
  'use strict';
  var doc = JSON.parse(document.getElementById('tfdist-layout').textContent);
  var tip = document.createElement('div');
  tip.id = 'tip';
  document.body.appendChild(tip);
  var svg = document.getElementById('heatmap');
  if (svg) {
    var per = Number(svg.getAttribute('data-steps-per-column'));
    var first = Number(svg.getAttribute('data-first-step'));
    var last = first + Number(svg.getAttribute('data-steps')) - 1;
    var byReplica = svg.getAttribute('data-rows') === 'replica';
    var steps = null;
    if (Array.isArray(doc.steps)) {
      steps = {};
      doc.steps.forEach(function (s) { steps[s.step] = s; });
    }
    var ranges = function (labels) {
      var out = [], i = 0;
      while (i < labels.length) {
        var m = /^(.*):(\d+)$/.exec(String(labels[i]));
        var j = i + 1;
        if (m) {
          while (j < labels.length) {
            var n = /^(.*):(\d+)$/.exec(String(labels[j]));
            if (!n || n[1] !== m[1] || Number(n[2]) !== Number(m[2]) + (j - i)) break;
            j++;
          }
        }
        out.push(j - i > 1 ? labels[i] + '..' + /:(\d+)$/.exec(String(labels[j - 1]))[1]
                           : String(labels[i]));
        i = j;
      }
      return out.join(', ');
    };
    svg.addEventListener('mousemove', function (ev) {
      var t = ev.target;
      var v = t.getAttribute && t.getAttribute('data-v');
      if (!v) { tip.style.display = 'none'; return; }
      v = v.split(',').map(Number);
      var row = Number(t.parentNode.getAttribute('data-row'));
      var box = t.getBoundingClientRect();
      var n = Number(t.getAttribute('data-n'));
      var k = Math.min(n - 1, Math.max(0, Math.floor((ev.clientX - box.left) / box.width * n)));
      var col = Number(t.getAttribute('data-c')) + k;
      var a = first + col * per, b = Math.min(last, a + per - 1);
      var who = (byReplica ? 'replica ' : 'worker ') + row;
      var text = who + ', step' + (a === b ? ' ' + a : 's ' + a + '..' + b) + ' (a cell):\n' +
          v[0] + ' records in ' + v[1] + ' per-replica batches' +
          (v[1] ? ' (' + (v[0] / v[1]).toFixed(2) + ' per replica)' : '') +
          (v[2] ? ', ' + v[2] + ' empty' : '') + (v[3] ? ', ' + v[3] + ' idle steps' : '') +
          (v[4] ? ', ' + v[4] + ' records dropped' : '');
      if (steps && a === b && steps[a]) {
        steps[a].batches.forEach(function (bt) {
          if ((byReplica ? bt.replica : bt.worker) !== row) return;
          text += '\nw' + bt.worker + '/r' + bt.replica + ': ' +
              (bt.padding ? '[] (no data: an empty batch)' : '[' + ranges(bt.elements) + ']');
        });
      } else if (!steps) {
        text += '\n(records are listed where the page holds the whole layout)';
      }
      tip.textContent = text;
      tip.style.display = 'block';
      tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 320) + 'px';
      tip.style.top = (ev.clientY + 12) + 'px';
    });
    svg.addEventListener('mouseleave', function () { tip.style.display = 'none'; });
    var zoom = 1;
    var set = function (z) {
      zoom = Math.max(1, Math.min(64, z));
      svg.style.width = (zoom * 100) + '%';
      document.getElementById('zoom-level').textContent = zoom + 'x';
    };
    var controls = document.getElementById('zoom');
    controls.hidden = false;
    document.getElementById('zoom-in').addEventListener('click', function () { set(zoom * 2); });
    document.getElementById('zoom-out').addEventListener('click', function () { set(zoom / 2); });
  }
})();
)";

std::string PageEnd(std::string_view json) { return HtmlPageEnd(json, kScript); }

// A bar of a horizontal bar chart.
struct Bar {
  std::string label;
  double value = 0;
  std::string value_text;
  std::string id;  // data-id
};

// `alarm`: bars of 0 stand out (a worker that receives nothing).
std::string BarChart(std::string_view title, std::string_view metric, std::vector<Bar> bars,
                     bool sort, bool alarm = false) {
  if (sort) {
    std::stable_sort(bars.begin(), bars.end(),
                     [](const Bar& a, const Bar& b) { return a.value > b.value; });
  }
  double most = 0;
  for (const Bar& b : bars) most = std::max(most, b.value);
  constexpr int kRow = 14, kLabel = 70, kWidth = 240, kValue = 110;
  std::string out = fmt::format(
      "<div class=\"bars\"><div><b>{}</b></div>\n<svg data-metric=\"{}\" width=\"{}\" "
      "height=\"{}\" role=\"img\" aria-label=\"{}\">\n",
      HtmlEscape(title), HtmlEscape(metric), kLabel + kWidth + kValue, kRow * bars.size() + 4,
      HtmlEscape(title));
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double w = most > 0 ? b.value / most * kWidth : 0;
    const int y = static_cast<int>(i) * kRow + 2;
    fmt::format_to(std::back_inserter(out),
                   "<g class=\"bar{}\" data-id=\"{}\" data-value=\"{}\">"
                   "<text class=\"label\" x=\"0\" y=\"{}\">{}</text>"
                   "<rect x=\"{}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>"
                   "<text x=\"{:.1f}\" y=\"{}\">{}</text></g>\n",
                   alarm && b.value == 0 ? " zero" : "", HtmlEscape(b.id), HtmlEscape(b.value_text),
                   y + 10, HtmlEscape(b.label), kLabel, y, w, kRow - 3, "#4a78b5", kLabel + w + 4,
                   y + 10, HtmlEscape(b.value_text));
  }
  out += "</svg></div>\n";
  return out;
}

std::string Number(uint64_t v) { return fmt::format("{}", v); }

// The heat map's <svg>: a <g> per row, a <rect> per run of equal cells
// with its cells' counts in data-v (records, batches, empty, idle,
// dropped, steps: HeatMapJson's fields), and the legend.
std::string HeatMapSvg(const HeatMap& map, const dist::LayoutSummary& summary, dist::Api api) {
  const auto& cells = map.cells();
  size_t columns = 0;
  for (const auto& row : cells) columns = std::max(columns, row.size());
  double most = 0;  // records per replica batch, the scale's top
  for (const auto& row : cells) {
    for (const HeatMap::Cell& c : row) {
      if (c.batches > 0) most = std::max(most, static_cast<double>(c.records) / c.batches);
    }
  }
  const size_t rows = cells.size();
  const int label = 56;
  // 1000 units wide, whatever the columns (the page scales it).
  const double cw = columns == 0 ? 8.0 : 1000.0 / static_cast<double>(columns);

  const int rh = std::clamp(static_cast<int>(640 / std::max<size_t>(rows, 1)), 4, 24);
  // Rows too thin for their label are labelled one in `every`.
  const size_t every = static_cast<size_t>((12 + rh - 1) / rh);
  const int gap = rh >= 8 ? 1 : 0;  // between rows
  const int width = label + static_cast<int>(std::ceil(cw * static_cast<double>(columns))) + 4;
  const int height = rh * static_cast<int>(rows) + 24;
  const bool duplicated = Duplicated(summary, api);
  const char* row_name = map.by_replica() ? "replica" : "worker";
  const int64_t shown = map.by_replica() ? summary.topology.replicas : summary.topology.workers;
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o,
                 "<div class=\"map\"><svg id=\"heatmap\" viewBox=\"0 0 {} {}\" width=\"{}\" "
                 "data-rows=\"{}\" data-per-row=\"{}\" data-first-step=\"{}\" data-steps=\"{}\" "
                 "data-steps-per-column=\"{}\" data-columns=\"{}\" shape-rendering=\"crispEdges\" "
                 "role=\"img\" aria-label=\"records per replica by {} and step\">\n"
                 "<defs><pattern id=\"hatch\" width=\"4\" height=\"4\" "
                 "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
                 "<rect width=\"2\" height=\"4\" fill=\"#d62728\"/></pattern>"
                 "<pattern id=\"dup\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
                 "patternTransform=\"rotate(-45)\"><rect width=\"1\" height=\"6\" "
                 "fill=\"#ffffff\"/></pattern></defs>\n",
                 width, height, width, row_name, map.per_row(), map.first_step(), map.steps(),
                 map.steps_per_column(), columns, row_name);
  for (size_t r = 0; r < rows; ++r) {
    const int y = static_cast<int>(r) * rh;
    const int64_t id = map.row_ids()[r];
    const std::string name =
        map.per_row() == 1 ? fmt::format("{}{}", map.by_replica() ? "r" : "w", id)
                           : fmt::format("w{}-{}", id, std::min(id + map.per_row(), shown) - 1);
    fmt::format_to(o, "<g data-row=\"{}\">", id);
    if (r % every == 0) {
      fmt::format_to(o, "<text x=\"0\" y=\"{}\">{}</text>",
                     y + std::min(rh * static_cast<int>(every), 12) - 1, name);
    }
    out += "\n";
    std::string marks;
    for (const auto& [c0, n] : Runs(cells[r])) {
      const HeatMap::Cell& c = cells[r][c0];
      std::string fill;
      if (c.records == 0) {
        fill = c.dropped > 0 ? kDroppedColour : kEmptyColour;
      } else {
        fill = ScaleColour(most > 0 ? static_cast<double>(c.records) / c.batches / most : 0);
      }
      const double x = label + static_cast<double>(c0) * cw;
      const double w = static_cast<double>(n) * cw;
      fmt::format_to(o,
                     "<rect x=\"{:.5g}\" y=\"{}\" width=\"{:.5g}\" height=\"{}\" fill=\"{}\" "
                     "data-c=\"{}\" data-n=\"{}\" data-v=\"{},{},{},{},{},{}\"/>\n",
                     x, y, w, rh - gap, fill, c0, n, c.records, c.batches, c.empty, c.idle,
                     c.dropped, c.steps);
      if (c.records > 0 && (c.empty > 0 || c.dropped > 0)) {
        fmt::format_to(std::back_inserter(marks),
                       "<rect class=\"mark\" x=\"{:.5g}\" y=\"{}\" width=\"{:.5g}\" "
                       "height=\"{}\" "
                       "fill=\"url(#hatch)\" pointer-events=\"none\"/>\n",
                       x, y, w, rh - gap);
      }
    }
    out += marks;
    out += "</g>\n";
  }
  if (duplicated && columns > 0) {
    fmt::format_to(o,
                   "<rect class=\"dup\" x=\"{}\" y=\"0\" width=\"{:.5g}\" height=\"{}\" "
                   "fill=\"url(#dup)\" pointer-events=\"none\"/>\n",
                   label, std::ceil(cw * static_cast<double>(columns)),
                   rh * static_cast<int>(rows));
  }
  // The step axis: the first and last step, and one between.
  const int axis = rh * static_cast<int>(rows) + 14;
  const uint64_t last = static_cast<uint64_t>(map.first_step()) + map.steps() - 1;
  fmt::format_to(o, "<text x=\"{}\" y=\"{}\">step {}</text>", label, axis, map.first_step());
  if (map.steps() > 1) {
    fmt::format_to(o, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">step {}</text>", width - 4, axis,
                   last);
  }
  out += "\n</svg></div>\n";
  fmt::format_to(
      o,
      "<p class=\"legend\"><span><span class=\"swatch\" style=\"background:{}\"></span>0</span>"
      "<span><span class=\"swatch\" style=\"background:{}\"></span>{:.3g}: records per "
      "replica, the cell's mean (the most in a cell)</span>"
      "<span><span class=\"swatch\" style=\"background:{}\"></span>no record: empty "
      "batches, idle steps</span>"
      "<span><span class=\"swatch\" style=\"background:repeating-linear-gradient(45deg,"
      "#d62728 0 2px,#fff 2px 4px)\"></span>some empty batches or dropped records</span>"
      "<span><span class=\"swatch\" style=\"background:{}\"></span>a dropped step "
      "(TensorFlow ends the iteration before it)</span></p>\n",
      ScaleColour(0), ScaleColour(1), most, kEmptyColour, kDroppedColour);
  if (duplicated) {
    fmt::format_to(o,
                   "<p class=\"note\">Striped white over the map: every record reaches more "
                   "than one worker ({}).</p>\n",
                   api == dist::Api::kDistribute ? "no sharding: each worker feeds everything"
                                                 : "the input functions' readers share records");
  }
  if (map.per_row() > 1) {
    fmt::format_to(o,
                   "<p class=\"note\">{} workers in {} rows: each row gathers {} workers (its "
                   "colour is their mean records per replica).</p>\n",
                   shown, map.row_ids().size(), map.per_row());
  }
  if (map.steps_per_column() > 1) {
    fmt::format_to(o,
                   "<p class=\"note\">{} steps in {} columns: each column gathers {} steps "
                   "(its colour is their mean records per replica; hover for its counts).</p>\n",
                   map.steps(), columns, map.steps_per_column());
  }
  return out;
}

std::string WorkerSection(const dist::LayoutSummary& l) {
  std::vector<Bar> records, bytes, batches;
  bool any_read = false;
  for (const dist::WorkerSummary& w : l.workers) any_read = any_read || w.bytes_read.has_value();
  for (const dist::WorkerSummary& w : l.workers) {
    const std::string id = Number(static_cast<uint64_t>(w.worker));
    const std::string label = fmt::format("worker {}", w.worker);
    records.push_back({label, static_cast<double>(w.records), Number(w.records), id});
    const uint64_t b = any_read ? w.bytes_read.value_or(0) : w.bytes;
    bytes.push_back({label, static_cast<double>(b), Number(b), id});
    batches.push_back({label, static_cast<double>(w.batches), Number(w.batches), id});
  }
  std::string out = "<h2>Workers</h2>\n<section id=\"workers\">\n";
  out += BarChart("records received", "records", records, true, /*alarm=*/true);
  out += BarChart(any_read ? "bytes read" : "payload bytes received",
                  any_read ? "bytes_read" : "bytes", bytes, true);
  if (l.decision.batched) out += BarChart("per-replica batches", "batches", batches, true);
  out += "</section>\n<table id=\"workers-table\"><thead><tr>";
  static constexpr std::array kHeads = {"worker",  "files",         "records",
                                        "dropped", "bytes",         "bytes read",
                                        "batches", "empty batches", "idle steps"};
  for (const char* h : kHeads) fmt::format_to(std::back_inserter(out), "<th>{}</th>", h);
  out += "</tr></thead><tbody>\n";
  for (const dist::WorkerSummary& w : l.workers) {
    auto cell = [&](std::string_view field, std::optional<uint64_t> v, bool zero_alarm) {
      return fmt::format("<td data-field=\"{}\"{}>{}</td>", field,
                         zero_alarm && v == uint64_t{0} ? " class=\"zero\"" : "",
                         v ? Number(*v) : "-");
    };
    out += fmt::format("<tr data-worker=\"{}\"><td>{}</td>", w.worker, w.worker);
    out += cell("files", w.files, false);
    out += cell("records", w.records, true);
    out += cell("dropped_records", w.dropped(), false);
    out += cell("bytes", w.bytes, false);
    out += cell("bytes_read", w.bytes_read, false);
    const bool batched = l.decision.batched;
    out += cell("batches", batched ? std::optional(w.batches) : std::nullopt, false);
    out += cell("empty_batches", batched ? std::optional(w.empty_batches) : std::nullopt, false);
    out += cell("idle_steps", batched ? std::optional(w.idle_steps) : std::nullopt, false);
    out += "</tr>\n";
  }
  out += "</tbody></table>\n";
  return out;
}

std::string TotalsText(const dist::LayoutSummary& l, dist::Api api) {
  std::string out;
  auto o = std::back_inserter(out);
  if (l.decision.batched) {
    fmt::format_to(o, "steps: {}{}{}\n", l.steps, l.dropped_step ? " (the last one dropped)" : "",
                   l.complete ? "" : " (planned; the data goes on)");
  }
  fmt::format_to(o, "records: {} received, {} dropped, {} read\n", l.ReceivedRecords(),
                 l.DroppedRecords(), l.DistinctRecords());
  if (!l.workers.empty() && l.ReceivedRecords() > 0) {
    fmt::format_to(o, "imbalance (max/mean records): {:.2f}\n", Imbalance(l));
  }
  const ReadAmplification a = AmplificationOf(l, api);
  if (!a.why.empty())
    fmt::format_to(o, "read amplification: {}x ({})\n", FactorText(a.factor), a.why);
  uint64_t none = 0;
  for (const dist::WorkerSummary& w : l.workers) none += w.records == 0 ? 1 : 0;
  if (none > 0) fmt::format_to(o, "workers that receive no record: {}\n", none);
  return out;
}

}  // namespace

HeatMap::HeatMap(const dist::Topology& t, std::optional<int64_t> only) {
  by_replica_ = only.has_value() || t.workers == 1;
  shown_ = by_replica_ ? t.replicas : t.workers;
  per_row_ = (shown_ + kMaxRows - 1) / kMaxRows;
  for (int64_t i = 0; i < shown_; i += per_row_) row_ids_.push_back(i);
  cells_.resize(row_ids_.size());
}

Status HeatMap::OnStep(const dist::Step& s) {
  if (steps_ == 0) first_step_ = s.step;
  if (steps_ / per_column_ >= kMaxColumns) Coarsen();
  const size_t column = static_cast<size_t>(steps_ / per_column_);
  ++steps_;
  step_.assign(static_cast<size_t>(shown_), Cell{});
  for (const dist::ReplicaBatch& b : s.batches) {
    const int64_t unit = by_replica_ ? b.replica : b.worker;
    if (unit < 0 || unit >= shown_) continue;
    Cell& c = step_[static_cast<size_t>(unit)];
    const uint64_t n = b.padding ? 0 : b.elements.size();
    ++c.batches;
    if (n == 0) ++c.empty;
    if (s.dropped) {
      c.dropped += n;
    } else {
      c.records += n;
    }
  }
  size_t last_row = cells_.size();
  for (size_t unit = 0; unit < step_.size(); ++unit) {
    const Cell& c = step_[unit];
    if (c.batches == 0) continue;
    const size_t r = unit / static_cast<size_t>(per_row_);
    auto& row = cells_[r];
    if (row.size() <= column) row.resize(column + 1);
    Cell& into = row[column];
    into.records += c.records;
    into.batches += c.batches;
    into.empty += c.empty;
    into.idle += c.empty == c.batches ? 1 : 0;
    into.dropped += c.dropped;
    if (r != last_row) ++into.steps;  // a step counts once per row
    last_row = r;
  }
  return Status::OK();
}

bool HeatMap::Coarsen() {
  bool wider = false;
  for (const auto& row : cells_) wider = wider || row.size() > 1;
  if (!wider) return false;
  for (auto& row : cells_) {
    std::vector<Cell> merged((row.size() + 1) / 2);
    for (size_t i = 0; i < row.size(); ++i) merged[i / 2] += row[i];
    row = std::move(merged);
  }
  per_column_ *= 2;
  return true;
}

void FitHeatMap(HeatMap& map) {
  while (CountRuns(map) > kMaxRuns && map.Coarsen()) {
  }
}

nlohmann::ordered_json HeatMapJson(const HeatMap& map) {
  nlohmann::ordered_json out;
  out["rows"] = map.by_replica() ? "replica" : "worker";
  out["row_ids"] = map.row_ids();
  out["per_row"] = map.per_row();
  out["first_step"] = map.first_step();
  out["steps"] = map.steps();
  out["steps_per_column"] = map.steps_per_column();
  out["fields"] = {"columns", "records", "batches", "empty", "idle", "dropped", "steps"};
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const auto& row : map.cells()) {
    nlohmann::ordered_json runs = nlohmann::ordered_json::array();
    for (const auto& [c0, n] : Runs(row)) {
      const HeatMap::Cell& c = row[c0];
      runs.push_back({n, c.records, c.batches, c.empty, c.idle, c.dropped, c.steps});
    }
    rows.push_back(std::move(runs));
  }
  out["runs"] = std::move(rows);
  return out;
}

std::string LayoutPage(const LayoutPageInput& in) {
  const dist::LayoutSummary& l = *in.summary;
  const dist::Topology& t = l.topology;
  std::string out =
      HtmlPageStart(fmt::format("tfdist layout: {} worker{} x {} replica{}", t.workers,
                                t.workers == 1 ? "" : "s", t.replicas, t.replicas == 1 ? "" : "s"));
  fmt::format_to(std::back_inserter(out),
                 "<pre id=\"header\">{}</pre>\n<pre id=\"totals\">{}</pre>\n",
                 HtmlEscape(in.header), HtmlEscape(TotalsText(l, in.api)));
  if (!in.aggregate.empty()) {
    fmt::format_to(std::back_inserter(out), "<p class=\"note\" id=\"aggregate\">{}</p>\n",
                   HtmlEscape(in.aggregate));
  }
  if (in.map != nullptr && in.map->steps() > 0) {
    out += fmt::format(
        "<h2>Records per replica, by {} and step</h2>\n"
        "<p id=\"zoom\" hidden><button id=\"zoom-out\" type=\"button\">&minus;</button>"
        "<button id=\"zoom-in\" type=\"button\">+</button> zoom <span "
        "id=\"zoom-level\">1x</span></p>\n",
        in.map->by_replica() ? "replica" : "worker");
    out += HeatMapSvg(*in.map, l, in.api);
  } else if (in.map != nullptr) {
    out += "<p class=\"note\">No steps: no replica receives a batch.</p>\n";
  }
  out += WorkerSection(l);
  out += PageEnd(in.document_text);
  return out;
}

std::string ComparisonPage(const Comparison& c, const dist::DistributeOptions& d,
                           const HeaderNotes& notes) {
  const dist::Topology& t = d.topology;
  std::string out =
      HtmlPageStart(fmt::format("tfdist layout --compare: {} worker{} x {} replica{}", t.workers,
                                t.workers == 1 ? "" : "s", t.replicas, t.replicas == 1 ? "" : "s"));
  std::string header = TopologyText(t, notes);
  if (!notes.autotune.empty()) header += notes.autotune + "\n";
  for (const std::string& n : notes.threads) header += "note:     " + n + "\n";
  fmt::format_to(std::back_inserter(out), "<pre id=\"header\">{}</pre>\n", HtmlEscape(header));
  if (c.recommended) {
    fmt::format_to(std::back_inserter(out),
                   "<p class=\"recommend\" id=\"recommend\">recommend: {}</p>\n",
                   HtmlEscape(c.recommend_text));
  }
  if (c.picked) {
    fmt::format_to(std::back_inserter(out), "<p id=\"auto\">AUTO applies {}: {}</p>\n",
                   dist::PolicyName(c.picked->applied), HtmlEscape(c.picked->reason));
  }
  std::vector<Bar> steps, dropped, read, amplification, imbalance;
  std::vector<std::string> counted;  // policies whose bytes were counted, not read
  for (const Comparison::Row& r : c.rows) {
    const std::string name(dist::PolicyName(r.policy));
    if (!r.summary.ok()) continue;
    const dist::LayoutSummary& l = *r.summary;
    if (l.decision.batched) {
      steps.push_back({name, static_cast<double>(l.steps), Number(l.steps), name});
    }
    dropped.push_back(
        {name, static_cast<double>(l.DroppedRecords()), Number(l.DroppedRecords()), name});
    const std::string per_worker = ReadPerWorker(l);
    if (per_worker != "-") {
      read.push_back({name, std::stod(per_worker), per_worker, name});
    } else {
      counted.push_back(name);
    }
    const double factor = AmplificationOf(l, d.api).factor;
    amplification.push_back({name, factor, FactorText(factor) + "x", name});
    imbalance.push_back({name, Imbalance(l), fmt::format("{:.2f}", Imbalance(l)), name});
  }
  out += "<h2>Policies side by side</h2>\n<section id=\"compare\">\n";
  if (!steps.empty()) out += BarChart("steps", "steps", steps, false);
  out += BarChart("records dropped", "dropped_records", dropped, false);
  if (!read.empty()) out += BarChart("bytes read per worker (most)", "bytes_read", read, false);
  out += BarChart("read amplification", "read_amplification", amplification, false);
  out += BarChart("imbalance (max/mean records)", "imbalance", imbalance, false);
  out += "</section>\n";
  if (!counted.empty()) {
    fmt::format_to(std::back_inserter(out),
                   "<p class=\"note\">Bytes read: {}: counted from the files' record counts, "
                   "not read.</p>\n",
                   fmt::join(counted, ", "));
  }
  out +=
      "<table id=\"compare-table\"><thead><tr><th>policy</th><th>steps</th>"
      "<th>records</th><th>dropped</th><th>read/worker</th><th>amplification</th>"
      "<th>imbalance</th><th>empty batches</th><th>idle steps</th></tr></thead><tbody>\n";
  for (const Comparison::Row& r : c.rows) {
    const std::string_view name = dist::PolicyName(r.policy);
    if (!r.summary.ok()) {
      fmt::format_to(std::back_inserter(out),
                     "<tr data-policy=\"{}\"><td>{}</td><td colspan=\"8\" "
                     "style=\"text-align:left\">cannot: {}</td></tr>\n",
                     name, name, HtmlEscape(r.summary.status().message()));
      continue;
    }
    const dist::LayoutSummary& l = *r.summary;
    const auto [empty, idle] = EmptyAndIdleOf(l);
    fmt::format_to(std::back_inserter(out),
                   "<tr data-policy=\"{}\"><td>{}</td><td data-field=\"steps\">{}</td>"
                   "<td data-field=\"records\">{}</td><td data-field=\"dropped_records\">{}</td>"
                   "<td data-field=\"read_per_worker\">{}</td>"
                   "<td data-field=\"read_amplification\">{}x</td>"
                   "<td data-field=\"imbalance\">{:.2f}</td><td>{}</td><td>{}</td></tr>\n",
                   name, name, l.decision.batched ? Number(l.steps) : "-", l.ReceivedRecords(),
                   l.DroppedRecords(), ReadPerWorker(l),
                   FactorText(AmplificationOf(l, d.api).factor), Imbalance(l), empty, idle);
  }
  out += "</tbody></table>\n";
  std::string warnings;
  for (const Comparison::Row& r : c.rows) {
    if (!r.summary.ok()) continue;
    for (const dist::Warning& w : r.summary->decision.warnings) {
      warnings +=
          fmt::format("{} {}:  {}\n", dist::PolicyName(r.policy),
                      w.severity == dist::Severity::kError ? "error" : "warning", WarningText(w));
    }
  }
  if (!warnings.empty()) {
    fmt::format_to(std::back_inserter(out), "<h2>Warnings</h2>\n<pre id=\"warnings\">{}</pre>\n",
                   HtmlEscape(warnings));
  }
  out += PageEnd(DumpJson(ComparisonJson(c, d, notes)));
  return out;
}

}  // namespace tfdist::cli
