#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# An input tfdist may not read is a data error (exit 3) that names the path
# and says "Permission denied": a folder a glob cannot list (once reported as
# "no files match 'd/*'"), and a file it cannot open. Root reads either
# anyway, so as root only the part with a symbolic link loop (a folder that
# cannot be listed either) runs, then the test skips (exit 77).
# Usage: permission_test.py TFDIST
import os
import sys
import tempfile

import checks


def loop_folder():
    """A folder that cannot be listed for another reason, which root meets
    too: a symbolic link loop. The same exit 3 from a file argument and
    from list_files in a pipeline (where it once became exit 2)."""
    with tempfile.TemporaryDirectory(prefix="tfdist-loop-") as tmp:
        os.symlink("b", os.path.join(tmp, "a"))
        os.symlink("a", os.path.join(tmp, "b"))
        loop = os.path.join(tmp, "a")
        for args in (["count", f"{loop}/*"], ["take", "-n", "1", f"list_files('{loop}/x*')"],
                     ["layout", "--workers", "2", f"list_files('{loop}/x*').batch(2)"]):
            proc = checks.tfdist(*args, expect=3)
            checks.check(f"{loop}: cannot list the folder: Too many levels of symbolic links"
                         in proc.stderr, f"{args}: {proc.stderr}")


def main():
    checks.TFDIST = sys.argv[1]
    loop_folder()
    if os.geteuid() == 0:
        print("SKIP: root is not denied by file permissions")
        return 77 if not checks.FAILURES else checks.finish()
    with tempfile.TemporaryDirectory(prefix="tfdist-permission-") as tmp:
        locked = os.path.join(tmp, "locked")
        os.mkdir(locked)
        checks.tfdist("gen", "-o", os.path.join(locked, "x"), "--records", "3")
        unreadable = os.path.join(tmp, "unreadable.tfrecord")
        checks.tfdist("gen", "-o", unreadable, "--records", "3")
        os.chmod(locked, 0o300)  # may enter and write, not list
        os.chmod(unreadable, 0o200)
        try:
            for args in (["count", f"{locked}/*"],
                         ["take", "-n", "1", f"list_files('{locked}/x*')"],
                         ["layout", "--workers", "2", f"list_files('{locked}/x*').batch(2)"]):
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
