// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// For the tests of remote reading: the Python servers of tests/remote
// (range_server.py, fault_proxy.py) started on free ports of 127.0.0.1, and
// small HTTP requests to their control paths.

#ifndef TFDIST_TESTS_IO_REMOTE_SERVERS_H_
#define TFDIST_TESTS_IO_REMOTE_SERVERS_H_

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

extern char** environ;

namespace tfdist::testing {

// Whether python3 runs here (the tests skip, exit 77, when not).
inline bool HavePython() { return std::system("python3 -c '' >/dev/null 2>&1") == 0; }

// A Python script of tests/remote (run from the source root), killed on
// destruction. port() is the port it printed.
class PythonServer {
 public:
  explicit PythonServer(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"python3"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> raw;
    for (std::string& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    REQUIRE(posix_spawnp(&pid_, "python3", &actions, nullptr, raw.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    std::string line;
    char c;
    while (read(fds[0], &c, 1) == 1 && c != '\n') line += c;
    close(fds[0]);
    port_ = std::atoi(line.c_str());
    REQUIRE_MESSAGE(port_ > 0, fmt::format("{} printed no port", args.at(0)));
  }
  ~PythonServer() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  PythonServer(const PythonServer&) = delete;
  PythonServer& operator=(const PythonServer&) = delete;

  int port() const { return port_; }
  std::string url() const { return fmt::format("http://127.0.0.1:{}", port_); }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

// The body of GET http://127.0.0.1:PORT/PATH (a control path), by python3.
inline std::string GetText(int port, const std::string& path) {
  const std::string command = fmt::format(
      "python3 -c 'import sys,urllib.request;"
      "sys.stdout.write(urllib.request.urlopen(sys.argv[1]).read().decode())' "
      "'http://127.0.0.1:{}{}'",
      port, path);
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

// A port of 127.0.0.1 where nothing listens (bound, then closed).
inline int ClosedPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

}  // namespace tfdist::testing

#endif  // TFDIST_TESTS_IO_REMOTE_SERVERS_H_
