// A weight source seen under other names: a checkpoint in another layout (e.g. Diffusers') presented with the
// names a model's loader asks for. Tensors stay the file's zero-copy views.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "nn/weight_source.h"

namespace ltx {

using KeyRename = std::function<std::string(std::string_view)>;

// `to_file` maps a model name to the file's name, `from_file` the reverse (they must be inverses on the file's
// names; construction checks that no two file names map to one model name). `layout` names the file's layout in
// describe(), and file_name() gives the file's own name of a tensor for error messages.
std::shared_ptr<WeightSource> rename_weights(std::shared_ptr<const WeightSource> file, KeyRename to_file,
                                             KeyRename from_file, std::string layout);

}  // namespace ltx
