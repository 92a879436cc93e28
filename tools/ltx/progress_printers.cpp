#include "progress_printers.h"

#include <nlohmann/json.hpp>

namespace ltx::cli {
namespace {

using Json = nlohmann::json;

std::string text(std::string_view s) { return std::string(s); }

}  // namespace

void TextProgressPrinter::print(const ProgressEvent& e) {
  const std::string stage = text(e.stage);
  switch (e.kind) {
    case ProgressEvent::Kind::Begin:
      if (terminal_) {
        std::fprintf(out_, "\r%-14s ...", stage.c_str());
        line_open_ = true;
      } else {
        std::fprintf(out_, "%s...\n", stage.c_str());
      }
      break;
    case ProgressEvent::Kind::Step: {
      char eta[32] = "";
      if (e.eta >= 0) std::snprintf(eta, sizeof eta, "  ETA %.1f s", e.eta);
      if (terminal_) {
        // \x1b[K clears what a longer earlier line left behind.
        std::fprintf(out_, "\r%-14s %lld/%lld  %.1f s%s\x1b[K", stage.c_str(), static_cast<long long>(e.step),
                     static_cast<long long>(e.total), e.elapsed, eta);
        line_open_ = true;
      } else {
        std::fprintf(out_, "%s step %lld/%lld  %.2f s%s\n", stage.c_str(), static_cast<long long>(e.step),
                     static_cast<long long>(e.total), e.elapsed, eta);
      }
      break;
    }
    case ProgressEvent::Kind::End:
      if (terminal_) {
        std::fprintf(out_, "\r%-14s done  %.2f s\x1b[K\n", stage.c_str(), e.elapsed);
        line_open_ = false;
      } else {
        std::fprintf(out_, "%s done  %.2f s\n", stage.c_str(), e.elapsed);
      }
      break;
    case ProgressEvent::Kind::Note:
      if (line_open_) std::fputc('\n', out_);
      line_open_ = false;
      std::fprintf(out_, "%s\n", text(e.message).c_str());
      break;
  }
  std::fflush(out_);
}

void JsonProgressPrinter::print(const ProgressEvent& e) {
  Json j;
  switch (e.kind) {
    case ProgressEvent::Kind::Begin:
      j = Json{{"event", "begin"}, {"stage", text(e.stage)}};
      break;
    case ProgressEvent::Kind::Step:
      j = Json{{"event", "step"},  {"stage", text(e.stage)}, {"step", e.step},
               {"total", e.total}, {"elapsed", e.elapsed},   {"eta", nullptr}};
      if (e.eta >= 0) j["eta"] = e.eta;
      break;
    case ProgressEvent::Kind::End:
      j = Json{{"event", "end"}, {"stage", text(e.stage)}, {"steps", e.step}, {"elapsed", e.elapsed}};
      break;
    case ProgressEvent::Kind::Note:
      j = Json{{"event", "note"}, {"message", text(e.message)}};
      break;
  }
  std::fprintf(out_, "%s\n", j.dump().c_str());
  std::fflush(out_);
}

}  // namespace ltx::cli
