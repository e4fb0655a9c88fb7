// sacctmgr's changes on the wire (Controller.accountCommand) <-> events/accounts.hpp.
// The accounts themselves (queryAccounts, snapshots) are a record: events/record_codec.hpp.
#pragma once

#include "capnp/rpc.capnp.h"
#include "events/accounts.hpp"

namespace cairn {

void write_account_command(rpc::AccountCommand::Builder out, const AccountCommand& command);
AccountCommand read_account_command(rpc::AccountCommand::Reader in);

}  // namespace cairn
