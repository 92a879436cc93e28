#include "stages/progress.h"

#include <cmath>

#include "io/json.h"

namespace ltx::stages {

Observer progress_observer(ProgressReporter* progress, Observer also) {
  if (!progress) return also;
  return [progress, also = std::move(also)](const std::string& name, const Tensor& t) {
    const auto ends_with = [&](std::string_view tail) {
      return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (ends_with("sigmas") && t.rank() == 1 && t.dim(0) >= 2) progress->add_steps(t.dim(0) - 1);
    const size_t at = name.rfind("latents.audio.step");
    if (at != std::string::npos && (at == 0 || name[at - 1] == '.')) progress->step();
    if (also) also(name, t);
  };
}

void ProgressState::begin(std::string_view stage) {
  stage_ = stage;
  done_ = total_ = 0;
  t0_ = std::chrono::steady_clock::now();
}

double ProgressState::elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

double ProgressState::eta() const {
  if (done_ <= 0 || total_ <= 0) return -1.0;
  return elapsed() / static_cast<double>(done_) * static_cast<double>(std::max<int64_t>(total_ - done_, 0));
}

TextProgress::TextProgress(std::FILE* out, bool is_terminal) : out_(out), terminal_(is_terminal) {}

void TextProgress::begin(std::string_view stage) {
  state_.begin(stage);
  if (terminal_) {
    std::fprintf(out_, "\r%-14s ...", state_.stage().c_str());
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s...\n", state_.stage().c_str());
  }
  std::fflush(out_);
}

void TextProgress::step() {
  state_.step();
  const double eta = state_.eta();
  char eta_text[32] = "";
  if (eta >= 0) std::snprintf(eta_text, sizeof eta_text, "  ETA %.1f s", eta);
  if (terminal_) {
    // \x1b[K clears what a longer earlier line left behind.
    std::fprintf(out_, "\r%-14s %lld/%lld  %.1f s%s\x1b[K", state_.stage().c_str(),
                 static_cast<long long>(state_.done()), static_cast<long long>(state_.total()), state_.elapsed(),
                 eta_text);
    line_open_ = true;
  } else {
    std::fprintf(out_, "%s step %lld/%lld  %.2f s%s\n", state_.stage().c_str(), static_cast<long long>(state_.done()),
                 static_cast<long long>(state_.total()), state_.elapsed(), eta_text);
  }
  std::fflush(out_);
}

void TextProgress::end() {
  if (terminal_) {
    std::fprintf(out_, "\r%-14s done  %.2f s\x1b[K\n", state_.stage().c_str(), state_.elapsed());
    line_open_ = false;
  } else {
    std::fprintf(out_, "%s done  %.2f s\n", state_.stage().c_str(), state_.elapsed());
  }
  std::fflush(out_);
}

void TextProgress::note(std::string_view message) {
  if (line_open_) std::fputc('\n', out_);
  line_open_ = false;
  std::fprintf(out_, "%.*s\n", static_cast<int>(message.size()), message.data());
  std::fflush(out_);
}

void JsonProgress::line(const std::string& json) {
  std::fprintf(out_, "%s\n", json.c_str());
  std::fflush(out_);
}

void JsonProgress::begin(std::string_view stage) {
  state_.begin(stage);
  line(Json{{"event", "begin"}, {"stage", state_.stage()}}.dump());
}

void JsonProgress::step() {
  state_.step();
  const double eta = state_.eta();
  Json j{{"event", "step"},         {"stage", state_.stage()},     {"step", state_.done()},
         {"total", state_.total()}, {"elapsed", state_.elapsed()}, {"eta", nullptr}};
  if (eta >= 0) j["eta"] = eta;
  line(j.dump());
}

void JsonProgress::end() {
  line(Json{{"event", "end"}, {"stage", state_.stage()}, {"steps", state_.done()}, {"elapsed", state_.elapsed()}}
           .dump());
}

void JsonProgress::note(std::string_view message) {
  line(Json{{"event", "note"}, {"message", std::string(message)}}.dump());
}

}  // namespace ltx::stages
