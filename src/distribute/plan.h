// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A distribution planned before any worker runs (private to distribute):
// list_files expanded once, the topology checked, the decision made with
// the file names counted, and each worker's pipeline and build options.
// Shared by Execution::Plan and SummarizeFiles.

#ifndef TFDIST_DISTRIBUTE_PLAN_H_
#define TFDIST_DISTRIBUTE_PLAN_H_

#include <optional>

#include "tfdist/data/pipeline.h"
#include "tfdist/distribute/decide.h"
#include "tfdist/distribute/shape.h"
#include "tfdist/io/file_list.h"

namespace tfdist::dist {

// list_files() expanded once for all workers: the ops it stands for
// (data::LowerListFiles: from_tensor_slices() of the sorted matches, then
// the shuffle list_files(shuffle=True) stands for). `listings` stand in for
// listing their folders. Files matched twice are kept (as TensorFlow keeps
// them), and with two -of-N sets of one prefix, said in `warnings` when
// given.
// Error: LowerListFiles' (InvalidArgument at list_files' position when
// nothing matches).
Result<data::Pipeline> ExpandListFiles(const data::Pipeline& in,
                                       const io::FolderListings& listings = io::FolderListings(),
                                       std::vector<Warning>* warnings = nullptr);

// The number of file names `shape`'s reader gets, counted up to `limit`
// (PlanDistribution's count for FILE; check's, before a layout would fail).
// Error: the names pipeline's own.
Result<uint64_t> CountFileNames(const data::Pipeline& pipeline, const PipelineShape& shape,
                                const data::BuildOptions& build, uint64_t limit);

struct Distribution {
  data::Pipeline pipeline;  // list_files expanded
  // DistributeOptions::worker_pipelines, list_files expanded; empty when
  // every worker runs `pipeline`.
  std::vector<data::Pipeline> worker_pipelines;
  PipelineShape shape;  // of `pipeline`
  Decision decision;
  data::BuildOptions build;  // one seed for the run; read_by_index for DATA by index
  // from-function: what each worker's readers take from each file, for the
  // summary's read amplification (null under Api::kDistribute).
  std::shared_ptr<data::FileReadTally> tally;

  // Worker w's own pipeline under FILE sharding (its share of the names),
  // or the one its input function gave it; nullopt where it runs
  // `pipeline` as it is.
  std::optional<data::Pipeline> WorkerPipeline(const Topology& t, int64_t w) const;
  // Worker w's build options: its InputContext (from-function) or shard
  // hint (HINT), and ReadCounters of its own (from-function: telling
  // `tally`). From-function workers are processes of their own, so each
  // draws its own order for shuffles without any seed (BuildOptions::
  // default_seed: worker 0 the run's, the others one made from it); so do
  // all workers under DistributeOptions::worker_seeds.
  data::BuildOptions WorkerBuild(const DistributeOptions& options, int64_t w) const;
  // Whether every worker runs the very same pipeline (no FILE rewrite, no
  // hint, no input context, one seed), so that one reading can serve them all.
  bool SamePipelineForAll(const DistributeOptions& options) const;
};

// Expands list_files, checks the topology, picks the run's seed (so every
// worker draws the same unseeded shuffles), decides the policy and the
// split, counts the file names FILE sharding needs, and decides whether
// DATA reads by index.
// REQUIRES: options.worker and options.max_steps as DistributeOptions says.
// Error: list_files matching nothing, CheckTopology's, Decide's,
// CheckFileCount's, or the names pipeline's own.
Result<Distribution> PlanDistribution(const data::Pipeline& original,
                                      const DistributeOptions& options,
                                      const data::BuildOptions& build,
                                      const io::FolderListings& listings = io::FolderListings());

// DATA over several workers under Api::kDistribute, with read_by_index,
// a reader that is told no compression (or auto) and keeps its order, and
// an up-to-date index for every file name reaching the reader (at most
// 1,000,000 of them): sets d.read_by_index, says so in d.reason, drops the
// warning that every worker reads the whole dataset, and returns true (build
// the workers' pipelines with read_by_index and fetch the kept records).
// A stale index is named in a warning (every file is read).
// Error: the names pipeline's own errors.
Result<bool> PlanReadByIndex(const data::Pipeline& pipeline, const PipelineShape& shape,
                             const DistributeOptions& options, const data::BuildOptions& build,
                             Decision& d);

}  // namespace tfdist::dist

#endif  // TFDIST_DISTRIBUTE_PLAN_H_
