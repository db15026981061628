// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// One URL pattern listed, for callers that want a glob's matches as
// tf.io.gfile.glob gives them (the --python stand-in asks tfdist for them:
// one listing implementation).

#ifndef TFDIST_IO_URL_GLOB_H_
#define TFDIST_IO_URL_GLOB_H_

#include <string>
#include <vector>

#include "tfdist/base/result.h"

namespace tfdist::io {

// The objects `pattern` (s3://B/K or gs://B/K, wildcards in the key) matches,
// sorted byte-wise, as ExpandFilePatterns lists and matches them; empty for
// no match (a name without wildcards: the object, when it exists).
// Error: InvalidArgument for a name that is no URL, an unsupported scheme or
// a wildcard in the bucket; the store's errors (ExpandFilePatterns').
Result<std::vector<std::string>> GlobUrl(const std::string& pattern);

}  // namespace tfdist::io

#endif  // TFDIST_IO_URL_GLOB_H_
