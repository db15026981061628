// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// reshard and convert: the passes driven in order, by one process or by a
// group of processes that share them, and the outputs committed all at
// once by one of them.

#include "tfdist/io/reshard.h"

#include <fmt/format.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "commit_fault.h"
#include "reshard_internal.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/base/json.h"
#include "tfdist/io/file_list.h"

namespace tfdist::io {
namespace {

using Json = nlohmann::json;

// What reshard and convert give the driver.
struct Rewrite {
  const char* command = "";
  std::vector<std::string> folders;   // of the outputs
  std::optional<ShardFamily> family;  // reshard's names: an old set is replaced whole
  bool shuffle = false;               // the copy reads the records in any order
  // The leader's checks before it locks (convert's names). May be empty.
  std::function<Status()> check;
  // The plan and the outputs of the scanned inputs: the same at every member.
  std::function<Result<ReshardPlan>(const std::vector<Input>&, std::vector<Output>&)> plan;
};

// Says that an interrupt changed nothing; other errors pass (a failed
// write says so itself: WriteOutputs).
Status Explain(Status s) {
  if (s.code() == StatusCode::kCancelled) {
    return Status::Cancelled(
        "interrupted; the outputs are as they were: no new file was written and no temporary file "
        "is left");
  }
  return s;
}

// ---- what the members of a group tell each other ----------------------------

// The name of `path` in its folder.
std::string NameIn(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string JoinPath(const std::string& folder, const std::string& name) {
  return folder.empty() || folder.back() == '/' ? folder + name : folder + "/" + name;
}

// Every member's `mine`, by rank; `mine` alone in a group of one.
Result<std::vector<Json>> Share(Group& g, Json mine) {
  std::vector<Json> all;
  if (g.size() == 1) {
    all.push_back(std::move(mine));
    return all;
  }
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::string> parts, g.AllGather(DumpJson(mine)));
  for (std::string& part : parts) {
    Json j = ParseJson(std::move(part));
    if (j.is_discarded()) {
      return Status::Internal("a member of the group sent what this one cannot read");
    }
    all.push_back(std::move(j));
  }
  return all;
}

// A member's first error, about the input or output `at`; null for none.
Json ErrorJson(size_t at, const Status& s) {
  if (s.ok()) return nullptr;
  return {{"at", at}, {"status", StatusToJson(s)}};
}

// The error of the group, from each member's "error": an interrupt first,
// else the one about the lowest input or output (the one a process alone
// meets first), the lowest member's on a tie. A failed write or call
// elsewhere than at the leader names the member.
Status GroupError(const Group& g, const std::vector<Json>& all) {
  Status chosen;
  size_t chosen_at = 0;
  int chosen_rank = -1;
  for (size_t r = 0; r < all.size(); ++r) {
    const Json& e = all[r].contains("error") ? all[r]["error"] : Json();
    if (e.is_null()) continue;
    const Status s = StatusFromJson(e.value("status", Json()))
                         .value_or(Status::Internal("a member sent an error this one cannot read"));
    const size_t at = e.value("at", size_t{0});
    const bool cancel = s.code() == StatusCode::kCancelled;
    const bool chosen_cancel = chosen.code() == StatusCode::kCancelled;
    if (chosen_rank < 0 || (cancel && !chosen_cancel) ||
        (cancel == chosen_cancel && at < chosen_at)) {
      chosen = s;
      chosen_at = at;
      chosen_rank = static_cast<int>(r);
    }
  }
  if (chosen_rank > 0 &&
      (chosen.code() == StatusCode::kInternal || chosen.code() == StatusCode::kResourceExhausted)) {
    return chosen.Annotate(g.Name(chosen_rank));
  }
  return chosen;
}

// A member's scanned inputs, for the others: a head (8 bytes of its length,
// then JSON: the error, and each input's index, flags, spill and count of
// offsets), then the offsets of each input in turn, 8 bytes each in the
// byte order of the hosts (every member runs this build).
std::string EncodeScans(const std::vector<Input>& inputs, std::span<const size_t> mine,
                        const Json& error) {
  Json head;
  head["error"] = error;
  head["inputs"] = Json::array();
  uint64_t count = 0;
  if (error.is_null()) {
    for (size_t i : mine) {
      const Input& in = inputs[i];
      head["inputs"].push_back({{"i", i},
                                {"n", in.offsets.size()},
                                {"verified", in.verified},
                                {"from_index", in.from_index},
                                {"spill", NameIn(in.spill_path)}});
      count += in.offsets.size();
    }
  }
  const std::string text = DumpJson(head);
  const uint64_t length = text.size();
  std::string out;
  out.reserve(sizeof length + text.size() + count * sizeof(uint64_t));
  out.append(reinterpret_cast<const char*>(&length), sizeof length);
  out += text;
  if (error.is_null()) {
    for (size_t i : mine) {
      const std::vector<uint64_t>& o = inputs[i].offsets;
      out.append(reinterpret_cast<const char*>(o.data()), o.size() * sizeof(uint64_t));
    }
  }
  return out;
}

// The head of EncodeScans' `part`, and where its offsets begin.
Result<Json> DecodeScanHead(std::string_view part, size_t* body) {
  const Status bad = Status::Internal("a member of the group sent scans this one cannot read");
  uint64_t length = 0;
  if (part.size() < sizeof length) return bad;
  std::memcpy(&length, part.data(), sizeof length);
  if (length > part.size() - sizeof length) return bad;
  Json head = ParseJson(std::string(part.substr(sizeof length, length)));
  if (head.is_discarded() || !head.contains("inputs")) return bad;
  *body = sizeof length + length;
  return head;
}

// Fills the inputs another member scanned from its `part`; their inflated
// copies are in `transaction`, the staging folder as this member sees it.
Status DecodeScans(std::string_view part, const Json& head, size_t body,
                   const std::string& transaction, std::vector<Input>& inputs) {
  for (const Json& j : head["inputs"]) {
    const size_t i = j.at("i").get<size_t>();
    const size_t n = j.at("n").get<size_t>();
    if (i >= inputs.size() || n == 0 || n > (part.size() - body) / sizeof(uint64_t)) {
      return Status::Internal("a member of the group sent scans that do not fit the inputs");
    }
    Input& in = inputs[i];
    in.verified = j.at("verified").get<bool>();
    in.from_index = j.at("from_index").get<bool>();
    const std::string spill = j.at("spill").get<std::string>();
    in.spill_path = spill.empty() ? "" : JoinPath(transaction, spill);
    in.offsets.resize(n);
    std::memcpy(in.offsets.data(), part.data() + body, n * sizeof(uint64_t));
    body += n * sizeof(uint64_t);
  }
  return Status::OK();
}

// Shares the scans of the members' inputs: afterwards every member knows
// every input's records. Error: the group's first scan error.
Status ShareScans(Group& g, const std::string& transaction, std::vector<Input>& inputs,
                  std::span<const size_t> mine, const Json& error) {
  if (g.size() == 1) {
    if (error.is_null()) return Status::OK();
    return GroupError(g, {Json{{"error", error}}});
  }
  TFDIST_ASSIGN_OR_RETURN(std::vector<std::string> parts,
                          g.AllGather(EncodeScans(inputs, mine, error)));
  std::vector<Json> heads(parts.size());
  std::vector<size_t> bodies(parts.size());
  for (size_t r = 0; r < parts.size(); ++r) {
    TFDIST_ASSIGN_OR_RETURN(heads[r], DecodeScanHead(parts[r], &bodies[r]));
  }
  if (Status s = GroupError(g, heads); !s.ok()) return s;
  for (size_t r = 0; r < parts.size(); ++r) {
    if (static_cast<int>(r) == g.rank()) continue;
    TFDIST_RETURN_IF_ERROR(DecodeScans(parts[r], heads[r], bodies[r], transaction, inputs));
    std::string().swap(parts[r]);  // the next member's offsets take its place
  }
  return Status::OK();
}

// ---- the split of the work ---------------------------------------------------

// Each output's member: runs of outputs in order, balanced by their framed
// bytes (output k goes to the member whose share of the total holds the
// middle of its bytes).
std::vector<int> SplitOutputs(const std::vector<Input>& inputs, const ReshardPlan& plan,
                              const std::vector<Output>& outputs, int members) {
  std::vector<int> owner(outputs.size(), 0);
  if (members <= 1) return owner;
  std::vector<uint64_t> firsts(inputs.size());
  for (size_t f = 0; f < inputs.size(); ++f) firsts[f] = inputs[f].first;
  std::vector<uint64_t> bytes(outputs.size(), 0);
  for (size_t k = 0; k < outputs.size(); ++k) {
    for (uint64_t p = outputs[k].begin; p < outputs[k].end; ++p) {
      const uint64_t g = plan.record_at(p);
      // The last input whose first record is at most g, and has g.
      size_t f =
          static_cast<size_t>(std::upper_bound(firsts.begin(), firsts.end(), g) - firsts.begin()) -
          1;
      while (inputs[f].records() <= g - inputs[f].first) ++f;
      const uint64_t i = g - inputs[f].first;
      bytes[k] += inputs[f].offsets[i + 1] - inputs[f].offsets[i];
    }
  }
  uint64_t total = 0;
  for (uint64_t b : bytes) total += b;
  uint64_t before = 0;
  for (size_t k = 0; k < outputs.size(); ++k) {
    const auto middle = static_cast<long double>(before) + static_cast<long double>(bytes[k]) / 2;
    const long double share =
        total == 0 ? static_cast<long double>(k) / static_cast<long double>(outputs.size())
                   : middle / static_cast<long double>(total);
    owner[k] = std::min(members - 1, static_cast<int>(share * members));
    before += bytes[k];
  }
  return owner;
}

// ---- the driver ----------------------------------------------------------------

// What the leader does first: the checks, the lock of the output folders
// (held to the end), the probe file the others must see, and the split of
// the inputs.
Status Lead(std::span<const std::string> paths, const RewriteOptions& o, const Rewrite& r, Group& g,
            std::unique_ptr<OutputSet>& set, std::unique_ptr<AtomicFile>& probe, Json& lead) {
  if (r.check) TFDIST_RETURN_IF_ERROR(r.check());
  OutputSetOptions so;
  so.replace = o.overwrite;
  so.sync = o.sync;
  so.command = r.command;
  so.note = o.note;
  TFDIST_ASSIGN_OR_RETURN(set, OutputSet::Begin(r.folders, std::move(so)));
  // Fail before reading anything: a set of the prefix already there would
  // be doubled by a new one beside it.
  if (r.family) TFDIST_RETURN_IF_ERROR(set->ExpectFamily(*r.family));
  if (paths.empty()) return Status::InvalidArgument("no input files");
  if (g.size() == 1) return Status::OK();
  TFDIST_ASSIGN_OR_RETURN(probe, set->CreateScratch("probe"));
  TFDIST_RETURN_IF_ERROR(probe->CloseFile());
  // Where the staging folder is from the output folder: each member finds
  // it from the output folder as it sees it (a shared file system may be
  // mounted elsewhere on another host).
  const std::string& folder = r.folders.front();
  char real[PATH_MAX];
  const std::filesystem::path base = realpath(folder.c_str(), real) ? real : folder.c_str();
  std::string relative = std::filesystem::path(set->transaction()).lexically_relative(base);
  lead["transaction"] = relative.empty() ? set->transaction() : relative;
  lead["probe"] = NameIn(probe->temp_path());
  std::vector<uint64_t> sizes(paths.size());
  for (size_t i = 0; i < paths.size(); ++i) sizes[i] = FileSize(paths[i]).value_or(0);
  lead["owner"] = SplitByBytes(sizes, g.size());
  return Status::OK();
}

// Whether every member sees the leader's probe file in `transaction`, the
// staging folder as it sees it. Error: FailedPrecondition naming the first
// member that does not.
Status CheckProbe(Group& g, const Rewrite& r, const std::string& transaction, const Json& led) {
  if (g.size() == 1) return Status::OK();
  const std::string probe = JoinPath(transaction, led["probe"].get<std::string>());
  struct stat st;
  const bool found = g.leads() || (stat(probe.c_str(), &st) == 0 && S_ISREG(st.st_mode));
  TFDIST_ASSIGN_OR_RETURN(const std::vector<Json> all, Share(g, Json{{"found", found}}));
  for (size_t m = 1; m < all.size(); ++m) {
    if (all[m].value("found", false)) continue;
    return Status::FailedPrecondition(fmt::format(
        "{}: {} does not see the file {} that {} staged for the outputs: they must go to a file "
        "system that every process of the job sees",
        r.folders.front(), g.Name(static_cast<int>(m)), probe, g.Name(0)));
  }
  return Status::OK();
}

// A member stopped by a signal waits, before it returns, until the leader
// has removed the transaction folder (every member's staged files with
// it), or a second at most: a launcher signals every process of the job,
// and kills the rest as soon as one of them exits (mpirun), which would
// cut the leader's clean-up short.
class AwaitLeader {
 public:
  AwaitLeader() = default;
  AwaitLeader(const AwaitLeader&) = delete;
  AwaitLeader& operator=(const AwaitLeader&) = delete;
  ~AwaitLeader() {
    if (transaction_.empty() || !Interrupted()) return;
    struct stat st;
    for (int i = 0; i < 200 && stat(transaction_.c_str(), &st) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  void Watch(std::string transaction) { transaction_ = std::move(transaction); }

 private:
  std::string transaction_;
};

Result<RewriteSummary> RunRewrite(std::span<const std::string> paths, const RewriteOptions& o,
                                  const Rewrite& r) {
  Group& g = o.group ? *o.group : LoneGroup();
  const int me = g.rank();

  // 1. The leader locks and stages; every member learns where.
  std::unique_ptr<OutputSet> set;  // the leader's
  std::unique_ptr<AtomicFile> probe;
  Json lead;
  if (g.leads()) lead["status"] = StatusToJson(Lead(paths, o, r, g, set, probe, lead));
  TFDIST_ASSIGN_OR_RETURN(const std::vector<Json> leads, Share(g, lead));
  const Json& led = leads.front();
  const Status led_status =
      StatusFromJson(led.value("status", Json()))
          .value_or(Status::Internal("the leader sent what this one cannot read"));
  if (!led_status.ok()) return led_status;
  AwaitLeader await_leader;           // destroyed after the member's files
  std::unique_ptr<OutputSet> member;  // a member's view of the leader's set
  std::string transaction;            // the staging folder, as this member sees it
  if (g.leads()) {
    transaction = set->transaction();
  } else {
    transaction = led["transaction"].get<std::string>();
    if (transaction.front() != '/') transaction = JoinPath(r.folders.front(), transaction);
    await_leader.Watch(transaction);
    member = OutputSet::JoinTransaction(transaction, fmt::format("r{}-", me));
  }
  OutputSet& stager = g.leads() ? *set : *member;
  TFDIST_RETURN_IF_ERROR(CheckProbe(g, r, transaction, led));
  probe.reset();

  // 2. Each member finds the compression of its inputs, then scans them.
  std::vector<Input> inputs(paths.size());
  std::vector<size_t> mine;
  for (size_t i = 0; i < paths.size(); ++i) {
    inputs[i].path = paths[i];
    const int owner = g.size() == 1 ? 0 : led["owner"][i].get<int>();
    if (owner == me) mine.push_back(i);
  }
  {
    Json found;
    found["compression"] = Json::array();
    for (size_t i : mine) {
      Result<Compression> c = InputCompression(paths[i], o.input_compression);
      if (!c.ok()) {
        found["error"] = ErrorJson(i, c.status());
        break;
      }
      inputs[i].compression = *c;
      found["compression"].push_back({i, static_cast<int>(*c)});
    }
    TFDIST_ASSIGN_OR_RETURN(const std::vector<Json> all, Share(g, std::move(found)));
    if (Status s = GroupError(g, all); !s.ok()) return Explain(s);
    for (const Json& m : all) {
      for (const Json& c : m["compression"]) {
        inputs[c[0].get<size_t>()].compression = static_cast<Compression>(c[1].get<int>());
      }
    }
  }
  const bool any_compressed = std::any_of(inputs.begin(), inputs.end(), [](const Input& in) {
    return in.compression != Compression::kNone;
  });
  {
    size_t failed = 0;
    const Status s =
        ScanInputs(inputs, mine, o, r.shuffle, any_compressed && !r.shuffle, &stager, &failed);
    if (Status shared = ShareScans(g, transaction, inputs, mine, ErrorJson(failed, s));
        !shared.ok()) {
      return Explain(shared);
    }
  }
  uint64_t first = 0;
  for (Input& in : inputs) {
    in.first = first;
    first += in.records();
  }

  // 3. Every member plans alike, and writes its run of the outputs.
  std::vector<Output> outputs;
  TFDIST_ASSIGN_OR_RETURN(const ReshardPlan plan, r.plan(inputs, outputs));
  const std::vector<int> owner = SplitOutputs(inputs, plan, outputs, g.size());
  std::vector<size_t> my_outputs;
  std::vector<Output> written;
  for (size_t k = 0; k < outputs.size(); ++k) {
    if (owner[k] != me) continue;
    my_outputs.push_back(k);
    written.push_back(std::move(outputs[k]));
  }
  {
    size_t failed = 0;
    Status s = WriteOutputs(inputs, plan, written, o, stager, &failed);
    failed = written.empty() ? outputs.size() : my_outputs[std::min(failed, written.size() - 1)];
    if (s.ok() && g.size() > 1) s = CommitFault("staged");
    // A signal before the group agrees stops the commit, as at one process.
    if (s.ok() && Interrupted()) s = Status::Interrupted();
    Json done;
    done["error"] = ErrorJson(failed, s);
    done["outputs"] = Json::array();
    for (size_t w = 0; s.ok() && w < written.size(); ++w) {
      done["outputs"].push_back({{"k", my_outputs[w]},
                                 {"staged", NameIn(written[w].file->temp_path())},
                                 {"framed", written[w].framed_bytes},
                                 {"file", written[w].file_bytes}});
    }
    Result<std::vector<Json>> all = Share(g, std::move(done));
    if (!all.ok()) return Explain(all.status());
    if (Status e = GroupError(g, *all); !e.ok()) return Explain(e);
    // Every output is written: the inflated copies are read no more.
    for (Input& in : inputs) in.spill.reset();
    for (size_t w = 0; w < written.size(); ++w) outputs[my_outputs[w]] = std::move(written[w]);
    for (const Json& m : *all) {
      for (const Json& out : m["outputs"]) {
        Output& o_k = outputs[out["k"].get<size_t>()];
        o_k.framed_bytes = out["framed"].get<uint64_t>();
        o_k.file_bytes = out["file"].get<uint64_t>();
        if (!o_k.file) o_k.staged = JoinPath(transaction, out["staged"].get<std::string>());
      }
    }
  }

  // 4. The leader commits the whole set; the others hand it their files.
  Status committed;
  if (g.leads()) {
    for (Output& out : outputs) {
      if (out.file) {
        set->Add(std::move(out.file));
        continue;
      }
      if (committed.ok()) committed = set->Adopt(out.path, out.staged);
    }
    if (committed.ok()) committed = set->Commit();
  } else {
    for (Output& out : outputs) {
      if (out.file) out.file->Release();  // the leader's now
    }
  }
  TFDIST_ASSIGN_OR_RETURN(const std::vector<Json> verdict,
                          Share(g, g.leads() ? StatusToJson(committed) : Json()));
  committed = StatusFromJson(verdict.front())
                  .value_or(Status::Internal("the leader sent what this one cannot read"));
  if (!committed.ok()) return Explain(committed);

  RewriteSummary summary;
  for (const Output& out : outputs) {
    OutputSummary s;
    s.path = out.path;
    s.count.records = out.end - out.begin;
    s.count.payload_bytes = out.framed_bytes - kFraming * s.count.records;
    s.file_bytes = out.file_bytes;
    summary.total.records += s.count.records;
    summary.total.payload_bytes += s.count.payload_bytes;
    summary.outputs.push_back(std::move(s));
  }
  summary.planned_from_index =
      std::any_of(inputs.begin(), inputs.end(), [](const Input& in) { return in.from_index; });
  return summary;
}

}  // namespace

Result<RewriteSummary> Reshard(std::span<const std::string> inputs, const ReshardOptions& options) {
  assert(!options.output_prefix.empty());
  assert((options.num_shards == 0) != (options.records_per_shard == 0));
  Rewrite r;
  r.command = "reshard";
  r.folders = {OutputFolderOf(options.output_prefix)};
  r.family = ShardFamily{options.output_prefix, ShardFileSuffix(options.output_compression)};
  r.shuffle = options.seed.has_value();
  r.plan = [&](const std::vector<Input>& in, std::vector<Output>& outputs) -> Result<ReshardPlan> {
    std::vector<uint64_t> sizes;
    sizes.reserve(in.empty() ? 0 : in.back().first + in.back().records());
    for (const Input& input : in) {
      for (uint64_t i = 0; i < input.records(); ++i) {
        sizes.push_back(input.offsets[i + 1] - input.offsets[i]);
      }
    }
    TFDIST_ASSIGN_OR_RETURN(ReshardPlan plan, PlanReshard(sizes, options));
    const uint64_t n = plan.num_shards();
    outputs.resize(n);
    for (uint64_t s = 0; s < n; ++s) {
      outputs[s].path = ShardFileName(options.output_prefix, s, n, options.output_compression);
      outputs[s].begin = plan.bounds[s];
      outputs[s].end = plan.bounds[s + 1];
    }
    return plan;
  };
  return RunRewrite(inputs, options, r);
}

Result<RewriteSummary> Convert(std::span<const std::string> inputs, const ConvertOptions& options) {
  std::vector<std::string> paths;
  for (const std::string& input : inputs) {
    paths.push_back(ConvertedFileName(input, options.output_compression, options.output_dir));
  }
  Rewrite r;
  r.command = "convert";
  for (const std::string& p : paths) r.folders.push_back(OutputFolderOf(p));
  r.check = [&]() -> Status {
    std::set<std::string> seen;
    for (size_t i = 0; i < inputs.size(); ++i) {
      namespace fs = std::filesystem;
      std::error_code ec;
      const bool same =
          fs::path(paths[i]).lexically_normal() == fs::path(inputs[i]).lexically_normal() ||
          fs::equivalent(paths[i], inputs[i], ec);
      if (same) {
        return Status::InvalidArgument(
                   fmt::format("{}: converting to {} would write the file onto itself", inputs[i],
                               CompressionName(options.output_compression)))
            .WithAdvice(Remedy::kOtherOutputFolder);
      }
      if (!seen.insert(fs::path(paths[i]).lexically_normal().string()).second) {
        return Status::InvalidArgument(
            fmt::format("{}: two inputs would be converted to this same file", paths[i]));
      }
    }
    return CheckNewFiles(paths, options.overwrite);
  };
  r.plan = [&](const std::vector<Input>& in, std::vector<Output>& outputs) -> Result<ReshardPlan> {
    outputs.resize(in.size());  // one output per input, record for record
    for (size_t i = 0; i < in.size(); ++i) {
      outputs[i].path = paths[i];
      outputs[i].begin = in[i].first;
      outputs[i].end = in[i].first + in[i].records();
    }
    return ReshardPlan{};  // the identity
  };
  return RunRewrite(inputs, options, r);
}

}  // namespace tfdist::io
