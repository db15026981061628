#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
"""Checks tfdist's module graph; every build runs it (src/meson.build).

Usage: check_modules.py --root DIR [--stamp FILE] MODULE=DEP,DEP ...

Each MODULE=DEPS argument is a module of src/meson.build's graph and the
modules it may use. The check fails (exit 1, one line per problem) when:
  * the graph has a cycle, or a folder of src/ or include/tfdist/ is no module;
  * a file of a module (src/MODULE/, include/tfdist/MODULE/) includes the
    public header of a module it does not name (#include "tfdist/OTHER/..."),
    a header by its old flat path ("tfdist/x.h"), or another module's private
    header ("../other/x.h");
  * a private header of a module (src/MODULE/*.h) includes its module's
    façade, the public header whose functions the private ones implement
    (FACADES: data's pipeline.h; such a header includes data/ops.h for the
    typed ops instead), so that the arrows inside a module point down;
  * a file other than src/io/storage_*.cc and .h includes a header of
    libcurl (<curl/...>), OpenSSL (<openssl/...>) or expat (<expat.h>): the
    storage layer alone speaks HTTP, TLS and XML;
  * a file other than src/cluster/mpi.cc includes <mpi.h>: the cluster
    module alone speaks MPI;
  * a string literal below src/, outside src/cli/, names a command-line flag
    ("--force") or a tfdist command ("tfdist index"): the library speaks in
    its API's terms, and src/cli alone words them as flags.
With --stamp, FILE is written when all is well (the build's record of it).
"""

import argparse
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SYSTEM_INCLUDE = re.compile(r'^\s*#\s*include\s*<([^>]+)>')
# The libraries of the storage layer, and the files that may include them.
STORAGE_ONLY = re.compile(r'^(curl/|openssl/|expat\.h$|expat_external\.h$)')
STORAGE_FILE = re.compile(r'^src/io/storage_[^/]*\.(cc|h)$')
MPI_FILE = 'src/cluster/mpi.cc'
# A string literal, without the escapes' details: enough to find words in it.
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
FLAG = re.compile(r'(?<![\w-])--[a-z][a-z0-9-]*')
COMMAND = re.compile(
    r'\btfdist (count|verify|digest|cat|take|layout|run|index|reshard|convert|gen)\b')
GENERATED = {'example.pb.h', 'feature.pb.h', 'device_config.h', 'version.h'}
# Each module's façade: the public header its private headers implement and so
# may not include (a .cc file may).
FACADES = {'data': 'tfdist/data/pipeline.h'}


def parse_graph(args):
    graph = {}
    for arg in args:
        module, _, deps = arg.partition('=')
        graph[module] = [d for d in deps.split(',') if d]
    return graph


def find_cycle(graph):
    """A list of modules that form a cycle, or None."""
    state = {}

    def visit(m, path):
        if state.get(m) == 'done':
            return None
        if state.get(m) == 'open':
            return path[path.index(m):] + [m]
        state[m] = 'open'
        for d in graph.get(m, []):
            cycle = visit(d, path + [m])
            if cycle:
                return cycle
        state[m] = 'done'
        return None

    for m in graph:
        cycle = visit(m, [])
        if cycle:
            return cycle
    return None


def module_files(root, module):
    for base in (root / 'src' / module, root / 'include' / 'tfdist' / module):
        if base.is_dir():
            for p in sorted(base.rglob('*')):
                if p.suffix in ('.h', '.cc', '.cu'):
                    yield p


def strip_comments(line, in_block):
    """The code of `line` outside /* */ and // comments; the new block state."""
    out = []
    i = 0
    while i < len(line):
        if in_block:
            end = line.find('*/', i)
            if end < 0:
                return ''.join(out), True
            i = end + 2
            in_block = False
        elif line.startswith('/*', i):
            in_block = True
            i += 2
        elif line.startswith('//', i):
            break
        elif line[i] == '"':
            m = STRING.match(line, i)
            if not m:
                out.append(line[i:])
                break
            out.append(m.group(0))
            i = m.end()
        else:
            out.append(line[i])
            i += 1
    return ''.join(out), in_block


def check(root, graph):
    problems = []
    cycle = find_cycle(graph)
    if cycle:
        problems.append('the module graph has a cycle: ' + ' -> '.join(cycle))
    for parent in (root / 'src', root / 'include' / 'tfdist'):
        for d in sorted(p for p in parent.iterdir() if p.is_dir()):
            if d.name not in graph:
                problems.append(f'{d.relative_to(root)}: a folder that is no module of the graph')
    for module, deps in graph.items():
        allowed = {module, *deps}
        for path in module_files(root, module):
            rel = path.relative_to(root)
            in_block = False
            for number, line in enumerate(path.read_text(errors='replace').splitlines(), 1):
                m = SYSTEM_INCLUDE.match(line)
                if (m and STORAGE_ONLY.match(m.group(1))
                        and not STORAGE_FILE.match(rel.as_posix())):
                    problems.append(f'{rel}:{number}: includes <{m.group(1)}>: only '
                                    'src/io/storage_*.cc and .h use libcurl, OpenSSL and expat')
                    continue
                if m and m.group(1) == 'mpi.h' and rel.as_posix() != MPI_FILE:
                    problems.append(f'{rel}:{number}: includes <mpi.h>: only {MPI_FILE} uses MPI')
                    continue
                m = INCLUDE.match(line)
                if m:
                    target = m.group(1)
                    parts = target.split('/')
                    if parts[0] == 'tfdist':
                        if len(parts) != 3:
                            problems.append(f'{rel}:{number}: includes "{target}": public headers '
                                            'are "tfdist/MODULE/NAME.h"')
                        elif parts[1] not in allowed:
                            problems.append(
                                f'{rel}:{number}: {module} may not include "{target}" ({module} '
                                f'uses only: {", ".join(deps) or "nothing of ours"})')
                        elif (target == FACADES.get(module) and rel.parts[0] == 'src'
                              and path.suffix == '.h'):
                            problems.append(
                                f'{rel}:{number}: a private header of {module} may not include '
                                f'"{target}", the façade it implements (include the lower '
                                'header it uses, such as tfdist/data/ops.h)')
                    elif '..' in parts or (len(parts) > 1 and target not in GENERATED):
                        problems.append(f'{rel}:{number}: includes "{target}": another '
                                        "module's private header")
                    continue
                code, in_block = strip_comments(line, in_block)
                if module == 'cli' or rel.parts[0] != 'src':
                    continue
                for literal in STRING.findall(code):
                    for pattern in (FLAG, COMMAND):
                        word = pattern.search(literal)
                        if word:
                            problems.append(f'{rel}:{number}: "{word.group(0)}" in a message: '
                                            'library messages use the API\'s terms; src/cli '
                                            'words them as flags')
    return problems


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--root', required=True, type=pathlib.Path)
    parser.add_argument('--stamp', type=pathlib.Path)
    parser.add_argument('graph', nargs='+')
    args = parser.parse_args()
    problems = check(args.root, parse_graph(args.graph))
    for p in problems:
        print(f'check_modules: {p}', file=sys.stderr)
    if problems:
        return 1
    if args.stamp:
        args.stamp.write_text('ok\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
