// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The HTTP engine: one curl multi handle driven by a thread of its own.
//
// A request is a Job: its attempts are transfers on the multi handle (curl
// pools and reuses the connections, and runs them all at once); between
// attempts the job waits out a backoff with full jitter, on the caller's
// thread for Fetch and ReadRange, on the engine's retry thread for
// ReadRangeAsync. A store's Authorize is never called on the engine's
// thread, so it may itself Fetch (an OAuth token) without a deadlock.

#include "storage_http.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <queue>
#include <random>
#include <thread>
#include <unordered_set>

#include "tfdist/base/interrupt.h"
#include "tfdist/io/storage.h"

namespace tfdist::io::http {
namespace {

using Clock = std::chrono::steady_clock;

// Backoff before attempt n + 1 (n >= 1): uniform in [0, min(cap, base * 2^(n-1))]
// (full jitter, as AWS's SDKs: retries of many clients spread out).
constexpr double kBackoffBaseSeconds = 0.1;
constexpr double kBackoffCapSeconds = 10;
// An error response's body is kept up to this size, for ParseError.
constexpr size_t kErrorBodyLimit = 64 << 10;
// How often a waiting thread, and the engine, look at the interrupt flag.
constexpr auto kInterruptPoll = std::chrono::milliseconds(50);

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<uint64_t> ParseUint(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// "bytes FIRST-LAST/TOTAL" (TOTAL may be "*").
struct ContentRange {
  uint64_t first = 0, last = 0;
  std::optional<uint64_t> total;
};
std::optional<ContentRange> ParseContentRange(std::string_view v) {
  v = Trim(v);
  if (!v.starts_with("bytes ")) return std::nullopt;
  v.remove_prefix(6);
  const size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || slash < dash) {
    return std::nullopt;
  }
  auto first = ParseUint(Trim(v.substr(0, dash)));
  auto last = ParseUint(Trim(v.substr(dash + 1, slash - dash - 1)));
  if (!first || !last || *last < *first) return std::nullopt;
  ContentRange r{*first, *last, std::nullopt};
  const std::string_view total = Trim(v.substr(slash + 1));
  if (total != "*") {
    r.total = ParseUint(total);
    if (!r.total) return std::nullopt;
  }
  return r;
}

// One attempt of a request: a transfer on the multi handle. Filled by the
// engine's callbacks; read by the job once `on_done` ran.
struct Attempt {
  Request request;  // authorised
  // A ranged read: the bytes go to dst from `dst_offset` on, and the object's
  // byte `first` is the first wanted.
  bool ranged = false;
  std::span<char> dst;
  size_t dst_offset = 0;
  uint64_t first = 0;
  std::string* body = nullptr;  // Fetch: the whole body
  const std::function<Status(const Response&)>* check = nullptr;
  std::string ca_file;
  bool verify_tls = true;
  double connect_timeout = 10, stall_timeout = 30, time_left = 300;

  // Outcome.
  Response head;  // status, headers, and an error's body
  bool head_done = false;
  uint64_t skip = 0;    // bytes of the body before the first wanted
  size_t received = 0;  // bytes put in dst by this attempt
  bool full = false;    // dst was full and the transfer was stopped on purpose
  Status stop;          // why a callback ended the transfer
  bool stop_final = false;
  bool cancelled = false;  // ended by an interrupt
  std::optional<ContentRange> content_range;
  CURLcode code = CURLE_OK;
  char error[CURL_ERROR_SIZE] = {};
  std::function<void(Attempt&)> on_done;

  CURL* easy = nullptr;
  curl_slist* header_list = nullptr;
  ~Attempt() {
    if (header_list != nullptr) curl_slist_free_all(header_list);
  }

  // The head is known (the first body byte, or the end): judges it.
  // Returns false to stop the transfer.
  bool OnHead() {
    head_done = true;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    head.status = status;
    if (status < 200 || status >= 300) return true;
    if (ranged) {
      if (status == 206) {
        auto header = head.Header("content-range");
        content_range = header ? ParseContentRange(*header) : std::nullopt;
        if (!content_range) {
          stop = Status::Unavailable(fmt::format("HTTP 206 with an unreadable Content-Range \"{}\"",
                                                 header ? *header : ""));
          return false;
        }
        if (content_range->first > first) {
          stop =
              Status::Unavailable(fmt::format("HTTP 206 for bytes {}-{}, not from byte {} as asked",
                                              content_range->first, content_range->last, first));
          return false;
        }
        skip = first - content_range->first;
      } else if (status == 200) {
        skip = first;  // the whole object: the server ignored the range
      } else {
        stop = Status::Unavailable(fmt::format("HTTP {} for a ranged read", status));
        return false;
      }
    }
    if (check != nullptr && *check) {
      Status s = (*check)(head);
      if (!s.ok()) {
        stop = std::move(s);
        stop_final = true;
        return false;
      }
    }
    return true;
  }

  size_t OnBody(const char* p, size_t n) {
    if (!head_done && !OnHead()) return 0;
    if (head.status < 200 || head.status >= 300) {
      head.body.append(p,
                       std::min(n, kErrorBodyLimit - std::min(kErrorBodyLimit, head.body.size())));
      return n;
    }
    if (!ranged) {
      body->append(p, n);
      return n;
    }
    size_t i = 0;
    if (skip > 0) {
      i = static_cast<size_t>(std::min<uint64_t>(skip, n));
      skip -= i;
    }
    const size_t room = dst.size() - dst_offset - received;
    const size_t take = std::min(n - i, room);
    std::memcpy(dst.data() + dst_offset + received, p + i, take);
    received += take;
    if (i + take < n) {  // more than asked (a 200 or a longer range): enough
      full = true;
      return 0;
    }
    return n;
  }

  void OnHeaderLine(std::string_view line) {
    if (line.starts_with("HTTP/")) {  // a new response (after 100 Continue)
      head.headers.clear();
      return;
    }
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    head.headers.emplace_back(Lower(Trim(line.substr(0, colon))),
                              std::string(Trim(line.substr(colon + 1))));
  }
};

size_t WriteCallback(char* p, size_t size, size_t n, void* user) {
  return static_cast<Attempt*>(user)->OnBody(p, size * n);
}

size_t HeaderCallback(char* p, size_t size, size_t n, void* user) {
  std::string_view line(p, size * n);
  static_cast<Attempt*>(user)->OnHeaderLine(line);
  return size * n;
}

// The multi handle and its thread. Attempts come in through a queue; their
// on_done runs on this thread.
class Engine {
 public:
  Engine() {
    for (const char* name : {"NO_PROXY", "no_proxy"}) {
      const char* v = std::getenv(name);
      if (v != nullptr && *v != '\0') {
        no_proxy_ = std::string(v) + ",";
        break;
      }
    }
    no_proxy_ += "localhost,127.0.0.1,::1";
    multi_ = curl_multi_init();
    // Idle connections kept for reuse, across hosts.
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, 64L);
    thread_ = std::thread([this] { Loop(); });
  }
  // Never destroyed (Client::Get leaks it): the thread runs to the end.

  bool OnThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  void Submit(std::unique_ptr<Attempt> attempt) {
    {
      std::lock_guard lock(mu_);
      incoming_.push_back(std::move(attempt));
    }
    curl_multi_wakeup(multi_);
  }

 private:
  CURL* TakeEasy() {
    if (!idle_.empty()) {
      CURL* e = idle_.back();
      idle_.pop_back();
      curl_easy_reset(e);
      return e;
    }
    return curl_easy_init();
  }

  // Sets up `a`'s transfer; false when curl refused an option.
  bool Setup(Attempt& a) {
    CURL* e = a.easy;
    const Request& r = a.request;
    CURLcode c = CURLE_OK;
    auto set = [&](CURLoption o, auto v) {
      if (c == CURLE_OK) c = curl_easy_setopt(e, o, v);
    };
    set(CURLOPT_URL, r.url.c_str());
    set(CURLOPT_PRIVATE, static_cast<void*>(&a));
    set(CURLOPT_NOSIGNAL, 1L);
    set(CURLOPT_PROTOCOLS_STR, "http,https");
    set(CURLOPT_HTTP_VERSION, static_cast<long>(CURL_HTTP_VERSION_1_1));
    set(CURLOPT_TCP_KEEPALIVE, 1L);
    set(CURLOPT_BUFFERSIZE, 128L << 10);  // fewer, larger reads than its 16 KiB
    set(CURLOPT_USERAGENT, "tfdist");
    // The loopback never through a proxy (the environment's proxy variables
    // hold for the rest, and their NO_PROXY is kept).
    set(CURLOPT_NOPROXY, no_proxy_.c_str());
    set(CURLOPT_ERRORBUFFER, a.error);
    set(CURLOPT_WRITEFUNCTION, &WriteCallback);
    set(CURLOPT_WRITEDATA, static_cast<void*>(&a));
    set(CURLOPT_HEADERFUNCTION, &HeaderCallback);
    set(CURLOPT_HEADERDATA, static_cast<void*>(&a));
    set(CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::max(1.0, a.connect_timeout * 1000)));
    // A response that sends nothing for stall_timeout seconds is cut.
    set(CURLOPT_LOW_SPEED_LIMIT, 1L);
    set(CURLOPT_LOW_SPEED_TIME, static_cast<long>(std::max(1.0, std::ceil(a.stall_timeout))));
    set(CURLOPT_TIMEOUT_MS, static_cast<long>(std::max(1.0, a.time_left * 1000)));
    set(CURLOPT_SSL_VERIFYPEER, a.verify_tls ? 1L : 0L);
    set(CURLOPT_SSL_VERIFYHOST, a.verify_tls ? 2L : 0L);
    if (!a.ca_file.empty()) set(CURLOPT_CAINFO, a.ca_file.c_str());
    if (r.method == "HEAD") {
      set(CURLOPT_NOBODY, 1L);
    } else if (r.method == "POST") {
      set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
      set(CURLOPT_POSTFIELDS, r.body.c_str());
    } else if (r.method != "GET") {
      set(CURLOPT_CUSTOMREQUEST, r.method.c_str());
      if (!r.body.empty()) {
        set(CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(r.body.size()));
        set(CURLOPT_POSTFIELDS, r.body.c_str());
      }
    }
    for (const auto& [name, value] : r.headers) {
      a.header_list = curl_slist_append(a.header_list, fmt::format("{}: {}", name, value).c_str());
    }
    a.header_list = curl_slist_append(a.header_list, "Expect:");  // no 100-continue round trip
    set(CURLOPT_HTTPHEADER, a.header_list);
    if (r.range) {
      const auto [begin, end] = *r.range;
      set(CURLOPT_RANGE, fmt::format("{}-{}", begin, end - 1).c_str());
    }
    if (c != CURLE_OK) a.code = c;
    return c == CURLE_OK;
  }

  void Finish(Attempt* a) {
    std::unique_ptr<Attempt> owned(a);
    if (!owned->head_done && owned->code == CURLE_OK) owned->OnHead();
    idle_.push_back(owned->easy);
    owned->easy = nullptr;
    auto done = std::move(owned->on_done);
    done(*owned);
  }

  void Loop() {
    std::unordered_set<Attempt*> active;
    for (;;) {
      std::vector<std::unique_ptr<Attempt>> batch;
      {
        std::lock_guard lock(mu_);
        batch.swap(incoming_);
      }
      const bool interrupted = Interrupted();
      for (auto& owned : batch) {
        Attempt* a = owned.release();
        a->easy = TakeEasy();
        if (interrupted) {
          a->cancelled = true;
          a->code = CURLE_ABORTED_BY_CALLBACK;
          Finish(a);
        } else if (!Setup(*a) || curl_multi_add_handle(multi_, a->easy) != CURLM_OK) {
          if (a->code == CURLE_OK) a->code = CURLE_FAILED_INIT;
          Finish(a);
        } else {
          active.insert(a);
        }
      }
      if (interrupted) {
        for (Attempt* a : active) {
          curl_multi_remove_handle(multi_, a->easy);
          a->cancelled = true;
          a->code = CURLE_ABORTED_BY_CALLBACK;
          Finish(a);
        }
        active.clear();
      }
      int running = 0;
      curl_multi_perform(multi_, &running);
      int left = 0;
      while (CURLMsg* m = curl_multi_info_read(multi_, &left)) {
        if (m->msg != CURLMSG_DONE) continue;
        void* user = nullptr;
        curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &user);
        auto* a = static_cast<Attempt*>(user);
        a->code = m->data.result;
        curl_multi_remove_handle(multi_, a->easy);
        active.erase(a);
        Finish(a);
      }
      const int wait_ms = active.empty() ? 10000 : static_cast<int>(kInterruptPoll.count());
      curl_multi_poll(multi_, nullptr, 0, wait_ms, nullptr);
    }
  }

  std::string no_proxy_;
  CURLM* multi_ = nullptr;
  std::mutex mu_;
  std::vector<std::unique_ptr<Attempt>> incoming_;
  std::vector<CURL*> idle_;  // the engine thread's only
  std::thread thread_;
};

// Runs functions at a time, on a thread of its own: the retries of
// ReadRangeAsync (their backoff, then Authorize and the next attempt).
// Everything due runs at once when the process is interrupted.
class Scheduler {
 public:
  Scheduler() : thread_([this] { Loop(); }) {}

  bool OnThread() const { return std::this_thread::get_id() == thread_.get_id(); }

  void At(Clock::time_point when, std::function<void()> fn) {
    {
      std::lock_guard lock(mu_);
      queue_.push(Item{when, seq_++, std::move(fn)});
    }
    cv_.notify_one();
  }

 private:
  struct Item {
    Clock::time_point when;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Item& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };

  void Loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      if (queue_.empty()) {
        cv_.wait(lock);
        continue;
      }
      const auto now = Clock::now();
      if (queue_.top().when > now && !Interrupted()) {
        // A copy: wait_until reads its deadline again after waking, and a
        // push while the lock is released may move the queue's storage.
        const Clock::time_point until = std::min(queue_.top().when, now + kInterruptPoll);
        cv_.wait_until(lock, until);
        continue;
      }
      auto fn = std::move(const_cast<Item&>(queue_.top()).fn);
      queue_.pop();
      lock.unlock();
      fn();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::priority_queue<Item, std::vector<Item>, std::greater<>> queue_;
  uint64_t seq_ = 0;
  std::thread thread_;
};

thread_local std::mt19937_64 jitter_rng{std::random_device{}()};

// A request with its attempts: what the next attempt asks, and what the
// last ones said.
class Job {
 public:
  struct Verdict {
    bool retry = false;
    Clock::duration delay{};
    Status status;  // when !retry
  };

  Job(HttpStore& store, Request request) : store_(store), base_(std::move(request)) {
    const RemoteOptions& o = GetRemoteOptions();
    max_attempts_ = std::max(1, o.max_attempts);
    connect_timeout_ = o.connect_timeout_seconds;
    stall_timeout_ = o.stall_timeout_seconds;
    start_ = Clock::now();
    deadline_ = start_ + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(std::max(0.0, o.max_seconds)));
  }

  void SetRange(uint64_t offset, std::span<char> dst,
                std::function<Status(const Response&)> check) {
    ranged_ = true;
    offset_ = offset;
    dst_ = dst;
    check_ = std::move(check);
    base_.range = std::pair<uint64_t, uint64_t>(offset, offset + dst.size());
  }

  bool complete() const { return ranged_ && filled_ == dst_.size(); }
  Response TakeResponse() {
    Response r = std::move(last_head_);
    r.body = std::move(body_);
    return r;
  }

  // The next attempt, authorised; an error ends the request.
  Result<std::unique_ptr<Attempt>> Prepare(std::function<void(Attempt&)> on_done) {
    if (Interrupted()) return Cancelled();
    auto a = std::make_unique<Attempt>();
    a->request = base_;
    if (ranged_) {
      a->ranged = true;
      a->first = offset_ + filled_;
      a->request.range = std::pair<uint64_t, uint64_t>(a->first, offset_ + dst_.size());
      a->dst = dst_;
      a->dst_offset = filled_;
      a->check = &check_;
    } else {
      body_.clear();
      a->body = &body_;
    }
    TFDIST_RETURN_IF_ERROR(store_.Authorize(a->request));
    a->ca_file = store_.CaFile();
    a->verify_tls = store_.VerifyTls();
    a->connect_timeout = connect_timeout_;
    a->stall_timeout = stall_timeout_;
    a->time_left = std::max(0.001, Seconds(deadline_ - Clock::now()));
    a->on_done = std::move(on_done);
    ++attempts_;
    return a;
  }

  // What to do after attempt `a`.
  Verdict Judge(Attempt& a) {
    if (ranged_) filled_ += a.received;
    if (a.cancelled) return Done(Cancelled());
    if (!a.stop.ok() && a.stop_final) return Done(std::move(a.stop));
    const long status = a.head.status;
    const bool finished = a.code == CURLE_OK || (a.code == CURLE_WRITE_ERROR && a.full);
    if (finished && a.head_done && status >= 200 && status < 300) {
      last_head_ = std::move(a.head);
      if (!ranged_ || complete()) return Done(Status::OK());
      const std::optional<ContentRange>& cr = a.content_range;
      if (a.received > 0 && cr && cr->total && offset_ + filled_ < *cr->total) {
        // A server that sends less than the range asked (some cap a
        // range's size): the rest is asked at once, and this attempt,
        // which made progress, is not counted as a failure.
        --attempts_;
        return Verdict{true, {}, Status::OK()};
      }
      return Done(EndsEarly(a));
    }
    if (a.head_done && status >= 300) {
      Response& head = a.head;
      if (!ranged_ &&
          std::find(base_.accept.begin(), base_.accept.end(), status) != base_.accept.end()) {
        body_ = std::move(head.body);
        last_head_ = std::move(head);
        return Done(Status::OK());
      }
      if (status == 416 && ranged_) return Done(EndsEarly(a));
      if (!IsRetryable(status) || !finished) {
        if (IsRetryable(status)) {
          last_error_ = fmt::format("HTTP {}, then {}", status, TransportError(a));
          return Retry(std::nullopt);
        }
        return Done(StatusError(head));
      }
      last_error_ = HttpError(head);
      std::optional<double> retry_after;
      if (auto v = head.Header("retry-after")) {
        if (auto n = ParseUint(Trim(*v))) retry_after = static_cast<double>(*n);
      }
      return Retry(retry_after);
    }
    if (!a.stop.ok()) {
      last_error_ = a.stop.message();
      return Retry(std::nullopt);
    }
    switch (a.code) {
      // TLS fails the same way every time (a certificate, or https to a
      // plain-HTTP port): not retried.
      case CURLE_PEER_FAILED_VERIFICATION:
      case CURLE_SSL_CONNECT_ERROR:
      case CURLE_SSL_CIPHER:
      case CURLE_SSL_ISSUER_ERROR:
      case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      case CURLE_SSL_INVALIDCERTSTATUS:
      case CURLE_SSL_CRL_BADFILE:
      case CURLE_SSL_CACERT_BADFILE:
      case CURLE_SSL_CERTPROBLEM:
      case CURLE_UNSUPPORTED_PROTOCOL:
      case CURLE_URL_MALFORMAT:
      case CURLE_FAILED_INIT:
        last_error_ = TransportError(a);
        return Done(Status::Unavailable(Summary()));
      default:
        last_error_ = TransportError(a);
        return Retry(std::nullopt);
    }
  }

  int attempts() const { return attempts_; }

 private:
  Verdict Done(Status s) { return Verdict{false, {}, std::move(s)}; }

  Verdict Retry(std::optional<double> retry_after) {
    if (attempts_ >= max_attempts_) return Done(Status::Unavailable(Summary()));
    const double cap =
        std::min(kBackoffCapSeconds, kBackoffBaseSeconds * std::pow(2.0, attempts_ - 1));
    double delay = std::uniform_real_distribution<double>(0, cap)(jitter_rng);
    const bool asked = retry_after && *retry_after > delay;
    if (retry_after) delay = std::max(delay, std::min(*retry_after, kBackoffCapSeconds));
    const auto wait =
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(delay));
    const auto now = Clock::now();
    if (now + wait >= deadline_) {
      if (now >= deadline_) return Done(Status::Unavailable(Summary()));
      // Time is left, but not enough for the wait before the next attempt.
      const double left = Seconds(deadline_ - now);
      const double limit = GetRemoteOptions().max_seconds;
      if (asked) {
        return Done(Status::Unavailable(Summary(
            fmt::format("the server asked to wait {:g} s (Retry-After) before the next "
                        "attempt, longer than the {:.1f} s left of the time limit of {:g} s",
                        *retry_after, left, limit))));
      }
      return Done(Status::Unavailable(
          Summary(fmt::format("the wait of {:.1f} s before the next attempt would pass the time "
                              "limit of {:g} s",
                              delay, limit))));
    }
    return Verdict{true, wait, Status::OK()};
  }

  std::string What() const {
    std::string what =
        fmt::format("{} {}", base_.method, base_.shown.empty() ? "(a request)" : base_.shown);
    if (ranged_) what += fmt::format(" [bytes {}-{}]", offset_, offset_ + dst_.size() - 1);
    return what;
  }

  // Why the request failed: the time limit passed, the attempts ran out,
  // or `stopped` (what ended the retries early).
  std::string Summary(const std::string& stopped = "") const {
    const double seconds = Seconds(Clock::now() - start_);
    const std::string attempts =
        fmt::format("{} attempt{} in {:.1f} s", attempts_, attempts_ == 1 ? "" : "s", seconds);
    if (!stopped.empty()) {
      return fmt::format("{} failed after {}: {}; last: {}", What(), attempts, stopped,
                         last_error_);
    }
    if (Clock::now() >= deadline_) {
      return fmt::format("{} failed: no success within the time limit of {:g} s ({}); last: {}",
                         What(), GetRemoteOptions().max_seconds, attempts, last_error_);
    }
    return fmt::format("{} failed after {}: {}", What(), attempts, last_error_);
  }

  Status Cancelled() const { return Status::Interrupted().Annotate(What()); }

  std::string HttpError(const Response& head) const {
    auto [code, message] = store_.ParseError(head);
    std::string text = fmt::format("HTTP {}", head.status);
    if (!code.empty()) text += " " + code;
    if (!message.empty()) text += (code.empty() ? " " : ": ") + message;
    return text;
  }

  static std::string TransportError(const Attempt& a) {
    std::string text = curl_easy_strerror(a.code);
    if (a.error[0] != '\0') text += fmt::format(" ({})", a.error);
    if (a.code == CURLE_OPERATION_TIMEDOUT) text = "timed out: " + text;
    return text;
  }

  Status StatusError(const Response& head) const {
    const std::string text = HttpError(head);
    const long s = head.status;
    if (s == 404) {
      return Status::NotFound(fmt::format("{}: not found ({}; credentials: {})", What(), text,
                                          store_.CredentialSource()));
    }
    if (s == 401 || s == 403) {
      return Status::PermissionDenied(fmt::format("{}: access denied ({}; credentials: {})", What(),
                                                  text, store_.CredentialSource()));
    }
    if (s == 412) {
      return Status::DataLoss(
          fmt::format("{}: the object was replaced while it was read ({})", What(), text));
    }
    return Status::InvalidArgument(fmt::format("{} failed: {}", What(), text));
  }

  Status EndsEarly(const Attempt& a) const {
    std::string size;
    if (a.content_range && a.content_range->total) {
      size = fmt::format(" (its size is {})", *a.content_range->total);
    } else if (a.head.status == 416) {
      if (auto v = a.head.Header("content-range")) {
        const size_t slash = v->find('/');
        if (slash != std::string_view::npos) {
          size = fmt::format(" (its size is {})", Trim(v->substr(slash + 1)));
        }
      }
    }
    return Status::OutOfRange(
        fmt::format("{}: the object ends at byte {}{}", What(), offset_ + filled_, size));
  }

  HttpStore& store_;
  Request base_;
  bool ranged_ = false;
  uint64_t offset_ = 0;
  std::span<char> dst_;
  size_t filled_ = 0;
  std::function<Status(const Response&)> check_;
  std::string body_;
  Response last_head_;
  int attempts_ = 0;
  int max_attempts_ = 10;
  double connect_timeout_ = 10, stall_timeout_ = 30;
  Clock::time_point start_, deadline_;
  std::string last_error_;
};

// Sleeps `d`, waking for an interrupt; false when interrupted.
bool SleepFor(Clock::duration d) {
  const auto end = Clock::now() + d;
  while (Clock::now() < end) {
    if (Interrupted()) return false;
    std::this_thread::sleep_for(std::min<Clock::duration>(end - Clock::now(), kInterruptPoll));
  }
  return !Interrupted();
}

RemoteOptions remote_options;

}  // namespace

std::optional<std::string_view> Response::Header(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return std::string_view(v);
  }
  return std::nullopt;
}

bool IsRetryable(long status) {
  return status == 408 || status == 429 || status == 500 || status == 502 || status == 503 ||
         status == 504;
}

std::string UriEncode(std::string_view text, bool keep_slash) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
        (keep_slash && c == '/')) {
      out += ch;
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string RedactUserinfo(std::string_view url) {
  const size_t scheme = url.find("://");
  const size_t start = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t end = std::min(url.size(), url.find_first_of("/?#", start));
  const size_t at = url.substr(start, end - start).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return fmt::format("{}***{}", url.substr(0, start), url.substr(start + at));
}

struct Client::Impl {
  Engine engine;
  Scheduler scheduler;

  // Runs `job` to its end on this thread.
  Status RunSync(Job& job) {
    if (engine.OnThread()) {
      return Status::Internal("a blocking HTTP request on the engine's own thread");
    }
    for (;;) {
      // The engine frees the attempt after on_done: it is judged there.
      std::promise<Job::Verdict> judged;
      auto verdict_future = judged.get_future();
      auto prepared = job.Prepare([&job, &judged](Attempt& a) { judged.set_value(job.Judge(a)); });
      if (!prepared.ok()) return prepared.status();
      engine.Submit(std::move(prepared).value());
      Job::Verdict verdict = verdict_future.get();
      if (!verdict.retry) return verdict.status;
      SleepFor(verdict.delay);  // when interrupted, the next Prepare says so
    }
  }

  void StartAsync(std::shared_ptr<Job> job, std::function<void(Status)> done) {
    auto prepared = job->Prepare([this, job, done](Attempt& a) {
      Job::Verdict v = job->Judge(a);
      if (!v.retry) {
        done(std::move(v.status));
        return;
      }
      scheduler.At(Clock::now() + v.delay, [this, job, done] { StartAsync(job, done); });
    });
    if (!prepared.ok()) {
      done(prepared.status());
      return;
    }
    engine.Submit(std::move(prepared).value());
  }
};

Client::Client() : impl_(nullptr) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  impl_ = new Impl();
}

Client::~Client() = default;  // never: Get() keeps the one Client to the end

Client& Client::Get() {
  static Client* client = new Client();
  return *client;
}

Result<Response> Client::Fetch(HttpStore& store, Request request) {
  Job job(store, std::move(request));
  TFDIST_RETURN_IF_ERROR(impl_->RunSync(job));
  return job.TakeResponse();
}

Status Client::ReadRange(HttpStore& store, Request request, uint64_t offset, std::span<char> dst,
                         const std::function<Status(const Response& head)>& check) {
  if (dst.empty()) return Status::OK();
  Job job(store, std::move(request));
  job.SetRange(offset, dst, check);
  return impl_->RunSync(job);
}

void Client::ReadRangeAsync(HttpStore& store, Request request, uint64_t offset, std::span<char> dst,
                            std::function<Status(const Response& head)> check,
                            std::function<void(Status)> done) {
  if (dst.empty()) {
    done(Status::OK());
    return;
  }
  auto job = std::make_shared<Job>(store, std::move(request));
  job->SetRange(offset, dst, std::move(check));
  if (impl_->engine.OnThread()) {
    // Authorize may block (a token): not on the engine's thread.
    impl_->scheduler.At(Clock::now(),
                        [this, job, done = std::move(done)] { impl_->StartAsync(job, done); });
    return;
  }
  impl_->StartAsync(std::move(job), std::move(done));
}

}  // namespace tfdist::io::http

namespace tfdist::io {

// Here rather than in storage_source.cc: a program that speaks HTTP but
// reads no object sequentially then links no more of io than it uses.
void SetRemoteOptions(const RemoteOptions& options) { http::remote_options = options; }
const RemoteOptions& GetRemoteOptions() { return http::remote_options; }

}  // namespace tfdist::io
