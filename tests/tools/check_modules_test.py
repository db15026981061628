#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""tools/check_modules.py on small trees: a private header of src/data that
includes its module's facade (tfdist/data/pipeline.h) is refused; the typed
ops (tfdist/data/ops.h), and the facade in a .cc file, are not.

Usage: check_modules_test.py PATH/TO/check_modules.py
"""

import pathlib
import subprocess
import sys
import tempfile

GRAPH = ['base=', 'io=base', 'data=base,io']


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def run(tool, root):
    p = subprocess.run([sys.executable, tool, '--root', str(root), *GRAPH],
                       capture_output=True, text=True)
    return p.returncode, p.stderr


def main():
    tool = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        for module in ('base', 'io', 'data'):
            (root / 'src' / module).mkdir(parents=True)
            (root / 'include' / 'tfdist' / module).mkdir(parents=True)
        write(root, 'include/tfdist/data/ops.h', '#include "tfdist/io/byte_stream.h"\n')
        write(root, 'include/tfdist/data/pipeline.h', '#include "tfdist/data/ops.h"\n')
        write(root, 'src/data/binder.h', '#include "tfdist/data/ops.h"\n')
        write(root, 'src/data/pipeline.cc', '#include "binder.h"\n#include "tfdist/data/pipeline.h"\n')
        write(root, 'src/io/reader.h', '#include "tfdist/io/byte_stream.h"\n')
        rc, err = run(tool, root)
        if rc != 0:
            failures.append(f'a clean tree was refused (exit {rc}): {err}')
        write(root, 'src/data/builder.h', '// builds\n#include "tfdist/data/pipeline.h"\n')
        rc, err = run(tool, root)
        if rc != 1 or 'src/data/builder.h:2: a private header of data may not include ' \
                      '"tfdist/data/pipeline.h"' not in err:
            failures.append(f'builder.h including the facade: exit {rc}, {err!r}')
        if 'pipeline.cc' in err or 'binder.h' in err:
            failures.append(f'more than builder.h was refused: {err!r}')
    for f in failures:
        print('FAIL:', f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
