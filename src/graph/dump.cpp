#include "graph/dump.h"

#include "io/safetensors.h"

namespace ltx {

void dump_tensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& tensors) {
  write_safetensors(path, tensors, {{"producer", "ltx LTX_DUMP"}});
}

}  // namespace ltx
