// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// Quantiles of the training loop's wait per step, in memory bounded by the
// range of times, not by the number of steps (private to src/run).

#ifndef TFDIST_RUN_WAIT_HISTOGRAM_H_
#define TFDIST_RUN_WAIT_HISTOGRAM_H_

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>

namespace tfdist::run {

// Waits in buckets of 1/8 of a power of two of nanoseconds (values within
// 9% of each other share one), from 1 ns to about 9 days; a wait under 1 ns
// counts as 0.
class WaitHistogram {
 public:
  void Add(double seconds) {
    ++count_;
    const double ns = seconds * 1e9;
    if (!(ns >= 1)) {
      ++buckets_[0];
      return;
    }
    const uint64_t v = ns >= 0x1p49 ? (uint64_t{1} << 49) : static_cast<uint64_t>(ns);
    const int octave = std::bit_width(v) - 1;  // v in [2^octave, 2^(octave+1))
    const int sub = octave >= 3 ? static_cast<int>((v >> (octave - 3)) & 7)
                                : static_cast<int>((v << (3 - octave)) & 7);
    ++buckets_[static_cast<size_t>(1 + octave * 8 + sub)];
  }

  uint64_t count() const { return count_; }

  // The wait below which a fraction `q` of the steps waited (the middle of
  // its bucket), in seconds; 0 without steps. REQUIRES: 0 <= q <= 1.
  double Quantile(double q) const {
    if (count_ == 0) return 0;
    const uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
    uint64_t seen = 0;
    for (size_t b = 0; b < buckets_.size(); ++b) {
      seen += buckets_[b];
      if (seen >= rank && seen > 0) {
        if (b == 0) return 0;
        const int octave = static_cast<int>((b - 1) / 8), sub = static_cast<int>((b - 1) % 8);
        return std::ldexp(1.0 + (sub + 0.5) / 8.0, octave) / 1e9;
      }
    }
    return 0;
  }

 private:
  std::array<uint64_t, 1 + 50 * 8> buckets_{};
  uint64_t count_ = 0;
};

}  // namespace tfdist::run

#endif  // TFDIST_RUN_WAIT_HISTOGRAM_H_
