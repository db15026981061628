#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""tools/check_modules.py on small trees: a private header of src/data that
includes its module's facade (tfdist/data/pipeline.h) is refused; the typed
ops (tfdist/data/ops.h), and the facade in a .cc file, are not. Only
src/io/storage_*.cc and .h may include libcurl, OpenSSL or expat.

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
        (root / 'src/data/builder.h').unlink()

        # The storage layer's libraries: its files may include them, no other.
        write(root, 'src/io/storage_http.cc', '#include <curl/curl.h>\n#include <string>\n')
        write(root, 'src/io/storage_s3.cc', '#include <openssl/hmac.h>\n#include <expat.h>\n')
        write(root, 'src/io/storage_http.h', '#include <curl/curl.h>\n')
        rc, err = run(tool, root)
        if rc != 0:
            failures.append(f'the storage layer including curl, OpenSSL, expat: exit {rc}, {err}')
        for rel, header in (('src/io/reader.cc', 'curl/curl.h'), ('src/data/fetch.cc', 'openssl/sha.h'),
                            ('src/io/listing.cc', 'expat.h'),
                            ('include/tfdist/io/storage_x.h', 'curl/curl.h')):
            write(root, rel, f'// x\n#include <{header}>\n')
            rc, err = run(tool, root)
            if rc != 1 or f'{rel}:2: includes <{header}>: only src/io/storage_*.cc' not in err:
                failures.append(f'{rel} including <{header}>: exit {rc}, {err!r}')
            (root / rel).unlink()
    for f in failures:
        print('FAIL:', f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
