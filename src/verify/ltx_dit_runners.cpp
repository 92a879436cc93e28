#include "verify/components.h"

namespace ltx {
void register_ltx_dit_runners(ComponentRegistry&) {}
}  // namespace ltx
