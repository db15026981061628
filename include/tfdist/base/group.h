// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A group of processes that do one command together (the ranks of a job
// started by mpirun or srun): the library's steps that share their work
// take one, and agree through it. The cluster module makes the group of a
// job; LoneGroup() is a process alone.

#ifndef TFDIST_BASE_GROUP_H_
#define TFDIST_BASE_GROUP_H_

#include <string>
#include <vector>

#include "tfdist/base/result.h"

namespace tfdist {

class Group {
 public:
  virtual ~Group() = default;

  // This member, from 0, and the number of members. Member 0 leads: it
  // takes the locks and commits what the others prepared.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool leads() const { return rank() == 0; }

  // Every member's `mine`, by rank, at every member. Every member calls it,
  // the same number of times as the others, also after a signal
  // (Interrupted()): a member stopped by one says so to the others through
  // it. Error: Internal or ResourceExhausted (the transport's own errors).
  virtual Result<std::vector<std::string>> AllGather(std::string mine) = 0;

  // How a message names member `r`: "rank 2 (host-b)".
  virtual std::string Name(int r) const = 0;
};

// The group of this process alone: AllGather returns `mine`.
Group& LoneGroup();

}  // namespace tfdist

#endif  // TFDIST_BASE_GROUP_H_
