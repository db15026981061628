// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Output sets: the output names hold the whole old set or the whole new
// set whatever stops the commit (a failure, a signal, SIGKILL after any of
// its phases, with the next writer recovering), staged files live outside
// the destination, a set never doubles an old one, and writers lock.

#include "tfdist/io/output_set.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "test_util.h"
#include "tfdist/base/interrupt.h"

namespace tfdist::io {
namespace {

// A destination folder `out` inside a temporary folder (its staging folder
// is made beside it).
struct Dest {
  testing::TempDir dir;
  std::string out = dir.File("out");
  Dest() { REQUIRE(mkdir(out.c_str(), 0755) == 0); }
  std::string File(const std::string& name) const { return out + "/" + name; }
  std::vector<std::string> Outputs() const { return testing::Listing(out); }
  std::vector<std::string> Around() const { return testing::Listing(dir.path()); }
};

std::string Shard(int i, int n) { return fmt::format("s-{:05}-of-{:05}.tfrecord", i, n); }

std::vector<std::string> Shards(int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(Shard(i, n));
  return v;
}

std::unique_ptr<OutputSet> Begin(const Dest& d, bool replace,
                                 std::vector<std::string>* notes = nullptr) {
  OutputSetOptions o;
  o.replace = replace;
  o.sync = false;
  o.command = "test";
  if (notes != nullptr) o.note = [notes](std::string_view t) { notes->emplace_back(t); };
  auto set = OutputSet::Begin(std::vector<std::string>{d.out}, std::move(o));
  REQUIRE(set.ok());
  return std::move(*set);
}

// Stages `names` (each holding `text`) in `set`.
void Stage(OutputSet& set, const Dest& d, const std::vector<std::string>& names,
           const std::string& text) {
  for (const std::string& name : names) {
    auto file = set.Create(d.File(name));
    REQUIRE(file.ok());
    std::unique_ptr<ByteSink> sink = (*file)->TakeSink(/*sync=*/false);
    REQUIRE(sink->Write(text).ok());
    REQUIRE(sink->Finish().ok());
    sink.reset();
    set.Add(std::move(*file));
  }
}

// The old set: 3 shards holding "old", and two files of other names.
void WriteOldSet(const Dest& d) {
  for (const std::string& name : Shards(3)) testing::WriteFile(d.File(name), "old");
  testing::WriteFile(d.File("s-notes.txt"), "keep");
  testing::WriteFile(d.File("t-00000-of-00001.tfrecord"), "keep");
}

std::vector<std::string> With(std::vector<std::string> v, std::vector<std::string> more) {
  v.insert(v.end(), more.begin(), more.end());
  std::sort(v.begin(), v.end());
  return v;
}

// The folder holds exactly the old set (and the other files), as written.
void CheckOldSet(const Dest& d) {
  CHECK(d.Outputs() == With(Shards(3), {"s-notes.txt", "t-00000-of-00001.tfrecord"}));
  for (const std::string& name : Shards(3)) CHECK(testing::ReadFile(d.File(name)) == "old");
}

void CheckNewSet(const Dest& d) {
  CHECK(d.Outputs() == With(Shards(2), {"s-notes.txt", "t-00000-of-00001.tfrecord"}));
  for (const std::string& name : Shards(2)) CHECK(testing::ReadFile(d.File(name)) == "new");
}

ShardFamily FamilyOf(const Dest& d) { return {d.File("s"), ".tfrecord"}; }

TEST_CASE("shard families: PREFIX-N-of-M and the suffix, any M, nothing else") {
  const ShardFamily f{"ds/s", ".tfrecord"};
  CHECK(f.Matches("s-00000-of-00016.tfrecord"));
  CHECK(f.Matches("s-00015-of-00016.tfrecord"));
  CHECK(f.Matches("s-000123-of-100000.tfrecord"));
  CHECK_FALSE(f.Matches("s-00000-of-00016.tfrecord.gz"));
  CHECK_FALSE(f.Matches("s-0000-of-00016.tfrecord"));
  CHECK_FALSE(f.Matches("s-00000-of-0001x.tfrecord"));
  CHECK_FALSE(f.Matches("t-00000-of-00016.tfrecord"));
  CHECK_FALSE(f.Matches("s-x-00000-of-00016.tfrecord"));
  CHECK_FALSE(f.Matches("s-00000-of-00016"));
  CHECK(ShardFamily{"s", ".tfrecord.gz"}.Matches("s-00000-of-00001.tfrecord.gz"));
}

TEST_CASE("a set appears whole at its commit, staged outside its folder") {
  Dest d;
  {
    auto set = Begin(d, false);
    Stage(*set, d, {"a", "b", "c"}, "x");
    CHECK(d.Outputs().empty());
    CHECK(d.Around() == std::vector<std::string>{".tfdist-staging.out", "out"});
    REQUIRE(set->Commit().ok());
    CHECK(d.Outputs() == std::vector<std::string>{"a", "b", "c"});
  }
  CHECK(d.Around() == std::vector<std::string>{"out"});
  CHECK(testing::ReadFile(d.File("b")) == "x");
}

TEST_CASE("a set never committed leaves nothing, nor its staging folder") {
  Dest d;
  {
    auto set = Begin(d, false);
    Stage(*set, d, {"a", "b"}, "x");
    auto scratch = set->CreateScratch("spill");
    REQUIRE(scratch.ok());
  }
  CHECK(d.Outputs().empty());
  CHECK(d.Around() == std::vector<std::string>{"out"});
}

TEST_CASE("without a writable parent, the staging folder is inside the destination") {
  testing::TempDir dir;
  const std::string parent = dir.File("ro");
  const std::string out = parent + "/out";
  REQUIRE(mkdir(parent.c_str(), 0755) == 0);
  REQUIRE(mkdir(out.c_str(), 0755) == 0);
  if (geteuid() == 0) return;  // root writes anywhere: covered by the CLI test as nobody
  REQUIRE(chmod(parent.c_str(), 0555) == 0);
  {
    OutputSetOptions o;
    o.sync = false;
    auto set = OutputSet::Begin(std::vector<std::string>{out}, o);
    REQUIRE(set.ok());
    CHECK(testing::Listing(out) == std::vector<std::string>{".tfdist-staging"});
  }
  CHECK(testing::Listing(out).empty());
  chmod(parent.c_str(), 0755);
}

TEST_CASE("a new set beside an old set of its names is refused, naming it") {
  Dest d;
  WriteOldSet(d);
  auto set = Begin(d, false);
  const Status s = set->ExpectFamily(FamilyOf(d));
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message() == d.File("s") + "-*-of-00003.tfrecord: 3 shards of the prefix " + d.File("s") +
                           " are there already, and a new set beside them would double the "
                           "dataset for any glob of the prefix");
  CHECK(s.advice() == Advice{Remedy::kOverwrite, ""});
  // An existing file under a new name is refused too.
  auto file = set->Create(d.File("s-notes.txt"));
  CHECK(file.status().message() == d.File("s-notes.txt") + ": already exists");
}

TEST_CASE("replacing, the old set goes whole, other names stay") {
  Dest d;
  WriteOldSet(d);
  auto set = Begin(d, true);
  REQUIRE(set->ExpectFamily(FamilyOf(d)).ok());
  Stage(*set, d, Shards(2), "new");
  REQUIRE(set->Commit().ok());
  set.reset();
  CheckNewSet(d);
  CHECK(d.Around() == std::vector<std::string>{"out"});
}

TEST_CASE("an old set that appears before the commit is still refused without replace") {
  Dest d;
  auto set = Begin(d, false);
  REQUIRE(set->ExpectFamily(FamilyOf(d)).ok());
  Stage(*set, d, Shards(2), "new");
  testing::WriteFile(d.File(Shard(0, 5)), "other");
  CHECK(set->Commit().code() == StatusCode::kInvalidArgument);
  set.reset();
  CHECK(d.Outputs() == std::vector<std::string>{Shard(0, 5)});
}

TEST_CASE("a folder in the way of an output: refused, the old set stays") {
  Dest d;
  WriteOldSet(d);
  auto set = Begin(d, true);
  REQUIRE(set->ExpectFamily(FamilyOf(d)).ok());
  Stage(*set, d, Shards(2), "new");
  REQUIRE(mkdir(d.File(Shard(1, 2)).c_str(), 0755) == 0);
  const Status s = set->Commit();
  CHECK(s.code() == StatusCode::kInvalidArgument);
  CHECK(s.message().find("a folder is in the way") != std::string::npos);
  set.reset();
  CHECK(rmdir(d.File(Shard(1, 2)).c_str()) == 0);
  CheckOldSet(d);
}

constexpr const char* kPhases[] = {"prepared",      "old-moved-1", "old-moved",
                                   "new-renamed-1", "new-renamed", "committed"};

TEST_CASE("a commit that fails after any of its phases leaves the old set") {
  for (const char* phase : kPhases) {
    CAPTURE(phase);
    Dest d;
    WriteOldSet(d);
    setenv("TFDIST_COMMIT_FAULT", fmt::format("{}:fail", phase).c_str(), 1);
    auto set = Begin(d, true);
    REQUIRE(set->ExpectFamily(FamilyOf(d)).ok());
    Stage(*set, d, Shards(2), "new");
    const Status s = set->Commit();
    unsetenv("TFDIST_COMMIT_FAULT");
    set.reset();
    if (std::string_view(phase) == "committed") {
      CHECK(s.ok());  // past the last step, the new set stands
      CheckNewSet(d);
    } else {
      CHECK(s.code() == StatusCode::kInternal);
      CHECK(s.message().find(phase) != std::string::npos);
      CheckOldSet(d);
    }
    CHECK(d.Around() == std::vector<std::string>{"out"});
  }
}

// Runs `child` in a child process with the signal handlers installed;
// returns its exit status (-signal when a signal ended it).
template <typename Child>
int InChild(Child child) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    InstallInterruptHandlers();
    _exit(child());
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

TEST_CASE("killed after any phase, the next writer completes or undoes the commit") {
  for (const char* phase : {"staged", "prepared", "old-moved-1", "old-moved", "new-renamed-1",
                            "new-renamed", "committed"}) {
    CAPTURE(phase);
    Dest d;
    WriteOldSet(d);
    const int rc = InChild([&] {
      if (std::string_view(phase) != "staged") {
        setenv("TFDIST_COMMIT_FAULT", fmt::format("{}:kill", phase).c_str(), 1);
      }
      auto set = Begin(d, true);
      (void)set->ExpectFamily(FamilyOf(d));
      Stage(*set, d, Shards(2), "new");
      if (std::string_view(phase) == "staged") raise(SIGKILL);
      (void)set->Commit();
      return 0;
    });
    CHECK(rc == -SIGKILL);
    // What the dead writer left is beside the folder, not in it.
    CHECK(d.Around() == std::vector<std::string>{".tfdist-staging.out", "out"});
    std::vector<std::string> notes;
    { auto next = Begin(d, false, &notes); }
    REQUIRE(notes.size() == 1);
    if (std::string_view(phase) == "committed") {
      CHECK(notes[0].find("stopped after its commit") != std::string::npos);
      CheckNewSet(d);
    } else if (std::string_view(phase) == "staged") {
      CHECK(notes[0].find("before its commit") != std::string::npos);
      CheckOldSet(d);
    } else {
      CHECK(notes[0].find("undid it: the old set of 3 files is back") != std::string::npos);
      CheckOldSet(d);
    }
    CHECK(d.Around() == std::vector<std::string>{"out"});
  }
}

TEST_CASE("a journal that cannot be read: the next writer refuses and deletes nothing") {
  // A writer killed with the old set moved aside; its journal then cut
  // short (a disk that lost its tail) or garbled. The old files aside are
  // the only copy of the old set: no writer may remove them on a guess.
  for (const std::string damage : {"truncated", "garbled", "empty"}) {
    CAPTURE(damage);
    Dest d;
    WriteOldSet(d);
    const int rc = InChild([&] {
      setenv("TFDIST_COMMIT_FAULT", "old-moved:kill", 1);
      auto set = Begin(d, true);
      (void)set->ExpectFamily(FamilyOf(d));
      Stage(*set, d, Shards(2), "new");
      (void)set->Commit();
      return 0;
    });
    REQUIRE(rc == -SIGKILL);
    const std::string staging = d.dir.File(".tfdist-staging.out");
    std::vector<std::string> txns;
    for (const std::string& n : testing::Listing(staging)) {
      if (n.rfind("txn-", 0) == 0) txns.push_back(staging + "/" + n);
    }
    REQUIRE(txns.size() == 1);
    const std::string journal = txns[0] + "/journal";
    std::string text = testing::ReadFile(journal);
    if (damage == "truncated") text.resize(text.size() / 2);
    if (damage == "garbled") text[0] = 'X';
    if (damage == "empty") text.clear();
    testing::WriteFile(journal, text);
    OutputSetOptions o;
    o.sync = false;
    auto next = OutputSet::Begin(std::vector<std::string>{d.out}, o);
    CHECK(!next.ok());
    if (!next.ok()) CHECK(next.status().message().find("journal") != std::string::npos);
    next = Status::Internal("released");  // unlocks
    // The old files set aside are all still there.
    int aside = 0;
    for (const std::string& n : testing::Listing(txns[0])) aside += n.rfind("old-", 0) == 0;
    CHECK(aside == 3);
  }
}

TEST_CASE("writes past ulimit -f, one after another, leave the writer its say") {
  // Each write past RLIMIT_FSIZE raises SIGXFSZ (several writer threads
  // raise it each): that is one cause, not a user asking twice, and must
  // not end the process at once and silently before it can report it.
  Dest d;
  const int rc = InChild([&] {
    struct rlimit lim = {4096, 4096};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) return 1;
    const int fd = open(d.File("big").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    const std::string block(8192, 'x');
    for (int i = 0; i < 3; ++i) {
      if (write(fd, block.data(), block.size()) < 0 && errno != EFBIG) return 2;
      if (pwrite(fd, block.data(), block.size(), 8192) >= 0) return 3;
    }
    close(fd);
    return Interrupted() && InterruptExitCode() == 5 ? 7 : 4;
  });
  CHECK(rc == 7);
}

TEST_CASE("a signal during the commit undoes it; a signal after it is ignored") {
  for (const char* phase : {"prepared", "old-moved-1", "new-renamed-1", "new-renamed"}) {
    CAPTURE(phase);
    Dest d;
    WriteOldSet(d);
    // Two signals: the second, which forces the exit elsewhere, is held
    // until the commit is undone.
    const int rc = InChild([&] {
      setenv("TFDIST_COMMIT_FAULT", fmt::format("{}:sighup", phase).c_str(), 1);
      auto set = Begin(d, true);
      (void)set->ExpectFamily(FamilyOf(d));
      Stage(*set, d, Shards(2), "new");
      raise(SIGHUP);  // the first one, at once: held by the flag
      const Status s = set->Commit();
      return s.code() == StatusCode::kCancelled ? InterruptExitCode() : 1;
    });
    CHECK(rc == 129);
    CheckOldSet(d);
    CHECK(d.Around() == std::vector<std::string>{"out"});
  }
  Dest d;
  WriteOldSet(d);
  const int rc = InChild([&] {
    setenv("TFDIST_COMMIT_FAULT", "committed:sigint", 1);
    auto set = Begin(d, true);
    (void)set->ExpectFamily(FamilyOf(d));
    Stage(*set, d, Shards(2), "new");
    return set->Commit().ok() ? 0 : 1;
  });
  CHECK(rc == 0);
  CheckNewSet(d);
}

TEST_CASE("a signal before the commit: nothing renamed; a second one exits at once, cleaning up") {
  Dest d;
  WriteOldSet(d);
  CHECK(InChild([&] {
          auto set = Begin(d, true);
          Stage(*set, d, Shards(2), "new");
          raise(SIGTERM);
          return set->Commit().code() == StatusCode::kCancelled ? InterruptExitCode() : 1;
        }) == 143);
  CheckOldSet(d);
  CHECK(d.Around() == std::vector<std::string>{"out"});
  CHECK(InChild([&] {
          auto set = Begin(d, true);
          Stage(*set, d, Shards(2), "new");
          raise(SIGUSR1);
          raise(SIGUSR1);
          return 0;
        }) == 128 + SIGUSR1);
  CheckOldSet(d);
  CHECK(d.Around() == std::vector<std::string>{"out"});
}

TEST_CASE("signals sent at any moment of a 3,000-file commit leave one whole set") {
  constexpr int kFiles = 3000;
  for (int attempt = 0; attempt < 3; ++attempt) {
    Dest d;
    for (int i = 0; i < kFiles; ++i) testing::WriteFile(d.File(Shard(i, kFiles)), "old");
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      InstallInterruptHandlers();
      bool ok = false;
      {
        auto set = Begin(d, true);
        (void)set->ExpectFamily(FamilyOf(d));
        std::vector<std::string> names;
        for (int i = 0; i < kFiles; ++i) names.push_back(Shard(i, kFiles + 1));
        Stage(*set, d, names, "new");
        ok = set->Commit().ok();
      }
      _exit(ok ? 0 : InterruptExitCode());
    }
    // The signals once the first old file is moved aside (or the child is
    // done).
    const std::string first = d.File(Shard(0, kFiles));
    struct stat st;
    int status = 0;
    while (stat(first.c_str(), &st) == 0 && waitpid(pid, &status, WNOHANG) == 0) usleep(100);
    kill(pid, SIGINT);
    usleep(static_cast<useconds_t>(attempt * 500));
    kill(pid, SIGINT);
    waitpid(pid, &status, 0);
    const std::vector<std::string> left = d.Outputs();
    CAPTURE(attempt);
    CHECK(WIFEXITED(status));
    CHECK(left.size() == kFiles);
    const bool old_set = left.front() == Shard(0, kFiles);
    CHECK(WEXITSTATUS(status) == (old_set ? 130 : 0));
    CHECK(d.Around() == std::vector<std::string>{"out"});
  }
}

TEST_CASE("a second writer waits for the first, and says whom it waits for") {
  Dest d;
  int ready[2], release[2];
  REQUIRE(pipe(ready) == 0);
  REQUIRE(pipe(release) == 0);
  const pid_t holder = fork();
  REQUIRE(holder >= 0);
  if (holder == 0) {
    auto set = Begin(d, false);
    Stage(*set, d, {"first"}, "1");
    (void)!write(ready[1], "x", 1);
    char c;
    (void)!read(release[0], &c, 1);
    _exit(set->Commit().ok() ? 0 : 1);
  }
  char c;
  REQUIRE(read(ready[0], &c, 1) == 1);
  int result[2];
  REQUIRE(pipe(result) == 0);
  const pid_t waiter = fork();
  REQUIRE(waiter >= 0);
  if (waiter == 0) {
    std::vector<std::string> notes;
    OutputSetOptions o;
    o.sync = false;
    o.note = [&](std::string_view t) {
      (void)!write(result[1], t.data(), t.size());
      (void)!write(result[1], "\n", 1);
    };
    bool ok = false;
    {
      auto set = OutputSet::Begin(std::vector<std::string>{d.out}, o);
      // The first writer's file is there by the time the lock is ours.
      ok = set.ok() && testing::Listing(d.out) == std::vector<std::string>{"first"};
    }
    _exit(ok ? 0 : 1);
  }
  // The waiter cannot get the lock while the holder has it: it is still
  // there, and has said whom it waits for.
  std::string said;
  while (said.find('\n') == std::string::npos) {
    char buf[512];
    const ssize_t n = read(result[0], buf, sizeof buf);
    REQUIRE(n > 0);
    said.append(buf, static_cast<size_t>(n));
  }
  int status = 0;
  CHECK(waitpid(waiter, &status, WNOHANG) == 0);
  CHECK(said.find("waiting for") != std::string::npos);
  CHECK(said.find(fmt::format("pid {}", holder)) != std::string::npos);
  REQUIRE(write(release[1], "x", 1) == 1);
  REQUIRE(waitpid(holder, &status, 0) == holder);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  REQUIRE(waitpid(waiter, &status, 0) == waiter);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(d.Around() == std::vector<std::string>{"out"});
}

}  // namespace
}  // namespace tfdist::io
