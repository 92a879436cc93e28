// The public C++ API of ltx, all of it. The C API over it is ltx/ltx.h.
#pragma once

#include "ltx/engine.hpp"
#include "ltx/error.hpp"
#include "ltx/options.hpp"
#include "ltx/outputs.hpp"
#include "ltx/progress.hpp"
#include "ltx/request.hpp"
#include "ltx/result.hpp"
