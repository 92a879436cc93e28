// `ltx serve`'s HTTP API over one loaded ltx::Engine (the OpenAI-style videos API: create a job, poll it, stream
// its events, download its files, cancel or delete it), on cpp-httplib. Every refusal is a JSON error naming the
// field and the reason; with an API key every /v1/ route needs `Authorization: Bearer KEY`.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "ltx/engine.hpp"
#include "server/video_request.h"

namespace ltx::server {

struct ServeSettings {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (Server::bind says which)
  std::string results_dir = "ltx-results";
  std::string api_key;  // empty: no authentication
  std::string model_id;
  size_t queue_size = 16;            // jobs waiting beside the running one; more get 429
  size_t max_body_bytes = 32 << 20;  // a larger body gets 413
  size_t max_event_streams = 32;     // concurrent GET .../events; more get 429
  RequestLimits limits;
  RequestDefaults defaults;
};

class Server {
 public:
  // Opens the results folder (recovering what a stopped server left) and starts the job worker.
  Server(Engine& engine, ServeSettings settings);
  ~Server();

  // Binds the listening socket; returns the port (the chosen one when settings.port is 0). Throws ltx::Error (Io).
  int bind();
  // Serves until stop(); then cancels the running job and fails the waiting ones.
  void run();
  // From any thread (a signal watcher): run() returns soon after.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ltx::server
