// The accounts as the query view last applied them, read by submissions.
#pragma once

#include "actors/shared_value.hpp"
#include "events/accounts.hpp"

namespace cairn {

using AccountsCache = SharedValue<AccountsState>;

}  // namespace cairn
