// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Running the trace of a Python input function in a child process, within
// a time and a memory limit, and reading its JSON answer.

#include "tfdist/trace/python_trace.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>

#include "tfdist/base/interrupt.h"
#include "tfdist/base/json.h"
#include "tfdist/base/text.h"
#include "trace_config.h"

namespace tfdist::trace {
namespace {

// The trace's own output is kept to its last this many bytes (shown on a
// failure); its answer may be up to kMaxAnswer (a chain listing a million
// file names is tens of megabytes).
constexpr size_t kOutputTail = 16 << 10;
constexpr size_t kMaxAnswer = size_t{512} << 20;

// What the child runs: the package folder is argv[1], the answer's fd argv[2].
constexpr const char* kBootstrap =
    "import sys; sys.path.insert(0, sys.argv[1]); import tfdist_trace.run as r; "
    "sys.exit(r.main(sys.argv[2:]))";

bool IsFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// `name` as execv takes it: a path as given, or found on PATH; empty when
// there is none.
std::string FindProgram(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? name : "";
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + name;
    if (IsFile(candidate) && access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

struct Fd {
  int fd = -1;
  Fd() = default;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

Status MakePipe(Fd& read_end, Fd& write_end) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return ErrnoError(errno, StatusCode::kInternal, "cannot make a pipe for the trace");
  }
  read_end.fd = fds[0];
  write_end.fd = fds[1];
  return Status::OK();
}

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void ExecChild(const std::string& python, const std::string& folder, int in, int out,
                            int answer, uint64_t memory_bytes, pid_t parent) {
  setpgid(0, 0);
  // The interpreter dies with tfdist, whatever ends it (SIGKILL, an OOM
  // kill, a signal handled by exiting): its time limit is tfdist's to keep.
  // A parent gone before this line is caught by the check after it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(125);
  rlimit limit{memory_bytes, memory_bytes};
  setrlimit(RLIMIT_AS, &limit);
  signal(SIGPIPE, SIG_DFL);
  // The pipes move above 0..3 first (one may be fd 0 when tfdist was started
  // with stdin closed), so each dup2 below makes a new fd, without O_CLOEXEC.
  const int in_high = fcntl(in, F_DUPFD, 10);
  const int out_high = fcntl(out, F_DUPFD, 10);
  const int answer_high = fcntl(answer, F_DUPFD, 10);
  if (in_high < 0 || out_high < 0 || answer_high < 0 || dup2(in_high, 0) < 0 ||
      dup2(out_high, 1) < 0 || dup2(out_high, 2) < 0 || dup2(answer_high, 3) < 0) {
    _exit(126);
  }
  close_range(4, ~0U, 0);
  // -I -S: none of the user's Python environment (PYTHON* variables, site
  // packages, the working folder) changes the trace; -B: no bytecode
  // written beside the stand-in.
  const char* argv[] = {python.c_str(), "-I",           "-S", "-B",   "-c",
                        kBootstrap,     folder.c_str(), "3",  nullptr};
  execv(python.c_str(), const_cast<char* const*>(argv));
  const char message[] = "tfdist: cannot start python3\n";
  [[maybe_unused]] ssize_t n = write(2, message, sizeof(message) - 1);
  _exit(127);
}

struct ChildOutcome {
  std::string output;  // its stdout and stderr, the last kOutputTail bytes
  std::string answer;
  int wait_status = 0;
  bool timed_out = false;
  bool interrupted = false;
  bool answer_too_large = false;
};

// Feeds `input` to the child and reads its output and answer until it
// exits (then what is left in the pipes: a process it started may keep them
// open), killing its process group past the deadline, on an interrupt or on
// an error. The child is always reaped.
Status Supervise(pid_t pid, Fd& in, Fd& out, Fd& answer, const std::string& input,
                 double timeout_seconds, double grace_seconds, ChildOutcome& outcome) {
  for (const Fd* fd : {&in, &out, &answer}) fcntl(fd->fd, F_SETFL, O_NONBLOCK);
  size_t written = 0;
  const auto seconds = [](double s) {
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(s));
  };
  const auto deadline = std::chrono::steady_clock::now() + seconds(timeout_seconds);
  char buf[65536];
  bool killed = false, exited = false;
  Status status;
  // Reads what `fd` has now; false at its end.
  auto drain = [&](Fd& fd) {
    for (;;) {
      const ssize_t got = read(fd.fd, buf, sizeof(buf));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && errno == EAGAIN) return true;
      if (got <= 0) {
        fd.Close();
        return false;
      }
      if (&fd == &out) {
        outcome.output.append(buf, static_cast<size_t>(got));
        if (outcome.output.size() > 2 * kOutputTail) {
          outcome.output.erase(0, outcome.output.size() - kOutputTail);
        }
      } else if (outcome.answer.size() + static_cast<size_t>(got) > kMaxAnswer) {
        outcome.answer_too_large = true;
        outcome.answer.clear();
        fd.Close();
        return false;
      } else {
        outcome.answer.append(buf, static_cast<size_t>(got));
      }
    }
  };
  while (!exited) {
    const auto now = std::chrono::steady_clock::now();
    if (!killed && (Interrupted() || !status.ok() || outcome.answer_too_large)) {
      outcome.interrupted = Interrupted();
      kill(-pid, SIGKILL);
      killed = true;
    } else if (!killed && !outcome.timed_out && now > deadline) {
      outcome.timed_out = true;
      kill(-pid, SIGINT);
    } else if (!killed && outcome.timed_out && now > deadline + seconds(grace_seconds)) {
      kill(-pid, SIGKILL);
      killed = true;
    }
    pollfd fds[3];
    int n = 0;
    if (in.fd >= 0) fds[n++] = {in.fd, POLLOUT, 0};
    if (out.fd >= 0) fds[n++] = {out.fd, POLLIN, 0};
    if (answer.fd >= 0) fds[n++] = {answer.fd, POLLIN, 0};
    if (poll(fds, static_cast<nfds_t>(n), n > 0 ? 100 : 10) < 0 && errno != EINTR && status.ok()) {
      status = ErrnoError(errno, StatusCode::kInternal, "waiting for the trace");
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in.fd) {
        const ssize_t w = write(in.fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) in.Close();
      } else if (fds[i].fd == out.fd) {
        drain(out);
      } else if (fds[i].fd == answer.fd) {
        drain(answer);
      }
    }
    const pid_t reaped = waitpid(pid, &outcome.wait_status, WNOHANG);
    exited = reaped == pid || (reaped < 0 && errno == ECHILD);
  }
  // What the child wrote before it exited; a process it left behind may
  // hold the pipes open, so nothing more is waited for.
  if (out.fd >= 0) drain(out);
  if (answer.fd >= 0) drain(answer);
  kill(-pid, SIGKILL);  // what it left behind in its group
  in.Close();
  out.Close();
  answer.Close();
  if (outcome.output.size() > kOutputTail) {
    outcome.output.erase(0, outcome.output.size() - kOutputTail);
  }
  return status;
}

// "  the input function printed:\n  ..." for a failure's details.
std::string Printed(const std::string& output) {
  if (output.find_first_not_of(" \t\r\n") == std::string::npos) return "";
  std::string out = "the input function's output (the last lines):\n";
  size_t start = 0;
  int lines = 0;
  for (size_t i = output.size(); i-- > 0;) {
    if (output[i] == '\n' && i + 1 < output.size() && ++lines >= 20) {
      start = i + 1;
      break;
    }
  }
  out += output.substr(start);
  if (out.back() != '\n') out += '\n';
  return out;
}

Result<PythonTrace> ReadAnswerJson(const TraceRequest& request, const ChildOutcome& child,
                                   std::string* details) {
  if (JsonNestsDeeperThan(child.answer, kMaxJsonDepth)) {
    if (details) *details = Printed(child.output);
    return Status::FailedPrecondition(
        fmt::format("the trace's answer nests deeper than {} levels, the most tfdist reads; is the "
                    "interpreter a Python 3 running tfdist's stand-in?",
                    kMaxJsonDepth));
  }
  // Names that are not UTF-8 come as Python writes them, \udcXX a byte.
  nlohmann::json j = ParseJson(child.answer);
  if (j.is_discarded() || !j.is_object()) {
    if (details) *details = Printed(child.output);
    return Status::FailedPrecondition(
        "the trace's answer is not JSON; is the interpreter a "
        "Python 3 running tfdist's stand-in?");
  }
  if (j.contains("error")) {
    const nlohmann::json& e = j["error"];
    std::string message = e.value("message", std::string("the trace failed"));
    Remedy advice = Remedy::kNone;
    if (child.timed_out || e.value("kind", std::string()) == "timeout") {
      message = fmt::format(
          "the trace did not finish within {:g} s; this line was running, and the "
          "code may wait for input, loop, or do real work while it builds the "
          "dataset",
          request.timeout_seconds);
      advice = Remedy::kLongerTraceTimeout;
    }
    if (e.contains("file")) {
      // The line as an integer only: converting any other number (1e60) to
      // one is undefined, and the answer is not trusted.
      const nlohmann::json line = e.value("line", nlohmann::json());
      message = fmt::format("{}:{}: {}", e.value("file", std::string()),
                            line.is_number_integer() ? line.get<int64_t>() : 0, message);
    }
    if (details) {
      // The line of code, its first columns when it is long (a file may be
      // one line of megabytes).
      *details = e.contains("source")
                     ? fmt::format("  {}\n", Abbreviate(e.value("source", std::string()), 80))
                     : "";
      *details += Printed(child.output);
    }
    return Status::InvalidArgument(message).WithAdvice(advice);
  }
  PythonTrace t;
  t.file = request.file == "-" ? "<stdin>" : request.file;
  t.chain = j.value("chain", std::string());
  t.entry = j.value("entry", std::string());
  if (j.contains("api") && j["api"].is_string()) t.api = j["api"].get<std::string>();
  const nlohmann::json options = j.value("options", nlohmann::json::object());
  if (options.contains("auto_shard_policy")) {
    t.policy = options["auto_shard_policy"].get<std::string>();
    t.policy_site = options.value("auto_shard_policy_site", std::string());
  }
  if (options.contains("deterministic")) {
    t.deterministic = options["deterministic"].get<bool>();
    t.deterministic_site = options.value("deterministic_site", std::string());
  }
  if (j.contains("global_seed")) {
    const nlohmann::json& s = j["global_seed"];
    t.global_seed_site = s.value("site", std::string());
    if (s.contains("value") && s["value"].is_number_integer())
      t.global_seed = s["value"].get<int64_t>();
  }
  for (const auto& c : j.value("worker_chains", nlohmann::json::array())) {
    t.worker_chains.push_back(c.get<std::string>());
  }
  for (const auto& a : j.value("assumptions", nlohmann::json::array())) {
    t.assumptions.push_back(a.get<std::string>());
  }
  if (t.chain.empty()) return Status::Internal("the trace gave no pipeline");
  return t;
}

// ReadAnswerJson, with an answer of the wrong shape an error like any other
// (the interpreter is not running tfdist's stand-in as it should).
Result<PythonTrace> ReadAnswer(const TraceRequest& request, const ChildOutcome& child,
                               std::string* details) {
  try {
    return ReadAnswerJson(request, child, details);
  } catch (const nlohmann::json::exception& e) {
    return Status::FailedPrecondition(
        fmt::format("the trace's answer is malformed ({}); is the interpreter a Python 3 running "
                    "tfdist's stand-in?",
                    e.what()));
  }
}

}  // namespace

Result<PythonTrace> ReadTraceAnswer(const TraceRequest& request, std::string answer,
                                    std::string output, bool timed_out, std::string* details) {
  ChildOutcome child;
  child.answer = std::move(answer);
  child.output = std::move(output);
  child.timed_out = timed_out;
  return ReadAnswer(request, child, details);
}

std::string TraceModuleFolder() {
  std::vector<std::string> candidates;
  if (const char* dir = std::getenv("TFDIST_TRACE_DIR"); dir && *dir) candidates.push_back(dir);
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string path(exe, static_cast<size_t>(n));
    const std::string bin = path.substr(0, path.rfind('/'));
    candidates.push_back(bin + "/../share/tfdist/python");
  }
  // A build folder's program uses the source tree's, not an older install.
  candidates.push_back(TFDIST_PYTHON_SOURCE_DIR);
  candidates.push_back(TFDIST_PYTHON_INSTALL_DIR);
  for (const std::string& dir : candidates) {
    if (IsFile(dir + "/tfdist_trace/run.py")) return dir;
  }
  return "";
}

namespace {

// What the trace runs: the stand-in's folder and the interpreter.
struct Launch {
  std::string folder;
  std::string python;
};

// The checks made before a process starts: the stand-in and the interpreter
// are there, and the code is a file (or the code given) of at most
// kMaxSourceBytes.
Result<Launch> Prepare(const TraceRequest& request) {
  const std::string folder = TraceModuleFolder();
  if (folder.empty()) {
    return Status::FailedPrecondition(
        "the stand-in tensorflow module (tfdist_trace) is not installed beside tfdist");
  }
  const char* env = std::getenv("TFDIST_PYTHON");
  const std::string wanted = !request.python.empty() ? request.python : env && *env ? env : "";
  const std::string python = FindProgram(wanted.empty() ? "python3" : wanted);
  if (python.empty()) {
    return Status::FailedPrecondition(fmt::format(
        "tracing a Python input function needs {}, which was not found (install python3, or "
        "set TFDIST_PYTHON to the interpreter)",
        wanted.empty() ? "python3 on PATH" : wanted));
  }
  if (request.source) {
    if (request.source->size() > kMaxSourceBytes) {
      return Status::InvalidArgument(
          fmt::format("{}: the input function's code is over {} MiB, the most tfdist reads of one",
                      request.file == "-" ? "<stdin>" : request.file, kMaxSourceBytes >> 20));
    }
  } else if (request.file == "-") {
    return Status::Internal("the code of standard input was not read before its trace");
  } else {
    struct stat st;
    if (stat(request.file.c_str(), &st) != 0) {
      return ErrnoError(errno, StatusCode::kInvalidArgument,
                        fmt::format("{}: cannot read the input function file", request.file));
    }
    if (!S_ISREG(st.st_mode)) {
      return Status::InvalidArgument(fmt::format("{}: not a file of Python code", request.file));
    }
    if (static_cast<uint64_t>(st.st_size) > kMaxSourceBytes) {
      return Status::InvalidArgument(
          fmt::format("{}: the input function file is over {} MiB, the most tfdist reads of one",
                      request.file, kMaxSourceBytes >> 20));
    }
  }
  return Launch{folder, python};
}

}  // namespace

std::string TraceRequestJson(const TraceRequest& request) {
  nlohmann::json req;
  req["file"] = request.file == "-" ? "<stdin>" : request.file;
  if (request.source) req["source"] = *request.source;
  if (!request.entry.empty()) req["entry"] = request.entry;
  req["defines"] = nlohmann::json::array();
  for (const auto& [name, expr] : request.defines) req["defines"].push_back({name, expr});
  req["memory_mib"] = request.memory_bytes >> 20;
  req["max_source_bytes"] = kMaxSourceBytes;  // the file may grow after its check
  if (!request.api.empty()) req["api"] = request.api;
  if (request.global_seed) req["global_seed"] = *request.global_seed;
  req["op_seed_offset"] = request.op_seed_offset;
  req["context"] = {
      {"workers", request.workers}, {"worker", request.worker}, {"replicas", request.replicas}};
  // Names that are not UTF-8 go as \udcXX a byte: json.load then gives the
  // str os.fsdecode makes of them, which opens the file.
  return DumpJson(req, true);
}

Result<PythonTrace> TracePythonInput(const TraceRequest& request, std::string* details) {
  TFDIST_ASSIGN_OR_RETURN(const Launch launch, Prepare(request));
  const std::string& python = launch.python;
  const std::string& folder = launch.folder;
  const std::string input = TraceRequestJson(request);

  Fd in_r, in_w, out_r, out_w, ans_r, ans_w;
  TFDIST_RETURN_IF_ERROR(MakePipe(in_r, in_w));
  TFDIST_RETURN_IF_ERROR(MakePipe(out_r, out_w));
  TFDIST_RETURN_IF_ERROR(MakePipe(ans_r, ans_w));
  // No stdio buffer is flushed twice: the child execs or _exits.
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    // EAGAIN: the user's process limit (ulimit -u), or the system's.
    return errno == EAGAIN
               ? Status::ResourceExhausted(fmt::format(
                     "cannot start the trace: {} (too many processes)", std::strerror(errno)))
               : ErrnoError(errno, StatusCode::kInternal, "cannot start the trace");
  }
  if (pid == 0)
    ExecChild(python, folder, in_r.fd, out_w.fd, ans_w.fd, request.memory_bytes, parent);
  setpgid(pid, pid);
  in_r.Close();
  out_w.Close();
  ans_w.Close();
  ChildOutcome child;
  // A child that exits before reading the request must not kill tfdist with
  // SIGPIPE: the write fails with EPIPE instead, and the outcome tells.
  struct sigaction ignore = {}, old_pipe = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  const Status supervised = Supervise(pid, in_w, out_r, ans_r, input, request.timeout_seconds,
                                      request.grace_seconds, child);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  TFDIST_RETURN_IF_ERROR(supervised);
  if (child.interrupted) return Status::Interrupted();
  const std::string where = request.file == "-" ? "the input function" : request.file;
  if (child.answer_too_large) {
    return Status::InvalidArgument(fmt::format(
        "{}: the trace's answer is over {} MiB (a pipeline listing that many file names?)", where,
        kMaxAnswer >> 20));
  }
  if (child.timed_out && child.answer.empty()) {
    if (details) *details = Printed(child.output);
    return Status::InvalidArgument(
               fmt::format("{}: the trace did not finish within {:g} s; the code may wait for "
                           "input, loop, or do real work while it builds the dataset",
                           where, request.timeout_seconds))
        .WithAdvice(Remedy::kLongerTraceTimeout);
  }
  const int st = child.wait_status;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && child.answer.empty()) {
    return Status::FailedPrecondition(fmt::format("cannot run {}", python));
  }
  if (child.answer.empty()) {
    if (details) *details = Printed(child.output);
    if (child.output.find("MemoryError") != std::string::npos) {
      return Status::InvalidArgument(
          fmt::format("{}: the trace ran out of memory (its limit is {} MiB)", where,
                      request.memory_bytes >> 20));
    }
    // Not tfdist's failure: the interpreter is not a Python 3 that runs
    // the stand-in, or it crashed.
    return Status::FailedPrecondition(fmt::format(
        "the trace of {} ended without an answer ({}); is {} a Python 3 interpreter?", where,
        WIFSIGNALED(st) ? fmt::format("{} was killed by signal {}", python, WTERMSIG(st))
                        : fmt::format("{} exited with status {}", python, WEXITSTATUS(st)),
        python));
  }
  return ReadAnswer(request, child, details);
}

}  // namespace tfdist::trace
