// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The S3 store's parts without a server: Signature Version 4 against two
// independent signers (curl --aws-sigv4, and botocore from Debian's
// python3-botocore), the credential chain in temporary files, region,
// endpoint and addressing, and S3's XML.

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "io/storage_s3_test_util.h"
#include "storage_s3_internal.h"
#include "test_util.h"

namespace tfdist::io::s3 {
namespace {

using Vars = std::map<std::string, std::string>;

Environment EnvOf(Vars vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

// The standard output of shell `command`, and its exit status.
std::pair<std::string, int> Run(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::string Quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// A server on 127.0.0.1 that answers each request 200 and keeps its headers:
// what curl sent, signature included.
class RecordingServer {
 public:
  RecordingServer() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    REQUIRE(listen(fd_, 8) == 0);
    socklen_t len = sizeof addr;
    REQUIRE(getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
    port_ = ntohs(addr.sin_port);
  }
  ~RecordingServer() { close(fd_); }

  int port() const { return port_; }

  // Serves one request on a thread while `client` runs; returns the
  // request's head (request line and headers).
  std::string Record(const std::function<void()>& client) {
    std::string head;
    std::thread server([&] {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      char buffer[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = read(c, buffer, sizeof buffer);
        if (n <= 0) break;
        head.append(buffer, static_cast<size_t>(n));
      }
      const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!write(c, reply.data(), reply.size());
      close(c);
    });
    client();
    server.join();
    return head;
  }

 private:
  int fd_ = -1;
  int port_ = 0;
};

std::string HeaderOf(const std::string& head, std::string_view name) {
  size_t at = 0;
  while ((at = head.find("\r\n", at)) != std::string::npos) {
    at += 2;
    const size_t colon = head.find(':', at);
    if (colon == std::string::npos) break;
    std::string key = head.substr(at, colon - at);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (key == name) {
      const size_t eol = head.find("\r\n", colon);
      return head.substr(colon + 2, eol - colon - 2);
    }
  }
  return "";
}

std::string AuthorizationOf(const http::Request& r) {
  for (const auto& [name, value] : r.headers) {
    if (name == "Authorization") return value;
  }
  return "";
}

struct SignCase {
  std::string name;
  std::string method;
  std::string key;           // an object key, encoded into the URL by ObjectUrl
  std::string query_ours;    // as tfdist would write it (any order)
  std::string query_sorted;  // the same, sorted: curl 7.88 signs the query as given
  std::string region;
  Credentials credentials;
};

const std::vector<SignCase>& SignCases() {
  static const std::vector<SignCase> cases = {
      {"a plain GET",
       "GET",
       "train/part-00000.tfrecord",
       "",
       "",
       "us-east-1",
       {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "", std::nullopt}},
      {"a key with spaces, unicode, + and reserved characters",
       "GET",
       "dir with space/\xc3\xbcnicode+plus=eq&amp~tilde!(x)*'.rec",
       "",
       "",
       "eu-west-1",
       {"AKIDEXAMPLE", "secret+/key", "", std::nullopt}},
      {"a listing with several query parameters out of order",
       "GET",
       "",
       "prefix=train%2Fa%20b%2B&list-type=2&max-keys=3&encoding-type=url&"
       "continuation-token=1%2Fab%2Bc%3D%3D",
       "continuation-token=1%2Fab%2Bc%3D%3D&encoding-type=url&list-type=2&max-keys=3&"
       "prefix=train%2Fa%20b%2B",
       "us-west-2",
       {"AKID2", "s3kr1t", "", std::nullopt}},
      {"a HEAD with a session token",
       "HEAD",
       "x/y.tfrecord.gz",
       "",
       "",
       "ap-southeast-1",
       {"ASIATEMP", "tempsecret", "FQoGZXIvYXdzE+session/token==", std::nullopt}},
  };
  return cases;
}

Config LocalConfig(int port) {
  Config c;
  c.region = "us-east-1";
  c.endpoint = Endpoint{"http", fmt::format("127.0.0.1:{}", port), "", true, "test"};
  return c;
}

constexpr const char* kDate = "20130524T000000Z";

TEST_CASE("SigV4 signs as curl --aws-sigv4 does, byte for byte") {
  RecordingServer server;
  for (const SignCase& sc : SignCases()) {
    CAPTURE(sc.name);
    const Config config = LocalConfig(server.port());
    http::Request ours;
    ours.method = sc.method;
    ours.url = ObjectUrl(config, "bucket", sc.key, sc.query_ours);
    REQUIRE(SignV4(ours, sc.credentials, sc.region, kDate).ok());
    const std::string curl_url = ObjectUrl(config, "bucket", sc.key, sc.query_sorted);
    std::string command =
        fmt::format("curl -s -o /dev/null {} --aws-sigv4 {} --user {} -H {} -H {}",
                    sc.method == "HEAD" ? "-I" : "", Quote("aws:amz:" + sc.region + ":s3"),
                    Quote(sc.credentials.access_key_id + ":" + sc.credentials.secret_access_key),
                    Quote(std::string("x-amz-date: ") + kDate),
                    Quote("x-amz-content-sha256: " + Sha256Hex("")));
    if (!sc.credentials.session_token.empty()) {
      command += " -H " + Quote("x-amz-security-token: " + sc.credentials.session_token);
    }
    command += " " + Quote(curl_url);
    const std::string head = server.Record([&] { Run(command); });
    CAPTURE(head);
    REQUIRE(head.starts_with(sc.method + " "));
    CHECK(HeaderOf(head, "authorization") == AuthorizationOf(ours));
    CHECK(HeaderOf(head, "x-amz-date") == kDate);
  }
}

// botocore's S3SigV4Auth, from Debian's python3-botocore (tools/setup
// installs it): prints the Authorization of a GET or HEAD of `url`.
constexpr const char* kBotocoreSigner = R"PY(
import datetime, sys, types
import botocore.auth as auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
method, url, region, key, secret, token, date = sys.argv[1:8]
fixed = datetime.datetime.strptime(date, '%Y%m%dT%H%M%SZ')
class Fixed(datetime.datetime):
    @classmethod
    def utcnow(cls):
        return fixed
auth.datetime = types.SimpleNamespace(datetime=Fixed)  # botocore 1.29 (Debian 12)
auth.get_current_datetime = lambda: fixed  # later botocores
request = AWSRequest(method=method, url=url, headers={})
auth.S3SigV4Auth(Credentials(key, secret, token or None), 's3', region).add_auth(request)
print(request.headers['Authorization'], end='')
)PY";

TEST_CASE("SigV4 signs as botocore does, query order included") {
  // Debian's botocore is the system Python's; another python3 first in PATH
  // (a virtual environment) may not have it.
  const std::string python = access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
  const auto [version, rc] = Run(python + " -c 'import botocore; print(botocore.__version__)'");
  INFO("botocore is needed: apt-get install python3-botocore (tools/setup installs it)");
  REQUIRE(rc == 0);
  for (const SignCase& sc : SignCases()) {
    CAPTURE(sc.name);
    const Config config = LocalConfig(8000);
    http::Request ours;
    ours.method = sc.method;
    ours.url = ObjectUrl(config, "bucket", sc.key, sc.query_ours);
    REQUIRE(SignV4(ours, sc.credentials, sc.region, kDate).ok());
    const auto [theirs, status] = Run(fmt::format(
        "{} -c {} {} {} {} {} {} {} {}", python, Quote(kBotocoreSigner), sc.method, Quote(ours.url),
        sc.region, Quote(sc.credentials.access_key_id), Quote(sc.credentials.secret_access_key),
        Quote(sc.credentials.session_token), kDate));
    REQUIRE(status == 0);
    CHECK(theirs == AuthorizationOf(ours));
  }
}

TEST_CASE("SigV4 replaces an earlier signature when a request is signed again") {
  http::Request r;
  r.url = "https://b.s3.us-east-1.amazonaws.com/k";
  const Credentials c{"AKID", "SECRET", "TOKEN", std::nullopt};
  REQUIRE(SignV4(r, c, "us-east-1", "20260101T000000Z").ok());
  const std::string first = AuthorizationOf(r);
  REQUIRE(SignV4(r, c, "us-east-1", "20260101T000001Z").ok());
  CHECK(r.headers.size() == 4);  // x-amz-date, -content-sha256, -security-token, Authorization
  CHECK(AuthorizationOf(r) != first);
  CHECK(AuthorizationOf(r).find("SECRET") == std::string::npos);
  http::Request bad;
  bad.url = "no-scheme/k";
  CHECK(SignV4(bad, c, "us-east-1", "20260101T000000Z").code() == StatusCode::kInvalidArgument);
}

// ---- Configuration ----------------------------------------------------------

TEST_CASE("The shared files are read as the AWS CLI reads them") {
  const IniSections s = ParseIni(
      "# comment\n[default]\nregion = eu-west-1 ; a comment\n"
      "aws_access_key_id=AKID\n\n[profile ci]\ns3 =\n  addressing_style = path\n"
      "  endpoint_url = http://minio:9000\nregion=us-west-2\n; other\n[ odd ]\nk = a#b\n");
  CHECK(s.at("default").at("region") == "eu-west-1");
  CHECK(s.at("default").at("aws_access_key_id") == "AKID");
  CHECK(s.at("profile ci").at("s3.addressing_style") == "path");
  CHECK(s.at("profile ci").at("s3.endpoint_url") == "http://minio:9000");
  CHECK(s.at("profile ci").at("region") == "us-west-2");
  CHECK(s.at("odd").at("k") == "a#b");
}

struct Home {
  testing::TempDir dir;
  Home(const std::string& credentials, const std::string& config) {
    std::filesystem::create_directories(dir.File(".aws"));
    if (!credentials.empty()) testing::WriteFile(dir.File(".aws/credentials"), credentials);
    if (!config.empty()) testing::WriteFile(dir.File(".aws/config"), config);
  }
  // No test may ask 169.254.169.254.
  Vars With(Vars vars) const {
    vars["HOME"] = dir.path();
    vars.emplace("AWS_EC2_METADATA_DISABLED", "true");
    return vars;
  }
};

struct Resolved {
  Status status;
  std::string source;
  std::optional<Credentials> credentials;
};

Resolved Resolve(const Vars& vars, bool no_sign = false) {
  const Environment env = EnvOf(vars);
  Result<Profile> profile = LoadProfile(env);
  if (!profile.ok()) return {profile.status(), "", std::nullopt};
  Result<Config> config = LoadConfig(env, *profile);
  if (!config.ok()) return {config.status(), "", std::nullopt};
  auto provider = ResolveCredentials(env, *profile, *config, no_sign);
  if (!provider.ok()) return {provider.status(), "", std::nullopt};
  Result<std::optional<Credentials>> c = (*provider)->Get();
  if (!c.ok()) return {c.status(), (*provider)->Source(), std::nullopt};
  return {Status::OK(), (*provider)->Source(), *c};
}

TEST_CASE("The credential chain: --no-sign-request, then the environment, then the profile") {
  const Home home(
      "[default]\naws_access_key_id = FILEKEY\naws_secret_access_key = FILESECRET\n"
      "[ci]\naws_access_key_id = CIKEY\naws_secret_access_key = CISECRET\n"
      "aws_session_token = CITOKEN\n",
      "[profile cfg]\naws_access_key_id = CFGKEY\naws_secret_access_key = CFGSECRET\n"
      "region = eu-central-1\n");
  const Vars env_keys = {{"AWS_ACCESS_KEY_ID", "ENVKEY"}, {"AWS_SECRET_ACCESS_KEY", "ENVSECRET"}};

  Resolved r = Resolve(home.With(env_keys), true);
  REQUIRE(r.status.ok());
  CHECK(!r.credentials);
  CHECK(r.source == "anonymous (unsigned requests, as asked)");

  r = Resolve(home.With(env_keys));
  REQUIRE(r.status.ok());
  CHECK(r.credentials->access_key_id == "ENVKEY");
  CHECK(r.source == "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)");

  Vars with_token = env_keys;
  with_token["AWS_SESSION_TOKEN"] = "ENVTOKEN";
  r = Resolve(home.With(with_token));
  CHECK(r.credentials->session_token == "ENVTOKEN");
  CHECK(r.source.find("AWS_SESSION_TOKEN") != std::string::npos);

  r = Resolve(home.With({}));
  REQUIRE(r.status.ok());
  CHECK(r.credentials->access_key_id == "FILEKEY");
  CHECK(r.source == fmt::format("profile 'default' of {}", home.dir.File(".aws/credentials")));

  r = Resolve(home.With({{"AWS_PROFILE", "ci"}}));
  REQUIRE(r.status.ok());
  CHECK(r.credentials->session_token == "CITOKEN");
  CHECK(r.source == fmt::format("profile 'ci' of {}", home.dir.File(".aws/credentials")));

  r = Resolve(home.With({{"AWS_PROFILE", "cfg"}}));
  REQUIRE(r.status.ok());
  CHECK(r.credentials->access_key_id == "CFGKEY");
  CHECK(r.source == fmt::format("profile 'cfg' of {}", home.dir.File(".aws/config")));

  // The variables move the files.
  testing::TempDir other;
  testing::WriteFile(other.File("creds"),
                     "[x]\naws_access_key_id = XKEY\naws_secret_access_key = XSECRET\n");
  r = Resolve(
      home.With({{"AWS_SHARED_CREDENTIALS_FILE", other.File("creds")}, {"AWS_PROFILE", "x"}}));
  REQUIRE(r.status.ok());
  CHECK(r.credentials->access_key_id == "XKEY");
  CHECK(r.source == fmt::format("profile 'x' of {}", other.File("creds")));

  for (const Resolved& any : {Resolve(home.With(env_keys)), Resolve(home.With({}))}) {
    CHECK(any.source.find("ENVSECRET") == std::string::npos);
    CHECK(any.source.find("FILESECRET") == std::string::npos);
  }
}

TEST_CASE("A credential setting tfdist cannot use is a clear error, never a value") {
  const Home home(
      "[half]\naws_access_key_id = HALFKEY\n",
      "[profile sso]\nsso_session = corp\nsso_account_id = 1\n"
      "[profile chain]\nrole_arn = arn:aws:iam::1:role/r\nsource_profile = base\n"
      "[profile ec2]\nrole_arn = arn:aws:iam::1:role/r\ncredential_source = Ec2InstanceMetadata\n"
      "[profile empty]\nregion = us-east-1\n");
  struct Case {
    Vars vars;
    std::vector<std::string> says;
  };
  const std::vector<Case> cases = {
      {{{"AWS_PROFILE", "sso"}}, {"profile 'sso'", "SSO", "sso_session", "export-credentials"}},
      {{{"AWS_PROFILE", "chain"}}, {"profile 'chain'", "assume-role", "source_profile"}},
      {{{"AWS_PROFILE", "ec2"}}, {"profile 'ec2'", "credential_source"}},
      {{{"AWS_PROFILE", "half"}}, {"profile 'half'", "aws_secret_access_key"}},
      {{{"AWS_PROFILE", "empty"}}, {"profile 'empty'", "has no credentials"}},
      {{{"AWS_PROFILE", "nowhere"}}, {"'nowhere'", "AWS_PROFILE", "neither"}},
      {{{"AWS_ACCESS_KEY_ID", "ONLYKEY"}}, {"AWS_SECRET_ACCESS_KEY is not"}},
      {{{"AWS_SECRET_ACCESS_KEY", "ONLYSECRET"}}, {"AWS_ACCESS_KEY_ID is not"}},
      {{{"AWS_ROLE_ARN", "arn:aws:iam::1:role/r"}},
       {"no AWS credentials found", "AWS_ROLE_ARN is set without"}},
      {{}, {"no AWS credentials found", "profile 'default'"}},
  };
  for (const Case& c : cases) {
    const Resolved r = Resolve(home.With(c.vars));
    CAPTURE(r.status.message());
    CHECK(r.status.code() == StatusCode::kInvalidArgument);
    for (const std::string& part : c.says)
      CHECK(r.status.message().find(part) != std::string::npos);
    // With none at all, the advice is unsigned requests (a public bucket).
    if (r.status.message().starts_with("no AWS credentials found")) {
      CHECK(r.status.advice().remedy == Remedy::kNoSignRequest);
    }
    CHECK(r.status.message().find("ONLYSECRET") == std::string::npos);
    CHECK(r.status.message().find("HALFKEY") == std::string::npos);
  }
}

TEST_CASE("credential_process: its JSON, its expiration, its failures") {
  testing::TempDir dir;
  const std::string counter = dir.File("runs");
  // Each run appends a line to `runs`, then prints credentials that expire
  // in `minutes`.
  auto script = [&](const std::string& name, const std::string& body) {
    testing::WriteFile(dir.File(name), "#!/bin/sh\necho run >> " + counter + "\n" + body);
    std::filesystem::permissions(dir.File(name), std::filesystem::perms::owner_all);
    return dir.File(name);
  };
  auto expiring = [&](int minutes) {
    const std::time_t t = std::time(nullptr) + minutes * 60;
    char when[32];
    std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    return std::string(when);
  };
  const std::string soon = script(
      "soon", fmt::format("echo '{{\"Version\": 1, \"AccessKeyId\": \"PKEY\", \"SecretAccessKey\": "
                          "\"PSECRET\", \"SessionToken\": \"PTOKEN\", \"Expiration\": \"{}\"}}'\n",
                          expiring(2)));
  const std::string later =
      script("later",
             fmt::format("echo '{{\"Version\": 1, \"AccessKeyId\": \"LKEY\", \"SecretAccessKey\": "
                         "\"LSECRET\", \"Expiration\": \"{}\"}}'\n",
                         expiring(60)));
  const Home home("", fmt::format("[profile soon]\ncredential_process = {}\n"
                                  "[profile later]\ncredential_process = {} --with args\n",
                                  soon, later));
  for (const std::string profile : {"soon", "later"}) {
    CAPTURE(profile);
    std::filesystem::remove(counter);
    const Environment env = EnvOf(home.With({{"AWS_PROFILE", profile}}));
    Result<Profile> p = LoadProfile(env);
    Result<Config> config = LoadConfig(env, *p);
    auto provider = ResolveCredentials(env, *p, *config, false);
    REQUIRE(provider.ok());
    CHECK((*provider)->Source() == fmt::format("credential_process of profile '{}' ({} and {})",
                                               profile, home.dir.File(".aws/credentials"),
                                               home.dir.File(".aws/config")));
    for (int i = 0; i < 3; ++i) {
      Result<std::optional<Credentials>> c = (*provider)->Get();
      REQUIRE(c.ok());
      CHECK((*c)->access_key_id == (profile == "soon" ? "PKEY" : "LKEY"));
      CHECK((*c)->expiration.has_value());
    }
    // Credentials that expire within minutes are fetched again for each use.
    const std::string runs = testing::ReadFile(counter);
    CHECK(std::count(runs.begin(), runs.end(), '\n') == (profile == "soon" ? 3 : 1));
  }

  const std::string where = "credential_process of profile 'p'";
  CHECK(ParseProcessCredentials("not json SECRETVALUE", where).status().message() ==
        "credential_process of profile 'p' did not write a JSON object (of Version 1)");
  CHECK(ParseProcessCredentials(R"({"Version": 2, "AccessKeyId": "A", "SecretAccessKey": "S"})",
                                where)
            .status()
            .message()
            .find("Version") != std::string::npos);
  const Status no_secret =
      ParseProcessCredentials(R"({"Version": 1, "AccessKeyId": "A"})", where).status();
  CHECK(no_secret.message().find("SecretAccessKey") != std::string::npos);
  const Status expired =
      ParseProcessCredentials(R"({"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "SECRETX",
                                  "Expiration": "2001-01-01T00:00:00Z"})",
                              where)
          .status();
  CHECK(expired.message().find("expired at 2001-01-01T00:00:00Z") != std::string::npos);
  CHECK(expired.message().find("SECRETX") == std::string::npos);

  const std::string failing = script("fails", "echo oops >&2\nexit 3\n");
  const Home bad("", "[profile bad]\ncredential_process = " + failing + "\n");
  const Resolved r = Resolve(bad.With({{"AWS_PROFILE", "bad"}}));
  CHECK(r.status.code() == StatusCode::kInvalidArgument);
  CHECK(r.status.message().find("exited with status 3") != std::string::npos);
  CHECK(r.status.message().find("profile 'bad'") != std::string::npos);
}

TEST_CASE("Web identity comes from the environment or a profile, named by its source") {
  testing::TempDir dir;
  testing::WriteFile(dir.File("token"), "eyJ.token.sig\n");
  const Home home("", "[profile wi]\nrole_arn = arn:aws:iam::1:role/p\nweb_identity_token_file = " +
                          dir.File("token") + "\n");
  const Environment env = EnvOf(home.With({{"AWS_WEB_IDENTITY_TOKEN_FILE", dir.File("token")},
                                           {"AWS_ROLE_ARN", "arn:aws:iam::1:role/e"}}));
  Result<Profile> p = LoadProfile(env);
  Result<Config> config = LoadConfig(env, *p);
  auto provider = ResolveCredentials(env, *p, *config, false);
  REQUIRE(provider.ok());
  CHECK((*provider)->Source() == "web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN)");
  const Environment env2 = EnvOf(home.With({{"AWS_PROFILE", "wi"}}));
  Result<Profile> p2 = LoadProfile(env2);
  auto provider2 = ResolveCredentials(env2, *p2, *LoadConfig(env2, *p2), false);
  REQUIRE(provider2.ok());
  CHECK((*provider2)
            ->Source()
            .starts_with("web identity (web_identity_token_file and role_arn of "
                         "profile 'wi'"));
}

// A fake EC2 metadata service (IMDSv2): a session token, one role, its
// credentials; it logs each request's method, path and token.
constexpr const char* kFakeImds = R"PY(
import http.server, json, sys
log = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def reply(self, status, body):
        self.send_response(status)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())
    def note(self):
        with open(log, 'a') as f:
            f.write('%s %s %s\n' % (self.command, self.path,
                                     self.headers.get('X-aws-ec2-metadata-token', '-')))
    def do_PUT(self):
        self.note()
        if self.path == '/latest/api/token' and self.headers.get('X-aws-ec2-metadata-token-ttl-seconds'):
            return self.reply(200, 'TOKEN1')
        self.reply(400, '')
    def do_GET(self):
        self.note()
        if self.headers.get('X-aws-ec2-metadata-token') != 'TOKEN1':
            return self.reply(401, '')
        base = '/latest/meta-data/iam/security-credentials/'
        if self.path == base:
            return self.reply(200, 'gpu-role')
        if self.path == base + 'gpu-role':
            return self.reply(200, json.dumps({'Code': 'Success', 'AccessKeyId': 'ASIAIMDS',
                'SecretAccessKey': 'IMDSSECRET', 'Token': 'IMDSTOKEN',
                'Expiration': '2100-01-01T00:00:00Z'}))
        self.reply(404, '')
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(('127.0.0.1', 0), H)
print(server.server_address[1], flush=True)
server.serve_forever()
)PY";

TEST_CASE("The EC2 metadata service, last in the chain, only where it is not disabled") {
  testing::TempDir dir;
  Child imds({"python3", "-c", kFakeImds, dir.File("imds.log")}, {});
  const std::string endpoint =
      "http://127.0.0.1:" + imds.first_line().substr(0, imds.first_line().find('\n'));
  const Home home("", "");
  Resolved r = Resolve(home.With(
      {{"AWS_EC2_METADATA_DISABLED", "false"}, {"AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint}}));
  CAPTURE(r.status.message());
  REQUIRE(r.status.ok());
  CHECK(r.credentials->access_key_id == "ASIAIMDS");
  CHECK(r.credentials->session_token == "IMDSTOKEN");
  CHECK(r.source ==
        fmt::format("the EC2 instance metadata service ({}; an instance role)", endpoint));
  CHECK(testing::ReadFile(dir.File("imds.log")) ==
        "PUT /latest/api/token -\n"
        "GET /latest/meta-data/iam/security-credentials/ TOKEN1\n"
        "GET /latest/meta-data/iam/security-credentials/gpu-role TOKEN1\n");

  // Disabled: not asked at all, and the error says so.
  r = Resolve(home.With({{"AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint}}));
  CHECK(r.status.message().find("metadata service is off (AWS_EC2_METADATA_DISABLED)") !=
        std::string::npos);
  const std::string log = testing::ReadFile(dir.File("imds.log"));
  CHECK(std::count(log.begin(), log.end(), '\n') == 3);

  // Nothing listening: an error within the metadata timeout, naming the
  // endpoint, with the rest of the chain.
  const std::string nowhere = fmt::format("http://127.0.0.1:{}", FreePort());
  r = Resolve(home.With(
      {{"AWS_EC2_METADATA_DISABLED", "false"}, {"AWS_EC2_METADATA_SERVICE_ENDPOINT", nowhere}}));
  CHECK(r.status.code() == StatusCode::kInvalidArgument);
  CHECK(r.status.message().find("no AWS credentials found") != std::string::npos);
  CHECK(r.status.message().find(nowhere + "/latest/api/token") != std::string::npos);
}

Result<Config> ConfigOf(const Vars& vars, const std::string& config_file = "") {
  const Home home("", config_file);
  const Environment env = EnvOf(home.With(vars));
  TFDIST_ASSIGN_OR_RETURN(const Profile p, LoadProfile(env));
  return LoadConfig(env, p);
}

TEST_CASE("Region and endpoint: the AWS variables, the profile, tensorflow-io's, AWS's") {
  struct Case {
    Vars vars;
    std::string config_file;
    std::string region, endpoint;  // scheme://host
    bool custom;
  };
  const std::string cfg =
      "[default]\nregion = eu-north-1\nendpoint_url = https://cfg.example:9443\n";
  const std::vector<Case> cases = {
      {{}, "", "us-east-1", "https://s3.us-east-1.amazonaws.com", false},
      {{{"AWS_DEFAULT_REGION", "eu-west-3"}},
       "",
       "eu-west-3",
       "https://s3.eu-west-3.amazonaws.com",
       false},
      {{{"AWS_REGION", "ap-south-1"}, {"AWS_DEFAULT_REGION", "eu-west-3"}},
       "",
       "ap-south-1",
       "https://s3.ap-south-1.amazonaws.com",
       false},
      {{}, cfg, "eu-north-1", "https://cfg.example:9443", true},
      {{{"S3_ENDPOINT", "minio:9000"}}, "", "us-east-1", "https://minio:9000", true},
      {{{"S3_ENDPOINT", "minio:9000"}, {"S3_USE_HTTPS", "0"}},
       "",
       "us-east-1",
       "http://minio:9000",
       true},
      {{{"S3_ENDPOINT", "minio:9000"}}, cfg, "eu-north-1", "https://cfg.example:9443", true},
      {{{"AWS_ENDPOINT_URL", "http://127.0.0.1:4568"}, {"S3_ENDPOINT", "minio:9000"}},
       cfg,
       "eu-north-1",
       "http://127.0.0.1:4568",
       true},
      {{{"AWS_ENDPOINT_URL_S3", "https://s3only.example"},
        {"AWS_ENDPOINT_URL", "http://127.0.0.1:4568"}},
       "",
       "us-east-1",
       "https://s3only.example",
       true},
  };
  for (const Case& c : cases) {
    Result<Config> config = ConfigOf(c.vars, c.config_file);
    REQUIRE(config.ok());
    CAPTURE(c.endpoint);
    CHECK(config->region == c.region);
    CHECK(config->endpoint.scheme + "://" + config->endpoint.host == c.endpoint);
    CHECK(config->endpoint.custom == c.custom);
    CHECK(config->verify_tls);
  }
  CHECK(ConfigOf({{"AWS_ENDPOINT_URL", "minio:9000"}}).status().message() ==
        "AWS_ENDPOINT_URL is 'minio:9000': an endpoint URL starts with http:// or https://");
  // A user and password are refused and never shown; a query is refused.
  CHECK(
      ConfigOf({{"AWS_ENDPOINT_URL", "http://user:Pw0rdSecret@127.0.0.1:9/"}}).status().message() ==
      "AWS_ENDPOINT_URL is 'http://***@127.0.0.1:9/': an endpoint URL has no user or password "
      "(scheme://host[:port])");
  CHECK(ConfigOf({{"AWS_ENDPOINT_URL", "http://127.0.0.1:9/?x=1"}}).status().message() ==
        "AWS_ENDPOINT_URL is 'http://127.0.0.1:9/?x=1': an endpoint URL has no query or "
        "fragment (scheme://host[:port][/path])");
  CHECK(ConfigOf({{"AWS_ENDPOINT_URL", "http://127.0.0.1:9/minio"}}).ok());
  CHECK(http::RedactUserinfo("https://a:b@h:1/p@q") == "https://***@h:1/p@q");
  CHECK(http::RedactUserinfo("h:1/p@q") == "h:1/p@q");
  CHECK(http::RedactUserinfo("u@h") == "***@h");
  CHECK(ConfigOf({}, "[default]\ns3 =\n  addressing_style = sideways\n").status().code() ==
        StatusCode::kInvalidArgument);
}

TEST_CASE("S3_VERIFY_SSL=0 only for a named endpoint, with a warning") {
  Result<Config> aws = ConfigOf({{"S3_VERIFY_SSL", "0"}});
  CHECK(aws.status().code() == StatusCode::kInvalidArgument);
  CHECK(aws.status().message().find("S3_VERIFY_SSL=0") != std::string::npos);
  Result<Config> named = ConfigOf({{"S3_VERIFY_SSL", "0"}, {"S3_ENDPOINT", "minio:9000"}});
  REQUIRE(named.ok());
  CHECK(!named->verify_tls);
  REQUIRE(named->warnings.size() == 1);
  CHECK(named->warnings[0] ==
        "S3_VERIFY_SSL=0: the TLS certificate of minio:9000 (from S3_ENDPOINT) is not verified");
  Result<Config> plain =
      ConfigOf({{"S3_VERIFY_SSL", "false"}, {"AWS_ENDPOINT_URL", "http://127.0.0.1:1"}});
  REQUIRE(plain.ok());
  CHECK(plain->warnings.empty());  // nothing to verify over http://
  Result<Config> bundle = ConfigOf({{"AWS_CA_BUNDLE", "~/ca.pem"}});
  REQUIRE(bundle.ok());
  CHECK(bundle->ca_bundle.ends_with("/ca.pem"));
  CHECK(!bundle->ca_bundle.starts_with("~"));
  CHECK(bundle->verify_tls);
}

TEST_CASE("Addressing: virtual-hosted on AWS for DNS-compatible names, else path-style") {
  struct Case {
    std::string bucket;
    bool https_hostable, http_hostable;
  };
  for (const Case& c : std::vector<Case>{{"my-bucket", true, true},
                                         {"my.bucket", false, true},
                                         {"My-Bucket", false, false},
                                         {"my_bucket", false, false},
                                         {"ab", false, false},
                                         {std::string(64, 'a'), false, false},
                                         {"-bucket", false, false},
                                         {"bucket-", false, false},
                                         {"a..b", false, false},
                                         {"192.168.1.1", false, false},
                                         {"a.-b", false, false}}) {
    CAPTURE(c.bucket);
    CHECK(IsVirtualHostable(c.bucket, true) == c.https_hostable);
    CHECK(IsVirtualHostable(c.bucket, false) == c.http_hostable);
  }
  Result<Config> aws = ConfigOf({{"AWS_REGION", "eu-west-1"}});
  REQUIRE(aws.ok());
  CHECK(ObjectUrl(*aws, "my-bucket", "a b/c+d") ==
        "https://my-bucket.s3.eu-west-1.amazonaws.com/a%20b/c%2Bd");
  CHECK(ObjectUrl(*aws, "my.bucket", "k") == "https://s3.eu-west-1.amazonaws.com/my.bucket/k");
  CHECK(ObjectUrl(*aws, "my-bucket", "", "list-type=2") ==
        "https://my-bucket.s3.eu-west-1.amazonaws.com/?list-type=2");
  Result<Config> path = ConfigOf({}, "[default]\ns3 =\n  addressing_style = path\n");
  REQUIRE(path.ok());
  CHECK(ObjectUrl(*path, "my-bucket", "k") == "https://s3.us-east-1.amazonaws.com/my-bucket/k");
  CHECK(ObjectUrl(*path, "my-bucket", "", "list-type=2") ==
        "https://s3.us-east-1.amazonaws.com/my-bucket?list-type=2");
  Result<Config> custom = ConfigOf({{"AWS_ENDPOINT_URL", "http://127.0.0.1:4568/base/"}});
  REQUIRE(custom.ok());
  CHECK(ObjectUrl(*custom, "my-bucket", "k") == "http://127.0.0.1:4568/base/my-bucket/k");
  Result<Config> virt = ConfigOf({{"AWS_ENDPOINT_URL", "http://store.local:9000"}},
                                 "[default]\ns3 =\n  addressing_style = virtual\n");
  REQUIRE(virt.ok());
  CHECK(ObjectUrl(*virt, "my-bucket", "k") == "http://my-bucket.store.local:9000/k");
  CHECK(ObjectUrl(*virt, "My_Bucket", "k") == "http://store.local:9000/My_Bucket/k");
}

// ---- XML ---------------------------------------------------------------------

TEST_CASE("A ListObjectsV2 page: keys, sizes, ETags, truncation, odd characters") {
  const std::string page = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>
<Prefix>d/</Prefix><KeyCount>3</KeyCount><MaxKeys>3</MaxKeys><IsTruncated>true</IsTruncated>
<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
<Contents><Key>d/a&amp;b&lt;c&gt;.rec</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>
<ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>36</Size>
<StorageClass>STANDARD</StorageClass></Contents>
<Contents><Key>d/&#xfc;nicode space.rec</Key><ETag>"abc-2"</ETag><Size>0</Size></Contents>
<Contents><Key>d/big</Key><ETag>"e"</ETag><Size>18446744073709551615</Size></Contents>
</ListBucketResult>)";
  Result<ListPage> p = ParseListPage(page, "b", "s3://b/d/");
  REQUIRE(p.ok());
  CHECK(p->truncated);
  CHECK(p->next_token == "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
  REQUIRE(p->objects.size() == 3);
  CHECK(p->objects[0].name == "s3://b/d/a&b<c>.rec");
  CHECK(p->objects[0].size == 36);
  CHECK(p->objects[0].version == "\"9b2cf535f27731c974343645a3985328\"");
  CHECK(p->objects[1].name == "s3://b/d/\xc3\xbcnicode space.rec");
  CHECK(p->objects[1].version == "\"abc-2\"");
  CHECK(p->objects[2].size == UINT64_MAX);

  // encoding-type=url: the keys come percent-encoded ('+' a space), and the
  // EncodingType element may come after them.
  Result<ListPage> encoded = ParseListPage(
      "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>d/a+b%2Bc%01%25.rec</Key>"
      "<Size>1</Size></Contents><EncodingType>url</EncodingType></ListBucketResult>",
      "b", "s3://b/d/");
  REQUIRE(encoded.ok());
  CHECK(!encoded->truncated);
  REQUIRE(encoded->objects.size() == 1);
  CHECK(encoded->objects[0].name == std::string("s3://b/d/a b+c\x01%.rec"));

  Result<ListPage> empty = ParseListPage(
      "<ListBucketResult><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>",
      "b", "s3://b/none");
  REQUIRE(empty.ok());
  CHECK(empty->objects.empty());
}

TEST_CASE("A listing that is not one is DataLoss naming the listing") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>",
       "s3://b/p: the listing says it is truncated but gives no NextContinuationToken"},
      {"<ListBucketResult><Contents><Key>k</Key></Contents></ListBucketResult>",
       "s3://b/p: the listing has a Contents without Key or Size"},
      {"<ListBucketResult><Contents><Key>k</Key><Size>-1</Size></Contents></ListBucketResult>",
       "s3://b/p: the listing has a Size of '-1'"},
      {"<ListBucketResult><Contents><Key>k</Key>", "s3://b/p: the listing is not XML: "},
      {"<html>502 Bad Gateway</html>", "s3://b/p: the answer is not a ListBucketResult"},
      {"<!DOCTYPE x [<!ENTITY a \"aaaa\">]><ListBucketResult/>",
       "s3://b/p: the listing is not XML: it has a DTD"},
      {"", "s3://b/p: the listing is not XML: "},
  };
  for (const auto& [xml, message] : cases) {
    CAPTURE(xml);
    Result<ListPage> p = ParseListPage(xml, "b", "s3://b/p");
    CHECK(p.status().code() == StatusCode::kDataLoss);
    CHECK(p.status().message().starts_with(message));
  }
}

TEST_CASE("S3's and STS's errors: code and message") {
  // Malformed after the message (an unescaped '&'): the code and message kept.
  CHECK(ParseErrorXml("<Error><Code>InternalError</Code><Message>Try again.</Message>"
                      "<Resource>/b?list-type=2&prefix=d/</Resource></Error>") ==
        std::pair<std::string, std::string>{"InternalError", "Try again."});
  CHECK(ParseErrorXml(R"(<?xml version="1.0" encoding="UTF-8"?>
<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message>
<Key>a/b</Key><RequestId>1</RequestId></Error>)") ==
        std::pair<std::string, std::string>{"NoSuchKey", "The specified key does not exist."});
  CHECK(ParseErrorXml("<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\"><Error>"
                      "<Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>Bad &amp; "
                      "old</Message></Error></ErrorResponse>") ==
        std::pair<std::string, std::string>{"InvalidIdentityToken", "Bad & old"});
  CHECK(ParseErrorXml("") == std::pair<std::string, std::string>{});
  CHECK(ParseErrorXml("<html>Service Unavailable</html>") == std::pair<std::string, std::string>{});
  CHECK(ParseErrorXml("not xml") == std::pair<std::string, std::string>{});
}

TEST_CASE("STS's AssumeRoleWithWebIdentity answer and ISO times") {
  Result<Credentials> c = ParseStsCredentials(
      R"(<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA1</AccessKeyId>
<SecretAccessKey>S1</SecretAccessKey><SessionToken>T1</SessionToken>
<Expiration>2026-11-27T06:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult>
</AssumeRoleWithWebIdentityResponse>)",
      "http://127.0.0.1:1/");
  REQUIRE(c.ok());
  CHECK(c->access_key_id == "ASIA1");
  CHECK(c->secret_access_key == "S1");
  CHECK(c->session_token == "T1");
  CHECK(c->expiration == std::chrono::system_clock::from_time_t(1795759200));
  CHECK(ParseStsCredentials("<x/>", "u").status().code() == StatusCode::kDataLoss);
  CHECK(ParseIsoTime("2026-11-27T06:00:00.123+01:00") ==
        std::chrono::system_clock::from_time_t(1795759200 - 3600));
  CHECK(!ParseIsoTime("tomorrow"));
  CHECK(!ParseIsoTime("2026-11-27T06:00:00 PST"));
}

}  // namespace
}  // namespace tfdist::io::s3
