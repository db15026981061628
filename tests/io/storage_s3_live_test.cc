// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The S3 store against a real S3-compatible server, s3rver (tests/servers),
// started on 127.0.0.1 for the test, and STS web identity against a fake
// STS of the test's own. Exits 77 (skipped) when s3rver is not installed
// (tools/setup installs it).

#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <future>
#include <map>
#include <string>
#include <vector>

#include "io/storage_s3_test_util.h"
#include "storage_s3_internal.h"
#include "test_util.h"

namespace tfdist::io::s3 {
namespace {

constexpr const char* kS3rver = "tests/servers/node_modules/s3rver/bin/s3rver.js";
constexpr const char* kSecret = "S3RVER";  // s3rver's; the test's own secret below
constexpr const char* kTestSecret = "tfdist-test-secret-9f4b2c";

// curl --aws-sigv4 against the server: puts `data` at `path` ("/bkt/key").
int Curl(int port, const std::string& method, const std::string& path, const std::string& data) {
  testing::TempDir dir;
  testing::WriteFile(dir.File("body"), data);
  const std::string command = fmt::format(
      "curl -s -o /dev/null -w '%{{http_code}}' -X {} --aws-sigv4 aws:amz:us-east-1:s3 "
      "--user S3RVER:{} -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' --data-binary @{} "
      "'http://127.0.0.1:{}{}'",
      method, kSecret, dir.File("body"), port, path);
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  int code = 0;
  if (fscanf(p, "%d", &code) != 1) code = -1;
  pclose(p);
  return code;
}

struct S3rver {
  testing::TempDir dir;
  int port = FreePort();
  Child child{{"node", kS3rver, "--address", "127.0.0.1", "--port", std::to_string(port),
               "--directory", dir.path()},
              // s3rver's truncated ListObjectsV2 needs DES (its continuation
              // tokens), which Node 20's OpenSSL 3 keeps in the legacy provider.
              {"NODE_OPTIONS=--openssl-legacy-provider"}};

  S3rver() { REQUIRE(child.first_line().find("listening") != std::string::npos); }

  void Put(const std::string& bucket_key, const std::string& data) {
    REQUIRE(Curl(port, "PUT", "/" + bucket_key, data) == 200);
  }

  std::map<std::string, std::string> Env(const testing::TempDir& home) const {
    return {{"HOME", home.path()},
            {"AWS_EC2_METADATA_DISABLED", "true"},
            {"AWS_ENDPOINT_URL", fmt::format("http://127.0.0.1:{}", port)},
            {"AWS_ACCESS_KEY_ID", "S3RVER"},
            {"AWS_SECRET_ACCESS_KEY", kSecret}};
  }
};

Environment EnvOf(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string Payload(size_t size, char seed) {
  std::string s(size, '\0');
  for (size_t i = 0; i < size; ++i) s[i] = static_cast<char>(seed + i * 7 + i / 251);
  return s;
}

TEST_CASE("A listing of several pages: every object once, in byte order, with size and ETag") {
  S3rver server;
  testing::TempDir home;
  REQUIRE(Curl(server.port, "PUT", "/bkt", "") == 200);
  const std::vector<std::string> keys = {
      "d/a", "d/b b", "d/c+d", "d/e%41", "d/sub/f", "d/\xc3\xbc", "d/\xf0\x9f\x98\x80", "e/x"};
  for (size_t i = 0; i < keys.size(); ++i) {
    // The URL path carries the key encoded, as S3 wants it.
    REQUIRE(Curl(server.port, "PUT", "/bkt/" + AwsUriEncode(keys[i], true), Payload(i + 1, 'a')) ==
            200);
  }
  auto store = NewS3StorageFrom(EnvOf(server.Env(home)), false);
  SetListPageSizeForTesting(2);
  std::vector<ObjectInfo> listed;
  int pages = 0;
  REQUIRE(store
              ->List("s3://bkt/d/",
                     [&](std::span<const ObjectInfo> page) {
                       ++pages;
                       listed.insert(listed.end(), page.begin(), page.end());
                       return Status::OK();
                     })
              .ok());
  SetListPageSizeForTesting(1000);
  CHECK(pages == 4);
  REQUIRE(listed.size() == 7);
  for (size_t i = 0; i < 7; ++i) {
    CAPTURE(i);
    CHECK(listed[i].name == "s3://bkt/" + keys[i]);
    CHECK(listed[i].size == i + 1);
    CHECK(listed[i].version.starts_with("\""));
    Result<ObjectInfo> stat = store->Stat(listed[i].name);
    REQUIRE(stat.ok());
    CHECK(stat->size == listed[i].size);
    CHECK(stat->version == listed[i].version);
  }
  // A page callback's error stops the listing.
  int calls = 0;
  CHECK(store
            ->List("s3://bkt/",
                   [&](std::span<const ObjectInfo>) {
                     ++calls;
                     return Status::Cancelled("enough");
                   })
            .code() == StatusCode::kCancelled);
  CHECK(calls == 1);
  // A prefix that matches nothing is an empty listing, not an error.
  CHECK(
      store->List("s3://bkt/zzz", [&](std::span<const ObjectInfo>) { return Status::OK(); }).ok());
}

TEST_CASE("Ranged reads, a replaced object, and 404 and 403 that name the credentials' source") {
  S3rver server;
  testing::TempDir home;
  REQUIRE(Curl(server.port, "PUT", "/bkt", "") == 200);
  const std::string data = Payload(100000, 'x');
  server.Put("bkt/big.rec", data);
  auto store = NewS3StorageFrom(EnvOf(server.Env(home)), false);
  Result<ObjectInfo> info = store->Stat("s3://bkt/big.rec");
  REQUIRE(info.ok());
  CHECK(info->size == data.size());
  auto object = store->Open(*info);
  REQUIRE(object.ok());

  std::string part(1000, '\0');
  REQUIRE((*object)->ReadAt(12345, part).ok());
  CHECK(part == data.substr(12345, 1000));
  std::string tail(10, '\0');
  REQUIRE((*object)->ReadAt(data.size() - 10, tail).ok());
  CHECK(tail == data.substr(data.size() - 10));
  CHECK((*object)->ReadAt(data.size() - 5, tail).code() == StatusCode::kOutOfRange);

  std::promise<Status> done;
  std::string async_part(4096, '\0');
  (*object)->ReadAtAsync(50000, async_part, [&](Status s) { done.set_value(std::move(s)); });
  REQUIRE(done.get_future().get().ok());
  CHECK(async_part == data.substr(50000, 4096));

  // Replaced between two reads: the second is DataLoss naming both
  // versions, never bytes of the new one.
  server.Put("bkt/big.rec", Payload(100000, 'y'));
  std::string after(1000, '\0');
  const Status replaced = (*object)->ReadAt(0, after);
  CAPTURE(replaced.message());
  CHECK(replaced.code() == StatusCode::kDataLoss);
  CHECK(replaced.message().starts_with("s3://bkt/big.rec: the object was replaced"));
  CHECK(replaced.message().find(info->version) != std::string::npos);
  Result<ObjectInfo> now = store->Stat("s3://bkt/big.rec");
  REQUIRE(now.ok());
  CHECK(now->version != info->version);
  CHECK(replaced.message().find(now->version) != std::string::npos);
  std::promise<Status> async_done;
  (*object)->ReadAtAsync(0, after, [&](Status s) { async_done.set_value(std::move(s)); });
  CHECK(async_done.get_future().get().code() == StatusCode::kDataLoss);

  // 404: a missing object, a missing bucket.
  const Status missing = store->Stat("s3://bkt/nope.rec").status();
  CAPTURE(missing.message());
  CHECK(missing.code() == StatusCode::kNotFound);
  CHECK(missing.message().find("s3://bkt/nope.rec") != std::string::npos);
  const Status no_bucket = store->List("s3://no-such-bucket/x",
                                       [](std::span<const ObjectInfo>) { return Status::OK(); });
  CAPTURE(no_bucket.message());
  CHECK(no_bucket.code() == StatusCode::kNotFound);
  CHECK(no_bucket.message().find("NoSuchBucket") != std::string::npos);

  // 403: a key the server does not know, named by its source, never its secret.
  auto env = server.Env(home);
  env["AWS_ACCESS_KEY_ID"] = "UNKNOWNKEY";
  env["AWS_SECRET_ACCESS_KEY"] = kTestSecret;
  auto stranger = NewS3StorageFrom(EnvOf(env), false);
  const Status forbidden = stranger->Stat("s3://bkt/big.rec").status();
  const Status forbidden_list =
      stranger->List("s3://bkt/", [](std::span<const ObjectInfo>) { return Status::OK(); });
  for (const Status& s : {forbidden, forbidden_list}) {
    CAPTURE(s.message());
    CHECK(s.code() == StatusCode::kPermissionDenied);
    CHECK(s.message().find("AWS_ACCESS_KEY_ID") != std::string::npos);
    CHECK(s.message().find(kTestSecret) == std::string::npos);
  }
  CHECK(forbidden_list.message().find("InvalidAccessKeyId") != std::string::npos);

  // Anonymous (--no-sign-request): s3rver serves it, and says so when it fails.
  auto anonymous = NewS3StorageFrom(EnvOf(env), true);
  const Status anon_missing = anonymous->Stat("s3://bkt/nope.rec").status();
  CHECK(anon_missing.code() == StatusCode::kNotFound);
  CHECK(anon_missing.message().find("anonymous") != std::string::npos);
}

// A fake STS: answers AssumeRoleWithWebIdentity with s3rver's keys and a
// session token, and writes each request's body to `log`.
constexpr const char* kFakeSts = R"PY(
import http.server, sys, urllib.parse
log = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers['Content-Length'])).decode()
        with open(log, 'a') as f:
            f.write(body + '\n')
        form = urllib.parse.parse_qs(body)
        if form.get('WebIdentityToken') != ['eyJ.token.sig']:
            reply = ('<ErrorResponse><Error><Code>InvalidIdentityToken</Code>'
                     '<Message>bad token</Message></Error></ErrorResponse>').encode()
            self.send_response(400)
        else:
            reply = ('<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult>'
                     '<Credentials><AccessKeyId>S3RVER</AccessKeyId>'
                     '<SecretAccessKey>S3RVER</SecretAccessKey><SessionToken>STSTOKEN</SessionToken>'
                     '<Expiration>2100-01-01T00:00:00Z</Expiration></Credentials>'
                     '</AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>').encode()
            self.send_response(200)
        self.send_header('Content-Length', str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(('127.0.0.1', 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
)PY";

TEST_CASE("Web identity: a token exchanged at STS for keys that read the bucket") {
  S3rver server;
  testing::TempDir home;
  REQUIRE(Curl(server.port, "PUT", "/bkt", "") == 200);
  server.Put("bkt/k", "payload");
  testing::WriteFile(home.File("token"), "eyJ.token.sig\n");
  testing::WriteFile(home.File("badtoken"), "forged\n");
  Child sts({"python3", "-c", kFakeSts, home.File("sts.log")}, {});
  const int sts_port = std::stoi(sts.first_line());
  auto env = server.Env(home);
  env.erase("AWS_ACCESS_KEY_ID");
  env.erase("AWS_SECRET_ACCESS_KEY");
  env["AWS_WEB_IDENTITY_TOKEN_FILE"] = home.File("token");
  env["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/reader";
  env["AWS_ROLE_SESSION_NAME"] = "tfdist-test";
  env["AWS_ENDPOINT_URL_STS"] = fmt::format("http://127.0.0.1:{}", sts_port);
  auto store = NewS3StorageFrom(EnvOf(env), false);
  Result<ObjectInfo> info = store->Stat("s3://bkt/k");
  CAPTURE(info.status().message());
  REQUIRE(info.ok());
  CHECK(info->size == 7);
  const std::string log = testing::ReadFile(home.File("sts.log"));
  CHECK(log.find("Action=AssumeRoleWithWebIdentity") != std::string::npos);
  CHECK(log.find("RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Freader") != std::string::npos);
  CHECK(log.find("RoleSessionName=tfdist-test") != std::string::npos);
  // Fetched once, then reused until it nears its expiration.
  REQUIRE(store->Stat("s3://bkt/k").ok());
  const std::string log_after = testing::ReadFile(home.File("sts.log"));
  CHECK(std::count(log_after.begin(), log_after.end(), '\n') == 1);

  env["AWS_WEB_IDENTITY_TOKEN_FILE"] = home.File("badtoken");
  auto refused = NewS3StorageFrom(EnvOf(env), false);
  const Status bad = refused->Stat("s3://bkt/k").status();
  CAPTURE(bad.message());
  CHECK(!bad.ok());
  CHECK(bad.message().find("InvalidIdentityToken") != std::string::npos);
  CHECK(bad.message().find("forged") == std::string::npos);
}

}  // namespace
}  // namespace tfdist::io::s3

// Skips (exit 77) before doctest runs when s3rver is not installed.
int main(int argc, char** argv) {
  if (!std::filesystem::exists(tfdist::io::s3::kS3rver)) {
    std::fprintf(stderr,
                 "storage_s3_live: %s is not installed (tools/setup installs it); skipped\n",
                 tfdist::io::s3::kS3rver);
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
