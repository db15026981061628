// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The trace's child process, driven with a fake interpreter (a shell
// script): the request it reads, the limits it runs under, the signals past
// its time limit, its process group, and what an interpreter that does not
// answer leaves; and the answer as the trace reads it.

#include "tfdist/trace/python_trace.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <string>

#include "test_util.h"
#include "tfdist/base/json.h"

namespace tfdist::trace {
namespace {

using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

// An interpreter that runs `body` as a shell script: it gets the request on
// its standard input and writes its answer to fd 3, as the stand-in does.
std::string FakePython(const TempDir& dir, const std::string& body) {
  const std::string path = dir.File("python");
  WriteFile(path, "#!/bin/sh\n" + body);
  REQUIRE(chmod(path.c_str(), 0755) == 0);
  return path;
}

// A request for `file` (made, with a line of code) run by `python`.
TraceRequest Request(const TempDir& dir, const std::string& python) {
  TraceRequest r;
  r.file = dir.File("input_fn.py");
  WriteFile(r.file, "def input_fn():\n  pass\n");
  r.python = python;
  return r;
}

// The pid a script wrote to `path`.
pid_t PidIn(const std::string& path) {
  const std::string text = ReadFile(path);
  REQUIRE_FALSE(text.empty());
  return static_cast<pid_t>(std::stol(text));
}

// Whether process `pid` is dead (gone, or a zombie its new parent has not
// reaped yet), waiting up to ten seconds for a SIGKILL to land.
bool Dead(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    if (!stat || !std::getline(stat, line)) return true;
    const size_t name_end = line.rfind(')');
    if (name_end != std::string::npos && name_end + 2 < line.size() &&
        (line[name_end + 2] == 'Z' || line[name_end + 2] == 'X')) {
      return true;
    }
    usleep(10000);
  }
  return false;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST_CASE("the interpreter reads names, defines and code that are not UTF-8 as their bytes") {
  TempDir dir;
  const std::string python = FakePython(
      dir, "cat > '" + dir.File("request.json") +
               "'\nprintf '%s' '{\"chain\": \"range(3)\", \"entry\": \"input_fn()\"}' >&3\n");
  TraceRequest request = Request(dir, python);
  request.file = dir.File("in\xff\xfe.py");
  WriteFile(request.file, "def input_fn():\n  pass\n");
  request.entry = "Builder.input_fn";
  request.defines = {{"FLAGS.pattern", "'d/\xff*.tfrecord'"}, {"params", "{'caf\xc3\xa9': 1}"}};
  request.workers = 4;
  request.worker = 2;
  request.replicas = 8;
  request.global_seed = 7;
  request.op_seed_offset = 3;
  std::string details;
  const Result<PythonTrace> trace = TracePythonInput(request, &details);
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  CHECK(trace->chain == "range(3)");
  CHECK(trace->entry == "input_fn()");
  CHECK(trace->file == request.file);

  const std::string sent = ReadFile(dir.File("request.json"));
  CHECK(sent == TraceRequestJson(request));
  for (const char c : sent) CHECK(static_cast<unsigned char>(c) < 0x80);  // ASCII, one line
  CHECK_FALSE(Has(sent, "\n"));
  CHECK(Has(sent, R"(in\udcff\udcfe.py)"));  // Python's surrogate escapes
  CHECK(Has(sent, R"('d/\udcff*.tfrecord')"));
  CHECK(Has(sent, R"(caf\u00e9)"));  // UTF-8 stays a character
  const nlohmann::json j = ParseJson(sent);
  REQUIRE_FALSE(j.is_discarded());
  CHECK(j["file"] == request.file);
  CHECK(j["entry"] == "Builder.input_fn");
  CHECK(j["defines"] ==
        nlohmann::json::array({nlohmann::json::array({"FLAGS.pattern", "'d/\xff*.tfrecord'"}),
                               nlohmann::json::array({"params", "{'caf\xc3\xa9': 1}"})}));
  CHECK(j["context"] == nlohmann::json({{"workers", 4}, {"worker", 2}, {"replicas", 8}}));
  CHECK(j["global_seed"] == 7);
  CHECK(j["op_seed_offset"] == 3);
  CHECK(j["memory_mib"] == 4096);
  CHECK(j["max_source_bytes"] == kMaxSourceBytes);
  CHECK_FALSE(j.contains("source"));

  // Code read by the caller (standard input) goes in the request.
  request.file = "-";
  request.source = "pattern = 'd/\xff*'\n";
  const std::string from_stdin = TraceRequestJson(request);
  const nlohmann::json k = ParseJson(from_stdin);
  CHECK(k["file"] == "<stdin>");
  CHECK(k["source"] == "pattern = 'd/\xff*'\n");
  const Result<PythonTrace> traced = TracePythonInput(request, &details);
  REQUIRE_MESSAGE(traced.ok(), traced.status().ToString());
  CHECK(traced->file == "<stdin>");
  CHECK(ReadFile(dir.File("request.json")) == from_stdin);
}

TEST_CASE("the interpreter runs in its own process group under the memory limit") {
  TempDir dir;
  const std::string python = FakePython(
      dir, "ulimit -v > '" + dir.File("limit") + "'\nps -o pgid= -p $$ > '" + dir.File("group") +
               "'\necho $$ > '" + dir.File("pid") + "'\nprintf '{\"chain\": \"range(1)\"}' >&3\n");
  TraceRequest request = Request(dir, python);
  request.memory_bytes = uint64_t{1} << 30;
  std::string details;
  const Result<PythonTrace> trace = TracePythonInput(request, &details);
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  CHECK(ReadFile(dir.File("limit")) == "1048576\n");  // KiB
  const pid_t pid = PidIn(dir.File("pid"));
  const std::string group = ReadFile(dir.File("group"));
  if (!group.empty()) CHECK(std::stol(group) == pid);  // ps may be missing
  CHECK(getpgrp() != pid);
}

TEST_CASE("past the time limit the trace gets SIGINT, then SIGKILL, and its group goes too") {
  TempDir dir;
  SUBCASE("the interpreter says where it was on SIGINT, then hangs") {
    // The stand-in writes its timeout error on SIGINT; this one then goes
    // on, so only SIGKILL ends it. Its background sleep ignores SIGINT (as
    // a non-interactive shell's background jobs do) and holds the pipes.
    WriteFile(dir.File("answer.json"),
              R"({"error": {"kind": "timeout", "message": "KeyboardInterrupt", )"
              R"("file": "input_fn.py", "line": 7, "source": "while True: pass"}})");
    const std::string python =
        FakePython(dir, "trap 'echo INT >> \"" + dir.File("signals") + "\"; cat \"" +
                            dir.File("answer.json") + "\" >&3' INT\nsleep 1000 &\necho $! > '" +
                            dir.File("left.pid") + "'\nwhile :; do sleep 0.1; done\n");
    TraceRequest request = Request(dir, python);
    request.timeout_seconds = 1;
    std::string details;
    const Result<PythonTrace> trace = TracePythonInput(request, &details);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kInvalidArgument);
    CHECK(trace.status().message() ==
          "input_fn.py:7: the trace did not finish within 1 s; this line was running, and the "
          "code may wait for input, loop, or do real work while it builds the dataset");
    CHECK(trace.status().advice().remedy == Remedy::kLongerTraceTimeout);
    CHECK(details == "  while True: pass\n");
    CHECK(ReadFile(dir.File("signals")) == "INT\n");  // one SIGINT
    CHECK(Dead(PidIn(dir.File("left.pid"))));
  }
  SUBCASE("the interpreter ignores SIGINT and never answers") {
    const std::string python =
        FakePython(dir, "trap 'echo INT >> \"" + dir.File("signals") +
                            "\"' INT\necho 'working...'\nsleep 1000 &\necho $! > '" +
                            dir.File("left.pid") + "'\nwhile :; do sleep 0.1; done\n");
    TraceRequest request = Request(dir, python);
    request.timeout_seconds = 0.5;
    request.grace_seconds = 1;
    std::string details;
    const Result<PythonTrace> trace = TracePythonInput(request, &details);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kInvalidArgument);
    CHECK(trace.status().message() ==
          request.file +
              ": the trace did not finish within 0.5 s; the code may wait for input, loop, or do "
              "real work while it builds the dataset");
    CHECK(trace.status().advice().remedy == Remedy::kLongerTraceTimeout);
    CHECK(trace.status().ToString() ==
          "INVALID_ARGUMENT: " + trace.status().message() + " (give the trace more time)");
    CHECK(Has(details, "working..."));
    CHECK(ReadFile(dir.File("signals")) == "INT\n");
    CHECK(Dead(PidIn(dir.File("left.pid"))));
  }
}

TEST_CASE("what an interpreter leaves behind in its group dies when it exits") {
  TempDir dir;
  // The sleep holds the output and answer pipes open after the answer.
  const std::string python =
      FakePython(dir, "sleep 1000 &\necho $! > '" + dir.File("left.pid") +
                          "'\nprintf '{\"chain\": \"range(2)\"}' >&3\nexit 0\n");
  std::string details;
  const Result<PythonTrace> trace = TracePythonInput(Request(dir, python), &details);
  REQUIRE_MESSAGE(trace.ok(), trace.status().ToString());
  CHECK(trace->chain == "range(2)");
  CHECK(Dead(PidIn(dir.File("left.pid"))));
}

TEST_CASE("an interpreter that ends without an answer is named, with what it printed") {
  TempDir dir;
  std::string details;
  SUBCASE("an exit status") {
    const std::string python =
        FakePython(dir, "cat > /dev/null\necho 'SyntaxError: not Python 3' >&2\nexit 3\n");
    const Result<PythonTrace> trace = TracePythonInput(Request(dir, python), &details);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kFailedPrecondition);
    CHECK(trace.status().message() ==
          fmt::format("the trace of {} ended without an answer ({} exited with status 3); is {} "
                      "a Python 3 interpreter?",
                      dir.File("input_fn.py"), python, python));
    CHECK(details == "the input function's output (the last lines):\nSyntaxError: not Python 3\n");
  }
  SUBCASE("a signal") {
    const std::string python = FakePython(dir, "kill -SEGV $$\n");
    const Result<PythonTrace> trace = TracePythonInput(Request(dir, python), &details);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Has(trace.status().message(), python + " was killed by signal 11"));
  }
  SUBCASE("an exit before it reads a request larger than a pipe holds") {
    // The write fails with EPIPE; SIGPIPE does not end this process.
    const std::string python = FakePython(dir, "exit 4\n");
    TraceRequest request = Request(dir, python);
    request.file = "-";
    request.source = std::string(size_t{8} << 20, '#');
    const Result<PythonTrace> trace = TracePythonInput(request, &details);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Has(trace.status().message(), "the trace of the input function ended without an answer"));
    CHECK(Has(trace.status().message(), python + " exited with status 4"));
  }
  SUBCASE("out of memory") {
    const std::string python = FakePython(dir, "echo MemoryError >&2\nexit 1\n");
    TraceRequest request = Request(dir, python);
    request.memory_bytes = uint64_t{256} << 20;
    const Result<PythonTrace> trace = TracePythonInput(request, &details);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kInvalidArgument);
    CHECK(trace.status().message() ==
          dir.File("input_fn.py") + ": the trace ran out of memory (its limit is 256 MiB)");
  }
  SUBCASE("an answer that is not JSON") {
    const std::string python = FakePython(dir, "echo hello\necho 'not json' >&3\n");
    const Result<PythonTrace> trace = TracePythonInput(Request(dir, python), &details);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kFailedPrecondition);
    CHECK(Has(trace.status().message(), "the trace's answer is not JSON"));
    CHECK(details == "the input function's output (the last lines):\nhello\n");
  }
}

TEST_CASE("what cannot be traced is refused before a process starts") {
  TempDir dir;
  const std::string python = FakePython(dir, "echo started > '" + dir.File("ran") + "'\n");
  std::string details;
  TraceRequest request = Request(dir, dir.File("no-python"));
  Result<PythonTrace> trace = TracePythonInput(request, &details);
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().code() == StatusCode::kFailedPrecondition);
  CHECK(trace.status().message() ==
        fmt::format("tracing a Python input function needs {}, which was not found (install "
                    "python3, or set TFDIST_PYTHON to the interpreter)",
                    dir.File("no-python")));

  request = Request(dir, python);
  request.file = dir.File("missing.py");
  trace = TracePythonInput(request, &details);
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().code() == StatusCode::kInvalidArgument);
  CHECK(Has(trace.status().message(), "missing.py: cannot read the input function file"));

  request.file = dir.path();
  trace = TracePythonInput(request, &details);
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().message() == dir.path() + ": not a file of Python code");

  request.file = "-";
  request.source = std::string(kMaxSourceBytes + 1, '#');
  trace = TracePythonInput(request, &details);
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().message() ==
        "<stdin>: the input function's code is over 16 MiB, the most tfdist reads of one");
  CHECK_FALSE(std::filesystem::exists(dir.File("ran")));
}

TEST_CASE("a trace answer nested five million levels deep is an error, not a crash") {
  // nlohmann::json copies a value recursively: such an answer overflowed
  // the stack when the answer's fields were read.
  const size_t n = 5'000'000;
  for (const std::string& answer :
       {R"j({"chain": "range(9)", "worker_chains": )j" + std::string(n, '[') + std::string(n, ']') +
            "}",
        R"j({"chain": "range(9)", "options": )j" + std::string(n, '[') + std::string(n, ']') + "}",
        R"({"error": {"message": "x", "line": )" + std::string(n, '{') + "}"}) {
    TraceRequest request;
    request.file = "input_fn.py";
    std::string details;
    const Result<PythonTrace> trace = ReadTraceAnswer(request, answer, "", false, &details);
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::kFailedPrecondition);
    CHECK(trace.status().message().find("nests deeper than 1000 levels") != std::string::npos);
  }
}

TEST_CASE("an answer at the nesting limit is read, one past it is not") {
  const auto answer = [](size_t depth) {
    // The object itself is one level; "a" holds the rest.
    return R"j({"chain": "range(9)", "a": )j" + std::string(depth - 1, '[') +
           std::string(depth - 1, ']') + "}";
  };
  TraceRequest request;
  request.file = "input_fn.py";
  std::string details;
  const Result<PythonTrace> at =
      ReadTraceAnswer(request, answer(kMaxJsonDepth), "", false, &details);
  REQUIRE_MESSAGE(at.ok(), at.status().ToString());
  CHECK(at->chain == "range(9)");
  const Result<PythonTrace> past =
      ReadTraceAnswer(request, answer(kMaxJsonDepth + 1), "", false, &details);
  REQUIRE_FALSE(past.ok());
  CHECK(past.status().code() == StatusCode::kFailedPrecondition);
}

TEST_CASE("an error the stand-in wrote is the user's, with its file, line and source") {
  TraceRequest request;
  request.file = "input_fn.py";
  std::string details;
  const Result<PythonTrace> trace = ReadTraceAnswer(
      request,
      R"j({"error": {"message": "FLAGS.batch_size is not defined", "file": "input_fn.py", )j"
      R"j("line": 12, "source": "ds = ds.batch(FLAGS.batch_size)"}})j",
      "loading\n", false, &details);
  REQUIRE_FALSE(trace.ok());
  CHECK(trace.status().code() == StatusCode::kInvalidArgument);
  CHECK(trace.status().message() == "input_fn.py:12: FLAGS.batch_size is not defined");
  CHECK(trace.status().advice().remedy == Remedy::kNone);
  CHECK(details ==
        "  ds = ds.batch(FLAGS.batch_size)\nthe input function's output (the last lines):\n"
        "loading\n");
}

}  // namespace
}  // namespace tfdist::trace
