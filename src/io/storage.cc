// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Names split by scheme, the storage of each scheme, and what listings saw.

#include "tfdist/io/storage.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <deque>
#include <mutex>
#include <utility>

#include "storage_listed.h"
#include "storage_stores.h"

namespace tfdist::io {
namespace {

constexpr std::string_view kSupported = "s3://BUCKET/KEY and gs://BUCKET/KEY";

// The scheme of "SCHEME://...": letters, then letters, digits, '+', '-' or
// '.' (RFC 3986); empty when `name` has none.
std::string_view SchemeOf(std::string_view name) {
  const size_t end = name.find("://");
  if (end == std::string_view::npos || end == 0) return {};
  const std::string_view scheme = name.substr(0, end);
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(scheme[0])) return {};
  for (char c : scheme) {
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return {};
  }
  return scheme;
}

}  // namespace

std::string Location::Url() const {
  switch (scheme) {
    case Scheme::kLocal:
      return key;
    case Scheme::kS3:
      return fmt::format("s3://{}/{}", bucket, key);
    case Scheme::kGcs:
      return fmt::format("gs://{}/{}", bucket, key);
  }
  return key;
}

bool IsRemote(std::string_view name) {
  return name.starts_with("s3://") || name.starts_with("gs://");
}

Result<Location> ParseLocation(std::string_view name) {
  Location loc;
  loc.text = std::string(name);
  const std::string_view scheme = SchemeOf(name);
  if (scheme.empty()) {
    loc.key = std::string(name);
    return loc;
  }
  if (scheme == "s3") {
    loc.scheme = Scheme::kS3;
  } else if (scheme == "gs") {
    loc.scheme = Scheme::kGcs;
  } else {
    return Status::InvalidArgument(
        fmt::format("{}: the scheme {}:// is not supported; tfdist reads local files, {}", name,
                    scheme, kSupported));
  }
  const std::string_view rest = name.substr(scheme.size() + 3);
  const size_t slash = rest.find('/');
  loc.bucket = std::string(rest.substr(0, slash));
  if (loc.bucket.empty()) {
    return Status::InvalidArgument(
        fmt::format("{}: the URL names no bucket (expected {})", name, kSupported));
  }
  if (slash != std::string_view::npos) loc.key = std::string(rest.substr(slash + 1));
  return loc;
}

Status CheckLocalOutput(std::string_view name, std::string_view what) {
  if (SchemeOf(name).empty()) return Status::OK();
  return Status::InvalidArgument(
      fmt::format("{} {} is a URL: outputs are local files and folders in this version of "
                  "tfdist (write them locally, then copy them with the store's own tools)",
                  what, name));
}

namespace {

struct Stores {
  std::mutex mu;
  std::array<std::unique_ptr<Storage>, 3> made;
};

Stores& TheStores() {
  static Stores* stores = new Stores;  // never destroyed: readers may outlive main
  return *stores;
}

}  // namespace

Storage& StorageFor(Scheme scheme) {
  Stores& stores = TheStores();
  const std::lock_guard lock(stores.mu);
  std::unique_ptr<Storage>& made = stores.made[static_cast<size_t>(scheme)];
  if (!made) {
    switch (scheme) {
      case Scheme::kLocal:
        made = NewLocalStorage();
        break;
      case Scheme::kS3:
        made = NewS3Storage();
        break;
      case Scheme::kGcs:
        made = NewGcsStorage();
        break;
    }
  }
  return *made;
}

namespace {

struct RemoteWarnings {
  std::mutex mu;
  std::vector<std::string> pending;
};

RemoteWarnings& TheRemoteWarnings() {
  static RemoteWarnings* warnings = new RemoteWarnings;  // never destroyed, as TheStores
  return *warnings;
}

}  // namespace

void AddRemoteWarning(std::string warning) {
  RemoteWarnings& w = TheRemoteWarnings();
  const std::lock_guard lock(w.mu);
  w.pending.push_back(std::move(warning));
}

std::vector<std::string> TakeRemoteWarnings() {
  RemoteWarnings& w = TheRemoteWarnings();
  const std::lock_guard lock(w.mu);
  return std::exchange(w.pending, {});
}

void SetStorageForTesting(Scheme scheme, std::unique_ptr<Storage> storage) {
  Stores& stores = TheStores();
  const std::lock_guard lock(stores.mu);
  stores.made[static_cast<size_t>(scheme)] = std::move(storage);
}

namespace {

// The matches of recent expansions, each sorted by name, newest last.
struct Listed {
  std::mutex mu;
  std::deque<std::pair<std::vector<ObjectInfo>, uint64_t>> expansions;  // and their bytes
  uint64_t bytes = 0;
  uint64_t bound = uint64_t{64} << 20;
};

Listed& TheListed() {
  static Listed* listed = new Listed;
  return *listed;
}

std::atomic<uint64_t> stat_requests{0};

}  // namespace

void RememberListed(std::vector<ObjectInfo> objects) {
  if (objects.empty()) return;
  std::sort(objects.begin(), objects.end(),
            [](const ObjectInfo& a, const ObjectInfo& b) { return a.name < b.name; });
  uint64_t bytes = 0;
  for (const ObjectInfo& o : objects) {
    bytes += sizeof(ObjectInfo) + o.name.capacity() + o.version.capacity();
  }
  Listed& listed = TheListed();
  const std::lock_guard lock(listed.mu);
  listed.bytes += bytes;
  listed.expansions.emplace_back(std::move(objects), bytes);
  while (listed.bytes > listed.bound && listed.expansions.size() > 1) {
    listed.bytes -= listed.expansions.front().second;
    listed.expansions.pop_front();
  }
}

void SetListedBoundForTesting(uint64_t bytes) {
  Listed& listed = TheListed();
  const std::lock_guard lock(listed.mu);
  listed.bound = bytes;
}

uint64_t StatRequestsForTesting() { return stat_requests.load(std::memory_order_relaxed); }

Result<ObjectInfo> StatObject(std::string_view name) {
  {
    Listed& listed = TheListed();
    const std::lock_guard lock(listed.mu);
    for (auto it = listed.expansions.rbegin(); it != listed.expansions.rend(); ++it) {
      const std::vector<ObjectInfo>* e = &it->first;
      const auto at = std::lower_bound(
          e->begin(), e->end(), name,
          [](const ObjectInfo& info, std::string_view n) { return info.name < n; });
      if (at != e->end() && at->name == name) return *at;
    }
  }
  TFDIST_ASSIGN_OR_RETURN(const Location loc, ParseLocation(name));
  stat_requests.fetch_add(1, std::memory_order_relaxed);
  return StorageFor(loc.scheme).Stat(name);
}

}  // namespace tfdist::io
