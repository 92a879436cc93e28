// The engine's cache folder, where what is made once is kept between processes (the embedded default model's file,
// a GGUF text encoder's decoded matrices, XLA's compiled executables).
#pragma once

#include <string>

namespace ltx {

// $LTX_CACHE_DIR, else $XDG_CACHE_HOME/ltx, else ~/.cache/ltx; throws when none of them is set.
std::string cache_dir();

// The same folder for prepared artifacts (decoded weights, compiled executables), or empty (no cache) when
// LTX_PREPARED_CACHE=0 or no folder can be named.
std::string prepared_cache_dir();

}  // namespace ltx
