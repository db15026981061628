#!/usr/bin/env node
// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
//
// A Cloud Storage emulator for the tests: the firebase-tools storage
// emulator's HTTP server (its JSON API: /storage/v1, /upload/storage/v1,
// /download/storage/v1), started without its security-rules runtime, which
// needs Java 21 and a JAR downloaded from Google (neither is available
// offline). The JSON API routes use the emulator's admin storage layer,
// which never evaluates rules. It sends no packet off 127.0.0.1.
//
// The contract (tests of several parts start it this way; keep it):
//   cd REPO && TMPDIR=$(mktemp -d) GCS_EMU_PORT=PORT node tests/servers/gcs-emu.js
//   * GCS_EMU_PORT: the port on 127.0.0.1; 0 or unset picks a free one.
//   * Prints exactly one line "READY PORT" on stdout once it serves
//     requests (PORT is the real port); everything else goes to stderr.
//     Then: STORAGE_EMULATOR_HOST=http://127.0.0.1:PORT.
//   * GCS_EMU_PROJECT: the project id (default "demo-tfdist").
//   * SIGTERM or SIGINT deletes its stored blobs (under $TMPDIR/firebase/
//     storage/blobs) and exits 0. SIGKILL leaves them: give each instance
//     its own TMPDIR.
//   * Exits 1 with a message on stderr when it cannot start, e.g. when
//     firebase-tools (pinned in tests/servers/package.json) is missing or
//     its internal modules moved (gcs_emulator_smoke_test.py checks that).
//   Buckets need no creating: any bucket name exists, empty, on first use.
//
// What it does not emulate (tests that need these use a fake of their own):
// generation preconditions (ifGenerationMatch is ignored), 416 for a range
// that starts past the end (it answers 200 and the whole object), 404 for a
// missing bucket (a listing answers 200, empty), uploads over 130 MB.
"use strict";

const path = require("path");

const FIREBASE = path.join(__dirname, "node_modules", "firebase-tools", "lib");

function fail(message) {
  process.stderr.write(`gcs-emu: ${message}\n`);
  process.exit(1);
}

function load(module) {
  try {
    return require(path.join(FIREBASE, module));
  } catch (e) {
    fail(`cannot load firebase-tools' ${module} (${e.code || e.message}); ` +
         "run `npm ci --ignore-scripts` in tests/servers (firebase-tools 15.34.2 is pinned)");
  }
}

const { StorageEmulator } = load("emulator/storage");
const { createApp } = load("emulator/storage/server");
const { EmulatorRegistry } = load("emulator/registry");
const { createDestroyer } = load("utils");
for (const [name, value] of Object.entries({ StorageEmulator, createApp, EmulatorRegistry,
                                              createDestroyer })) {
  if (typeof value !== "function") fail(`firebase-tools no longer exports ${name}`);
}

const host = "127.0.0.1";
const requestedPort = Number(process.env.GCS_EMU_PORT || "0");
if (!Number.isInteger(requestedPort) || requestedPort < 0 || requestedPort > 65535) {
  fail(`GCS_EMU_PORT=${process.env.GCS_EMU_PORT} is not a port`);
}
const projectId = process.env.GCS_EMU_PROJECT || "demo-tfdist";

const emulator = new StorageEmulator({ projectId, host, port: requestedPort, rules: "",
                                       auto_download: false });
if (typeof emulator._persistence?.deleteAll !== "function") {
  fail("firebase-tools' StorageEmulator has no _persistence.deleteAll any more");
}

// The stock start() minus the Java rules runtime. The registry must know the
// real host and port: object metadata builds its selfLink from it.
emulator.start = async function start() {
  this._app = await createApp(projectId, this);
  const server = this._app.listen(requestedPort, host);
  await new Promise((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", reject);
  });
  this.args.port = server.address().port;
  this.destroyServer = createDestroyer(server);
};

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  try {
    await emulator._persistence.deleteAll();
    if (emulator.destroyServer) await emulator.destroyServer();
  } catch (e) {
    process.stderr.write(`gcs-emu: stopping: ${e.message}\n`);
  }
  process.exit(0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);

EmulatorRegistry.start(emulator).then(
    () => process.stdout.write(`READY ${emulator.args.port}\n`),
    (e) => fail(`cannot start: ${e.message}`));
