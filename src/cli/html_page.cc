// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0

#include "html_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <string>
#include <vector>

namespace tfdist::cli {
namespace {

constexpr std::string_view kStyle = R"(
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.4em; margin: 0 0 .5em; }
h2 { font-size: 1.1em; margin: 1.5em 0 .4em; }
pre { background: #f6f6f6; padding: .6em; white-space: pre-wrap; font-size: 12px; }
.note { color: #7a4b00; background: #fff4e0; padding: .4em .6em; }
.recommend { background: #e8f4e8; padding: .5em .7em; font-weight: 600; }
table { border-collapse: collapse; font-size: 12px; }
td, th { padding: 2px 8px; text-align: right; border-bottom: 1px solid #ddd; }
th { background: #f0f0f0; }
td.zero { color: #c00; font-weight: 600; }
.map { overflow-x: auto; }
.map svg { display: block; width: 100%; height: auto; max-width: none; }
.legend span { display: inline-block; margin-right: 1.2em; }
.swatch { display: inline-block; width: 12px; height: 12px; vertical-align: middle; margin-right: 4px; border: 1px solid #999; }
.bars { display: inline-block; vertical-align: top; margin-right: 2em; }
.bars text, .map text { font-size: 11px; fill: #333; }
.bars .zero text.label { fill: #c00; font-weight: 600; }
#tip { position: fixed; display: none; background: #fff; border: 1px solid #888; padding: 4px 6px; font-size: 12px; max-width: 40em; pointer-events: none; white-space: pre-wrap; box-shadow: 1px 1px 4px #0003; }
button { margin-right: .4em; }
.verdict { font-size: 1.1em; font-weight: 600; padding: .5em .7em; }
.verdict.ok { background: #e8f4e8; } .verdict.warn { background: #fff4e0; }
.verdict.fail { background: #fde8e8; }
.finding { border-left: 6px solid #999; padding: .2em .8em; margin: 1em 0; background: #fafafa; }
.finding.error { border-color: #c00; } .finding.warning { border-color: #e0a000; }
.finding h3 { margin: .3em 0; font-size: 1em; }
.finding dt { font-weight: 600; } .finding dd { margin: 0 0 .4em 1.5em; }
.columns svg { display: block; width: 100%; max-width: 1000px; height: auto; }
.columns text { font-size: 11px; fill: #333; }
)";

// Files drawn as a column each, at most; beyond, a column gathers several
// (its highest and lowest file drawn).
constexpr size_t kMaxFileColumns = 4000;
// Files listed in the table, at most (the JSON lists every one).
constexpr size_t kMaxTableFiles = 1000;

// One metric of every file as columns: a column per file (or per run of
// `per` files: the highest as the bar, the lowest as a mark), each a
// <rect> with data-first, data-n, data-min, data-max.
std::string ColumnChart(std::string_view title, std::string_view metric,
                        const std::vector<uint64_t>& values) {
  const size_t n = values.size();
  const size_t per = std::max<size_t>(1, (n + kMaxFileColumns - 1) / kMaxFileColumns);
  const size_t columns = (n + per - 1) / per;
  uint64_t most = 0;
  for (uint64_t v : values) most = std::max(most, v);
  constexpr int kHeight = 160, kLeft = 70;
  const double cw = columns == 0 ? 1 : 900.0 / static_cast<double>(columns);
  std::string out;
  auto o = std::back_inserter(out);
  fmt::format_to(o,
                 "<div class=\"columns\"><div><b>{}</b> (the most: {})</div>\n"
                 "<svg data-metric=\"{}\" data-per=\"{}\" viewBox=\"0 0 {} {}\" "
                 "shape-rendering=\"crispEdges\" role=\"img\" aria-label=\"{}\">\n"
                 "<text x=\"0\" y=\"12\">{}</text><text x=\"0\" y=\"{}\">0</text>\n",
                 HtmlEscape(title), most, HtmlEscape(metric), per, kLeft + 904, kHeight + 20,
                 HtmlEscape(title), most, kHeight);
  for (size_t c = 0; c < columns; ++c) {
    const size_t first = c * per;
    const size_t count = std::min(per, n - first);
    uint64_t lo = values[first], hi = values[first];
    for (size_t i = first; i < first + count; ++i) {
      lo = std::min(lo, values[i]);
      hi = std::max(hi, values[i]);
    }
    const double h = most > 0 ? static_cast<double>(hi) / static_cast<double>(most) * kHeight : 0;
    const double x = kLeft + static_cast<double>(c) * cw;
    fmt::format_to(o,
                   "<rect x=\"{:.5g}\" y=\"{:.5g}\" width=\"{:.5g}\" height=\"{:.5g}\" "
                   "fill=\"{}\" data-first=\"{}\" data-n=\"{}\" data-min=\"{}\" "
                   "data-max=\"{}\"/>\n",
                   x, kHeight - h, std::max(cw * 0.9, 0.5), h, hi == 0 ? "#c00" : "#4a78b5", first,
                   count, lo, hi);
    if (per > 1 && lo < hi) {
      const double l = most > 0 ? static_cast<double>(lo) / static_cast<double>(most) * kHeight : 0;
      fmt::format_to(o,
                     "<rect class=\"mark\" x=\"{:.5g}\" y=\"{:.5g}\" width=\"{:.5g}\" "
                     "height=\"1\" fill=\"#222\"/>\n",
                     x, kHeight - l, std::max(cw * 0.9, 0.5));
    }
  }
  fmt::format_to(o,
                 "<text x=\"{}\" y=\"{}\">file 0</text><text x=\"{}\" y=\"{}\" "
                 "text-anchor=\"end\">file {}</text>\n</svg></div>\n",
                 kLeft, kHeight + 16, kLeft + 900, kHeight + 16, n == 0 ? 0 : n - 1);
  return out;
}

// JSON inside <script>: "<" written as \u003c, so that no "</script>" or
// "<!--" in a string ends or changes the element; the value parsed is
// the same.
std::string ScriptJson(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

std::string HtmlEscape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HtmlPageStart(std::string_view title) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style></head>\n<body>\n<h1>{}</h1>\n",
      HtmlEscape(title), kStyle, HtmlEscape(title));
}

std::string HtmlPageEnd(std::string_view json, std::string_view script) {
  std::string out = fmt::format(
      "<script type=\"application/json\" id=\"tfdist-layout\">{}</script>\n", ScriptJson(json));
  // A page without a script of its own still says that it loaded whole.
  out += fmt::format(
      "<script>{}\ndocument.documentElement.setAttribute('data-ready', '1');\n"
      "</script>\n</body></html>\n",
      script);
  return out;
}

std::string FilesPage(std::string_view title, std::string_view what,
                      const nlohmann::ordered_json& doc) {
  std::string out = HtmlPageStart(title);
  auto o = std::back_inserter(out);
  const nlohmann::ordered_json& files = doc["files"];
  std::vector<uint64_t> records, bytes;
  uint64_t least = 0, most = 0;
  size_t errors = 0;
  for (const auto& f : files) {
    const bool ok = f.contains("records") && f["records"].is_number();
    if (!ok) ++errors;
    records.push_back(ok ? f["records"].get<uint64_t>() : 0);
    bytes.push_back(ok && f["bytes"].is_number() ? f["bytes"].get<uint64_t>() : 0);
  }
  if (!records.empty()) {
    least = *std::min_element(records.begin(), records.end());
    most = *std::max_element(records.begin(), records.end());
  }
  const double mean = records.empty() ? 0
                                      : static_cast<double>(doc.value("records", uint64_t{0})) /
                                            static_cast<double>(records.size());
  fmt::format_to(o,
                 "<pre id=\"totals\">{}\n{} files: {} records, {} payload bytes\n"
                 "records per file: {} to {} (max/mean {:.2f})</pre>\n",
                 HtmlEscape(what), files.size(), doc.value("records", uint64_t{0}),
                 doc.value("bytes", uint64_t{0}), least, most, mean > 0 ? most / mean : 1.0);
  if (errors > 0) {
    fmt::format_to(o,
                   "<p class=\"note\">{} file{} could not be read (drawn as 0, in red; the "
                   "JSON says why).</p>\n",
                   errors, errors == 1 ? "" : "s");
  }
  out += ColumnChart("records per file", "records", records);
  out += ColumnChart("payload bytes per file", "bytes", bytes);
  if (files.size() > kMaxTableFiles) {
    fmt::format_to(o,
                   "<p class=\"note\">{} files: the table lists the first {}; the JSON "
                   "embedded lists every one.</p>\n",
                   files.size(), kMaxTableFiles);
  }
  out +=
      "<table id=\"files-table\"><thead><tr><th>#</th><th>records</th><th>bytes</th>"
      "<th>file bytes</th><th style=\"text-align:left\">file</th></tr></thead><tbody>\n";
  for (size_t i = 0; i < files.size() && i < kMaxTableFiles; ++i) {
    const auto& f = files[i];
    auto cell = [&](const char* key) {
      return f.contains(key) && f[key].is_number() ? fmt::format("{}", f[key].dump()) : "-";
    };
    fmt::format_to(o,
                   "<tr data-file=\"{}\"><td>{}</td><td data-field=\"records\">{}</td>"
                   "<td data-field=\"bytes\">{}</td><td data-field=\"file_bytes\">{}</td>"
                   "<td style=\"text-align:left\">{}</td></tr>\n",
                   i, i, cell("records"), cell("bytes"), cell("file_bytes"),
                   HtmlEscape(f.value("path", std::string())));
  }
  out += "</tbody></table>\n";
  out += HtmlPageEnd(DumpJson(doc), "");
  return out;
}

std::string RunPage(const nlohmann::ordered_json& doc) {
  std::string out = HtmlPageStart(
      fmt::format("tfdist run: {} steps, {} records", doc["steps"].dump(), doc["records"].dump()));
  auto o = std::back_inserter(out);
  fmt::format_to(o,
                 "<pre id=\"totals\">device: {}\nrecords: {} ({} bytes) in {} per-replica batches, "
                 "{} steps, {} s\nfirst batch after {} s; the loop waited {} s for input</pre>\n",
                 HtmlEscape(doc.value("device", std::string())), doc["records"].dump(),
                 doc["bytes"].dump(), doc["batches"].dump(), doc["steps"].dump(),
                 doc["seconds"].dump(), doc["first_batch_seconds"].dump(),
                 doc["wait_seconds"].dump());
  out +=
      "<table id=\"stages\"><thead><tr><th>stage</th><th>seconds</th><th>bytes</th>"
      "<th>items</th><th style=\"text-align:left\">what</th></tr></thead><tbody>\n";
  for (const auto& st : doc["stages"]) {
    fmt::format_to(o,
                   "<tr data-stage=\"{}\"><td>{}</td><td data-field=\"seconds\">{}</td>"
                   "<td data-field=\"bytes\">{}</td><td data-field=\"items\">{}</td>"
                   "<td style=\"text-align:left\">{}</td></tr>\n",
                   HtmlEscape(st.value("name", std::string())),
                   HtmlEscape(st.value("name", std::string())), st["seconds"].dump(),
                   st["bytes"].dump(), st["items"].dump(),
                   HtmlEscape(st.value("what", std::string())));
  }
  out += "</tbody></table>\n";
  // The timeline: a row per track, time across.
  const auto& tl = doc["timeline"];
  double end = 0;
  for (const auto& t : tl["tracks"]) {
    for (const auto& e : t["events"]) {
      end = std::max(end, e[1].get<double>() + e[2].get<double>());
    }
  }
  const size_t rows = tl["tracks"].size();
  constexpr int kLabel = 260, kWidth = 900, kRow = 16;
  const double scale = end > 0 ? kWidth / end : 1;
  fmt::format_to(o,
                 "<h2>Timeline, steps {} to {}</h2>\n<p>{} events recorded; the earliest {} "
                 "drawn (run --timeline FILE writes them all, for Perfetto).</p>\n"
                 "<div class=\"map\"><svg id=\"timeline\" viewBox=\"0 0 {} {}\" "
                 "data-end-us=\"{}\" shape-rendering=\"crispEdges\" role=\"img\" "
                 "aria-label=\"timeline\">\n",
                 tl["first_step"].dump(), tl["last_step"].dump(), tl["events_recorded"].dump(),
                 tl["events_listed"].dump(), kLabel + kWidth + 4, rows * kRow + 20, end);
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 8> kColours = {{
      {"read", "#4a78b5"},
      {"slot wait", "#d62728"},
      {"pack", "#2ca02c"},
      {"parse", "#2ca02c"},
      {"copy", "#9467bd"},
      {"input wait", "#d62728"},
      {"receive", "#8c564b"},
      {"step", "#7f7f7f"},
  }};
  for (size_t r = 0; r < rows; ++r) {
    const auto& t = tl["tracks"][r];
    const int y = static_cast<int>(r) * kRow;
    fmt::format_to(o, "<g data-track=\"{}\"><text x=\"0\" y=\"{}\">{}: {}</text>\n", r, y + 11,
                   HtmlEscape(t.value("process", std::string())),
                   HtmlEscape(t.value("name", std::string())));
    for (size_t i = 0; i < t["events"].size(); ++i) {
      const auto& e = t["events"][i];
      const std::string name = e[0].get<std::string>();
      std::string_view colour = "#999999";
      for (const auto& [n, c] : kColours) {
        if (n == name) colour = c;
      }
      fmt::format_to(o,
                     "<rect x=\"{:.6g}\" y=\"{}\" width=\"{:.6g}\" height=\"{}\" "
                     "fill=\"{}\" data-i=\"{}\"><title>{} {} us</title></rect>\n",
                     kLabel + e[1].get<double>() * scale, y + 2,
                     std::max(0.3, e[2].get<double>() * scale), kRow - 4, colour, i,
                     HtmlEscape(name), e[2].dump());
    }
    out += "</g>\n";
  }
  fmt::format_to(o,
                 "<text x=\"{}\" y=\"{}\">0</text><text x=\"{}\" y=\"{}\" "
                 "text-anchor=\"end\">{:.0f} us</text>\n</svg></div>\n",
                 kLabel, rows * kRow + 14, kLabel + kWidth, rows * kRow + 14, end);
  out += "<p class=\"legend\">";
  for (const auto& [n, c] : kColours) {
    fmt::format_to(o, "<span><span class=\"swatch\" style=\"background:{}\"></span>{}</span>", c,
                   n);
  }
  out += "</p>\n";
  // The input-wait histogram.
  out += "<h2>The loop's wait for each step's input (after the first)</h2>\n";
  uint64_t most = 0;
  for (const auto& b : doc["input_wait_histogram"])
    most = std::max(most, b["steps"].get<uint64_t>());
  out += "<svg id=\"waits\" width=\"560\" height=\"" +
         std::to_string(doc["input_wait_histogram"].size() * 16 + 4) + "\">\n";
  double from = 0;
  size_t i = 0;
  for (const auto& b : doc["input_wait_histogram"]) {
    const uint64_t n = b["steps"].get<uint64_t>();
    const std::string label =
        b["below_us"].is_null() ? fmt::format(">= {:g} us", from)
                                : fmt::format("{:g} to {:g} us", from, b["below_us"].get<double>());
    const double w = most > 0 ? static_cast<double>(n) / static_cast<double>(most) * 300 : 0;
    fmt::format_to(o,
                   "<g data-bucket=\"{}\" data-steps=\"{}\"><text x=\"0\" y=\"{}\">{}</text>"
                   "<rect x=\"160\" y=\"{}\" width=\"{:.1f}\" height=\"12\" fill=\"#d62728\"/>"
                   "<text x=\"{:.1f}\" y=\"{}\">{}</text></g>\n",
                   i, n, i * 16 + 12, HtmlEscape(label), i * 16 + 2, w, 164 + w, i * 16 + 12, n);
    if (!b["below_us"].is_null()) from = b["below_us"].get<double>();
    ++i;
  }
  out += "</svg>\n";
  out += HtmlPageEnd(DumpJson(doc), "");
  return out;
}

std::string CheckPage(const nlohmann::ordered_json& doc, std::string_view job) {
  const std::string result = doc.value("result", std::string());
  std::string out = HtmlPageStart(fmt::format("tfdist check: {}", result));
  auto o = std::back_inserter(out);
  const auto& findings = doc["findings"];
  size_t errors = 0, warnings = 0;
  for (const auto& f : findings) {
    const std::string severity = f.value("severity", std::string());
    errors += severity == "error";
    warnings += severity == "warning";
  }
  fmt::format_to(o,
                 "<p class=\"verdict {}\" id=\"verdict\" data-result=\"{}\">{}: {} error{}, "
                 "{} warning{}</p>\n<pre id=\"job\">{}</pre>\n",
                 HtmlEscape(result), HtmlEscape(result), HtmlEscape(result), errors,
                 errors == 1 ? "" : "s", warnings, warnings == 1 ? "" : "s", HtmlEscape(job));
  for (size_t i = 0; i < findings.size(); ++i) {
    const auto& f = findings[i];
    const std::string severity = f.value("severity", std::string());
    fmt::format_to(o,
                   "<section class=\"finding {}\" data-finding=\"{}\" data-kind=\"{}\" "
                   "data-severity=\"{}\"><h3>{}: {}</h3><dl>\n",
                   HtmlEscape(severity), i, HtmlEscape(f.value("kind", std::string())),
                   HtmlEscape(severity), HtmlEscape(severity),
                   HtmlEscape(f.value("kind", std::string())));
    for (const char* key : {"tensorflow", "other_versions", "evidence", "fix"}) {
      const std::string text = f.value(key, std::string());
      if (text.empty()) continue;
      fmt::format_to(o, "<dt>{}</dt><dd data-field=\"{}\">{}</dd>\n",
                     std::string_view(key) == "other_versions" ? "other versions" : key, key,
                     HtmlEscape(text));
    }
    for (const auto& flags : f["fix_flags"]) {
      fmt::format_to(o, "<dt>fix here</dt><dd data-field=\"fix_flags\"><code>{}</code></dd>\n",
                     HtmlEscape(flags.get<std::string>()));
    }
    out += "</dl></section>\n";
  }
  if (doc.contains("steps_per_epoch") && doc["steps_per_epoch"].is_object()) {
    const auto& s = doc["steps_per_epoch"];
    fmt::format_to(o,
                   "<h2>steps_per_epoch</h2>\n<table id=\"steps-per-epoch\"><tr><th>min</th>"
                   "<td data-field=\"min\">{}</td><td style=\"text-align:left\">{}</td></tr>"
                   "<tr><th>max</th><td data-field=\"max\">{}</td>"
                   "<td style=\"text-align:left\">{}</td></tr></table>\n",
                   s["min"].dump(), HtmlEscape(s.value("at_min", std::string())), s["max"].dump(),
                   HtmlEscape(s.value("at_max", std::string())));
  }
  out += HtmlPageEnd(DumpJson(doc), "");
  return out;
}

}  // namespace tfdist::cli
