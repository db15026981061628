// Copyright 2026 The tfdist Authors. SPDX-License-Identifier: Apache-2.0
// The shared vocabulary: the nearest option to a mistyped one, and the
// spellings of the last release replaced by today's.

#include "vocabulary.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace tfdist::cli {
namespace {

TEST_CASE("the nearest option: the one begun, else one a slip or two away") {
  const std::vector<std::string> names = {"--workers",      "--worker", "--replicas", "--steps",
                                          "--step-time-ms", "-n",       "--limit"};
  CHECK(NearestName("--replica", names) == "--replicas");
  CHECK(NearestName("--step-time", names) == "--step-time-ms");
  CHECK(NearestName("--replcias", names) == "--replicas");
  CHECK(NearestName("--wokers", names) == "--workers");
  CHECK(NearestName("--limt", names) == "--limit");
  // --work begins two: the nearer by distance.
  CHECK(NearestName("--work", names) == "--worker");
  CHECK(NearestName("--frobnicate", names).empty());
  CHECK(NearestName("-x", names).empty());
  CHECK(NearestName("--", names).empty());
}

// A command as the commands make theirs: visible options, and a hidden one.
struct Command {
  CLI::App app{"tfdist"};
  CLI::App* cmd = app.add_subcommand("reshard", "");
  std::string in, out, format;
  int n = 0;
  Command() {
    cmd->add_option("--input-compression", in);
    cmd->add_option("--output-compression", out);
    cmd->add_option("--num-shards", n);
    cmd->add_option("--format", format);
    cmd->add_option("--hidden-for-testing", n)->group("");
  }
};

TEST_CASE("an unknown option is named with the command's nearest visible one") {
  Command c;
  CHECK(UnknownOptionMessage(*c.cmd, {"a.tfrecord", "--num-shard", "3"}) ==
        "reshard has no option --num-shard; did you mean --num-shards?");
  CHECK(UnknownOptionMessage(*c.cmd, {"--output-compresion=gzip"}) ==
        "reshard has no option --output-compresion; did you mean --output-compression?");
  CHECK(UnknownOptionMessage(*c.cmd, {"--bogus"}) ==
        "reshard has no option --bogus (tfdist reshard --help lists them)");
  // Known options, values, numbers and what follows -- are not options.
  CHECK_FALSE(UnknownOptionMessage(*c.cmd, {"--num-shards", "-1", "--format=json"}));
  CHECK_FALSE(UnknownOptionMessage(*c.cmd, {"--hidden-for-testing", "1"}));
  CHECK_FALSE(UnknownOptionMessage(*c.cmd, {"--", "--bogus"}));
  // A hidden option is never suggested.
  CHECK(UnknownOptionMessage(*c.cmd, {"--hidden-for-testin"}) ==
        "reshard has no option --hidden-for-testin (tfdist reshard --help lists them)");
}

TEST_CASE("the spellings of the last release become today's, with their values") {
  Command c;
  using V = std::vector<std::string>;
  CHECK(ReplaceDeprecated(*c.cmd, V{"-n", "4", "--compression", "gzip", "x"}) ==
        V{"--num-shards", "4", "--output-compression", "gzip", "x"});
  CHECK(ReplaceDeprecated(*c.cmd, V{"-n4", "--compression=zlib"}) ==
        V{"--num-shards=4", "--output-compression=zlib"});
  CHECK(ReplaceDeprecated(*c.cmd, V{"--", "-n", "--compression"}) ==
        V{"--", "-n", "--compression"});
  // A command that only reads: --compression is its input's.
  CLI::App app{"tfdist"};
  CLI::App* count = app.add_subcommand("count", "");
  std::string in;
  count->add_option("--input-compression", in);
  CHECK(ReplaceDeprecated(*count, V{"--compression", "none", "-n", "2"}) ==
        V{"--input-compression", "none", "-n", "2"});
  // take's --summary is --format summary.
  CLI::App* take = app.add_subcommand("take", "");
  take->add_option("--format", in);
  CHECK(ReplaceDeprecated(*take, V{"--summary", "range(3)"}) == V{"--format=summary", "range(3)"});
}

}  // namespace
}  // namespace tfdist::cli
