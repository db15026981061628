// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Timeline: events kept only inside the window, and written as trace-event
// JSON with their names, times, tracks and arguments.

#include "tfdist/run/timeline.h"

#include <doctest/doctest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tfdist::run {
namespace {

using Clock = Timeline::Clock;
using std::chrono::microseconds;

TEST_CASE("events are kept while the window of steps is open") {
  Timeline t(3, 4);
  Timeline::Track* track = t.AddTrack(1, "read");
  const auto at = Clock::now();
  CHECK_FALSE(t.open());  // a window from step 3 is closed before it
  track->Complete("before", at, at + microseconds(1));
  for (int64_t step = 1; step <= 6; ++step) {
    t.SetStep(step);
    track->Complete("read", at + microseconds(10 * step), at + microseconds(10 * step + 5),
                    {"step", step});
  }
  t.Close();
  track->Complete("after", at, at + microseconds(1));
  const nlohmann::json trace = nlohmann::json::parse(t.Json("\"k\":1"));
  std::vector<int64_t> steps;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") {
      CHECK(e["name"] == "read");
      CHECK(e["dur"].get<double>() == doctest::Approx(5.0));
      CHECK(e["pid"] == 1);
      steps.push_back(e["args"]["step"]);
    }
  }
  CHECK(steps == std::vector<int64_t>{3, 4});
  CHECK(trace["otherData"]["k"] == 1);
  CHECK(trace["displayTimeUnit"] == "ms");
}

TEST_CASE("a window from step 1 is open before the first step") {
  Timeline t(1, 2);
  CHECK(t.open());
  t.SetStep(3);
  CHECK_FALSE(t.open());
}

TEST_CASE("names, tracks and counters are written as trace-event JSON") {
  Timeline t(1, 10);
  t.NameProcess(0, "training loop");
  t.NameProcess(1, "worker \"0\"");  // escaped as JSON
  Timeline::Track* loop = t.AddTrack(0, "loop");
  Timeline::Track* rings = t.AddTrack(1, "rings", {"r0", "r1"});
  const auto at = Clock::now() + microseconds(3);
  loop->Complete("input wait", at, at + std::chrono::nanoseconds(1500), {"step", 1}, {"x", -2});
  rings->Count("ready", at, {2, 0});
  const nlohmann::json trace = nlohmann::json::parse(t.Json(""));
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M") {
      by_name[e["name"].get<std::string>() + ":" + std::to_string(e["pid"].get<int>()) + ":" +
              std::to_string(e["tid"].get<int>())] = e["args"];
    } else {
      by_name[e["name"]] = e;
    }
  }
  CHECK(by_name["process_name:1:0"]["name"] == "worker \"0\"");
  CHECK(by_name["thread_name:1:2"]["name"] == "rings");
  const nlohmann::json& wait = by_name["input wait"];
  CHECK(wait["ph"] == "X");
  CHECK(wait["dur"].get<double>() == doctest::Approx(1.5));
  CHECK(wait["ts"].get<double>() >= 3.0);
  CHECK(wait["args"]["x"] == -2);
  const nlohmann::json& ready = by_name["ready"];
  CHECK(ready["ph"] == "C");
  CHECK(ready["args"] == nlohmann::json{{"r0", 2}, {"r1", 0}});
  CHECK(ready["tid"] == 2);
}

}  // namespace
}  // namespace tfdist::run
