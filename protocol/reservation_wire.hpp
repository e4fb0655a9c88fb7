// scontrol create|update reservation's request on the wire (Controller.writeReservation)
// <-> events/reservation_plan.hpp. The reservations themselves: events/reservation_codec.hpp.
#pragma once

#include "capnp/rpc.capnp.h"
#include "events/reservation_plan.hpp"

namespace cairn {

void write_reservation_request(rpc::ReservationRequest::Builder out, const ReservationRequest& request);
ReservationRequest read_reservation_request(rpc::ReservationRequest::Reader in);

}  // namespace cairn
