// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The parts of the S3 store (storage_s3*.cc), apart for their unit tests:
// Signature Version 4, the AWS configuration (shared files, environment,
// endpoint, addressing), the credential chain, and S3's XML. Private to io.

#ifndef TFDIST_IO_STORAGE_S3_INTERNAL_H_
#define TFDIST_IO_STORAGE_S3_INTERNAL_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage_http.h"
#include "tfdist/base/result.h"
#include "tfdist/base/status.h"
#include "tfdist/io/storage.h"

namespace tfdist::io::s3 {

// ---- Signing (storage_s3_sign.cc) -------------------------------------------

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty for long-term keys
  // When temporary credentials stop working; nullopt when they do not expire.
  std::optional<std::chrono::system_clock::time_point> expiration;
};

// SHA-256 of `data` as 64 lower-case hex digits.
std::string Sha256Hex(std::string_view data);

// "20130524T000000Z": the x-amz-date of `time`.
std::string AmzDate(std::chrono::system_clock::time_point time);

// Percent-encodes `text` as SigV4 and S3 do: every byte but A-Z a-z 0-9
// - . _ ~ as %XX (upper-case hex); '/' kept when `keep_slash`.
std::string AwsUriEncode(std::string_view text, bool keep_slash);

// %XX decoded (a '%' not followed by two hex digits is kept as is); '+' is
// a space when `plus_is_space` (S3's encoding-type=url listings write keys so).
std::string PercentDecode(std::string_view text, bool plus_is_space);

// Signs `request` for S3 in `region` at `amz_date` (AmzDate): sets
// x-amz-date, x-amz-content-sha256 (the SHA-256 of the body, the empty
// body's for GET and HEAD), x-amz-security-token for a session token, and
// Authorization (AWS4-HMAC-SHA256 over host and every x-amz-* header).
// Headers of an earlier signature are replaced, so it may sign each attempt.
// The canonical URI is the URL's path with each segment encoded once
// (AwsUriEncode; '/' kept); the canonical query its parameters encoded and
// sorted. Error: InvalidArgument for a URL it cannot split.
Status SignV4(http::Request& request, const Credentials& credentials, std::string_view region,
              std::string_view amz_date);

// ---- Configuration (storage_s3_config.cc) -----------------------------------

// An environment variable's value, or nullopt when unset; tests give their own.
using Environment = std::function<std::optional<std::string>(const std::string& name)>;
Environment ProcessEnvironment();

// An AWS shared file (credentials or config): section -> key -> value. A
// nested block ("s3 =" then indented "addressing_style = path") is kept as
// "s3.addressing_style".
using IniSections =
    std::map<std::string, std::map<std::string, std::string, std::less<>>, std::less<>>;
IniSections ParseIni(std::string_view text);

enum class AddressingStyle { kAuto, kPath, kVirtual };

// One profile of the shared files, both files' keys merged (the credentials
// file's win).
struct Profile {
  std::string name;
  std::map<std::string, std::string, std::less<>> keys;
  std::map<std::string, std::string, std::less<>> credentials_keys;  // from the credentials file
  std::string credentials_file, config_file;                         // paths, for messages
  bool found = false;                                                // in either file

  const std::string* Find(std::string_view key) const;
};

// The profile AWS_PROFILE (else AWS_DEFAULT_PROFILE, else "default") names,
// from AWS_SHARED_CREDENTIALS_FILE / AWS_CONFIG_FILE (else ~/.aws/credentials
// and ~/.aws/config). Files that do not exist are empty. Error: NotFound for
// a file that exists but cannot be read.
Result<Profile> LoadProfile(const Environment& env);

struct Endpoint {
  std::string scheme;     // "https" or "http"
  std::string host;       // with ":port" when one is given
  std::string base_path;  // a path prefix of a custom endpoint ("" or "/minio")
  bool custom = false;    // named by a variable or the config file
  std::string source;     // what named it, for messages ("AWS_ENDPOINT_URL_S3")
};

struct Config {
  std::string region;
  std::string region_source;
  Endpoint endpoint;
  AddressingStyle addressing = AddressingStyle::kAuto;
  bool verify_tls = true;
  std::string ca_bundle;  // AWS_CA_BUNDLE or the profile's ca_bundle; empty: the system's
  std::vector<std::string> warnings;  // sentences, without "warning: "
};

// Region, endpoint, addressing and TLS from the environment and `profile`:
//  region: AWS_REGION, AWS_DEFAULT_REGION, the profile's region, us-east-1;
//  endpoint: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, the profile's
//    endpoint_url, tensorflow-io's S3_ENDPOINT (with S3_USE_HTTPS), else
//    https://s3.REGION.amazonaws.com;
//  addressing: the profile's "s3 = addressing_style = auto|path|virtual";
//  TLS: S3_VERIFY_SSL=0 only with a named endpoint (with a warning).
// Error: InvalidArgument naming the variable or file of a bad value.
Result<Config> LoadConfig(const Environment& env, const Profile& profile);

// Whether `bucket` can be a host name label set under the endpoint: 3 to 63
// lower-case letters, digits, '-' and '.', starting and ending with a letter
// or digit, no "..", not an IP address; and no '.' over https (the
// certificate's wildcard covers one label).
bool IsVirtualHostable(std::string_view bucket, bool https);

// Whether requests for `bucket` name it in the path ("https://host/bucket/key")
// rather than the host ("https://bucket.host/key").
bool UsesPathStyle(const Config& config, std::string_view bucket);

// The URL of `key` in `bucket` ('/' kept, each segment encoded), or of the
// bucket when `key` is empty, with `query` (already encoded, without '?')
// when not empty.
std::string ObjectUrl(const Config& config, std::string_view bucket, std::string_view key,
                      std::string_view query = "");

// ---- Credentials (storage_s3_credentials.cc) --------------------------------

// Where credentials come from, refreshed before they expire. Thread-safe.
class CredentialProvider {
 public:
  virtual ~CredentialProvider() = default;
  // Credentials valid for at least a minute more; nullopt: sign nothing
  // (anonymous).
  virtual Result<std::optional<Credentials>> Get() = 0;
  // "the environment (AWS_ACCESS_KEY_ID)", "profile 'ci' of FILE": never a value.
  virtual std::string Source() const = 0;
};

// The first source of the AWS SDKs' chain that is configured:
//  1. `no_sign_request`: anonymous;
//  2. AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY [+ AWS_SESSION_TOKEN];
//  3. AWS_WEB_IDENTITY_TOKEN_FILE + AWS_ROLE_ARN [+ AWS_ROLE_SESSION_NAME]:
//     STS AssumeRoleWithWebIdentity (AWS_ENDPOINT_URL_STS, else
//     https://sts.REGION.amazonaws.com);
//  4. the profile: static keys [+ aws_session_token], credential_process,
//     web_identity_token_file + role_arn;
//  5. the EC2 instance metadata service, unless AWS_EC2_METADATA_DISABLED
//     is "true" (ImdsSettingsFrom).
// Error: InvalidArgument for a profile of a kind tfdist does not read (SSO,
// assume-role with source_profile or credential_source) naming the kind and
// the profile, for half a key pair, for an AWS_PROFILE that no file has,
// and when no source has credentials (naming what was looked at, and
// --no-sign-request for public buckets).
Result<std::unique_ptr<CredentialProvider>> ResolveCredentials(const Environment& env,
                                                               const Profile& profile,
                                                               const Config& config,
                                                               bool no_sign_request);

// The EC2 instance metadata service, as the SDKs' variables set it.
struct ImdsSettings {
  bool disabled = false;       // AWS_EC2_METADATA_DISABLED=true
  std::string endpoint;        // AWS_EC2_METADATA_SERVICE_ENDPOINT
  double timeout_seconds = 1;  // AWS_METADATA_SERVICE_TIMEOUT
  int attempts = 1;            // AWS_METADATA_SERVICE_NUM_ATTEMPTS
};
ImdsSettings ImdsSettingsFrom(const Environment& env);

// An instance role's credentials from the metadata service (IMDSv2, else
// v1) (storage_s3_imds.cc). Error: Unavailable saying why (no answer, no
// role attached), never a value.
Result<Credentials> FetchImdsCredentials(const ImdsSettings& imds);

// A credential_process's standard output (its JSON, Version 1).
// Error: InvalidArgument naming `command_source` for anything else.
Result<Credentials> ParseProcessCredentials(std::string_view json, std::string_view command_source);

// ---- XML (storage_s3_xml.cc) -----------------------------------------------

struct ListPage {
  std::vector<ObjectInfo> objects;  // names "s3://BUCKET/KEY"
  bool truncated = false;
  std::string next_token;  // NextContinuationToken
};

// One page of ListObjectsV2 (ListBucketResult) for `bucket`, keys decoded
// when the page says EncodingType url. Error: DataLoss naming `url` for a
// body that is not such a page (not XML, a DTD, a Contents without Key or
// Size, a truncated page without a token).
Result<ListPage> ParseListPage(std::string_view xml, std::string_view bucket, std::string_view url);

// S3's <Error><Code>..</Code><Message>..</Message></Error> (and STS's
// <ErrorResponse><Error>..), or empty strings when the body has none.
std::pair<std::string, std::string> ParseErrorXml(std::string_view xml);

// STS's AssumeRoleWithWebIdentityResult: Credentials' AccessKeyId,
// SecretAccessKey, SessionToken, Expiration. Error: DataLoss naming `url`.
Result<Credentials> ParseStsCredentials(std::string_view xml, std::string_view url);

// "2026-11-27T05:04:03Z" (also with fractional seconds or "+00:00") as a time.
std::optional<std::chrono::system_clock::time_point> ParseIsoTime(std::string_view text);

// ---- The store (storage_s3.cc) ---------------------------------------------

// The store with `env` and `no_sign_request`, for tests; NewS3Storage
// reads the process's environment and RemoteOptions. Its errors come when used.
std::unique_ptr<Storage> NewS3StorageFrom(const Environment& env, bool no_sign_request);

// For tests: the page size of listings (1000, S3's most).
void SetListPageSizeForTesting(int max_keys);

}  // namespace tfdist::io::s3

#endif  // TFDIST_IO_STORAGE_S3_INTERNAL_H_
