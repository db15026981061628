#!/usr/bin/env python3
# Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
# No credential in any output: tfdist reads s3:// objects with a secret key
# and a session token from each place the AWS tools take them (the
# environment, a profile of the shared credentials file, a profile's
# credential_process), and every output of every run (stdout, stderr,
# --json; successes, a missing object, a refused key (403), an unreachable
# endpoint) is searched for the secret and the token, plain and
# URL-encoded. A refusal names where the credentials came from instead.
# (The other remote tests search their outputs the same way: every run goes
# through remote_checks.run.)
# Usage: remote_secrets_test.py TFDIST
import os
import stat
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checks  # noqa: E402
import remote_checks as rc  # noqa: E402
from checks import check  # noqa: E402
from remote_checks import servers  # noqa: E402

PROFILE = "tfdist-test"
WRONG_KEY = "AKIATFDISTNOSUCHKEY0"  # s3rver refuses any key but S3RVER: 403


def credential_sources(tmp, server):
    """(name, environment, words one of which a 403 names) of each source.
    Each environment reaches `server` with the test's secret and token."""
    base = server.env(secret="unused")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        base.pop(k, None)
    home = os.path.join(tmp, "home")
    base = rc.fresh_env(base, home)

    credentials = os.path.join(tmp, "credentials")
    with open(credentials, "w") as f:
        f.write(f"[{PROFILE}]\naws_access_key_id = {servers.S3_ACCESS_KEY}\n"
                f"aws_secret_access_key = {rc.SECRET}\naws_session_token = {rc.TOKEN}\n")
    process = os.path.join(tmp, "credential-process")
    with open(process, "w") as f:
        f.write(f"#!{sys.executable}\nimport json, os\n"
                f"print(json.dumps({{'Version': 1, 'AccessKeyId': os.environ['KEY_ID'], "
                f"'SecretAccessKey': {rc.SECRET!r}, 'SessionToken': {rc.TOKEN!r}}}))\n")
    os.chmod(process, stat.S_IRWXU)
    config = os.path.join(tmp, "config")
    with open(config, "w") as f:
        f.write(f"[profile {PROFILE}]\ncredential_process = {process}\nregion = us-east-1\n")

    def env_source(key_id):
        return dict(base, AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=rc.SECRET,
                    AWS_SESSION_TOKEN=rc.TOKEN)

    def file_source(key_id):
        text = open(credentials).read().replace(
            f"aws_access_key_id = {servers.S3_ACCESS_KEY}", f"aws_access_key_id = {key_id}")
        path = os.path.join(tmp, f"credentials-{key_id}")
        with open(path, "w") as f:
            f.write(text)
        return dict(base, AWS_SHARED_CREDENTIALS_FILE=path, AWS_PROFILE=PROFILE)

    def process_source(key_id):
        return dict(base, AWS_CONFIG_FILE=config, AWS_PROFILE=PROFILE, KEY_ID=key_id)

    return [("the environment", env_source, ("AWS_ACCESS_KEY_ID", "environment")),
            ("a shared credentials file", file_source, (PROFILE, credentials)),
            ("credential_process", process_source, ("credential_process", PROFILE))]


def main():
    checks.TFDIST = os.path.abspath(sys.argv[1])
    servers.skip_unless_available("s3")
    servers.terminate_on_sigterm()
    with rc.temp_root("tfdist-remote-secrets-") as tmp:
        data = rc.Dataset(tmp)
        with servers.S3Server() as server:
            server.create_bucket(rc.BUCKET)
            server.put_files(rc.BUCKET, data.objects)
            good = f"s3://{rc.BUCKET}/data/train-*"
            missing = f"s3://{rc.BUCKET}/data/nope.tfrecord"
            pipeline = (f'list_files("s3://{rc.BUCKET}/data/train-*", shuffle=False)'
                        ".interleave(tfrecord).batch(4)")
            closed = f"http://127.0.0.1:{servers.free_port()}"
            for name, source, words in credential_sources(tmp, server):
                env = source(servers.S3_ACCESS_KEY)
                for args in (["count", good], ["count", "--json", good],
                             ["verify", "--json", good], ["digest", good],
                             ["cat", "-n", "3", good],
                             ["layout", "--format", "json", "--workers", "2", pipeline],
                             ["run", "--device", "cpu", "--json", pipeline]):
                    rc.run(args, env, expect=0, what=f"{name}: {' '.join(args[:2])}")
                for args in (["take", f'tfrecord("{missing}")'],
                             ["take", "--json", f'tfrecord("{missing}")']):
                    rc.run(args, env, expect=3, what=f"{name}: {' '.join(args)}")
                refused = source(WRONG_KEY)
                for args in (["count", good], ["count", "--json", good],
                             ["layout", "--format", "json", pipeline]):
                    p = rc.run(args, refused, expect=3, what=f"{name}, a refused key: {args[0]}")
                    if "--json" not in args and "json" not in args:
                        check("403" in p.stderr and any(w in p.stderr for w in words),
                              f"{name}, a refused key: the error names neither the status nor "
                              f"the credentials' source ({words})\n{p.stderr[-1000:]}")
                away = dict(env, AWS_ENDPOINT_URL=closed)
                for args in (["count", rc.TIMEOUT_FLAG, "3", good],
                             ["count", "--json", rc.TIMEOUT_FLAG, "3", good]):
                    rc.run(args, away, expect=7, what=f"{name}, no server: {' '.join(args[:2])}")
        # The search itself, on a real output that holds the secret (tfdist
        # names a missing file): it must see it.
        p = subprocess.run([checks.TFDIST, "count", os.path.join(tmp, "none", rc.SECRET)],
                           capture_output=True, text=True, timeout=rc.HANG_SECONDS)
        check(p.returncode == 2 and rc.secrets_in(p.stderr) == [rc.SECRET],
              f"the search for credentials missed the secret in a name tfdist printed: "
              f"{p.stderr!r}")
    check(rc.OUTPUTS_CHECKED[0] >= 3 * 14, f"only {rc.OUTPUTS_CHECKED[0]} outputs searched")
    print(f"{rc.OUTPUTS_CHECKED[0]} outputs searched for the test credentials")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
