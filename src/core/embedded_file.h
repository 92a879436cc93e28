// Links a file's bytes into the binary with the assembler's .incbin, so that the program needs no data files beside
// it (the synth layouts, the embedded default model). The path is a string literal the build system completes (a
// folder passed as a compile definition): list the file as the source's OBJECT_DEPENDS in CMakeLists.txt, so that
// editing it rebuilds the object (ccache does not cache a source that uses .incbin, so it never serves a stale one).
#pragma once

// Defines symbol_begin / symbol_end around the file's bytes (16-byte aligned), followed by a NUL that is not part
// of them (so a text file can be read as a C string).
// clang-format off
#define LTX_EMBED_FILE(symbol, path)                                                     \
  __asm__(".pushsection .rodata\n"                                                       \
          ".balign 16\n"                                                                 \
          ".globl " #symbol "_begin\n"                                                   \
          ".hidden " #symbol "_begin\n"                                                  \
          #symbol "_begin:\n"                                                            \
          ".incbin \"" path "\"\n"                                                       \
          ".globl " #symbol "_end\n"                                                     \
          ".hidden " #symbol "_end\n"                                                    \
          #symbol "_end:\n"                                                              \
          ".byte 0\n"                                                                    \
          ".popsection\n");                                                              \
  extern "C" __attribute__((visibility("hidden"))) const char symbol##_begin[]; /* NOLINT */ \
  extern "C" __attribute__((visibility("hidden"))) const char symbol##_end[];   /* NOLINT */
// clang-format on
