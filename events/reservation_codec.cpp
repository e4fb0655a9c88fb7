#include "events/reservation_codec.hpp"

namespace cairn {
namespace {

void set_texts(capnp::List<capnp::Text>::Builder out, const std::vector<std::string>& texts) {
  for (size_t i = 0; i < texts.size(); ++i) out.set(static_cast<unsigned>(i), texts[i]);
}

std::vector<std::string> texts(capnp::List<capnp::Text>::Reader in) {
  std::vector<std::string> out;
  out.reserve(in.size());
  for (auto text : in) out.emplace_back(text.cStr(), text.size());
  return out;
}

}  // namespace

void write_reservation(schema::Reservation::Builder out, const Reservation& reservation) {
  out.setId(reservation.id);
  out.setName(reservation.name);
  out.setStartUs(reservation.start_us);
  out.setEndUs(reservation.end_us);
  set_texts(out.initNodes(static_cast<unsigned>(reservation.nodes.size())), reservation.nodes);
  out.setCpus(reservation.cpus);
  set_texts(out.initUsers(static_cast<unsigned>(reservation.users.size())), reservation.users);
  set_texts(out.initAccounts(static_cast<unsigned>(reservation.accounts.size())), reservation.accounts);
  out.setPartition(reservation.partition);
  out.setFlags(reservation.flags);
}

Reservation read_reservation(schema::Reservation::Reader in) {
  Reservation reservation;
  reservation.id = in.getId();
  reservation.name = in.getName();
  reservation.start_us = in.getStartUs();
  reservation.end_us = in.getEndUs();
  reservation.nodes = texts(in.getNodes());
  reservation.cpus = in.getCpus();
  reservation.users = texts(in.getUsers());
  reservation.accounts = texts(in.getAccounts());
  reservation.partition = in.getPartition();
  reservation.flags = in.getFlags();
  return reservation;
}

}  // namespace cairn
