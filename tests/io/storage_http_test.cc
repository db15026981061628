// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The HTTP engine against a real server on 127.0.0.1 (tests/remote/
// range_server.py) behind the fault-injecting proxy (fault_proxy.py): exact
// bytes after cut connections, bursts of 503 and 429 retried, the limits of
// attempts and time, 404 and 403 not retried, a refused connection, odd
// ranges, concurrent ranges, and an interrupt. Exits 77 (skipped) without
// python3.

#define DOCTEST_CONFIG_IMPLEMENT
#include "storage_http.h"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "io/remote_servers.h"
#include "test_util.h"
#include "tfdist/base/interrupt.h"
#include "tfdist/io/storage.h"

namespace tfdist::io::http {
namespace {

using testing::GetText;
using testing::PythonServer;
using testing::TempDir;

// No signature; the error's code and message from an S3-style XML body.
class TestStore : public HttpStore {
 public:
  Status Authorize(Request& request) override {
    ++authorized;
    request.headers.emplace_back("X-Test", "secret-token-not-to-print");
    return Status::OK();
  }
  std::pair<std::string, std::string> ParseError(const Response& response) const override {
    return {Tag(response.body, "Code"), Tag(response.body, "Message")};
  }
  std::string CredentialSource() const override { return "the test's store (none)"; }
  std::string CaFile() const override { return ca_file; }
  bool VerifyTls() const override { return verify_tls; }

  std::atomic<int> authorized{0};
  std::string ca_file;
  bool verify_tls = true;

 private:
  static std::string Tag(const std::string& body, const std::string& tag) {
    const size_t a = body.find("<" + tag + ">"), b = body.find("</" + tag + ">");
    if (a == std::string::npos || b == std::string::npos) return "";
    return body.substr(a + tag.size() + 2, b - a - tag.size() - 2);
  }
};

// Bytes that differ at every offset mod 251: a repeated or skipped byte shows.
std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 7 + i / 251) % 251);
  return s;
}

// The options for one test, restored after it.
class Options {
 public:
  Options() : saved_(GetRemoteOptions()) {
    RemoteOptions o = saved_;
    o.max_attempts = 10;
    o.max_seconds = 60;
    o.connect_timeout_seconds = 5;
    o.stall_timeout_seconds = 5;
    SetRemoteOptions(o);
  }
  ~Options() { SetRemoteOptions(saved_); }
  template <typename F>
  void Set(F f) {
    RemoteOptions o = GetRemoteOptions();
    f(o);
    SetRemoteOptions(o);
  }

 private:
  RemoteOptions saved_;
};

// A folder of objects, the server over it, and the proxy in front.
struct Fixture {
  TempDir dir;
  std::string data = Pattern(3 << 20);
  PythonServer server;
  PythonServer proxy;
  TestStore store;
  Options options;

  explicit Fixture(const std::vector<std::string>& faults = {})
      : server(Write(dir, data)), proxy(ProxyArgs(server.url(), faults)) {}

  static std::vector<std::string> Write(const TempDir& d, const std::string& bytes) {
    testing::WriteFile(d.File("big.bin"), bytes);
    testing::WriteFile(d.File("small.bin"), "hello, object\n");
    return {"tests/remote/range_server.py", d.path()};
  }
  static std::vector<std::string> ProxyArgs(const std::string& upstream,
                                            const std::vector<std::string>& faults) {
    std::vector<std::string> args = {"tests/remote/fault_proxy.py"};
    for (const std::string& f : faults) {
      args.push_back("--fault");
      args.push_back(f);
    }
    args.push_back(upstream);
    return args;
  }

  Request Get(const std::string& key) const {
    Request r;
    r.url = fmt::format("{}/{}", proxy.url(), key);
    r.shown = "s3://bucket/" + key;
    return r;
  }
  void Fault(const std::string& rule) {
    CHECK(GetText(proxy.port(), "/__fault__?" + rule) == "added\n");
  }
  // Requests the server saw for /KEY.
  int ServerCount(const std::string& key) {
    const std::string stats = GetText(server.port(), "/__stats__");
    const std::string needle = fmt::format("\"/{}\": ", key);
    const size_t at = stats.find(needle);
    return at == std::string::npos ? 0 : std::atoi(stats.c_str() + at + needle.size());
  }
  int ProxyFaults() {
    const std::string stats = GetText(proxy.port(), "/__stats__");
    const size_t at = stats.find("\"faults\": ");
    return at == std::string::npos ? -1 : std::atoi(stats.c_str() + at + 10);
  }
};

Status Read(Fixture& f, const std::string& key, uint64_t offset, std::string& out) {
  return Client::Get().ReadRange(f.store, f.Get(key), offset, std::span<char>(out), nullptr);
}

TEST_CASE("Fetch returns the whole object, and ReadRange the bytes asked") {
  Fixture f;
  Result<Response> r = Client::Get().Fetch(f.store, f.Get("small.bin"));
  REQUIRE(r.ok());
  CHECK(r->status == 200);
  CHECK(r->body == "hello, object\n");
  CHECK(r->Header("etag").has_value());

  std::string out(100000, '\0');
  REQUIRE(Read(f, "big.bin", 1234567, out).ok());
  CHECK(out == f.data.substr(1234567, 100000));
}

TEST_CASE("a connection cut mid-body resumes at the first byte not received") {
  // Three cuts at odd places of three responses: every byte once.
  Fixture f({"kind=cut&after=100003&count=2&ranged=1", "kind=cut&after=1&count=1&ranged=1"});
  std::string out(1 << 20, '\0');
  Status s = Read(f, "big.bin", 777, out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out == f.data.substr(777, 1 << 20));
  CHECK(f.ProxyFaults() == 3);
  CHECK(f.ServerCount("big.bin") == 4);
}

TEST_CASE("bursts of 503 and 429 are retried") {
  Fixture f({"kind=503&count=3", "kind=429&count=2&retry_after=0"});
  std::string out(5000, '\0');
  Status s = Read(f, "big.bin", 10, out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out == f.data.substr(10, 5000));
  CHECK(f.ProxyFaults() == 5);
  CHECK(f.ServerCount("big.bin") == 1);
  CHECK(f.store.authorized == 6);  // every attempt authorised anew

  f.Fault("kind=500&count=2");
  Result<Response> r = Client::Get().Fetch(f.store, f.Get("small.bin"));
  REQUIRE(r.ok());
  CHECK(r->body == "hello, object\n");
}

TEST_CASE("the attempt limit ends a request with Unavailable naming URL, range, status, error") {
  Fixture f({"kind=503&count=-1"});
  f.options.Set([](RemoteOptions& o) { o.max_attempts = 3; });
  std::string out(100, '\0');
  Status s = Read(f, "big.bin", 0, out);
  CHECK(s.code() == StatusCode::kUnavailable);
  const std::string& m = s.message();
  CHECK(m.find("s3://bucket/big.bin") != std::string::npos);
  CHECK(m.find("bytes 0-99") != std::string::npos);
  CHECK(m.find("HTTP 503 SlowDown: Please reduce your request rate.") != std::string::npos);
  CHECK(m.find("3 attempts") != std::string::npos);
  CHECK(m.find("secret-token") == std::string::npos);
  CHECK(m.find("127.0.0.1") == std::string::npos);  // the URL shown, not the one asked
  CHECK(f.ProxyFaults() == 3);
}

TEST_CASE("the time limit ends a request with Unavailable, whatever the attempts left") {
  Fixture f({"kind=503&count=-1"});
  f.options.Set([](RemoteOptions& o) {
    o.max_attempts = 1000000;
    o.max_seconds = 2;
  });
  std::string out(100, '\0');
  Status s = Read(f, "big.bin", 0, out);
  CHECK(s.code() == StatusCode::kUnavailable);
  CHECK(s.message().find("time limit of 2 s") != std::string::npos);
  CHECK(s.message().find("HTTP 503 SlowDown") != std::string::npos);
  CHECK(f.ProxyFaults() < 1000);
}

TEST_CASE("404 and 403 are not retried and name the credentials' source") {
  Fixture f;
  std::string out(10, '\0');
  Status s = Read(f, "missing.bin", 0, out);
  CHECK(s.code() == StatusCode::kNotFound);
  CHECK(s.message().find("s3://bucket/missing.bin") != std::string::npos);
  CHECK(s.message().find("NoSuchKey") != std::string::npos);
  CHECK(s.message().find("the test's store (none)") != std::string::npos);
  CHECK(f.ServerCount("missing.bin") == 1);

  f.Fault("kind=403&count=-1");
  Result<Response> r = Client::Get().Fetch(f.store, f.Get("small.bin"));
  CHECK(r.status().code() == StatusCode::kPermissionDenied);
  CHECK(r.status().message().find("access denied (HTTP 403 AccessDenied: Access Denied") !=
        std::string::npos);
  CHECK(r.status().message().find("the test's store (none)") != std::string::npos);
  CHECK(f.ProxyFaults() == 1);
}

TEST_CASE("412 (the object's version changed) is DataLoss, not retried") {
  Fixture f({"kind=412&count=-1"});
  std::string out(10, '\0');
  Status s = Read(f, "big.bin", 0, out);
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(s.message().find("replaced") != std::string::npos);
  CHECK(f.ProxyFaults() == 1);
}

TEST_CASE("a refused connection is Unavailable within the time limit") {
  Options options;
  options.Set([](RemoteOptions& o) {
    o.max_attempts = 1000000;
    o.max_seconds = 1.5;
  });
  TestStore store;
  Request r;
  r.url = fmt::format("http://127.0.0.1:{}/k", testing::ClosedPort());
  r.shown = "s3://bucket/k";
  Result<Response> got = Client::Get().Fetch(store, r);
  CHECK(got.status().code() == StatusCode::kUnavailable);
  const std::string& m = got.status().message();
  // The retries stop when the next wait would pass the limit, before it has
  // passed: the message says so, not that the time ran out.
  CHECK(m.find("GET s3://bucket/k failed after ") != std::string::npos);
  CHECK(m.find(" before the next attempt would pass the time limit of 1.5 s; last: ") !=
        std::string::npos);
  CHECK(m.find("Couldn't connect to server") != std::string::npos);
  CHECK(store.authorized > 1);  // retried until the next backoff would pass the limit
}

TEST_CASE("a stalled response is cut after the stall timeout and retried") {
  Fixture f({"kind=slow&seconds=4&count=1"});
  f.options.Set([](RemoteOptions& o) { o.stall_timeout_seconds = 1; });
  std::string out(1000, '\0');
  Status s = Read(f, "big.bin", 5, out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out == f.data.substr(5, 1000));
  CHECK(f.ProxyFaults() == 1);
}

TEST_CASE("a 200 for a ranged read, and a 206 from an earlier byte, give the bytes asked") {
  Fixture f({"kind=norange&count=1", "kind=widen&bytes=4097&count=1"});
  std::string out(50000, '\0');
  Status s = Read(f, "big.bin", 300000, out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out == f.data.substr(300000, 50000));
  s = Read(f, "big.bin", 300000, out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out == f.data.substr(300000, 50000));
  CHECK(f.ProxyFaults() == 2);
}

TEST_CASE("a server that sends less than the range asked is asked for the rest") {
  Fixture f({"kind=cap&bytes=30000&count=-1"});
  f.options.Set([](RemoteOptions& o) { o.max_attempts = 2; });  // progress is no failure
  std::string out(100000, '\0');
  Status s = Read(f, "big.bin", 99, out);
  REQUIRE_MESSAGE(s.ok(), s.ToString());
  CHECK(out == f.data.substr(99, 100000));
  CHECK(f.ServerCount("big.bin") == 4);
}

TEST_CASE("a read past the object's end is OutOfRange with the bytes before it") {
  Fixture f;
  std::string out(100, '\0');
  Status s = Read(f, "small.bin", 4, out);
  CHECK(s.code() == StatusCode::kOutOfRange);
  CHECK(out.substr(0, 10) == "o, object\n");
  s = Read(f, "small.bin", 1000, out);
  CHECK(s.code() == StatusCode::kOutOfRange);
  CHECK(f.ServerCount("small.bin") == 2);
}

TEST_CASE("ReadRangeAsync runs many ranges at once, each retried on its own") {
  Fixture f({"kind=cut&after=5000&count=3&ranged=1", "kind=503&count=3"});
  constexpr int kRanges = 24;
  constexpr size_t kSize = 100000;
  std::vector<std::string> outs(kRanges, std::string(kSize, '\0'));
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  std::vector<Status> statuses(kRanges);
  for (int i = 0; i < kRanges; ++i) {
    Client::Get().ReadRangeAsync(f.store, f.Get("big.bin"), i * kSize, std::span<char>(outs[i]),
                                 nullptr, [&, i](Status s) {
                                   std::lock_guard lock(mu);
                                   statuses[i] = std::move(s);
                                   ++done;
                                   cv.notify_all();
                                 });
  }
  std::unique_lock lock(mu);
  cv.wait(lock, [&] { return done == kRanges; });
  for (int i = 0; i < kRanges; ++i) {
    CHECK_MESSAGE(statuses[i].ok(), statuses[i].ToString());
    CHECK(outs[i] == f.data.substr(i * kSize, kSize));
  }
  CHECK(f.ProxyFaults() == 6);
}

TEST_CASE("check sees the head, and its error ends the read unretried") {
  Fixture f;
  std::string out(10, '\0');
  int calls = 0;
  Status s = Client::Get().ReadRange(f.store, f.Get("big.bin"), 0, std::span<char>(out),
                                     [&](const Response& head) {
                                       ++calls;
                                       CHECK(head.status == 206);
                                       CHECK(head.Header("etag").has_value());
                                       return Status::DataLoss("s3://bucket/big.bin: replaced");
                                     });
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(calls == 1);
  CHECK(f.ServerCount("big.bin") == 1);
}

// In a child process (the interrupt flag is for good): a read blocked on a
// slow server ends with Cancelled soon after SIGINT.
TEST_CASE("interrupt child" * doctest::skip(std::getenv("TFDIST_INTERRUPT_CHILD") == nullptr)) {
  InstallInterruptHandlers();
  Fixture f({"kind=slow&seconds=60&count=-1"});
  std::thread killer([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    kill(getpid(), SIGINT);
  });
  std::string out(10, '\0');
  Status s = Read(f, "big.bin", 0, out);
  killer.join();
  REQUIRE(s.code() == StatusCode::kCancelled);
}

TEST_CASE("a read blocked on the network ends with Cancelled on SIGINT") {
  if (std::getenv("TFDIST_INTERRUPT_CHILD") != nullptr) return;
  const std::string command = "TFDIST_INTERRUPT_CHILD=1 timeout 60 /proc/" +
                              std::to_string(getpid()) +
                              "/exe --test-case='interrupt child' >/dev/null 2>&1";
  const auto start = std::chrono::steady_clock::now();
  const int rc = std::system(command.c_str());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 0);
  CHECK(seconds < 50);  // not the server's 60 s
}

TEST_CASE("connections are kept alive and reused") {
  Fixture f;
  TestStore store;
  std::string out(1000, '\0');
  for (int i = 0; i < 30; ++i) {
    Request r;
    r.url = fmt::format("{}/big.bin", f.server.url());
    r.shown = "s3://bucket/big.bin";
    REQUIRE(Client::Get().ReadRange(store, r, i * 1000, std::span<char>(out), nullptr).ok());
    CHECK(out == f.data.substr(i * 1000, 1000));
  }
  // GetText's own connection is the one more.
  const std::string stats = GetText(f.server.port(), "/__stats__");
  CHECK_MESSAGE(stats.find("\"connections\": 1}") != std::string::npos, stats);
}

TEST_CASE("an object replaced between two ranges is caught by check, the proxy's hook") {
  Fixture f;
  testing::WriteFile(f.dir.File("other.bin"), std::string(200000, 'x'));
  f.Fault(fmt::format("kind=replace&ranged=1&match=big.bin&command=cp%20{}%20{}",
                      f.dir.File("other.bin"), f.dir.File("big.bin")));
  std::string etag;
  auto check = [&](const Response& head) {
    std::string now(head.Header("etag").value_or(""));
    if (etag.empty()) etag = now;
    if (now != etag) return Status::DataLoss("s3://bucket/big.bin: replaced while read");
    return Status::OK();
  };
  std::string out(1000, '\0');
  REQUIRE(Client::Get().ReadRange(f.store, f.Get("big.bin"), 0, std::span<char>(out), check).ok());
  CHECK(out == f.data.substr(0, 1000));
  Status s = Client::Get().ReadRange(f.store, f.Get("big.bin"), 1000, std::span<char>(out), check);
  CHECK(s.code() == StatusCode::kDataLoss);
  CHECK(GetText(f.proxy.port(), "/__stats__").find("\"commands\": 1") != std::string::npos);
}

// An object of the range server, read through the engine.
class HttpObject : public RandomAccessObject {
 public:
  HttpObject(Fixture& f, const std::string& key, uint64_t size) : f_(f), key_(key) {
    info_ = {"s3://bucket/" + key, size, ""};
  }
  Status ReadAt(uint64_t offset, std::span<char> dst) override {
    return Client::Get().ReadRange(f_.store, f_.Get(key_), offset, dst, nullptr);
  }
  void ReadAtAsync(uint64_t offset, std::span<char> dst,
                   std::function<void(Status)> done) override {
    Client::Get().ReadRangeAsync(f_.store, f_.Get(key_), offset, dst, nullptr, std::move(done));
  }
  const ObjectInfo& info() const override { return info_; }

 private:
  Fixture& f_;
  std::string key_;
  ObjectInfo info_;
};

TEST_CASE("the read-ahead source over the engine gives every byte once through faults") {
  Fixture f({"kind=cut&after=10000&count=5&ranged=1", "kind=503&count=5",
             "kind=429&count=2&retry_after=0", "kind=widen&bytes=3&count=2"});
  f.options.Set([](RemoteOptions& o) {
    o.range_bytes = 64 << 10;
    o.read_ahead_bytes = 1 << 20;
  });
  auto source = NewObjectSource(std::make_unique<HttpObject>(f, "big.bin", f.data.size()), 12345);
  std::string got, buf(50000, '\0');
  for (;;) {
    Result<size_t> n = source->Read(std::span<char>(buf));
    REQUIRE_MESSAGE(n.ok(), n.status().ToString());
    if (*n == 0) break;
    got.append(buf.data(), *n);
  }
  CHECK(got == f.data.substr(12345));
  CHECK(f.ProxyFaults() == 14);
}

TEST_CASE("TLS is verified: a certificate of no known authority fails unretried") {
  TempDir dir;
  const std::string cert = dir.File("cert.pem"), key = dir.File("key.pem");
  const std::string make = fmt::format(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
      "-addext subjectAltName=IP:127.0.0.1 -keyout {} -out {} >/dev/null 2>&1",
      key, cert);
  if (std::system(make.c_str()) != 0) {
    MESSAGE("no openssl command to make a certificate; skipped");
    return;
  }
  testing::WriteFile(dir.File("small.bin"), "over TLS\n");
  PythonServer server({"tests/remote/range_server.py", "--tls", cert, key, dir.path()});
  Options options;
  Request r;
  r.url = fmt::format("https://127.0.0.1:{}/small.bin", server.port());
  r.shown = "s3://bucket/small.bin";

  TestStore system_store;  // the system's authorities: none signed it
  Result<Response> got = Client::Get().Fetch(system_store, r);
  CHECK(got.status().code() == StatusCode::kUnavailable);
  CHECK(got.status().message().find("failed after 1 attempt in") != std::string::npos);
  CHECK(got.status().message().find("certificate") != std::string::npos);

  TestStore bundle_store;  // the bundle that holds it
  bundle_store.ca_file = cert;
  got = Client::Get().Fetch(bundle_store, r);
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(got->body == "over TLS\n");

  TestStore unverified_store;  // S3_VERIFY_SSL=0
  unverified_store.verify_tls = false;
  got = Client::Get().Fetch(unverified_store, r);
  REQUIRE_MESSAGE(got.ok(), got.status().ToString());
  CHECK(got->body == "over TLS\n");
}

TEST_CASE("UriEncode keeps RFC 3986's unreserved characters") {
  CHECK(UriEncode("a b/c~d-e_f.g+h", false) == "a%20b%2Fc~d-e_f.g%2Bh");
  CHECK(UriEncode("a b/c", true) == "a%20b/c");
  CHECK(UriEncode("\xc3\xa9", true) == "%C3%A9");
}

}  // namespace
}  // namespace tfdist::io::http

int main(int argc, char** argv) {
  if (!tfdist::testing::HavePython()) {
    std::puts("storage_http_test: no python3 to run the test servers; skipped");
    return 77;
  }
  doctest::Context context(argc, argv);
  return context.run();
}
