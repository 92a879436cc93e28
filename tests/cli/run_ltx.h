// Runs the built `ltx` binary (LTX_CLI_PATH) with arguments, capturing its exit code and output.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace ltx {

struct CliRun {
  int code;
  std::string output;  // stdout and stderr together
};

inline CliRun run_ltx(const std::string& args) {
  const std::string command = std::string(LTX_CLI_PATH) + " " + args + " 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, "popen failed"};
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace ltx
