#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# Pipelines that read no file (range() and what follows it) stop at the first
# SIGINT with exit 130, however long they would run: an endless take, a skip
# that walks 2^63 elements, a layout that walks them too.
# Usage: interrupt_range_test.py TFDIST
import sys

import checks


def main():
    checks.TFDIST = sys.argv[1]
    for args in (["take", "-n", "-1", "range(5).repeat()"],
                 ["take", "-n", "5", "range(5).repeat().skip(9223372036854775807)"],
                 ["layout", "--steps", "1", "range(5).repeat().skip(9223372036854775000).batch(2)"]):
        checks.check_interrupt_stops(*args, timeout=10)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
