// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The credential chain of the AWS CLI and SDKs, in their order: anonymous
// when asked, the environment's keys, web identity, the profile's keys,
// credential_process or web identity. Temporary credentials are fetched
// again before they expire. No value ever reaches a message.

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <utility>

#include "storage_s3_internal.h"
#include "tfdist/base/json.h"

extern char** environ;

namespace tfdist::io::s3 {
namespace {

using Clock = std::chrono::system_clock;

// Temporary credentials are fetched again this long before they expire, so
// that a request signed now is not refused mid-flight.
constexpr std::chrono::minutes kRefreshAhead{5};

class AnonymousProvider final : public CredentialProvider {
 public:
  explicit AnonymousProvider(std::string source) : source_(std::move(source)) {}
  Result<std::optional<Credentials>> Get() override { return std::optional<Credentials>(); }
  std::string Source() const override { return source_; }

 private:
  std::string source_;
};

class StaticProvider final : public CredentialProvider {
 public:
  StaticProvider(Credentials credentials, std::string source)
      : credentials_(std::move(credentials)), source_(std::move(source)) {}
  Result<std::optional<Credentials>> Get() override {
    return std::optional<Credentials>(credentials_);
  }
  std::string Source() const override { return source_; }

 private:
  Credentials credentials_;
  std::string source_;
};

// Credentials that expire, fetched by Fetch() again when they are about to.
class RefreshingProvider : public CredentialProvider {
 public:
  explicit RefreshingProvider(std::string source) : source_(std::move(source)) {}
  Result<std::optional<Credentials>> Get() final {
    std::lock_guard lock(mu_);
    if (!cached_ || (cached_->expiration && *cached_->expiration - Clock::now() < kRefreshAhead)) {
      TFDIST_ASSIGN_OR_RETURN(Credentials fresh, Fetch());
      cached_ = std::move(fresh);
    }
    return std::optional<Credentials>(*cached_);
  }
  std::string Source() const final { return source_; }

 protected:
  virtual Result<Credentials> Fetch() = 0;
  const std::string& source() const { return source_; }

 private:
  std::string source_;
  std::mutex mu_;
  std::optional<Credentials> cached_;
};

// Runs `command` with /bin/sh, as the AWS CLI's credential_process, and
// returns its standard output (at most 1 MiB); its standard error passes
// through to the user.
Result<std::string> RunProcess(const std::string& command, const std::string& source) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return ErrnoError(errno, StatusCode::kInternal, "pipe for " + source);
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t pid = 0;
  const int err =
      posix_spawn(&pid, "/bin/sh", &actions, nullptr, const_cast<char**>(argv), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (err != 0) {
    close(pipe_fds[0]);
    return ErrnoError(err, StatusCode::kInvalidArgument, "cannot run " + source);
  }
  std::string out;
  char buffer[4096];
  bool too_long = false;
  for (;;) {
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (out.size() + static_cast<size_t>(n) > (size_t{1} << 20)) {
      too_long = true;
      break;
    }
    out.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (too_long) {
    return Status::InvalidArgument(source + " wrote more than 1 MiB; credentials are a small JSON");
  }
  if (WIFSIGNALED(wait_status)) {
    return Status::InvalidArgument(
        fmt::format("{} was killed by signal {}", source, WTERMSIG(wait_status)));
  }
  if (WEXITSTATUS(wait_status) != 0) {
    return Status::InvalidArgument(
        fmt::format("{} exited with status {}", source, WEXITSTATUS(wait_status)));
  }
  return out;
}

class ProcessProvider final : public RefreshingProvider {
 public:
  ProcessProvider(std::string command, std::string source)
      : RefreshingProvider(std::move(source)), command_(std::move(command)) {}

 protected:
  Result<Credentials> Fetch() override {
    TFDIST_ASSIGN_OR_RETURN(const std::string out, RunProcess(command_, source()));
    return ParseProcessCredentials(out, source());
  }

 private:
  std::string command_;
};

// STS answers for itself: no signature, its XML errors.
class StsStore final : public http::HttpStore {
 public:
  StsStore(std::string source, std::string ca_file)
      : source_(std::move(source)), ca_file_(std::move(ca_file)) {}
  std::string CaFile() const override { return ca_file_; }
  Status Authorize(http::Request&) override { return Status::OK(); }
  std::pair<std::string, std::string> ParseError(const http::Response& response) const override {
    return ParseErrorXml(response.body);
  }
  std::string CredentialSource() const override { return source_; }

 private:
  std::string source_, ca_file_;
};

class WebIdentityProvider final : public RefreshingProvider {
 public:
  WebIdentityProvider(std::string token_file, std::string role_arn, std::string session_name,
                      std::string sts_url, std::string ca_file, std::string source)
      : RefreshingProvider(std::move(source)),
        token_file_(std::move(token_file)),
        role_arn_(std::move(role_arn)),
        session_name_(std::move(session_name)),
        sts_url_(std::move(sts_url)),
        ca_file_(std::move(ca_file)) {}

 protected:
  Result<Credentials> Fetch() override {
    // The token is read at each refresh: Kubernetes rotates the file.
    std::ifstream in(token_file_, std::ios::binary);
    if (!in) {
      return ErrnoError(errno, StatusCode::kInvalidArgument,
                        fmt::format("{}: cannot read the web identity token", token_file_));
    }
    std::ostringstream token;
    token << in.rdbuf();
    std::string text = token.str();
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) {
      text.pop_back();
    }
    if (text.empty()) {
      return Status::InvalidArgument(
          fmt::format("{}: the web identity token file is empty", token_file_));
    }
    http::Request request;
    request.method = "POST";
    request.url = sts_url_;
    request.shown = sts_url_ + " (AssumeRoleWithWebIdentity for " + role_arn_ + ")";
    request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    request.headers.emplace_back("Accept", "application/xml");
    request.body = fmt::format(
        "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn={}&RoleSessionName={}"
        "&WebIdentityToken={}",
        AwsUriEncode(role_arn_, false), AwsUriEncode(session_name_, false),
        AwsUriEncode(text, false));
    StsStore store(source(), ca_file_);
    TFDIST_ASSIGN_OR_RETURN(const http::Response response,
                            http::Client::Get().Fetch(store, std::move(request)));
    return ParseStsCredentials(response.body, sts_url_);
  }

 private:
  std::string token_file_, role_arn_, session_name_, sts_url_, ca_file_;
};

class ImdsProvider final : public RefreshingProvider {
 public:
  ImdsProvider(ImdsSettings imds, Credentials first)
      : RefreshingProvider(
            fmt::format("the EC2 instance metadata service ({}; an instance role)", imds.endpoint)),
        imds_(std::move(imds)),
        first_(std::move(first)) {}

 protected:
  Result<Credentials> Fetch() override {
    if (first_) return *std::exchange(first_, std::nullopt);  // the probe's, not fetched twice
    return FetchImdsCredentials(imds_);
  }

 private:
  ImdsSettings imds_;
  std::optional<Credentials> first_;
};

std::optional<std::string> NonEmpty(const Environment& env, const std::string& name) {
  std::optional<std::string> value = env(name);
  if (value && value->empty()) return std::nullopt;
  return value;
}

std::string StsUrl(const Environment& env, const Config& config) {
  std::string url =
      NonEmpty(env, "AWS_ENDPOINT_URL_STS")
          .value_or(NonEmpty(env, "AWS_ENDPOINT_URL")
                        .value_or(fmt::format("https://sts.{}.amazonaws.com", config.region)));
  if (url.find('/', url.find("://") == std::string::npos ? 0 : url.find("://") + 3) ==
      std::string::npos) {
    url += '/';
  }
  return url;
}

std::unique_ptr<CredentialProvider> WebIdentity(const Environment& env, const Config& config,
                                                std::string token_file, std::string role_arn,
                                                std::optional<std::string> session_name,
                                                std::string source) {
  if (!session_name) session_name = fmt::format("tfdist-{}", std::time(nullptr));
  return std::make_unique<WebIdentityProvider>(std::move(token_file), std::move(role_arn),
                                               std::move(*session_name), StsUrl(env, config),
                                               config.ca_bundle, std::move(source));
}

// A profile's credentials, or nullptr when it has none.
Result<std::unique_ptr<CredentialProvider>> FromProfile(const Environment& env, const Profile& p,
                                                        const Config& config) {
  const std::string where =
      fmt::format("profile '{}' ({} and {})", p.name, p.credentials_file, p.config_file);
  auto unsupported = [&](std::string_view kind) {
    return Status::InvalidArgument(fmt::format(
        "{} is {} profile, which tfdist does not read; give it credentials it reads "
        "(aws_access_key_id, credential_process, web_identity_token_file), or export them "
        "with the AWS CLI (aws configure export-credentials, for profile '{}')",
        where, kind, p.name));
  };
  for (std::string_view key : {"sso_session", "sso_start_url", "sso_account_id"}) {
    if (p.Find(key) != nullptr) {
      return unsupported(fmt::format("an AWS IAM Identity Center (SSO, {})", key));
    }
  }
  if (const std::string* role = p.Find("role_arn")) {
    if (const std::string* token = p.Find("web_identity_token_file")) {
      const std::string* session = p.Find("role_session_name");
      return WebIdentity(
          env, config, *token, *role, session ? std::optional<std::string>(*session) : std::nullopt,
          fmt::format("web identity (web_identity_token_file and role_arn of {})", where));
    }
    if (p.Find("source_profile") != nullptr) {
      return unsupported("an assume-role (role_arn with source_profile)");
    }
    if (p.Find("credential_source") != nullptr) {
      return unsupported("an assume-role (role_arn with credential_source)");
    }
    return unsupported("an assume-role (role_arn)");
  }
  const std::string* key_id = p.Find("aws_access_key_id");
  const std::string* secret = p.Find("aws_secret_access_key");
  if (key_id != nullptr || secret != nullptr) {
    if (key_id == nullptr || secret == nullptr || key_id->empty() || secret->empty()) {
      return Status::InvalidArgument(
          fmt::format("{} has {} but not {}", where,
                      key_id != nullptr ? "aws_access_key_id" : "aws_secret_access_key",
                      key_id != nullptr ? "aws_secret_access_key" : "aws_access_key_id"));
    }
    Credentials c{*key_id, *secret, "", std::nullopt};
    if (const std::string* token = p.Find("aws_session_token")) c.session_token = *token;
    const bool in_credentials = p.credentials_keys.contains("aws_access_key_id");
    return std::unique_ptr<CredentialProvider>(std::make_unique<StaticProvider>(
        std::move(c), fmt::format("profile '{}' of {}", p.name,
                                  in_credentials ? p.credentials_file : p.config_file)));
  }
  if (const std::string* command = p.Find("credential_process")) {
    return std::unique_ptr<CredentialProvider>(std::make_unique<ProcessProvider>(
        *command, fmt::format("credential_process of {}", where)));
  }
  if (p.Find("credential_source") != nullptr) {
    return unsupported("a credential_source");
  }
  return std::unique_ptr<CredentialProvider>();
}

}  // namespace

Result<Credentials> ParseProcessCredentials(std::string_view json,
                                            std::string_view command_source) {
  // Never quote the output in a message: it holds the secret.
  const nlohmann::json j = ParseJson(std::string(json));
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument(
        fmt::format("{} did not write a JSON object (of Version 1)", command_source));
  }
  auto text = [&](const char* key) -> std::optional<std::string> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return std::nullopt;
    return it->get<std::string>();
  };
  auto version = j.find("Version");
  if (version == j.end() || !version->is_number_integer() || version->get<int>() != 1) {
    return Status::InvalidArgument(
        fmt::format("{} wrote no \"Version\": 1; it is the only version there is", command_source));
  }
  Credentials c;
  std::optional<std::string> key = text("AccessKeyId"), secret = text("SecretAccessKey");
  if (!key || !secret || key->empty() || secret->empty()) {
    return Status::InvalidArgument(
        fmt::format("{} wrote no AccessKeyId and SecretAccessKey (strings)", command_source));
  }
  c.access_key_id = std::move(*key);
  c.secret_access_key = std::move(*secret);
  c.session_token = text("SessionToken").value_or("");
  if (auto expiration = text("Expiration")) {
    c.expiration = ParseIsoTime(*expiration);
    if (!c.expiration) {
      return Status::InvalidArgument(
          fmt::format("{} wrote an Expiration that is not an ISO 8601 time: '{}'", command_source,
                      *expiration));
    }
    if (*c.expiration <= Clock::now()) {
      return Status::InvalidArgument(
          fmt::format("{} wrote credentials that expired at {}", command_source, *expiration));
    }
  }
  return c;
}

Result<std::unique_ptr<CredentialProvider>> ResolveCredentials(const Environment& env,
                                                               const Profile& profile,
                                                               const Config& config,
                                                               bool no_sign_request) {
  if (no_sign_request) {
    return std::unique_ptr<CredentialProvider>(
        std::make_unique<AnonymousProvider>("anonymous (unsigned requests, as asked)"));
  }
  const std::optional<std::string> key_id = NonEmpty(env, "AWS_ACCESS_KEY_ID");
  const std::optional<std::string> secret = NonEmpty(env, "AWS_SECRET_ACCESS_KEY");
  if (key_id || secret) {
    if (!key_id || !secret) {
      return Status::InvalidArgument(
          fmt::format("{} is set but {} is not; set both, or neither",
                      key_id ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
                      key_id ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID"));
    }
    Credentials c{*key_id, *secret, NonEmpty(env, "AWS_SESSION_TOKEN").value_or(""), std::nullopt};
    const bool token = !c.session_token.empty();
    return std::unique_ptr<CredentialProvider>(std::make_unique<StaticProvider>(
        std::move(c), token ? "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, "
                              "AWS_SESSION_TOKEN)"
                            : "the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY)"));
  }
  const std::optional<std::string> token_file = NonEmpty(env, "AWS_WEB_IDENTITY_TOKEN_FILE");
  const std::optional<std::string> role_arn = NonEmpty(env, "AWS_ROLE_ARN");
  if (token_file && role_arn) {
    return WebIdentity(env, config, *token_file, *role_arn, NonEmpty(env, "AWS_ROLE_SESSION_NAME"),
                       "web identity (AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN)");
  }
  const bool profile_named = NonEmpty(env, "AWS_PROFILE") || NonEmpty(env, "AWS_DEFAULT_PROFILE");
  if (!profile.found && profile_named) {
    return Status::InvalidArgument(
        fmt::format("the profile '{}' ({}) is in neither {} nor {}", profile.name,
                    NonEmpty(env, "AWS_PROFILE") ? "AWS_PROFILE" : "AWS_DEFAULT_PROFILE",
                    profile.credentials_file, profile.config_file));
  }
  if (profile.found) {
    TFDIST_ASSIGN_OR_RETURN(std::unique_ptr<CredentialProvider> p,
                            FromProfile(env, profile, config));
    if (p) return p;
    if (profile_named) {
      return Status::InvalidArgument(
          fmt::format("the profile '{}' in {} and {} has no credentials (aws_access_key_id, "
                      "credential_process or web_identity_token_file)",
                      profile.name, profile.credentials_file, profile.config_file));
    }
  }
  const ImdsSettings imds = ImdsSettingsFrom(env);
  std::string metadata = "the EC2 instance metadata service is off (AWS_EC2_METADATA_DISABLED)";
  if (!imds.disabled) {
    Result<Credentials> probed = FetchImdsCredentials(imds);
    if (probed.ok()) {
      return std::unique_ptr<CredentialProvider>(
          std::make_unique<ImdsProvider>(imds, std::move(*probed)));
    }
    metadata = "the EC2 instance metadata service has none (" + probed.status().message() + ")";
  }
  std::string half;
  if (token_file || role_arn) {
    half = fmt::format(" ({} is set without {})",
                       token_file ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "AWS_ROLE_ARN",
                       token_file ? "AWS_ROLE_ARN" : "AWS_WEB_IDENTITY_TOKEN_FILE");
  }
  return Status::InvalidArgument(
             fmt::format("no AWS credentials found: none in the environment (AWS_ACCESS_KEY_ID, "
                         "AWS_WEB_IDENTITY_TOKEN_FILE){}, nor in profile '{}' of {} or {}, and {}",
                         half, profile.name, profile.credentials_file, profile.config_file,
                         metadata))
      .WithAdvice(Remedy::kNoSignRequest);
}

}  // namespace tfdist::io::s3
