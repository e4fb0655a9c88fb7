#include "protocol/account_codec.hpp"

#include "events/record_codec.hpp"

namespace cairn {

void write_account_command(rpc::AccountCommand::Builder out, const AccountCommand& command) {
  out.setVerb(static_cast<rpc::AccountVerb>(command.verb));
  set_texts(out.initNames(static_cast<unsigned>(command.names.size())), command.names);
  out.setDescription(command.description);
  out.setOrganization(command.organization);
  out.setParent(command.parent);
  set_texts(out.initAccounts(static_cast<unsigned>(command.accounts.size())), command.accounts);
  out.setDefaultAccount(command.default_account);
  set_texts(out.initSettings(static_cast<unsigned>(command.settings.size())), command.settings);
}

AccountCommand read_account_command(rpc::AccountCommand::Reader in) {
  AccountCommand command;
  command.verb = static_cast<AccountVerb>(in.getVerb());
  command.names = get_texts(in.getNames());
  command.description = in.getDescription();
  command.organization = in.getOrganization();
  command.parent = in.getParent();
  command.accounts = get_texts(in.getAccounts());
  command.default_account = in.getDefaultAccount();
  command.settings = get_texts(in.getSettings());
  return command;
}

}  // namespace cairn
