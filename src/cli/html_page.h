// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// What every page of --format html shares: one self-contained HTML file
// (no request leaves it: its Content-Security-Policy allows none), its
// style, and the JSON it draws from, embedded as
// <script type="application/json" id="tfdist-layout">. The pages' own
// renderers (layout_html.cc, files_html.cc) draw from that JSON alone.

#ifndef TFDIST_CLI_HTML_PAGE_H_
#define TFDIST_CLI_HTML_PAGE_H_

#include <string>
#include <string_view>

#include "report.h"

namespace tfdist::cli {

// `s` as HTML text or attribute value.
std::string HtmlEscape(std::string_view s);

// The page's head, style and title (also its <h1>).
std::string HtmlPageStart(std::string_view title);

// The embedded JSON (`json`, as --json prints it; "<" written as \u003c,
// which parses the same), the page's `script` (may be empty), and the end.
std::string HtmlPageEnd(std::string_view json, std::string_view script);

// The records and bytes of each file of `doc` (count's or reshard's JSON:
// "files", each with "path", "records", "bytes"), as columns, a table, and
// the totals; `what` says whose files (a line under the title).
std::string FilesPage(std::string_view title, std::string_view what,
                      const nlohmann::ordered_json& doc);

// check's page, from its JSON (`doc`: result, findings, steps_per_epoch)
// and the text output's first lines (`job`: the traced input and the job).
std::string CheckPage(const nlohmann::ordered_json& doc, std::string_view job);

// run's page, from its JSON (the report, with "timeline" and
// "input_wait_histogram"): the report's figures, the stage table, the
// timeline drawn (a row per track) and the histogram.
std::string RunPage(const nlohmann::ordered_json& doc);

}  // namespace tfdist::cli

#endif  // TFDIST_CLI_HTML_PAGE_H_
