// A reservation's Cap'n Proto form (events.capnp Reservation): the events, the snapshot and
// the RPC answers share it.
#pragma once

#include "capnp/events.capnp.h"
#include "events/reservation.hpp"

namespace cairn {

void write_reservation(schema::Reservation::Builder out, const Reservation& reservation);
Reservation read_reservation(schema::Reservation::Reader in);

}  // namespace cairn
