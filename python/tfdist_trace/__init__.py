# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""tfdist's tracer of Python input functions: runs the user's code with a
stand-in tensorflow and records the tf.data pipeline it builds."""
