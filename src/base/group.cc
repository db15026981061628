// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The group of a process alone.

#include "tfdist/base/group.h"

#include <fmt/format.h>

namespace tfdist {
namespace {

class Lone final : public Group {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  Result<std::vector<std::string>> AllGather(std::string mine) override {
    std::vector<std::string> all;
    all.push_back(std::move(mine));
    return all;
  }
  std::string Name(int r) const override { return fmt::format("rank {}", r); }
};

}  // namespace

Group& LoneGroup() {
  static Lone group;
  return group;
}

}  // namespace tfdist
