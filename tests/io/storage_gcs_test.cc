// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The Cloud Storage store: JWTs checked by the openssl program, token
// exchanges against a fake token endpoint and metadata server
// (tests/io/gcs_fake.py), the JSON API against the firebase-tools storage
// emulator (tests/servers/gcs-emu.js) and, for what the emulator does not do
// (412 to ifGenerationMatch, 416 past the end, 404 for a missing bucket),
// against the fake. Nothing is sent off 127.0.0.1: NO_GCE_CHECK=true.

#include "storage_gcs.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "io/remote_servers.h"
#include "storage_http.h"
#include "test_util.h"
#include "tfdist/io/storage.h"

extern char** environ;

namespace tfdist::io::gcs {
namespace {

using Json = nlohmann::json;
using testing::TempDir;

// Sets environment variables for a scope (nullptr: unset), then restores them.
class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = std::getenv(name);
      saved_.emplace_back(name, old ? std::optional<std::string>(old) : std::nullopt);
      if (value) {
        setenv(name, value, 1);
      } else {
        unsetenv(name);
      }
    }
  }
  ~ScopedEnv() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        unsetenv(it->first.c_str());
      }
    }
  }

 private:
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

// No credentials anywhere and no metadata server: each test adds its own.
ScopedEnv CleanEnv(const std::string& home) {
  return ScopedEnv({{"GOOGLE_APPLICATION_CREDENTIALS", nullptr},
                    {"CLOUDSDK_CONFIG", nullptr},
                    {"GCE_METADATA_HOST", nullptr},
                    {"STORAGE_EMULATOR_HOST", nullptr},
                    {"NO_GCE_CHECK", "true"},
                    {"HOME", home.c_str()}});
}

// A server process that prints "READY PORT" when it serves; SIGTERM at the end.
class Server {
 public:
  Server(std::vector<std::string> argv, std::map<std::string, std::string> env = {}) {
    int out[2];
    REQUIRE(pipe2(out, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    std::vector<std::string> env_text;
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      if (!env.count(entry.substr(0, entry.find('=')))) env_text.push_back(entry);
    }
    for (const auto& [name, value] : env) env_text.push_back(name + "=" + value);
    std::vector<char*> args, envp;
    for (std::string& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    for (std::string& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);
    REQUIRE(posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), envp.data()) == 0);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string line;
    pollfd p{out[0], POLLIN, 0};
    while (line.find('\n') == std::string::npos && poll(&p, 1, 60000) == 1) {
      char buffer[256];
      const ssize_t n = read(out[0], buffer, sizeof buffer);
      if (n <= 0) break;
      line.append(buffer, size_t(n));
    }
    close(out[0]);
    // "READY PORT" (gcs-emu.js, gcs_fake.py) or "PORT" (fault_proxy.py).
    INFO("the server's first line: ", line);
    if (line.starts_with("READY ")) line = line.substr(6);
    REQUIRE(!line.empty());
    REQUIRE(std::isdigit(static_cast<unsigned char>(line[0])));
    port_ = std::stoi(line);
  }
  ~Server() {
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    exit_status_ = status;
  }
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  std::string Base() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_status_ = 0;
};

// Requests the tests make themselves (uploads, the fake's /stats): unsigned.
class Unsigned : public http::HttpStore {
 public:
  Status Authorize(http::Request&) override { return Status::OK(); }
  std::pair<std::string, std::string> ParseError(const http::Response& r) const override {
    return ParseGcsError(r.body);
  }
  std::string CredentialSource() const override { return "the test itself"; }
};

Json FakeStats(const Server& fake) {
  Unsigned store;
  http::Request request;
  request.url = fake.Base() + "/stats";
  request.shown = request.url;
  auto response = http::Client::Get().Fetch(store, request);
  REQUIRE(response.ok());
  return Json::parse(response->body);
}

void Post(const std::string& url, const std::string& body) {
  Unsigned store;
  http::Request request;
  request.method = "POST";
  request.url = url;
  request.shown = url;
  request.body = body;
  request.headers.emplace_back("Content-Type", "application/octet-stream");
  auto response = http::Client::Get().Fetch(store, request);
  INFO(url, ": ", response.status().ToString());
  REQUIRE(response.ok());
}

std::string Run(const std::string& command) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  INFO(command, " -> ", out);
  REQUIRE(status == 0);
  return out;
}

std::string Base64UrlDecode(std::string_view text) {
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '-') {
      v = 62;
    } else if (c == '_') {
      v = 63;
    } else {
      FAIL("not base64url: ", text);
      return out;
    }
    bits = bits << 6 | uint32_t(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out += char((bits >> count) & 0xff);
    }
  }
  return out;
}

std::vector<std::string> SplitJwt(const std::string& jwt) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t dot; (dot = jwt.find('.', begin)) != std::string::npos; begin = dot + 1) {
    parts.push_back(jwt.substr(begin, dot - begin));
  }
  parts.push_back(jwt.substr(begin));
  return parts;
}

// A test-only RSA key made now by the openssl program, and its public half.
struct TestKey {
  TempDir dir;
  std::string private_pem, public_path;
  TestKey() {
    const std::string key = dir.File("key.pem");
    public_path = dir.File("pub.pem");
    Run(
        fmt::format("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out {} 2>&1 && "
                    "openssl pkey -in {} -pubout -out {} 2>&1",
                    key, key, public_path));
    private_pem = testing::ReadFile(key);
  }

  // Whether the openssl program verifies `jwt`'s RS256 signature.
  bool Verifies(const std::string& jwt) const {
    const std::vector<std::string> parts = SplitJwt(jwt);
    REQUIRE(parts.size() == 3);
    testing::WriteFile(dir.File("input"), parts[0] + "." + parts[1]);
    testing::WriteFile(dir.File("sig"), Base64UrlDecode(parts[2]));
    const std::string command =
        fmt::format("openssl dgst -sha256 -verify {} -signature {} {} >/dev/null 2>&1", public_path,
                    dir.File("sig"), dir.File("input"));
    return std::system(command.c_str()) == 0;
  }

  // A service-account key file whose token_uri is `token_uri`.
  std::string KeyFile(const std::string& token_uri) const {
    const std::string path = dir.File("sa.json");
    testing::WriteFile(path, Json{{"type", "service_account"},
                                  {"project_id", "demo"},
                                  {"private_key_id", "kid-1"},
                                  {"private_key", private_pem},
                                  {"client_email", "reader@demo.iam.gserviceaccount.com"},
                                  {"token_uri", token_uri}}
                                 .dump());
    return path;
  }
};

const TestKey& Key() {
  static const TestKey key;
  return key;
}

Server StartFake(std::vector<std::string> extra = {}) {
  std::vector<std::string> argv = {"python3", "tests/io/gcs_fake.py"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return Server(argv);
}

void SetQuickRetries() {
  RemoteOptions options;
  options.max_attempts = 3;
  options.max_seconds = 60;
  SetRemoteOptions(options);
}

TEST_CASE("Base64Url is RFC 4648's URL alphabet without padding") {
  CHECK(Base64Url("") == "");
  CHECK(Base64Url("f") == "Zg");
  CHECK(Base64Url("fo") == "Zm8");
  CHECK(Base64Url("foo") == "Zm9v");
  CHECK(Base64Url("foob") == "Zm9vYg");
  CHECK(Base64Url("fooba") == "Zm9vYmE");
  CHECK(Base64Url("foobar") == "Zm9vYmFy");
  CHECK(Base64Url("\xfb\xff") == "-_8");
}

TEST_CASE("a service account's JWT has Google's claims and an RS256 signature openssl verifies") {
  const TestKey& key = Key();
  ServiceAccountKey sa{"reader@demo.iam.gserviceaccount.com", key.private_pem, "kid-1",
                       "http://127.0.0.1:9/token"};
  auto jwt = MakeJwt(sa, 1700000000, "test key");
  REQUIRE(jwt.ok());
  const std::vector<std::string> parts = SplitJwt(*jwt);
  REQUIRE(parts.size() == 3);
  const Json header = Json::parse(Base64UrlDecode(parts[0]));
  CHECK(header == Json{{"alg", "RS256"}, {"typ", "JWT"}, {"kid", "kid-1"}});
  const Json claims = Json::parse(Base64UrlDecode(parts[1]));
  CHECK(claims["iss"] == "reader@demo.iam.gserviceaccount.com");
  CHECK(claims["aud"] == "http://127.0.0.1:9/token");
  CHECK(claims["scope"] == "https://www.googleapis.com/auth/devstorage.read_only");
  CHECK(claims["iat"] == 1700000000);
  CHECK(claims["exp"] == 1700003600);
  CHECK(key.Verifies(*jwt));
  // The check can fail: a claim changed after signing does not verify.
  std::string forged = *jwt;
  forged.replace(forged.find('.') + 1, parts[1].size(),
                 Base64Url(Json{{"iss", "someone@else"}}.dump()));
  CHECK_FALSE(key.Verifies(forged));
}

TEST_CASE("a key that is not an RSA PEM is InvalidArgument that never quotes it") {
  ServiceAccountKey sa{"a@b",
                       "-----BEGIN PRIVATE KEY-----\nSECRETBYTES\n-----END PRIVATE KEY-----\n", "",
                       "http://127.0.0.1:9/token"};
  auto jwt = MakeJwt(sa, 0, "service_account file /k.json (GOOGLE_APPLICATION_CREDENTIALS)");
  REQUIRE_FALSE(jwt.ok());
  CHECK(jwt.status().code() == StatusCode::kInvalidArgument);
  CHECK(jwt.status().message().find("/k.json") != std::string::npos);
  CHECK(jwt.status().message().find("SECRETBYTES") == std::string::npos);
}

TEST_CASE("Cloud Storage's JSON errors and the emulator's plain-text 404 are read") {
  CHECK(ParseGcsError(
            R"({"error":{"code":404,"message":"No such object: b/x","errors":[)"
            R"({"message":"No such object: b/x","domain":"global","reason":"notFound"}]}})") ==
        std::pair<std::string, std::string>{"notFound", "No such object: b/x"});
  CHECK(ParseGcsError(R"({"error":{"code":500,"message":"Backend Error"}})") ==
        std::pair<std::string, std::string>{"", "Backend Error"});
  CHECK(ParseGcsError("No such object: testbkt/nope/missing.txt") ==
        std::pair<std::string, std::string>{"", "No such object: testbkt/nope/missing.txt"});
  CHECK(ParseGcsError("\n  <html>Not Found</html>\n<body>") ==
        std::pair<std::string, std::string>{"", "<html>Not Found</html>"});
  CHECK(ParseGcsError("") == std::pair<std::string, std::string>{"", ""});
}

TEST_CASE("Cloud Storage's XML errors give their code and message, not the XML prolog") {
  CHECK(ParseGcsError("<?xml version='1.0' encoding='UTF-8'?><Error><Code>SlowDown</Code>"
                      "<Message>Please reduce your request rate.</Message></Error>") ==
        std::pair<std::string, std::string>{"SlowDown", "Please reduce your request rate."});
  CHECK(
      ParseGcsError("\n<?xml version=\"1.0\"?>\n<Error><Code>NoSuchBucket</Code>"
                    "<Message>The specified bucket does not exist.</Message>"
                    "<Details>No such bucket: b</Details></Error>") ==
      std::pair<std::string, std::string>{"NoSuchBucket", "The specified bucket does not exist."});
}

TEST_CASE("a listing page gives full names, sizes, generations and the next page's token") {
  std::vector<ObjectInfo> objects;
  std::string token;
  REQUIRE(ParseListPage(R"({"kind":"storage#objects","nextPageToken":"a+b%",)"
                        R"("items":[{"name":"d/x y","size":"12","generation":"1795710553610"},)"
                        R"({"name":"d/ü","size":"0","generation":"1700000000000001"}]})",
                        "bk", "gs://bk/d/", objects, token)
              .ok());
  CHECK(token == "a+b%");
  REQUIRE(objects.size() == 2);
  CHECK(objects[0].name == "gs://bk/d/x y");
  CHECK(objects[0].size == 12);
  CHECK(objects[0].version == "1795710553610");
  CHECK(objects[1].name == "gs://bk/d/ü");
  CHECK(objects[1].version == "1700000000000001");

  objects.clear();
  REQUIRE(ParseListPage(R"({"kind":"storage#objects"})", "bk", "gs://bk/", objects, token).ok());
  CHECK(objects.empty());
  CHECK(token.empty());

  const Status no_size = ParseListPage(R"({"items":[{"name":"x","generation":"1"}]})", "bk",
                                       "gs://bk/", objects, token);
  CHECK(no_size.code() == StatusCode::kDataLoss);
  CHECK(no_size.message().find("gs://bk/") != std::string::npos);
  CHECK(ParseListPage("<html>", "bk", "gs://bk/", objects, token).code() == StatusCode::kDataLoss);
}

TEST_CASE("gs:// URLs split into bucket and object") {
  CHECK(*SplitUrl("gs://b/a/b c") == std::pair<std::string, std::string>{"b", "a/b c"});
  CHECK(*SplitUrl("gs://b") == std::pair<std::string, std::string>{"b", ""});
  CHECK(SplitUrl("gs:///x").status().code() == StatusCode::kInvalidArgument);
  CHECK(SplitUrl("s3://b/x").status().code() == StatusCode::kInvalidArgument);
}

TEST_CASE("the endpoint is Google's, or STORAGE_EMULATOR_HOST with http:// added") {
  {
    ScopedEnv env({{"STORAGE_EMULATOR_HOST", nullptr}});
    CHECK(EndpointFromEnvironment().base == "https://storage.googleapis.com");
    CHECK_FALSE(EndpointFromEnvironment().emulator);
  }
  {
    ScopedEnv env({{"STORAGE_EMULATOR_HOST", "127.0.0.1:9199"}});
    CHECK(EndpointFromEnvironment().base == "http://127.0.0.1:9199");
    CHECK(EndpointFromEnvironment().emulator);
  }
  {
    ScopedEnv env({{"STORAGE_EMULATOR_HOST", "https://emu.test:1/"}});
    CHECK(EndpointFromEnvironment().base == "https://emu.test:1");
  }
}

TEST_CASE("credentials: the ecosystem's order, and a clear error for other file types") {
  TempDir home;
  auto env = CleanEnv(home.path());
  SUBCASE("nothing: anonymous, saying why") {
    auto c = CredentialsFromEnvironment(EndpointFromEnvironment());
    REQUIRE(c.ok());
    CHECK((*c)->CredentialSource().starts_with("anonymous"));
    CHECK((*c)->CredentialSource().find("NO_GCE_CHECK=true") != std::string::npos);
    CHECK(*(*c)->Header() == "");
  }
  SUBCASE("an emulator: unsigned") {
    ScopedEnv emu({{"STORAGE_EMULATOR_HOST", "127.0.0.1:1"},
                   {"GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent.json"}});
    auto c = CredentialsFromEnvironment(EndpointFromEnvironment());
    REQUIRE(c.ok());
    CHECK((*c)->CredentialSource().find("emulator at http://127.0.0.1:1") != std::string::npos);
  }
  SUBCASE("GOOGLE_APPLICATION_CREDENTIALS before the application-default file") {
    std::filesystem::create_directories(home.File(".config/gcloud"));
    testing::WriteFile(home.File(".config/gcloud/application_default_credentials.json"),
                       R"({"type":"authorized_user","client_id":"c","client_secret":"s",)"
                       R"("refresh_token":"r"})");
    {
      auto c = CredentialsFromEnvironment(EndpointFromEnvironment());
      REQUIRE(c.ok());
      CHECK((*c)->CredentialSource() ==
            "authorized_user file " +
                home.File(".config/gcloud/application_default_credentials.json") +
                " (the application-default credentials of gcloud)");
    }
    const std::string key = Key().KeyFile("http://127.0.0.1:9/token");
    ScopedEnv gac({{"GOOGLE_APPLICATION_CREDENTIALS", key.c_str()}});
    auto c = CredentialsFromEnvironment(EndpointFromEnvironment());
    REQUIRE(c.ok());
    CHECK((*c)->CredentialSource() ==
          "service_account file " + key + " (GOOGLE_APPLICATION_CREDENTIALS)");
  }
  SUBCASE("CLOUDSDK_CONFIG moves the application-default file") {
    TempDir config;
    testing::WriteFile(config.File("application_default_credentials.json"),
                       R"({"type":"authorized_user","client_id":"c","client_secret":"s",)"
                       R"("refresh_token":"r"})");
    ScopedEnv e({{"CLOUDSDK_CONFIG", config.path().c_str()}});
    auto c = CredentialsFromEnvironment(EndpointFromEnvironment());
    REQUIRE(c.ok());
    CHECK((*c)->CredentialSource().find(config.path()) != std::string::npos);
  }
  SUBCASE("GCE_METADATA_HOST names the metadata server") {
    ScopedEnv e({{"GCE_METADATA_HOST", "127.0.0.1:8"}});
    auto c = CredentialsFromEnvironment(EndpointFromEnvironment());
    REQUIRE(c.ok());
    CHECK((*c)->CredentialSource() ==
          "the metadata server at http://127.0.0.1:8 (GCE_METADATA_HOST)");
  }
  SUBCASE("external_account and others are InvalidArgument naming the type") {
    for (const char* type : {"external_account", "impersonated_service_account", ""}) {
      testing::WriteFile(home.File("other.json"), Json{{"type", type}}.dump());
      ScopedEnv gac({{"GOOGLE_APPLICATION_CREDENTIALS", home.File("other.json").c_str()}});
      auto c = CredentialsFromEnvironment(EndpointFromEnvironment());
      REQUIRE_FALSE(c.ok());
      CHECK(c.status().code() == StatusCode::kInvalidArgument);
      CHECK(c.status().message().find(*type ? type : "has no \"type\"") != std::string::npos);
      CHECK(c.status().message().find(home.File("other.json")) != std::string::npos);
    }
  }
  SUBCASE("a missing or broken file is InvalidArgument naming it") {
    ScopedEnv gac({{"GOOGLE_APPLICATION_CREDENTIALS", home.File("absent.json").c_str()}});
    auto c = CredentialsFromEnvironment(EndpointFromEnvironment());
    REQUIRE_FALSE(c.ok());
    CHECK(c.status().code() == StatusCode::kInvalidArgument);
    CHECK(c.status().message().find("absent.json") != std::string::npos);
    CHECK(c.status().message().find("GOOGLE_APPLICATION_CREDENTIALS") != std::string::npos);
    testing::WriteFile(home.File("sa.json"), R"({"type":"service_account","client_email":"x"})");
    auto d = CredentialsFromFile(home.File("sa.json"), "test");
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().message().find("private_key") != std::string::npos);
  }
}

TEST_CASE("a service-account key's JWT is exchanged at its token_uri, once for all threads") {
  SetQuickRetries();
  Server fake = StartFake();
  TempDir home;
  auto env = CleanEnv(home.path());
  const std::string key = Key().KeyFile(fake.Base() + "/token");
  ScopedEnv gac({{"GOOGLE_APPLICATION_CREDENTIALS", key.c_str()}});
  // The fake's storage routes take any bucket; its gs:// URLs use its host.
  ScopedEnv emu({{"STORAGE_EMULATOR_HOST", nullptr}});
  auto credentials = CredentialsFromEnvironment(EndpointFromEnvironment());
  REQUIRE(credentials.ok());
  std::vector<std::thread> threads;
  std::atomic<int> good{0};
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&] {
      auto header = (*credentials)->Header();
      if (header.ok() && *header == "Bearer ya29.sa-1") ++good;
    });
  }
  for (auto& t : threads) t.join();
  CHECK(good == 8);
  const Json stats = FakeStats(fake);
  CHECK(stats["token_requests"] == 1);
  const std::string assertion = stats["last_assertion"];
  CHECK(Key().Verifies(assertion));
  const Json claims = Json::parse(Base64UrlDecode(SplitJwt(assertion)[1]));
  CHECK(claims["aud"] == fake.Base() + "/token");
}

TEST_CASE("a token is fetched again once it is about to expire") {
  SetQuickRetries();
  Server fake = StartFake({"--lifetime", "0"});
  TempDir home;
  auto env = CleanEnv(home.path());
  ScopedEnv md({{"GCE_METADATA_HOST", fake.Base().c_str()}});
  auto credentials = CredentialsFromEnvironment(EndpointFromEnvironment());
  REQUIRE(credentials.ok());
  CHECK(*(*credentials)->Header() == "Bearer ya29.md-1");
  CHECK(*(*credentials)->Header() == "Bearer ya29.md-2");
  CHECK(FakeStats(fake)["token_requests"] == 2);
}

TEST_CASE("an authorized_user refresh token is exchanged; a bad one names the file, not it") {
  SetQuickRetries();
  Server fake = StartFake();
  TempDir home;
  auto env = CleanEnv(home.path());
  TempDir config;
  ScopedEnv e({{"CLOUDSDK_CONFIG", config.path().c_str()}});
  const std::string adc = config.File("application_default_credentials.json");
  testing::WriteFile(adc, Json{{"type", "authorized_user"},
                               {"client_id", "test-client"},
                               {"client_secret", "test-secret"},
                               {"refresh_token", "test-refresh-token"},
                               {"token_uri", fake.Base() + "/token"}}
                              .dump());
  {
    auto credentials = CredentialsFromEnvironment(EndpointFromEnvironment());
    REQUIRE(credentials.ok());
    CHECK(*(*credentials)->Header() == "Bearer ya29.user-1");
  }
  testing::WriteFile(adc, Json{{"type", "authorized_user"},
                               {"client_id", "test-client"},
                               {"client_secret", "test-secret"},
                               {"refresh_token", "REVOKED-REFRESH-SECRET"},
                               {"token_uri", fake.Base() + "/token"}}
                              .dump());
  auto credentials = CredentialsFromEnvironment(EndpointFromEnvironment());
  REQUIRE(credentials.ok());
  auto header = (*credentials)->Header();
  REQUIRE_FALSE(header.ok());
  const std::string message = header.status().ToString();
  INFO(message);
  CHECK(message.find("invalid_grant") != std::string::npos);
  CHECK(message.find(fake.Base() + "/token") != std::string::npos);
  CHECK(message.find("REVOKED-REFRESH-SECRET") == std::string::npos);
  CHECK(message.find("test-secret") == std::string::npos);
}

TEST_CASE("the metadata server at GCE_METADATA_HOST gives tokens with Metadata-Flavor") {
  SetQuickRetries();
  Server fake = StartFake();
  TempDir home;
  auto env = CleanEnv(home.path());
  ScopedEnv md({{"GCE_METADATA_HOST", ("127.0.0.1:" + std::to_string(fake.port())).c_str()}});
  auto credentials = CredentialsFromEnvironment(EndpointFromEnvironment());
  REQUIRE(credentials.ok());
  CHECK(*(*credentials)->Header() == "Bearer ya29.md-1");
}

// The store against the fake: its storage routes stand in for Cloud Storage
// (through STORAGE_EMULATOR_HOST, which also turns tokens off: these tests
// are about the API's answers, the ones above about tokens).
struct FakeStore {
  Server fake = StartFake({"--anonymous-ok"});
  TempDir home;
  ScopedEnv env = CleanEnv(home.path());
  ScopedEnv emu{{"STORAGE_EMULATOR_HOST", fake.Base().c_str()}};
  std::unique_ptr<Storage> store = NewStore(StoreOptions{});
};

TEST_CASE("what the emulator lacks, against the fake: 412, 416, a missing bucket") {
  SetQuickRetries();
  FakeStore f;
  auto info = f.store->Stat("gs://bkt/obj");
  REQUIRE(info.ok());
  CHECK(info->size == 100);
  CHECK(info->version == "5");
  auto object = f.store->Open(*info);
  REQUIRE(object.ok());
  std::string bytes(10, '\0');
  REQUIRE((*object)->ReadAt(90, bytes).ok());
  CHECK(bytes[0] == char(90));

  SUBCASE("a replaced object: 412 to ifGenerationMatch is DataLoss") {
    Post(f.fake.Base() + "/replace", "");
    const Status read = (*object)->ReadAt(0, bytes);
    CHECK(read.code() == StatusCode::kDataLoss);
    CHECK(read.message().find("gs://bkt/obj") != std::string::npos);
    CHECK(read.message().find("generation 5") != std::string::npos);
  }
  SUBCASE("a range that starts past the end: 416 is OutOfRange") {
    ObjectInfo stale = *info;  // a listing that saw a longer object
    stale.size = 200;
    auto longer = f.store->Open(stale);
    REQUIRE(longer.ok());
    const Status read = (*longer)->ReadAt(150, bytes);
    CHECK(read.code() == StatusCode::kOutOfRange);
  }
  SUBCASE("a read past the generation's end needs no request") {
    const int before = FakeStats(f.fake)["storage_requests"];
    CHECK((*object)->ReadAt(95, bytes).code() == StatusCode::kOutOfRange);
    CHECK(FakeStats(f.fake)["storage_requests"] == before);
  }
  SUBCASE("a missing bucket is NotFound (real Cloud Storage 404s; the emulator would not)") {
    const Status list = f.store->List("gs://missing/", [](auto) { return Status::OK(); });
    CHECK(list.code() == StatusCode::kNotFound);
    CHECK(list.message().find("The specified bucket does not exist.") != std::string::npos);
  }
}

TEST_CASE("the store signs its requests with the token; 401 and 403 name the source") {
  SetQuickRetries();
  Server fake = StartFake();
  TempDir home;
  auto env = CleanEnv(home.path());
  SUBCASE("a service-account key") {
    const std::string key = Key().KeyFile(fake.Base() + "/token");
    ScopedEnv gac({{"GOOGLE_APPLICATION_CREDENTIALS", key.c_str()}});
    auto store = NewStore(StoreOptions{.endpoint_for_testing = fake.Base()});
    auto info = store->Stat("gs://bkt/obj");
    REQUIRE(info.ok());
    CHECK(FakeStats(fake)["last_authorization"] == "Bearer ya29.sa-1");
    auto object = store->Open(*info);
    REQUIRE(object.ok());
    std::string bytes(100, '\0');
    REQUIRE((*object)->ReadAt(0, bytes).ok());
    CHECK(bytes[99] == char(99));
    CHECK(FakeStats(fake)["token_requests"] == 1);
    const Status denied = store->List("gs://private/", [](auto) { return Status::OK(); });
    CHECK(denied.code() == StatusCode::kPermissionDenied);
    CHECK(denied.message().find(key) != std::string::npos);
    CHECK(denied.message().find("forbidden") != std::string::npos);
  }
  SUBCASE("anonymous: no Authorization header, and a 401 says so") {
    auto store = NewStore(StoreOptions{.endpoint_for_testing = fake.Base()});
    auto info = store->Stat("gs://bkt/obj");
    REQUIRE_FALSE(info.ok());
    INFO(info.status().ToString());
    CHECK(info.status().code() == StatusCode::kPermissionDenied);
    CHECK(info.status().message().find("anonymous") != std::string::npos);
    CHECK(FakeStats(fake)["last_authorization"] == "");
  }
  SUBCASE("a bad credentials file is each call's error, naming it") {
    ScopedEnv gac({{"GOOGLE_APPLICATION_CREDENTIALS", home.File("absent.json").c_str()}});
    auto store = NewStore(StoreOptions{.endpoint_for_testing = fake.Base()});
    auto info = store->Stat("gs://bkt/obj");
    CHECK(info.status().code() == StatusCode::kInvalidArgument);
    CHECK(info.status().message().find("absent.json") != std::string::npos);
    CHECK(FakeStats(fake)["storage_requests"] == 0);
  }
}

TEST_CASE("no server: Unavailable naming the URL once the attempts are spent") {
  RemoteOptions options;
  options.max_attempts = 2;
  options.max_seconds = 30;
  SetRemoteOptions(options);
  TempDir home;
  auto env = CleanEnv(home.path());
  const std::string nowhere = fmt::format("http://127.0.0.1:{}", testing::ClosedPort());
  auto store = NewStore(StoreOptions{.endpoint_for_testing = nowhere});
  auto info = store->Stat("gs://bkt/obj");
  INFO(info.status().ToString());
  CHECK(info.status().code() == StatusCode::kUnavailable);
  CHECK(info.status().message().find("gs://bkt/obj") != std::string::npos);
  CHECK(info.status().message().find("2 attempts") != std::string::npos);
}

// ---- Against the firebase-tools storage emulator ----

bool EmulatorInstalled() {
  return std::filesystem::exists("tests/servers/node_modules/firebase-tools/lib/emulator/storage");
}

struct Emulator {
  TempDir tmp;
  Server server{{"node", "tests/servers/gcs-emu.js"},
                {{"TMPDIR", tmp.path()}, {"GCS_EMU_PORT", "0"}}};
  TempDir home;
  ScopedEnv env = CleanEnv(home.path());
  ScopedEnv emu{{"STORAGE_EMULATOR_HOST", ("127.0.0.1:" + std::to_string(server.port())).c_str()}};

  // Uploads `data` as gs://BUCKET/NAME; returns its generation.
  std::string Put(const std::string& bucket, const std::string& name, const std::string& data) {
    Unsigned store;
    http::Request request;
    request.method = "POST";
    request.url = fmt::format("{}/upload/storage/v1/b/{}/o?uploadType=media&name={}", server.Base(),
                              bucket, http::UriEncode(name, false));
    request.shown = request.url;
    request.body = data;
    request.headers.emplace_back("Content-Type", "application/octet-stream");
    auto response = http::Client::Get().Fetch(store, request);
    INFO(name, ": ", response.status().ToString());
    REQUIRE(response.ok());
    return Json::parse(response->body)["generation"];
  }
};

std::string RandomBytes(size_t size, uint32_t seed) {
  std::mt19937 random(seed);
  std::string out(size, '\0');
  for (char& c : out) c = char(random());
  return out;
}

TEST_CASE("against the emulator: pages, stat, exact ranges, odd names, replacement, 404") {
  if (!EmulatorInstalled()) {
    MESSAGE("SKIPPED: firebase-tools is not installed in tests/servers (tools/setup --servers)");
    return;
  }
  SetQuickRetries();
  Emulator emu;
  auto store = NewStore(StoreOptions{.page_size = 3, .endpoint_for_testing = ""});

  SUBCASE("a listing of 8 objects by pages of 3, in name order, with sizes and generations") {
    std::map<std::string, std::pair<uint64_t, std::string>> want;
    for (int i = 0; i < 8; ++i) {
      const std::string name = fmt::format("pages/part-{:02}", i);
      const std::string generation = emu.Put("bkt", name, std::string(i * 10, 'x'));
      want["gs://bkt/" + name] = {i * 10, generation};
    }
    emu.Put("bkt", "pagesX", "not under pages/");
    emu.Put("bkt", "other/y", "y");
    std::vector<ObjectInfo> seen;
    int pages = 0;
    REQUIRE(store
                ->List("gs://bkt/pages/",
                       [&](std::span<const ObjectInfo> page) {
                         ++pages;
                         CHECK(page.size() <= 3);
                         seen.insert(seen.end(), page.begin(), page.end());
                         return Status::OK();
                       })
                .ok());
    CHECK(pages == 3);
    REQUIRE(seen.size() == 8);
    for (size_t i = 0; i < seen.size(); ++i) {
      CHECK(seen[i].name == fmt::format("gs://bkt/pages/part-{:02}", i));
      CHECK(seen[i].size == want[seen[i].name].first);
      CHECK(seen[i].version == want[seen[i].name].second);
    }
    // An error from the page callback stops the listing.
    int calls = 0;
    const Status stopped = store->List("gs://bkt/pages/", [&](auto) {
      ++calls;
      return Status::Cancelled("enough");
    });
    CHECK(stopped.code() == StatusCode::kCancelled);
    CHECK(calls == 1);
  }

  SUBCASE("ranged reads give the exact bytes, synchronous and asynchronous") {
    const std::string data = RandomBytes(300000, 7);
    const std::string generation = emu.Put("bkt", "big/blob.bin", data);
    auto info = store->Stat("gs://bkt/big/blob.bin");
    REQUIRE(info.ok());
    CHECK(info->name == "gs://bkt/big/blob.bin");
    CHECK(info->size == data.size());
    CHECK(info->version == generation);
    auto object = store->Open(*info);
    REQUIRE(object.ok());
    for (auto [offset, size] : std::vector<std::pair<size_t, size_t>>{
             {0, 1}, {0, 300000}, {12345, 1000}, {299999, 1}, {150000, 150000}}) {
      std::string got(size, '\0');
      REQUIRE((*object)->ReadAt(offset, got).ok());
      CHECK(got == data.substr(offset, size));
    }
    std::vector<std::string> parts(6, std::string(50000, '\0'));
    std::mutex mutex;
    std::condition_variable cv;
    int done = 0;
    std::vector<Status> results(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      (*object)->ReadAtAsync(i * 50000, parts[i], [&, i](Status s) {
        std::lock_guard lock(mutex);
        results[i] = std::move(s);
        ++done;
        cv.notify_all();
      });
    }
    std::unique_lock lock(mutex);
    cv.wait(lock, [&] { return done == int(parts.size()); });
    for (size_t i = 0; i < parts.size(); ++i) {
      CHECK(results[i].ok());
      CHECK(parts[i] == data.substr(i * 50000, 50000));
    }
    std::string past(10, '\0');
    CHECK((*object)->ReadAt(299995, past).code() == StatusCode::kOutOfRange);
  }

  SUBCASE("names with '/', '+', '%', '#', '?', spaces and unicode") {
    const std::vector<std::string> names = {"odd/sp ace/x y.txt", "odd/plus+sign.txt",
                                            "odd/pct%41.txt",     "odd/q?hash#.txt",
                                            "odd/ünï/çødé.txt",   "odd/a//double.txt"};
    for (const std::string& name : names) emu.Put("bkt", name, "content of " + name);
    std::vector<std::string> listed;
    REQUIRE(store
                ->List("gs://bkt/odd/",
                       [&](std::span<const ObjectInfo> page) {
                         for (const ObjectInfo& o : page) listed.push_back(o.name);
                         return Status::OK();
                       })
                .ok());
    std::vector<std::string> want;
    for (const std::string& name : names) want.push_back("gs://bkt/" + name);
    std::sort(want.begin(), want.end());
    CHECK(listed == want);
    for (const std::string& name : names) {
      auto info = store->Stat("gs://bkt/" + name);
      REQUIRE(info.ok());
      auto object = store->Open(*info);
      REQUIRE(object.ok());
      std::string got(info->size, '\0');
      REQUIRE((*object)->ReadAt(0, got).ok());
      CHECK(got == "content of " + name);
    }
    // A listing by a prefix with the odd characters itself.
    int matched = 0;
    REQUIRE(store
                ->List("gs://bkt/odd/q?hash#",
                       [&](auto page) {
                         matched += int(page.size());
                         return Status::OK();
                       })
                .ok());
    CHECK(matched == 1);
  }

  SUBCASE("an object replaced between two reads is DataLoss naming both generations") {
    const std::string first = emu.Put("bkt", "replaced.bin", RandomBytes(1000, 1));
    auto info = store->Stat("gs://bkt/replaced.bin");
    REQUIRE(info.ok());
    auto object = store->Open(*info);
    REQUIRE(object.ok());
    std::string got(100, '\0');
    REQUIRE((*object)->ReadAt(0, got).ok());
    std::string second;
    do {
      second = emu.Put("bkt", "replaced.bin", RandomBytes(1000, 2));
    } while (second == first);  // generations are milliseconds
    const Status read = (*object)->ReadAt(100, got);
    INFO(read.ToString());
    CHECK(read.code() == StatusCode::kDataLoss);
    CHECK(read.message().find("gs://bkt/replaced.bin") != std::string::npos);
    CHECK(read.message().find(first) != std::string::npos);
    CHECK(read.message().find(second) != std::string::npos);
  }

  SUBCASE("a missing object is NotFound with the emulator's message and the URL") {
    auto info = store->Stat("gs://bkt/nope/missing.txt");
    REQUIRE_FALSE(info.ok());
    CHECK(info.status().code() == StatusCode::kNotFound);
    CHECK(info.status().message().find("gs://bkt/nope/missing.txt") != std::string::npos);
    CHECK(info.status().message().find("No such object") != std::string::npos);
    // A download's 404 is the emulator's text/html body.
    ObjectInfo gone{"gs://bkt/nope/gone.bin", 10, "1"};
    auto object = store->Open(gone);
    REQUIRE(object.ok());
    std::string got(5, '\0');
    const Status read = (*object)->ReadAt(0, got);
    CHECK(read.code() == StatusCode::kNotFound);
    CHECK(read.message().find("No such object: bkt/nope/gone.bin") != std::string::npos);
  }

  SUBCASE("a bucket never written lists empty: the emulator answers 200 where Cloud Storage 404s") {
    // Real Cloud Storage's 404 for a missing bucket is tested against the
    // fake above; this pins the emulator's difference so that it is known.
    int objects = 0;
    REQUIRE(store
                ->List("gs://never-made/",
                       [&](auto page) {
                         objects += int(page.size());
                         return Status::OK();
                       })
                .ok());
    CHECK(objects == 0);
  }
}

TEST_CASE("against the emulator through the fault proxy: retried, resumed, exact bytes") {
  if (!EmulatorInstalled()) {
    MESSAGE("SKIPPED: firebase-tools is not installed in tests/servers (tools/setup --servers)");
    return;
  }
  RemoteOptions options;
  options.max_attempts = 6;
  options.max_seconds = 120;
  SetRemoteOptions(options);
  Emulator emu;
  const std::string data = RandomBytes(400000, 11);
  for (int i = 0; i < 5; ++i) emu.Put("bkt", fmt::format("faults/part-{}", i), data);
  // 503s and 429s before listings and stats, connections cut mid-body and a
  // range ignored (200 and the whole object) on the downloads.
  Server proxy(
      {"python3", "tests/remote/fault_proxy.py", "--fault", "kind=503&count=3&match=/o%3F",
       "--fault", "kind=429&count=2&match=/o%3F", "--fault", "kind=503&count=2&match=fields=name",
       "--fault", "kind=cut&after=70000&count=3&ranged=1", "--fault",
       "kind=norange&count=1&ranged=1&skip=1", emu.server.Base()},
      {});
  ScopedEnv through({{"STORAGE_EMULATOR_HOST", proxy.Base().c_str()}});
  auto store = NewStore(StoreOptions{.page_size = 2, .endpoint_for_testing = ""});
  std::vector<ObjectInfo> listed;
  REQUIRE(store
              ->List("gs://bkt/faults/",
                     [&](std::span<const ObjectInfo> page) {
                       listed.insert(listed.end(), page.begin(), page.end());
                       return Status::OK();
                     })
              .ok());
  REQUIRE(listed.size() == 5);
  auto info = store->Stat("gs://bkt/faults/part-3");
  REQUIRE(info.ok());
  CHECK(info->version == listed[3].version);
  for (const ObjectInfo& o : listed) {
    auto object = store->Open(o);
    REQUIRE(object.ok());
    std::string got(data.size() - 1000, '\0');
    const Status read = (*object)->ReadAt(1000, got);
    INFO(o.name, ": ", read.ToString());
    REQUIRE(read.ok());
    CHECK(got == data.substr(1000));
  }
  const Json stats = Json::parse(testing::GetText(proxy.port(), "/__stats__"));
  INFO(stats.dump());
  CHECK(stats["by_kind"]["503"] == 5);
  CHECK(stats["by_kind"]["429"] == 2);
  CHECK(stats["by_kind"]["cut"] == 3);
  CHECK(stats["by_kind"]["norange"] == 1);
}

}  // namespace
}  // namespace tfdist::io::gcs
