// sacctmgr's changes to accounts and associations. Only root, SlurmUser and
// Operators= may make them. One command at a time: it is planned against the
// folded state (which includes every earlier command's events), its events are
// appended in order, and the caller is answered once the query view applied them,
// so that a submission right after sees them.
#include <caf/all.hpp>
#include <spdlog/spdlog.h>

#include <deque>

#include "actors/actors.hpp"

namespace cairn {
namespace {

struct PendingCommand {
  AccountCommand command;
  Caller caller;
  caf::typed_response_promise<AccountOutcome> reply;
};

struct AccountAdminState {
  std::shared_ptr<const ControllerContext> context;
  std::deque<PendingCommand> queue;
  bool busy = false;
  uint64_t min_offset = 0;  // the state a plan reads must include our earlier events
  static inline const char* name = "account_admin";
};

using AccountAdmin = std::remove_pointer_t<AccountAdminActor::stateful_pointer<AccountAdminState>>;

void next_command(AccountAdmin* self);

void finish(AccountAdmin* self, caf::typed_response_promise<AccountOutcome> reply, const AccountOutcome& outcome) {
  reply.deliver(outcome);
  self->state.busy = false;
  next_command(self);
}

// Appends the changes one after the other; answers once the last is applied.
void append_changes(AccountAdmin* self, std::shared_ptr<std::vector<AccountChange>> changes, size_t index,
                    std::shared_ptr<PendingCommand> pending) {
  auto& st = self->state;
  if (index == changes->size()) {
    self->request(st.context->actors.query_view, caf::infinite, query_accounts_atom::value, st.min_offset)
        .then([=](const AccountsState&) { finish(self, pending->reply, {true, true, {}}); });
    return;
  }
  EventDraft draft;
  draft.actor = actor_info(pending->caller);
  draft.command_id = pending->caller.command_id;
  AccountChange change = (*changes)[index];
  draft.build = [change](const EventMeta& meta) { return make::account_change(meta, change); };
  self->request(st.context->actors.log, caf::infinite, append_atom::value, std::move(draft))
      .then([=](const AppendAck& ack) {
        if (!ack.ok) return finish(self, pending->reply, {false, false, ack.error});
        self->state.min_offset = std::max(self->state.min_offset, ack.offset + 1);
        append_changes(self, changes, index + 1, pending);
      });
}

void next_command(AccountAdmin* self) {
  auto& st = self->state;
  if (st.busy || st.queue.empty()) return;
  st.busy = true;
  auto pending = std::make_shared<PendingCommand>(std::move(st.queue.front()));
  st.queue.pop_front();
  self->request(st.context->actors.query_view, caf::infinite, query_accounts_atom::value, st.min_offset)
      .then([=](const AccountsState& accounts) {
        AccountPlan plan = plan_account_command(accounts, pending->command, self->state.context->config().cluster_name);
        if (!plan.error.empty()) return finish(self, pending->reply, {false, false, plan.error});
        if (plan.changes.empty()) return finish(self, pending->reply, {true, false, {}});
        spdlog::info("accounts: {} by {} (uid {})", plan.summary.substr(0, plan.summary.find('\n')),
                     pending->caller.user, pending->caller.uid);
        append_changes(self, std::make_shared<std::vector<AccountChange>>(std::move(plan.changes)), 0, pending);
      });
}

AccountAdminActor::behavior_type account_admin(AccountAdmin* self, std::shared_ptr<const ControllerContext> context) {
  self->state.context = std::move(context);
  log_failed_requests(self, "account_admin");
  return {
      [=](account_atom, AccountCommand& command, const Caller& caller) -> caf::result<AccountOutcome> {
        if (!caller.may_write) return AccountOutcome{false, false, std::string(kReadOnlyDenied)};
        if (!caller.is_operator) return AccountOutcome{false, false, "Access/permission denied"};
        auto promise = self->make_response_promise<AccountOutcome>();
        self->state.queue.push_back({std::move(command), caller, promise});
        next_command(self);
        return promise;
      },
  };
}

}  // namespace

AccountAdminActor spawn_account_admin(caf::actor_system& system, std::shared_ptr<const ControllerContext> context) {
  return system.spawn(account_admin, std::move(context));
}

}  // namespace cairn
