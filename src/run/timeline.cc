// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0

#include "tfdist/run/timeline.h"

#include <fmt/format.h>

#include <charconv>
#include <cstring>
#include <iterator>
#include <string_view>
#include <utility>

#include "tfdist/base/json.h"

namespace tfdist::run {

void Timeline::Track::Complete(std::string_view name, Clock::time_point start,
                               Clock::time_point end, Arg a, Arg b) {
  if (!timeline_->open()) return;
  const int64_t from = timeline_->Nanos(start);
  events_.push_back(
      Event{name, from, std::max<int64_t>(0, timeline_->Nanos(end) - from), a, b, {}});
}

void Timeline::Track::Count(std::string_view name, Clock::time_point at,
                            std::vector<int64_t> values) {
  if (!timeline_->open()) return;
  events_.push_back(Event{name, timeline_->Nanos(at), -1, {}, {}, std::move(values)});
}

Timeline::Timeline(int64_t first_step, int64_t last_step)
    : first_step_(first_step), last_step_(last_step) {
  // Before the loop's first step, the workers already read and stage its
  // batches: they belong to a window that starts at step 1.
  open_.store(first_step_ <= 1, std::memory_order_relaxed);
}

void Timeline::NameProcess(int64_t pid, std::string name) {
  processes_.emplace_back(pid, std::move(name));
}

Timeline::Track* Timeline::AddTrack(int64_t pid, std::string name,
                                    std::vector<std::string> series) {
  const int64_t tid = static_cast<int64_t>(tracks_.size()) + 1;
  tracks_.emplace_back(std::unique_ptr<Track>(new Track(this, pid, tid, std::move(series))),
                       std::move(name));
  return tracks_.back().first.get();
}

void Timeline::SetStep(int64_t step) {
  open_.store(step >= first_step_ && step <= last_step_, std::memory_order_relaxed);
}

std::vector<Timeline::TrackSpans> Timeline::Spans() const {
  std::vector<TrackSpans> out;
  for (const auto& [track, name] : tracks_) {
    TrackSpans& t = out.emplace_back();
    for (const auto& [pid, process] : processes_) {
      if (pid == track->pid_) t.process = process;
    }
    t.name = name;
    for (const Track::Event& e : track->events_) {
      if (e.duration_ns >= 0) t.spans.push_back({e.name, e.start_ns, e.duration_ns});
    }
  }
  return out;
}

std::string Timeline::Json(const std::string& other) const {
  std::string out = "{\"traceEvents\":[\n";
  auto o = std::back_inserter(out);
  bool first = true;
  auto sep = [&] {
    if (!first) out += ",\n";
    first = false;
  };
  for (const auto& [pid, name] : processes_) {
    sep();
    fmt::format_to(o,
                   "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,"
                   "\"args\":{{\"name\":{}}}}},\n"
                   "{{\"name\":\"process_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":0,"
                   "\"args\":{{\"sort_index\":{}}}}}",
                   pid, DumpJson(nlohmann::ordered_json(name)), pid, pid);
  }
  for (const auto& [track, name] : tracks_) {
    sep();
    fmt::format_to(o,
                   "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},"
                   "\"args\":{{\"name\":{}}}}},\n"
                   "{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{},\"tid\":{},"
                   "\"args\":{{\"sort_index\":{}}}}}",
                   track->pid_, track->tid_, DumpJson(nlohmann::ordered_json(name)), track->pid_,
                   track->tid_, track->tid_);
  }
  // The events, a few million at most: each written into a buffer on the
  // stack with plain copies, not a format string each (the file's cost
  // stays a small part of the run's).
  size_t events = 0;
  for (const auto& [track, name] : tracks_) events += track->events_.size();
  out.reserve(out.size() + events * 112 + other.size() + 64);
  char buf[512];
  char* p = buf;
  auto text = [&p](std::string_view t) {
    std::memcpy(p, t.data(), t.size());
    p += t.size();
  };
  auto number = [&p](int64_t v) { p = std::to_chars(p, p + 24, v).ptr; };
  auto micros = [&](int64_t ns) {  // to the nanosecond
    number(ns / 1000);
    const int64_t rest = ns % 1000;
    *p++ = '.';
    *p++ = static_cast<char>('0' + rest / 100);
    *p++ = static_cast<char>('0' + rest / 10 % 10);
    *p++ = static_cast<char>('0' + rest % 10);
  };
  // Names are static text of a few words; a longer one is cut (never here).
  auto name_text = [&](std::string_view n) { text(n.substr(0, 64)); };
  for (const auto& [track, name] : tracks_) {
    std::vector<std::string> series;  // its counters' names, as JSON strings
    for (const std::string& n : track->series_) {
      series.push_back(DumpJson(nlohmann::ordered_json(n)));
    }
    for (const Track::Event& e : track->events_) {
      p = buf;
      if (!first) text(",\n");
      first = false;
      text("{\"name\":\"");
      name_text(e.name);
      text(e.duration_ns < 0 ? "\",\"ph\":\"C\",\"ts\":" : "\",\"ph\":\"X\",\"ts\":");
      micros(e.start_ns);
      if (e.duration_ns >= 0) {
        text(",\"dur\":");
        micros(e.duration_ns);
      }
      text(",\"pid\":");
      number(track->pid_);
      text(",\"tid\":");
      number(track->tid_);
      if (e.duration_ns >= 0 && !e.a.name.empty()) {
        text(",\"args\":{\"");
        name_text(e.a.name);
        text("\":");
        number(e.a.value);
        if (!e.b.name.empty()) {
          text(",\"");
          name_text(e.b.name);
          text("\":");
          number(e.b.value);
        }
        text("}");
      }
      out.append(buf, static_cast<size_t>(p - buf));
      if (e.duration_ns < 0) {  // a counter: as many values as series
        out += ",\"args\":{";
        for (size_t i = 0; i < e.values.size() && i < series.size(); ++i) {
          if (i > 0) out += ',';
          out += series[i];
          out += ':';
          out += fmt::format_int(e.values[i]).c_str();
        }
        out += '}';
      }
      out += '}';
    }
  }
  fmt::format_to(o, "\n],\"displayTimeUnit\":\"ms\",\"otherData\":{{{}}}}}\n", other);
  return out;
}

}  // namespace tfdist::run
