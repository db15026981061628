// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// A server process for the S3 tests (a fake STS or metadata service, s3rver).

#ifndef TFDIST_TESTS_IO_STORAGE_S3_TEST_UTIL_H_
#define TFDIST_TESTS_IO_STORAGE_S3_TEST_UTIL_H_

#include <arpa/inet.h>
#include <doctest/doctest.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

extern char** environ;

namespace tfdist::io::s3 {

// A child process whose first line of standard output (not empty) says it is ready;
// terminated (SIGTERM, by its id) and reaped at destruction.
class Child {
 public:
  Child(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
    int fds[2];
    REQUIRE(pipe2(fds, O_CLOEXEC) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    std::vector<std::string> env_text(extra_env);
    for (char** e = environ; *e != nullptr; ++e) env_text.emplace_back(*e);
    std::vector<char*> env;
    for (std::string& e : env_text) env.push_back(e.data());
    env.push_back(nullptr);
    REQUIRE(posix_spawnp(&pid_, args[0], &actions, nullptr, args.data(), env.data()) == 0);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    out_ = fdopen(fds[0], "r");
    char line[4096];
    do {  // s3rver starts with an empty line
      REQUIRE(fgets(line, sizeof line, out_) != nullptr);
      first_line_ = line;
    } while (first_line_ == "\n");
  }
  ~Child() {
    kill(pid_, SIGTERM);
    int status;
    waitpid(pid_, &status, 0);
    fclose(out_);
  }
  const std::string& first_line() const { return first_line_; }

 private:
  pid_t pid_ = 0;
  FILE* out_ = nullptr;
  std::string first_line_;
};

// A port of 127.0.0.1 that nothing listens on now.
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  socklen_t len = sizeof addr;
  REQUIRE(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0);
  close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace tfdist::io::s3

#endif  // TFDIST_TESTS_IO_STORAGE_S3_TEST_UTIL_H_
