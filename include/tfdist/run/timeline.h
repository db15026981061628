// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A run's timeline: what each of its threads did and when, over a window of
// global steps, written as Chrome trace-event JSON (Perfetto, TensorBoard's
// trace viewer and chrome://tracing open it).
//
// Tracks are made before the run starts; each is written by one thread at a
// time (the run's threads own theirs), so recording takes no lock. Events
// are kept only while the window is open (SetStep), so memory and the
// file grow with the window, not with the run.

#ifndef TFDIST_RUN_TIMELINE_H_
#define TFDIST_RUN_TIMELINE_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tfdist::run {

// A timeline event's argument: a name (static text) and a number.
struct TimelineArg {
  std::string_view name;  // static text; empty: none
  int64_t value = 0;
};

class Timeline {
 public:
  using Clock = std::chrono::steady_clock;
  using Arg = TimelineArg;

  // One thread's row of events (a trace "thread" of a "process").
  class Track {
   public:
    // An event from `start` to `end` named `name` (static text: it is kept
    // as it is), kept while the window is open.
    void Complete(std::string_view name, Clock::time_point start, Clock::time_point end, Arg a = {},
                  Arg b = {});
    // A counter's values, one per series of the track (AddTrack), kept
    // while the window is open.
    void Count(std::string_view name, Clock::time_point at, std::vector<int64_t> values);

   private:
    friend class Timeline;
    Track(const Timeline* timeline, int64_t pid, int64_t tid, std::vector<std::string> series)
        : timeline_(timeline), pid_(pid), tid_(tid), series_(std::move(series)) {}
    struct Event {
      std::string_view name;  // static text
      int64_t start_ns;
      int64_t duration_ns;  // -1: a counter
      Arg a, b;
      std::vector<int64_t> values;  // a counter's
    };
    const Timeline* timeline_;
    int64_t pid_, tid_;
    std::vector<std::string> series_;  // a counter's names
    std::deque<Event> events_;
  };

  // Keeps the events of global steps first..last (1-based, inclusive).
  Timeline(int64_t first_step, int64_t last_step);

  // Names process `pid` (a worker, the training loop).
  void NameProcess(int64_t pid, std::string name);
  // A new track of process `pid`, named `name`, shown in the order made;
  // `series` names the values of its counters.
  Track* AddTrack(int64_t pid, std::string name, std::vector<std::string> series = {});

  // The training loop is about to run global step `step` (1-based): the
  // window opens at its first step and closes after its last.
  void SetStep(int64_t step);
  // The run is over: the window closes.
  void Close() { open_.store(false, std::memory_order_relaxed); }
  bool open() const { return open_.load(std::memory_order_relaxed); }

  int64_t first_step() const { return first_step_; }
  int64_t last_step() const { return last_step_; }

  // What was recorded, for drawing: each track's process, name and complete
  // events (counters left out), in the order the tracks were made.
  struct Span {
    std::string_view name;
    int64_t start_ns = 0;  // from the timeline's making
    int64_t duration_ns = 0;
  };
  struct TrackSpans {
    std::string process;
    std::string name;
    std::vector<Span> spans;
  };
  std::vector<TrackSpans> Spans() const;

  // The trace: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}},
  // times in microseconds from the timeline's making; `other` is written as
  // otherData's members (a JSON object's text without braces, or empty).
  std::string Json(const std::string& other) const;

 private:
  int64_t Nanos(Clock::time_point t) const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin_).count();
  }

  const Clock::time_point origin_ = Clock::now();
  const int64_t first_step_, last_step_;
  std::atomic<bool> open_{false};
  std::vector<std::pair<int64_t, std::string>> processes_;
  std::vector<std::pair<std::unique_ptr<Track>, std::string>> tracks_;
};

}  // namespace tfdist::run

#endif  // TFDIST_RUN_TIMELINE_H_
