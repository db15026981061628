// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// How a Python trace lists object-store URLs: tf.io.gfile.glob,
// tf.io.matching_files and tf.io.gfile.exists of s3:// and gs:// in the
// traced code ask tfdist (one listing implementation), which answers with
// the lister set here. trace depends on base alone: the caller (src/cli)
// sets one that lists through io.

#ifndef TFDIST_TRACE_URL_LISTER_H_
#define TFDIST_TRACE_URL_LISTER_H_

#include <functional>
#include <string>
#include <vector>

#include "tfdist/base/result.h"

namespace tfdist::trace {

// The matches of one URL pattern, sorted (empty for none), or the error the
// traced code gets there.
using UrlLister = std::function<Result<std::vector<std::string>>(const std::string& pattern)>;

// For the whole process, before a trace starts; unset, the traced code's
// URL listings are refused.
void SetUrlLister(UrlLister lister);

}  // namespace tfdist::trace

#endif  // TFDIST_TRACE_URL_LISTER_H_
