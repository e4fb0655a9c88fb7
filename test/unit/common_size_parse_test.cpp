#include <doctest/doctest.h>

#include "common/size_parse.hpp"

using cairn::format_size;
using cairn::parse_mem_mb;
using cairn::parse_size_bytes;

constexpr uint64_t KiB = 1024;
constexpr uint64_t MiB = 1024 * KiB;
constexpr uint64_t GiB = 1024 * MiB;
constexpr uint64_t TiB = 1024 * GiB;
constexpr uint64_t PiB = 1024 * TiB;

TEST_CASE("parse_size_bytes: units are powers of 1024, any case, optional B or iB") {
  CHECK(parse_size_bytes("100") == 100);
  CHECK(parse_size_bytes("0") == 0);
  CHECK(parse_size_bytes("100K") == 100 * KiB);
  CHECK(parse_size_bytes("100k") == 100 * KiB);
  CHECK(parse_size_bytes("100M") == 100 * MiB);
  CHECK(parse_size_bytes("100G") == 100 * GiB);
  CHECK(parse_size_bytes("1T") == TiB);
  CHECK(parse_size_bytes("2P") == 2 * PiB);
  CHECK(parse_size_bytes("100KB") == 100 * KiB);
  CHECK(parse_size_bytes("100KiB") == 100 * KiB);
  CHECK(parse_size_bytes("100kib") == 100 * KiB);
  CHECK(parse_size_bytes("1gb") == GiB);
  CHECK(parse_size_bytes("100B") == 100);
  CHECK(parse_size_bytes("100b") == 100);
}

TEST_CASE("parse_size_bytes: decimals, rounded up to whole bytes") {
  CHECK(parse_size_bytes("1.5G") == 1610612736);
  CHECK(parse_size_bytes("0.5K") == 512);
  CHECK(parse_size_bytes("1.25T") == TiB + TiB / 4);
  CHECK(parse_size_bytes("1.0001K") == 1025);  // 1024.1024 bytes
  CHECK(parse_size_bytes("1.5") == 2);
  CHECK(parse_size_bytes("16383P") == 16383 * PiB);
}

TEST_CASE("parse_size_bytes rejects garbage, signs and overflow") {
  for (const char* bad : {"", "G", "-1", "+1", "1.5.5G", "1X", "1GBB", "1 G", " 1", "1 ", "1.", ".5G", "1e3",
                          "18446744073709551616", "16384P", "16777216T", "1KK", "1iB"})
    CHECK_MESSAGE(!parse_size_bytes(bad), bad);
}

TEST_CASE("parse_mem_mb: Slurm's --mem, MB by default, rounded up") {
  CHECK(parse_mem_mb("1000") == 1000);
  CHECK(parse_mem_mb("0") == 0);
  CHECK(parse_mem_mb("50M") == 50);
  CHECK(parse_mem_mb("50m") == 50);
  CHECK(parse_mem_mb("4G") == 4096);
  CHECK(parse_mem_mb("4GB") == 4096);
  CHECK(parse_mem_mb("1T") == 1048576);
  CHECK(parse_mem_mb("512K") == 1);
  CHECK(parse_mem_mb("1024K") == 1);
  CHECK(parse_mem_mb("1025K") == 2);
  CHECK(parse_mem_mb("1.5G") == 1536);
  for (const char* bad : {"", "abc", "-1", "4X", "4 G"}) CHECK_MESSAGE(!parse_mem_mb(bad), bad);
}

TEST_CASE("format_size: the largest exact unit") {
  CHECK(format_size(0) == "0");
  CHECK(format_size(1000) == "1000");
  CHECK(format_size(1025) == "1025");
  CHECK(format_size(KiB) == "1K");
  CHECK(format_size(1536 * MiB) == "1536M");
  CHECK(format_size(100 * GiB) == "100G");
  CHECK(format_size(TiB) == "1T");
  CHECK(format_size(3 * PiB) == "3P");
  CHECK(format_size(2048 * PiB) == "2048P");
  for (uint64_t bytes : {uint64_t{0}, uint64_t{7}, 3 * KiB, 1536 * MiB, 5 * TiB, 3 * PiB + KiB})
    CHECK(parse_size_bytes(format_size(bytes)) == bytes);
}
