#include <doctest/doctest.h>

#include <set>
#include <string>
#include <vector>

#include "common/hostlist.hpp"

using cairn::compress_hostlist;
using cairn::expand_hostlist;
using cairn::HostlistError;
using Names = std::vector<std::string>;

TEST_CASE("expand_hostlist: single names and lists") {
  CHECK(expand_hostlist("n1") == Names{"n1"});
  CHECK(expand_hostlist("a,b,c") == Names{"a", "b", "c"});
  CHECK(expand_hostlist("a b\tc") == Names{"a", "b", "c"});
  CHECK(expand_hostlist("a,,b,") == Names{"a", "b"});
  CHECK(expand_hostlist("").empty());
  CHECK(expand_hostlist("n1,n1") == Names{"n1", "n1"});  // duplicates kept, as Slurm does
}

TEST_CASE("expand_hostlist: ranges keep the low bound's width") {
  CHECK(expand_hostlist("n[1-4]") == Names{"n1", "n2", "n3", "n4"});
  CHECK(expand_hostlist("n[01-10,15]") ==
        Names{"n01", "n02", "n03", "n04", "n05", "n06", "n07", "n08", "n09", "n10", "n15"});
  CHECK(expand_hostlist("n[8-10]") == Names{"n8", "n9", "n10"});
  CHECK(expand_hostlist("n[008-010]") == Names{"n008", "n009", "n010"});
  CHECK(expand_hostlist("n[3]") == Names{"n3"});
  CHECK(expand_hostlist("n[5,1-2]") == Names{"n5", "n1", "n2"});
  CHECK(expand_hostlist("[1-2]") == Names{"1", "2"});
}

TEST_CASE("expand_hostlist: several items and bracket groups") {
  CHECK(expand_hostlist("n[1-2],m[3-4]") == Names{"n1", "n2", "m3", "m4"});
  CHECK(expand_hostlist("rack[1-2]n[1-2]") == Names{"rack1n1", "rack1n2", "rack2n1", "rack2n2"});
  CHECK(expand_hostlist("n[1-2]-ib") == Names{"n1-ib", "n2-ib"});
  CHECK(expand_hostlist("login,n[1-2] gpu[01-02]") == Names{"login", "n1", "n2", "gpu01", "gpu02"});
  CHECK(expand_hostlist("10.0.0.[1-2]") == Names{"10.0.0.1", "10.0.0.2"});
}

TEST_CASE("expand_hostlist: malformed input throws a message naming the input") {
  auto message_of = [](const char* text) {
    try {
      expand_hostlist(text);
    } catch (const HostlistError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK(message_of("n[4-1]") == "invalid hostlist \"n[4-1]\": range '4-1' is descending");
  CHECK(message_of("n[1-") == "invalid hostlist \"n[1-\": missing ']'");
  CHECK(message_of("n[a-b]") == "invalid hostlist \"n[a-b]\": 'a-b' is not a number or a range of numbers");
  CHECK(message_of("n[]") == "invalid hostlist \"n[]\": empty brackets");
  CHECK(message_of("n]") == "invalid hostlist \"n]\": ']' without '['");
  CHECK(message_of("n[1[2]]") == "invalid hostlist \"n[1[2]]\": nested '['");
  CHECK(message_of("n[0-70000]") == "invalid hostlist \"n[0-70000]\": range '0-70000' has too many hosts");
  CHECK(message_of("n[1 2]") == "invalid hostlist \"n[1 2]\": space inside brackets");
  CHECK_THROWS_AS(expand_hostlist("n[1,]"), HostlistError);
  CHECK_THROWS_AS(expand_hostlist("n[-1]"), HostlistError);
  CHECK_THROWS_AS(expand_hostlist("n[1-2-3]"), HostlistError);
  CHECK_THROWS_AS(expand_hostlist("n[1-2"), HostlistError);
  CHECK_THROWS_AS(expand_hostlist("n[1-2],m[3"), HostlistError);
  CHECK_THROWS_AS(expand_hostlist("n[1234567890123456789]"), HostlistError);
  CHECK_THROWS_AS(expand_hostlist("a[0-999]b[0-999]"), HostlistError);  // product too big
  CHECK_THROWS_AS(expand_hostlist("n[4-1]"), std::runtime_error);
}

TEST_CASE("compress_hostlist: Slurm's compact form") {
  CHECK(compress_hostlist({"n1", "n2", "n3", "n5"}) == "n[1-3,5]");
  CHECK(compress_hostlist({"n01", "n02"}) == "n[01-02]");
  CHECK(compress_hostlist({"a"}) == "a");
  CHECK(compress_hostlist({}) == "");
  CHECK(compress_hostlist({"n5"}) == "n5");
  CHECK(compress_hostlist({"n3", "n1", "n2"}) == "n[1-3]");
  CHECK(compress_hostlist({"n1", "n1", "n2"}) == "n[1-2]");
  CHECK(compress_hostlist({"n9", "n10"}) == "n[9-10]");
  CHECK(compress_hostlist({"n09", "n10"}) == "n[09-10]");
  CHECK(compress_hostlist({"n1", "n01"}) == "n[1,01]");
  CHECK(compress_hostlist({"n1", "n3", "n5"}) == "n[1,3,5]");
}

TEST_CASE("compress_hostlist: prefixes in order of first appearance") {
  CHECK(compress_hostlist({"b2", "a1", "b1"}) == "b[1-2],a1");
  CHECK(compress_hostlist({"login", "n1", "n2", "login"}) == "login,n[1-2]");
  CHECK(compress_hostlist({"rack1n1", "rack1n2", "rack2n1"}) == "rack1n[1-2],rack2n1");
  CHECK(compress_hostlist({"n", "n1"}) == "n,n1");
  CHECK(compress_hostlist({"n1-ib", "n2-ib"}) == "n1-ib,n2-ib");
}

TEST_CASE("compress_hostlist inverts expand_hostlist") {
  for (const char* text : {"n[01-10,15],m[3-4],x", "n[1-3,5]", "gpu[001-128]", "a,b,c"})
    CHECK(compress_hostlist(expand_hostlist(text)) == text);
}

TEST_CASE("compress_hostlist: what an expression expands to compresses to one that expands again") {
  // Found by fuzz_hostlist: "x,n001,n2[0-65535]" gave 65538 names, compressed into one group of
  // 65537 numbers that was beyond the expansion limit. An expression now gives at most 64K names.
  CHECK_THROWS_AS(expand_hostlist("x,n001,n2[0-65535]"), HostlistError);
  auto names = expand_hostlist("x,n001,n2[0-65533]");
  REQUIRE(names.size() == 65536);
  auto compressed = compress_hostlist(names);
  CHECK(compressed.starts_with("x,n[001,20-29,210-299,"));
  auto again = expand_hostlist(compressed);
  CHECK(std::set<std::string>(again.begin(), again.end()) == std::set<std::string>(names.begin(), names.end()));
}

TEST_CASE("expand_hostlist: at most 64K names in all") {
  CHECK(expand_hostlist("a[0-32767],b[0-32767]").size() == 65536);
  CHECK_THROWS_WITH_AS(expand_hostlist("a[0-32767],b[0-32767],extra"), doctest::Contains("too many hosts"),
                       HostlistError);
  CHECK_THROWS_WITH_AS(expand_hostlist("a[0-32767],b[0-32768]"), doctest::Contains("too many hosts"), HostlistError);
  CHECK(expand_hostlist("a[0-32767,32768-65535]").size() == 65536);
  CHECK_THROWS_WITH_AS(expand_hostlist("a[0-65535,0-65535]"), doctest::Contains("too many hosts"), HostlistError);
}

TEST_CASE("expand_hostlist: a lower ceiling is applied the same way") {
  CHECK(expand_hostlist("n[1-4],m", 5).size() == 5);
  CHECK_THROWS_WITH_AS(expand_hostlist("n[1-5],m", 5), doctest::Contains("too many hosts"), HostlistError);
  CHECK_THROWS_WITH_AS(expand_hostlist("n[1-6]", 5), doctest::Contains("has too many hosts"), HostlistError);
  CHECK_THROWS_WITH_AS(expand_hostlist("r[1-3]n[1-2]", 5), doctest::Contains("too many hosts"), HostlistError);
}
