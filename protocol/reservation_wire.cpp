#include "protocol/reservation_wire.hpp"

namespace cairn {

void write_reservation_request(rpc::ReservationRequest::Builder out, const ReservationRequest& request) {
  out.setName(request.name);
  if (request.start_us) out.setHasStart(true), out.setStartUs(*request.start_us);
  if (request.end_us) out.setHasEnd(true), out.setEndUs(*request.end_us);
  if (request.duration_sec) out.setHasDuration(true), out.setDurationSec(*request.duration_sec);
  if (request.nodes) out.setHasNodes(true), out.setNodes(*request.nodes);
  if (request.node_cnt) out.setHasNodeCnt(true), out.setNodeCnt(*request.node_cnt);
  if (request.users) out.setHasUsers(true), out.setUsers(*request.users);
  if (request.accounts) out.setHasAccounts(true), out.setAccounts(*request.accounts);
  if (request.partition) out.setHasPartition(true), out.setPartition(*request.partition);
  out.setFlagsSet(request.flags.set);
  out.setFlagsClear(request.flags.clear);
}

ReservationRequest read_reservation_request(rpc::ReservationRequest::Reader in) {
  ReservationRequest request;
  request.name = in.getName();
  if (in.getHasStart()) request.start_us = in.getStartUs();
  if (in.getHasEnd()) request.end_us = in.getEndUs();
  if (in.getHasDuration()) request.duration_sec = in.getDurationSec();
  if (in.getHasNodes()) request.nodes = std::string(in.getNodes());
  if (in.getHasNodeCnt()) request.node_cnt = in.getNodeCnt();
  if (in.getHasUsers()) request.users = std::string(in.getUsers());
  if (in.getHasAccounts()) request.accounts = std::string(in.getAccounts());
  if (in.getHasPartition()) request.partition = std::string(in.getPartition());
  request.flags.set = in.getFlagsSet();
  request.flags.clear = in.getFlagsClear();
  return request;
}

}  // namespace cairn
