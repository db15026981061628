// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Output sets: folder locks, staging outside the destination, and a
// journalled commit that a later writer can complete or undo.

#include "tfdist/io/output_set.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <limits.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <set>
#include <thread>

#include "commit_fault.h"
#include "tfdist/base/interrupt.h"

namespace tfdist::io {
namespace {

constexpr std::string_view kStagingName = ".tfdist-staging";
constexpr char kOwnerName[] = "owner";
constexpr char kJournalName[] = "journal";
constexpr char kCommittedName[] = "committed";

// ---- small file-system helpers -------------------------------------------

bool Exists(const std::string& path) {
  struct stat st;
  return lstat(path.c_str(), &st) == 0;
}

std::string BasePart(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string Join(const std::string& dir, std::string_view name) {
  return dir == "/" ? fmt::format("/{}", name) : fmt::format("{}/{}", dir, name);
}

void SyncFolder(const std::string& dir) {
  const int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

std::vector<std::string> ListFolder(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return names;
  while (const dirent* e = readdir(d)) {
    const std::string_view n = e->d_name;
    if (n != "." && n != "..") names.emplace_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

Status CallFailed(int err, std::string what) {
  return ErrnoError(err, StatusCode::kInternal, std::move(what));
}

// A path in the journal: one token, bytes outside '!'..'~' and '%' as %XX.
std::string EscapePath(std::string_view path) {
  std::string out;
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= ' ' || u > '~' || c == '%') {
      out += fmt::format("%{:02X}", u);
    } else {
      out += c;
    }
  }
  return out;
}

std::optional<std::string> UnescapePath(std::string_view token) {
  std::string out;
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] != '%') {
      out += token[i];
      continue;
    }
    if (i + 2 >= token.size()) return std::nullopt;
    char* end = nullptr;
    const std::string hex(token.substr(i + 1, 2));
    const long v = std::strtol(hex.c_str(), &end, 16);
    if (end != hex.c_str() + 2) return std::nullopt;
    out += static_cast<char>(v);
    i += 2;
  }
  return out;
}

std::string HostName() {
  char host[HOST_NAME_MAX + 1] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "unknown-host";
  return host;
}

// Reads a small text file whole; "" when it cannot.
std::string ReadSmallFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "";
  std::string text(4096, '\0');
  const ssize_t n = read(fd, text.data(), text.size());
  close(fd);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

// Writes `text` to `path` through a temporary name, fsynced when `sync`.
Status WriteSmallFile(const std::string& path, const std::string& text, bool sync) {
  const std::string temp = path + ".new";
  RegisterTempFile(temp);
  const int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    UnregisterTempFile(temp);
    return CallFailed(errno, fmt::format("{}: cannot create", temp));
  }
  std::string_view rest = text;
  while (!rest.empty()) {
    const ssize_t n = write(fd, rest.data(), rest.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      unlink(temp.c_str());
      UnregisterTempFile(temp);
      return CallFailed(err, fmt::format("{}: write failed", temp));
    }
    rest.remove_prefix(static_cast<size_t>(n));
  }
  if ((sync && fsync(fd) != 0) || close(fd) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    UnregisterTempFile(temp);
    return CallFailed(err, fmt::format("{}: cannot write", temp));
  }
  if (rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    unlink(temp.c_str());
    UnregisterTempFile(temp);
    return CallFailed(err, fmt::format("cannot rename {} to {}", temp, path));
  }
  UnregisterTempFile(temp);
  return Status::OK();
}

// ---- where the staging folder of a destination folder is ------------------

struct Place {
  std::string folder;   // canonical
  std::string staging;  // canonical
  // Where another writer of the folder, with other rights on its parent,
  // stages: its dead writers' transactions are recovered too. May be "".
  std::string other_staging;
  dev_t device = 0;
};

// The staging folder of `folder`: beside it, as ".tfdist-staging.NAME" in
// its parent, when the parent is writable and on the same file system (so
// that no glob over the destination sees it); otherwise inside it.
Result<Place> PlaceOf(const std::string& given) {
  const std::string shown = given.empty() ? "." : given;
  struct stat st;
  if (stat(shown.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return Status::InvalidArgument(fmt::format("{}: the output folder does not exist", shown));
    }
    return ErrnoError(errno, StatusCode::kInvalidArgument, fmt::format("{}: cannot use", shown));
  }
  if (!S_ISDIR(st.st_mode))
    return Status::InvalidArgument(fmt::format("{}: is not a folder", shown));
  if (access(shown.c_str(), W_OK) != 0) {
    return Status::InvalidArgument(fmt::format("{}: cannot write in the output folder", shown));
  }
  Place p;
  p.device = st.st_dev;
  char real[PATH_MAX];
  if (realpath(shown.c_str(), real) == nullptr) {
    if (errno != ENAMETOOLONG) {
      return ErrnoError(errno, StatusCode::kInvalidArgument, fmt::format("{}: cannot use", shown));
    }
    // Deeper than PATH_MAX: the folder as given (relative to the working
    // folder, which the journal's paths then are too), staged inside it.
    p.folder = shown;
    p.staging = Join(p.folder, kStagingName);
    return p;
  }
  p.folder = real;
  p.staging = Join(p.folder, kStagingName);
  if (p.folder != "/") {
    const std::string parent = OutputFolderOf(p.folder);
    const std::string beside = Join(parent, fmt::format("{}.{}", kStagingName, BasePart(p.folder)));
    struct stat pst;
    if (stat(parent.c_str(), &pst) == 0 && pst.st_dev == st.st_dev &&
        access(parent.c_str(), W_OK) == 0) {
      p.other_staging = p.staging;
      p.staging = beside;
    } else {
      p.other_staging = beside;
    }
  }
  return p;
}

// A final path as the journal holds it: its folder made canonical.
Result<std::string> CanonicalPath(const std::string& path) {
  const std::string folder = OutputFolderOf(path);
  char real[PATH_MAX];
  if (realpath(folder.c_str(), real) == nullptr) {
    if (errno == ENAMETOOLONG) return path;  // as PlaceOf
    return ErrnoError(errno, StatusCode::kInvalidArgument, fmt::format("{}: cannot use", folder));
  }
  return Join(real, BasePart(path));
}

}  // namespace

// ---- fault injection: TFDIST_COMMIT_FAULT=PHASE:ACTION ----------------------

Status CommitFault(std::string_view phase) {
  const char* spec = std::getenv("TFDIST_COMMIT_FAULT");
  if (spec == nullptr) return Status::OK();
  const std::string_view s = spec;
  const size_t colon = s.find(':');
  if (s.substr(0, colon) != phase) return Status::OK();
  const std::string_view action = colon == std::string_view::npos ? "kill" : s.substr(colon + 1);
  if (action == "kill") raise(SIGKILL);
  if (action == "sigint") raise(SIGINT);
  if (action == "sighup") raise(SIGHUP);
  if (action == "fail") {
    return Status::Internal(fmt::format("a fault injected after the commit's phase '{}'", phase));
  }
  return Status::OK();
}

namespace {

// ---- the journal -----------------------------------------------------------

struct Move {
  std::string staged;  // a name in the transaction folder
  std::string final;   // canonical path
};

struct Journal {
  std::string owner;
  std::vector<Move> news;  // staged new-K -> final
  std::vector<Move> olds;  // final -> staged old-K
};

std::string FormatJournal(const Journal& j) {
  std::string text = fmt::format("tfdist commit 1\nowner {}\n", EscapePath(j.owner));
  for (const Move& m : j.news) text += fmt::format("new {} {}\n", m.staged, EscapePath(m.final));
  for (const Move& m : j.olds) text += fmt::format("old {} {}\n", m.staged, EscapePath(m.final));
  text += "end\n";
  return text;
}

std::optional<Journal> ParseJournal(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return std::nullopt;
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > (256u << 20)) break;
  }
  close(fd);
  Journal j;
  size_t pos = 0;
  bool header = false, end = false;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) return std::nullopt;  // cut short: never trusted
    const std::string_view line(text.data() + pos, eol - pos);
    pos = eol + 1;
    const size_t sp = line.find(' ');
    const std::string_view key = line.substr(0, sp);
    const std::string_view rest = sp == std::string_view::npos ? "" : line.substr(sp + 1);
    if (!header) {
      if (line != "tfdist commit 1") return std::nullopt;
      header = true;
    } else if (key == "owner") {
      j.owner = UnescapePath(rest).value_or("?");
    } else if (key == "new" || key == "old") {
      const size_t sp2 = rest.find(' ');
      if (sp2 == std::string_view::npos) return std::nullopt;
      std::optional<std::string> final = UnescapePath(rest.substr(sp2 + 1));
      const std::string staged(rest.substr(0, sp2));
      if (!final || staged.find('/') != std::string::npos) return std::nullopt;
      (key == "new" ? j.news : j.olds).push_back({staged, std::move(*final)});
    } else if (line == "end") {
      end = true;
    } else {
      return std::nullopt;
    }
  }
  if (!end) return std::nullopt;
  return j;
}

// Undoes a commit that did not reach its last step: every new file placed
// is removed (its staged name is gone, so the final name holds it), every
// old file moved aside comes back. Idempotent: a rollback cut short is
// rolled back again.
Status RollBack(const std::string& txn, const Journal& j, bool sync) {
  Status first;
  std::set<std::string> folders;
  for (auto m = j.news.rbegin(); m != j.news.rend(); ++m) {
    if (!Exists(Join(txn, m->staged)) && Exists(m->final)) {
      if (unlink(m->final.c_str()) != 0 && first.ok()) {
        first = CallFailed(errno, fmt::format("{}: cannot remove", m->final));
      }
      folders.insert(OutputFolderOf(m->final));
    }
  }
  for (const Move& m : j.olds) {
    const std::string aside = Join(txn, m.staged);
    if (Exists(aside)) {
      if (rename(aside.c_str(), m.final.c_str()) != 0 && first.ok()) {
        first = CallFailed(errno, fmt::format("cannot move {} back to {}", aside, m.final));
      }
      folders.insert(OutputFolderOf(m.final));
    }
  }
  if (sync) {
    for (const std::string& f : folders) SyncFolder(f);
  }
  return first;
}

// Removes a transaction folder and everything in it: the journal and the
// `committed` mark last, so that one cut short in the middle still says
// what the files left in it are (old files aside are never left without a
// journal).
void RemoveTransaction(const std::string& txn) {
  auto remove = [&](const std::string& name) {
    const std::string p = Join(txn, name);
    unlink(p.c_str());
    UnregisterTempFile(p);
  };
  for (const std::string& name : ListFolder(txn)) {
    if (name != kJournalName && name != kCommittedName) remove(name);
  }
  remove(kJournalName);
  remove(kCommittedName);
  // A member process that stages here may be ending too (a signal reaches
  // every rank of a job at once) and put a file in after the listing: for
  // a little while, what it leaves is removed again.
  for (int attempt = 0; rmdir(txn.c_str()) != 0 && errno == ENOTEMPTY && attempt < 50; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (const std::string& name : ListFolder(txn)) remove(name);
  }
  UnregisterTempFile(txn);
}

// What a dead writer left in `txn`: its commit completed (after its last
// step), undone (before it), or its staged files removed (no journal).
Status Recover(const std::string& txn, const std::function<void(std::string_view)>& note) {
  const std::string journal_path = Join(txn, kJournalName);
  std::optional<Journal> j = ParseJournal(journal_path);
  if (!j) {
    // A journal that is there but cannot be read (cut short, garbled), or
    // old files set aside with no journal: the old set may be only here.
    // Nothing is removed on a guess.
    bool aside = false;
    for (const std::string& name : ListFolder(txn)) aside |= name.rfind("old-", 0) == 0;
    if (Exists(journal_path) || aside) {
      return Status::DataLoss(fmt::format(
          "{}: a tfdist writer that stopped in its commit left a journal that cannot be read; the "
          "files it moved aside (old-*) may be the only copy of the old set: move them back "
          "by hand, then remove that folder",
          txn));
    }
  }
  const std::string who =
      j ? fmt::format("a tfdist writer ({})", j->owner) : std::string("a tfdist writer");
  if (j) {
    // Paths the journal holds relative to another working folder (a folder
    // deeper than PATH_MAX) do not resolve here: nothing is touched.
    for (const auto* moves : {&j->news, &j->olds}) {
      for (const Move& m : *moves) {
        struct stat st;
        if (stat(OutputFolderOf(m.final).c_str(), &st) != 0) {
          return Status::InvalidArgument(fmt::format(
              "{}: {} left a cut commit naming {}, which cannot be reached from here; run the "
              "next writer from the folder that writer ran in",
              txn, who, m.final));
        }
      }
    }
  }
  if (j && Exists(Join(txn, kCommittedName))) {
    RemoveTransaction(txn);  // the old files set aside go with it
    if (note) {
      note(
          fmt::format("{} stopped after its commit; removed the {} old files it had set aside "
                      "(the new set of {} files is in place)",
                      who, j->olds.size(), j->news.size()));
    }
    return Status::OK();
  }
  if (j) {
    TFDIST_RETURN_IF_ERROR(RollBack(txn, *j, true));
    RemoveTransaction(txn);
    if (note) {
      note(fmt::format(
          "{} stopped in the middle of its commit; undid it: the old set of {} files is back, "
          "and none of its {} new files is left",
          who, j->olds.size(), j->news.size()));
    }
    return Status::OK();
  }
  // No journal (or one cut short while written, before any file moved).
  const size_t staged = ListFolder(txn).size();
  RemoveTransaction(txn);
  if (note && staged > 0) {
    note(
        fmt::format("removed {} files staged by a tfdist writer that stopped before its commit "
                    "({})",
                    staged, txn));
  }
  return Status::OK();
}

}  // namespace

std::string OutputFolderOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// ---- families ----------------------------------------------------------------

bool ShardFamily::Matches(std::string_view name) const {
  const std::string base = BasePart(prefix) + "-";
  if (name.substr(0, base.size()) != base) return false;
  name.remove_prefix(base.size());
  if (name.size() < suffix.size() || name.substr(name.size() - suffix.size()) != suffix) {
    return false;
  }
  name.remove_suffix(suffix.size());
  const size_t of = name.find("-of-");
  if (of == std::string_view::npos) return false;
  auto digits = [](std::string_view d) {
    return d.size() >= 5 &&
           std::all_of(d.begin(), d.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(name.substr(0, of)) && digits(name.substr(of + 4));
}

// ---- locks -------------------------------------------------------------------

struct OutputSet::Lock {
  Place place;
  int fd = -1;         // the staging folder, locked
  int folder_fd = -1;  // the output folder itself, locked
  ~Lock() {
    if (fd >= 0) close(fd);
    if (folder_fd >= 0) close(folder_fd);
  }
};

namespace {

// Takes flock(fd) for p, waiting (with one note naming the holder) while
// another process holds it.
Status WaitForLock(int fd, const std::string& what, const Place& p, const OutputSetOptions& o,
                   bool& told) {
  while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno != EWOULDBLOCK && errno != EINTR) {
      return CallFailed(errno, fmt::format("{}: cannot lock", what));
    }
    if (!told && o.note) {
      std::string holder = ReadSmallFile(Join(p.staging, kOwnerName));
      if (holder.empty() && !p.other_staging.empty()) {
        holder = ReadSmallFile(Join(p.other_staging, kOwnerName));
      }
      o.note(fmt::format("waiting for {}: another tfdist writer holds it ({})", p.folder,
                         holder.empty() ? "starting" : holder));
      told = true;
    }
    if (Interrupted()) {
      return Status::Interrupted().Annotate("waiting for the output folder's lock");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return Status::OK();
}

// Locks the output folder itself: where the staging folder is depends on
// who writes (one who cannot write the parent stages inside the folder),
// the folder does not, so two writers of it always see each other.
Result<int> TakeFolderLock(const Place& p, const OutputSetOptions& o, bool& told) {
  const int fd = open(p.folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return ErrnoError(errno, StatusCode::kInvalidArgument,
                      fmt::format("{}: cannot open", p.folder));
  }
  if (Status s = WaitForLock(fd, p.folder, p, o, told); !s.ok()) {
    close(fd);
    return s;
  }
  return fd;
}

// Locks p.staging (creating it), waiting while another process holds it.
// A holder removes the folder before it lets go, so a lock taken on a
// folder that is no longer at that path is let go and taken again.
Result<int> TakeLock(const Place& p, const OutputSetOptions& o, bool& told) {
  for (;;) {
    if (mkdir(p.staging.c_str(), 0755) != 0 && errno != EEXIST) {
      return ErrnoError(
          errno, StatusCode::kInvalidArgument,
          fmt::format("{}: cannot make tfdist's staging folder for {}", p.staging, p.folder));
    }
    // Never through a symbolic link, and only a folder of this user: in a
    // shared parent (/tmp) another user could have put either there first,
    // and would then control the files this writer commits.
    const int fd = open(p.staging.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) continue;  // removed by its holder just now
      if (errno == ELOOP || errno == ENOTDIR) {
        return Status::InvalidArgument(fmt::format(
            "{}: is not tfdist's staging folder for {} (a symbolic link or a file is there); "
            "remove it",
            p.staging, p.folder));
      }
      return ErrnoError(errno, StatusCode::kInvalidArgument,
                        fmt::format("{}: cannot open tfdist's staging folder", p.staging));
    }
    struct stat mine;
    if (fstat(fd, &mine) == 0 && mine.st_uid != geteuid()) {
      close(fd);
      return Status::InvalidArgument(fmt::format(
          "{}: tfdist's staging folder for {} belongs to another user (uid {}); a writer stages "
          "only in a folder of its own: run as that user, or remove the folder",
          p.staging, p.folder, mine.st_uid));
    }
    if (Status s = WaitForLock(fd, p.staging, p, o, told); !s.ok()) {
      close(fd);
      return s;
    }
    struct stat held, now;
    if (fstat(fd, &held) == 0 && stat(p.staging.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
        held.st_ino == now.st_ino) {
      return fd;
    }
    close(fd);  // the folder was removed under us: take the new one
  }
}

std::string OwnerLine(const OutputSetOptions& o) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return fmt::format("tfdist {} pid {} on host {} since {}", o.command, getpid(), HostName(), when);
}

// The folders a dead writer's transaction (or a link to one) in `staging`
// touches, as its journal names them.
void FoldersOfDeadCommits(const std::string& staging, std::set<std::string>& out) {
  if (staging.empty()) return;
  for (const std::string& name : ListFolder(staging)) {
    if (name.rfind("txn-", 0) != 0) continue;
    std::optional<Journal> j = ParseJournal(Join(Join(staging, name), kJournalName));
    if (!j) continue;
    for (const auto* moves : {&j->news, &j->olds}) {
      for (const Move& m : *moves) out.insert(OutputFolderOf(m.final));
    }
  }
}

}  // namespace

Result<std::unique_ptr<OutputSet>> OutputSet::Begin(std::span<const std::string> folders,
                                                    OutputSetOptions options) {
  std::unique_ptr<OutputSet> set(new OutputSet());
  set->options_ = std::move(options);
  std::vector<Place> places;
  std::set<std::string> seen;
  for (const std::string& f : folders) {
    TFDIST_ASSIGN_OR_RETURN(Place p, PlaceOf(f));
    if (seen.insert(p.folder).second) places.push_back(std::move(p));
  }
  if (places.empty()) return Status::InvalidArgument("no output folder");
  for (const Place& p : places) {
    if (p.device != places.front().device) {
      return Status::InvalidArgument(fmt::format(
          "the outputs go to {} and {}, on two file systems: a set of files is committed in one "
          "file system; write them to one folder",
          places.front().folder, p.folder));
    }
  }
  const std::set<std::string> requested = seen;
  // This set's transaction lives in the staging folder of its first folder.
  const std::string home =
      std::min_element(places.begin(), places.end(), [](const Place& a, const Place& b) {
        return a.folder < b.folder;
      })->folder;
  // Locked in one order for every writer, so two never wait on each other.
  // A dead writer's commit is recovered only under the locks of every
  // folder it touched: when one is not ours, all are let go and taken
  // again with it.
  for (;;) {
    std::sort(places.begin(), places.end(),
              [](const Place& a, const Place& b) { return a.folder < b.folder; });
    set->locks_.clear();
    for (const Place& p : places) {
      bool told = false;
      auto lock = std::make_unique<Lock>();
      lock->place = p;
      TFDIST_ASSIGN_OR_RETURN(lock->folder_fd, TakeFolderLock(p, set->options_, told));
      TFDIST_ASSIGN_OR_RETURN(lock->fd, TakeLock(p, set->options_, told));
      set->locks_.push_back(std::move(lock));
    }
    std::set<std::string> touched;
    for (const Place& p : places) {
      FoldersOfDeadCommits(p.staging, touched);
      FoldersOfDeadCommits(p.other_staging, touched);
    }
    bool more = false;
    for (const std::string& f : touched) {
      if (seen.count(f) != 0 || !Exists(f)) continue;
      TFDIST_ASSIGN_OR_RETURN(Place p, PlaceOf(f));
      if (seen.insert(p.folder).second) {
        places.push_back(std::move(p));
        more = true;
      }
    }
    if (!more) break;
  }
  const std::string owner = OwnerLine(set->options_);
  for (const auto& lock : set->locks_) {
    const Place& p = lock->place;
    // Registered first, removed last (files before folders): a forced exit
    // leaves no staging folder behind.
    RegisterTempFile(p.staging);
    const std::string owner_path = Join(p.staging, kOwnerName);
    RegisterTempFile(owner_path);
    TFDIST_RETURN_IF_ERROR(WriteSmallFile(owner_path, owner + "\n", false));
  }
  for (const auto& lock : set->locks_) {
    const Place& p = lock->place;
    auto note = [&](std::string_view text) {
      if (set->options_.note) set->options_.note(fmt::format("{}: {}", p.folder, text));
    };
    // A dead writer that staged in the other place (it had other rights
    // on the parent) is recovered too, or, where this writer cannot, it is
    // an error rather than a commit over it. A link stands for a commit
    // staged in another folder's staging folder.
    for (const std::string& staging : {p.staging, p.other_staging}) {
      if (staging.empty()) continue;
      for (const std::string& name : ListFolder(staging)) {
        if (name.rfind("txn-", 0) != 0) continue;
        const std::string txn = Join(staging, name);
        struct stat st;
        if (lstat(txn.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
          char target[PATH_MAX];
          const ssize_t n = readlink(txn.c_str(), target, sizeof target - 1);
          if (n > 0) {
            const std::string t(target, static_cast<size_t>(n));
            if (Exists(t)) TFDIST_RETURN_IF_ERROR(Recover(t, note));
          }
          unlink(txn.c_str());
          continue;
        }
        TFDIST_RETURN_IF_ERROR(Recover(txn, note));
        if (Exists(txn)) {
          return Status::InvalidArgument(fmt::format(
              "{}: a tfdist writer with other rights left a transaction here that this one "
              "cannot remove; run the next writer as that user",
              txn));
        }
      }
    }
  }
  for (const auto& lock : set->locks_) {
    if (lock->place.folder == home) set->staging_ = lock->place.staging;
  }
  std::random_device rd;
  for (int attempt = 0;; ++attempt) {
    std::string txn = Join(set->staging_, fmt::format("txn-{}-{:08x}", getpid(), rd()));
    RegisterTempFile(txn);
    if (mkdir(txn.c_str(), 0755) == 0) {
      set->txn_ = std::move(txn);
      break;
    }
    const int err = errno;
    UnregisterTempFile(txn);
    if (err != EEXIST || attempt == 16) {
      return CallFailed(err, fmt::format("{}: cannot make a staging folder", txn));
    }
  }
  // In every other folder's staging folder, a link to the transaction: a
  // writer of that folder alone finds (and recovers) this commit if it dies.
  for (const auto& lock : set->locks_) {
    const Place& p = lock->place;
    if (p.staging == set->staging_ || requested.count(p.folder) == 0) continue;
    std::string link = Join(p.staging, BasePart(set->txn_));
    RegisterTempFile(link);
    if (symlink(set->txn_.c_str(), link.c_str()) != 0) {
      const int err = errno;
      UnregisterTempFile(link);
      return CallFailed(err, fmt::format("{}: cannot make a link to the staging folder", link));
    }
    set->links_.push_back(std::move(link));
  }
  return set;
}

std::unique_ptr<OutputSet> OutputSet::JoinTransaction(std::string transaction, std::string tag) {
  std::unique_ptr<OutputSet> set(new OutputSet());
  set->txn_ = std::move(transaction);
  set->tag_ = std::move(tag);
  set->member_ = true;
  return set;
}

OutputSet::~OutputSet() {
  files_.clear();       // their staged files go with them
  if (member_) return;  // the transaction is the leader's
  if (!txn_.empty()) RemoveTransaction(txn_);
  for (const std::string& link : links_) {
    unlink(link.c_str());
    UnregisterTempFile(link);
  }
  // Unlock after removing the folder: a writer waiting on it retakes the
  // lock on a new one.
  for (auto it = locks_.rbegin(); it != locks_.rend(); ++it) {
    const Place& p = (*it)->place;
    const std::string owner_path = Join(p.staging, kOwnerName);
    unlink(owner_path.c_str());
    UnregisterTempFile(owner_path);
    if (ListFolder(p.staging).empty()) rmdir(p.staging.c_str());
    UnregisterTempFile(p.staging);
  }
  locks_.clear();
}

namespace {

// The files of `family` in its folder, as paths beside the prefix.
std::vector<std::string> FamilyFiles(const ShardFamily& family) {
  std::vector<std::string> out;
  const std::string folder = OutputFolderOf(family.prefix);
  for (const std::string& name : ListFolder(folder)) {
    if (family.Matches(name)) out.push_back(Join(folder, name));
  }
  return out;
}

Status DoubleSetError(const ShardFamily& family, const std::vector<std::string>& files) {
  std::set<std::string> counts;
  for (const std::string& f : files) {
    const std::string name = BasePart(f);
    const size_t of = name.rfind("-of-");
    counts.insert(name.substr(of + 4, name.size() - of - 4 - family.suffix.size()));
  }
  std::string sets;
  for (const std::string& m : counts) {
    sets +=
        fmt::format("{}{}-*-of-{}{}", sets.empty() ? "" : ", ", family.prefix, m, family.suffix);
  }
  const bool one = files.size() == 1;
  return Status::InvalidArgument(
             fmt::format("{}: {} shard{} of the prefix {} {} there already, and a new set beside "
                         "{} would double the dataset for any glob of the prefix",
                         sets, files.size(), one ? "" : "s", family.prefix, one ? "is" : "are",
                         one ? "it" : "them"))
      .WithAdvice(Remedy::kOverwrite);
}

}  // namespace

Status OutputSet::ExpectFamily(const ShardFamily& family) {
  families_.push_back(family);
  if (options_.replace) return Status::OK();
  const std::vector<std::string> old = FamilyFiles(family);
  if (!old.empty()) return DoubleSetError(family, old);
  return Status::OK();
}

Result<std::unique_ptr<AtomicFile>> OutputSet::Create(const std::string& path) {
  // (The leader of a member checked, and its commit checks again.)
  if (!member_ && !options_.replace && Exists(path)) {
    return Status::InvalidArgument(fmt::format("{}: already exists", path))
        .WithAdvice(Remedy::kOverwrite);
  }
  std::string staged;
  {
    std::lock_guard<std::mutex> lock(mu_);
    staged = Join(txn_, fmt::format("{}new-{}", tag_, next_id_++));
  }
  return AtomicFile::CreateAt(path, std::move(staged));
}

Result<std::unique_ptr<AtomicFile>> OutputSet::CreateScratch(std::string_view name) {
  std::string staged;
  {
    std::lock_guard<std::mutex> lock(mu_);
    staged = Join(txn_, fmt::format("{}scratch-{}-{}", tag_, next_id_++, name));
  }
  return AtomicFile::CreateAt(staged, staged);
}

void OutputSet::Add(std::unique_ptr<AtomicFile> file) {
  std::lock_guard<std::mutex> lock(mu_);
  files_.push_back(std::move(file));
}

Status OutputSet::Adopt(const std::string& path, const std::string& staged) {
  assert(!member_);
  const std::string name = BasePart(staged);
  struct stat st;
  if (OutputFolderOf(staged) != txn_ || name.rfind("old-", 0) == 0 || name == kJournalName ||
      name == kCommittedName || lstat(staged.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(
        fmt::format("{}: not a file staged in {} for {}", staged, txn_, path));
  }
  std::lock_guard<std::mutex> lock(mu_);
  files_.push_back(AtomicFile::Adopt(path, staged));
  return Status::OK();
}

Status OutputSet::Commit() {
  assert(!member_);
  if (Interrupted()) return Status::Interrupted();
  // The new files' final names, canonical; the old set: with `replace`,
  // the families' files and whatever is under a new name.
  Journal j;
  j.owner = OwnerLine(options_);
  std::set<std::string> finals;
  for (size_t k = 0; k < files_.size(); ++k) {
    TFDIST_RETURN_IF_ERROR(files_[k]->CloseFile());
    TFDIST_ASSIGN_OR_RETURN(std::string final, CanonicalPath(files_[k]->path()));
    struct stat st;
    if (lstat(final.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      return Status::InvalidArgument(
          fmt::format("{}: a folder is in the way of an output", files_[k]->path()));
    }
    finals.insert(final);
    j.news.push_back({BasePart(files_[k]->temp_path()), std::move(final)});
  }
  std::vector<std::string> old_paths;
  for (const ShardFamily& family : families_) {
    std::vector<std::string> old = FamilyFiles(family);
    if (!old.empty() && !options_.replace) return DoubleSetError(family, old);
    old_paths.insert(old_paths.end(), old.begin(), old.end());
  }
  std::set<std::string> old_finals;
  for (const std::string& p : old_paths) {
    TFDIST_ASSIGN_OR_RETURN(std::string final, CanonicalPath(p));
    old_finals.insert(std::move(final));
  }
  for (size_t k = 0; k < files_.size(); ++k) {
    if (Exists(j.news[k].final)) {
      if (!options_.replace) {
        return Status::InvalidArgument(fmt::format("{}: already exists", files_[k]->path()))
            .WithAdvice(Remedy::kOverwrite);
      }
      old_finals.insert(j.news[k].final);
    }
  }
  for (const std::string& f : old_finals) {
    j.olds.push_back({fmt::format("old-{}", j.olds.size()), f});
  }

  // From the journal on, a second signal cannot cut the commit: it is
  // finished or undone here, and a SIGKILL leaves the journal to the next
  // writer.
  DeferInterrupts section;
  const std::string journal_path = Join(txn_, kJournalName);
  RegisterTempFile(journal_path);
  TFDIST_RETURN_IF_ERROR(WriteSmallFile(journal_path, FormatJournal(j), options_.sync));
  if (options_.sync) SyncFolder(txn_);
  auto undo = [&](Status why) {
    Status rolled = RollBack(txn_, j, options_.sync);
    if (!rolled.ok()) {
      // The journal stays for the next writer, which tries again.
      txn_.clear();
      return Status(rolled.code(),
                    fmt::format("{}; undoing the commit failed too ({}): the next tfdist writer "
                                "into the folder finishes undoing it",
                                why.message(), rolled.message()));
    }
    if (why.code() == StatusCode::kCancelled) return why;  // the caller words it
    return Status(why.code(), fmt::format("{}; the commit was undone: the outputs are as they were",
                                          why.message()));
  };
  Status s = CommitFault("prepared");
  std::set<std::string> folders;
  for (size_t i = 0; s.ok() && i < j.olds.size(); ++i) {
    const std::string aside = Join(txn_, j.olds[i].staged);
    if (rename(j.olds[i].final.c_str(), aside.c_str()) != 0 && errno != ENOENT) {
      s = CallFailed(errno, fmt::format("cannot move {} aside", j.olds[i].final));
    }
    folders.insert(OutputFolderOf(j.olds[i].final));
    if (s.ok() && i == 0) s = CommitFault("old-moved-1");
  }
  if (s.ok()) s = CommitFault("old-moved");
  for (size_t k = 0; s.ok() && k < j.news.size(); ++k) {
    const std::string staged = Join(txn_, j.news[k].staged);
    if (rename(staged.c_str(), j.news[k].final.c_str()) != 0) {
      s = CallFailed(errno, fmt::format("cannot rename {} to {}", staged, files_[k]->path()));
    }
    folders.insert(OutputFolderOf(j.news[k].final));
    if (s.ok() && k == 0) s = CommitFault("new-renamed-1");
  }
  if (s.ok()) s = CommitFault("new-renamed");
  if (s.ok() && options_.sync) {
    for (const std::string& f : folders) SyncFolder(f);
  }
  // The last chance to stop: a signal that came during the renames undoes
  // them, so that the command's interrupted exit leaves the old set.
  if (s.ok() && Interrupted()) s = Status::Interrupted();
  if (!s.ok()) return undo(std::move(s));

  // The commit's last step: from here on the new set stands.
  const std::string committed = Join(txn_, kCommittedName);
  RegisterTempFile(committed);
  const int fd = open(committed.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return undo(CallFailed(errno, fmt::format("{}: cannot create", committed)));
  close(fd);
  if (options_.sync) SyncFolder(txn_);
  IgnoreInterrupts();  // every output is in place: a signal cannot make that an error
  for (auto& f : files_) f->Release();
  committed_ = true;
  (void)CommitFault("committed");
  RemoveTransaction(txn_);  // the old files set aside go with it
  txn_.clear();
  return Status::OK();
}

}  // namespace tfdist::io
