// The `ltx` command line: one subcommand per file under tools/ltx/.
#include <cstdio>
#include <exception>
#include <string>

#include "core/error.h"

int main(int argc, char** argv) {
  try {
    std::fprintf(stderr, "usage: ltx <command> ...\n");
    return argc > 1 ? 2 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ltx: %s\n", e.what());
    return 1;
  }
}
