#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# An input tfdist may not read is a data error (exit 3) that names the path
# and says "Permission denied": a folder a glob cannot list (once reported as
# "no files match 'd/*'"), and a file it cannot open. Root reads either
# anyway, so as root the test skips (exit 77); the mapping of the error
# itself is covered by tests/io (a folder that cannot be listed).
# Usage: permission_test.py TFDIST
import os
import sys
import tempfile

import checks


def main():
    checks.TFDIST = sys.argv[1]
    if os.geteuid() == 0:
        print("SKIP: root is not denied by file permissions")
        return 77
    with tempfile.TemporaryDirectory(prefix="tfdist-permission-") as tmp:
        locked = os.path.join(tmp, "locked")
        os.mkdir(locked)
        checks.tfdist("gen", "-o", os.path.join(locked, "x"), "--records", "3")
        unreadable = os.path.join(tmp, "unreadable.tfrecord")
        checks.tfdist("gen", "-o", os.path.join(tmp, "unreadable"), "--records", "3")
        os.chmod(locked, 0o300)  # may enter and write, not list
        os.chmod(unreadable, 0o200)
        try:
            for args in (["count", f"{locked}/*"],
                         ["take", "-n", "1", f"list_files('{locked}/x*')"]):
                proc = checks.tfdist(*args, expect=3)
                checks.check(f"{locked}: cannot list the folder: Permission denied" in proc.stderr,
                             f"{args}: {proc.stderr}")
            for args in (["count", unreadable], ["cat", unreadable]):
                proc = checks.tfdist(*args, expect=3)
                checks.check(f"{unreadable}: cannot open: Permission denied" in proc.stderr,
                             f"{args}: {proc.stderr}")
        finally:
            os.chmod(locked, 0o700)
            os.chmod(unreadable, 0o600)
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
