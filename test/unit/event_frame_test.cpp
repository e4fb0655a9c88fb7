// The frame of several events in one Kafka record (events/log/event_frame.hpp): its
// encoding, how a group commit is split under the byte cap, and what is not a frame.
#include <doctest/doctest.h>
#include <kj/exception.h>

#include <numeric>
#include <vector>

#include "event_fixtures.hpp"
#include "events/event_codec.hpp"
#include "events/log/event_frame.hpp"
#include "log_backends.hpp"

using namespace cairn;
using namespace cairn::test;

namespace {

std::vector<std::vector<uint8_t>> events_of(const std::vector<uint8_t>& record) {
  std::vector<std::vector<uint8_t>> events;
  RecordEvents walk;
  walk.start(record);
  std::span<const uint8_t> event;
  while (!walk.ended()) {
    REQUIRE(walk.next(event));
    events.emplace_back(event.begin(), event.end());
  }
  CHECK_FALSE(walk.next(event));
  return events;
}

std::vector<uint8_t> frame_of(const std::vector<std::vector<uint8_t>>& payloads) {
  std::vector<std::span<const uint8_t>> views(payloads.begin(), payloads.end());
  std::vector<uint8_t> frame;
  encode_event_frame(views, frame);
  return frame;
}

}  // namespace

TEST_CASE("event frame: events come back in order, byte for byte, empty ones too") {
  std::vector<std::vector<uint8_t>> payloads = {payload_of(1, 40), {}, payload_of(3, 1), payload_of(4, 700)};
  auto frame = frame_of(payloads);
  CHECK(frame.size() == event_frame_bytes(4, 741));
  CHECK(looks_like_event_frame(frame));
  RecordEvents walk;
  walk.start(frame);
  CHECK(walk.framed());
  CHECK(events_of(frame) == payloads);
}

TEST_CASE("event frame: a record of one event (older builds, a lone append) is that event") {
  auto event = make::job_cancelled(at(0), 7, 9);
  CHECK_FALSE(looks_like_event_frame(event));  // a Cap'n Proto message starts with its segment table
  RecordEvents walk;
  walk.start(event);
  CHECK_FALSE(walk.framed());
  CHECK(events_of(event) == std::vector<std::vector<uint8_t>>{event});
  CHECK(events_of({}) == std::vector<std::vector<uint8_t>>(1));  // an empty record: one empty event
}

TEST_CASE("event frame: a record with the magic whose lengths do not add up is one event, left to decoding") {
  auto frame = frame_of({payload_of(1, 10), payload_of(2, 20)});
  for (auto damaged : {std::vector<uint8_t>(frame.begin(), frame.end() - 1),  // truncated
                       std::vector<uint8_t>(frame.begin(), frame.begin() + 6)}) {  // no whole count
    CAPTURE(damaged.size());
    RecordEvents walk;
    walk.start(damaged);
    CHECK_FALSE(walk.framed());
    CHECK(events_of(damaged) == std::vector<std::vector<uint8_t>>{damaged});
  }
  auto longer = frame;
  longer.push_back(0);  // a byte after the last event
  CHECK(events_of(longer).size() == 1);
  auto empty_frame = frame;
  empty_frame.resize(kEventFrameHeaderBytes);
  empty_frame[4] = 0;  // a count of 0
  CHECK(events_of(empty_frame).size() == 1);
  // A reader that does not know frames (an older build) refuses one as undecodable.
  CHECK_THROWS(DecodedEvent(5, frame).event().getHeader().getJobId());
}

TEST_CASE("event frame: a group commit is split where a frame would pass the cap") {
  std::vector<size_t> sizes = {100, 100, 100, 100, 100};
  SUBCASE("all in one frame") {
    auto pieces = plan_event_frames(sizes, event_frame_bytes(5, 500));
    REQUIRE(pieces.size() == 1);
    CHECK(pieces[0].first == 0);
    CHECK(pieces[0].count == 5);
  }
  SUBCASE("one byte less: two frames, in order") {
    auto pieces = plan_event_frames(sizes, event_frame_bytes(5, 500) - 1);
    REQUIRE(pieces.size() == 2);
    CHECK((pieces[0].first == 0 && pieces[0].count == 4));
    CHECK((pieces[1].first == 4 && pieces[1].count == 1));
  }
  SUBCASE("a cap of 0: one event per record, as older builds wrote") {
    auto pieces = plan_event_frames(sizes, 0);
    REQUIRE(pieces.size() == 5);
    for (size_t i = 0; i < pieces.size(); ++i) CHECK((pieces[i].first == i && pieces[i].count == 1));
  }
  SUBCASE("an event larger than the cap is a record of its own") {
    std::vector<size_t> mixed = {10, 10, 5000, 10};
    auto pieces = plan_event_frames(mixed, 1000);
    REQUIRE(pieces.size() == 3);
    CHECK((pieces[0].first == 0 && pieces[0].count == 2));
    CHECK((pieces[1].first == 2 && pieces[1].count == 1));
    CHECK((pieces[2].first == 3 && pieces[2].count == 1));
  }
  SUBCASE("every event is in exactly one piece, whatever the sizes") {
    std::vector<size_t> many(1000);
    for (size_t i = 0; i < many.size(); ++i) many[i] = (i * 7919) % 3000;
    auto pieces = plan_event_frames(many, 20000);
    size_t next = 0;
    for (const auto& piece : pieces) {
      CHECK(piece.first == next);
      size_t bytes = std::accumulate(many.begin() + piece.first, many.begin() + piece.first + piece.count, size_t{0});
      if (piece.count > 1) CHECK(event_frame_bytes(piece.count, bytes) <= 20000);
      next += piece.count;
    }
    CHECK(next == many.size());
  }
  CHECK(plan_event_frames({}, 1000).empty());
}
