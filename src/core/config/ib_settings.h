// NCCL_IB_* from Braid's parameter table, as the plain settings the network backend choice
// takes (transport/net/backend_choice.h).
#pragma once

#include "transport/net/backend_choice.h"

namespace braid {

IbSettings readIbSettings();

}  // namespace braid
