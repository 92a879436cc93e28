#include "server/http_server.h"

#include <httplib.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <system_error>

#include "io/atomic_file.h"
#include "server/api_error.h"
#include "server/job_events.h"
#include "server/job_runner.h"
#include "server/job_store.h"
#include "server/openapi.h"

namespace ltx::server {
namespace {

namespace fs = std::filesystem;
using httplib::Request;
using httplib::Response;

constexpr const char* kJson = "application/json";
constexpr auto kKeepAliveEvery = std::chrono::seconds(15);

void send_json(Response& res, int status, const Json& body) {
  res.status = status;
  res.set_content(to_text(body), kJson);
}

void send_error(Response& res, const ApiError& e) {
  if (e.status == 401) res.set_header("WWW-Authenticate", "Bearer");
  if (e.retry_after > 0) res.set_header("Retry-After", std::to_string(e.retry_after));
  send_json(res, e.status, error_body(e));
}

// Compares every byte whatever the first difference, so the time taken says nothing about the key.
bool same_secret(std::string_view given, std::string_view key) {
  unsigned diff = given.size() == key.size() ? 0u : 1u;
  for (size_t i = 0; i < given.size(); ++i)
    diff |= static_cast<unsigned>(static_cast<unsigned char>(given[i]) ^
                                  static_cast<unsigned char>(key.empty() ? 0 : key[i % key.size()]));
  return diff == 0;
}

std::string job_id_of(const Request& req) {
  const std::string id = req.matches[1];
  if (!is_job_id(id))
    throw ApiError(404, "not_found", "no video job '" + id + "' (ids are \"video_\" and 32 hex digits)", "id");
  return id;
}

// Query parameters must be ones the route knows.
void only_params(const Request& req, std::initializer_list<const char*> known) {
  for (const auto& [name, value] : req.params) {
    bool ok = false;
    std::string valid;
    for (const char* k : known) {
      ok = ok || name == k;
      valid += std::string(valid.empty() ? "" : ", ") + k;
    }
    if (!ok)
      throw ApiError(400, "unknown_parameter",
                     "unknown query parameter '" + name + "' (valid: " + (valid.empty() ? "none" : valid) + ")", name);
  }
}

int64_t integer_param(const Request& req, const char* name, int64_t fallback, int64_t min, int64_t max) {
  if (!req.has_param(name)) return fallback;
  const std::string v = req.get_param_value(name);
  int64_t out = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || out < min || out > max)
    throw ApiError(400, "invalid_value",
                   std::string(name) + " must be an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                       "], got '" + v + "'",
                   name);
  return out;
}

// The library owns the request (its handlers see it const); an error or a route that serves no ranges must not be
// sliced by the client's Range header.
void ignore_ranges(const Request& req) { const_cast<Request&>(req).ranges.clear(); }

// The API's paths (httplib patterns) and their methods.
constexpr std::pair<const char*, const char*> kRoutes[] = {{"/health", "GET"},
                                                           {"/openapi.json", "GET"},
                                                           {"/v1/models", "GET"},
                                                           {"/v1/videos", "GET, POST"},
                                                           {R"(/v1/videos/([^/]+))", "GET, DELETE"},
                                                           {R"(/v1/videos/([^/]+)/content)", "GET"},
                                                           {R"(/v1/videos/([^/]+)/events)", "GET"}};

// The methods `path` allows; empty when no route has the path.
std::string allowed_methods(const std::string& path) {
  for (const auto& [pattern, methods] : kRoutes)
    if (std::regex_match(path, std::regex(pattern))) return methods;
  return {};
}

bool is_library_method(const std::string& method) {
  for (const char* m : {"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
    if (method == m) return true;
  return false;
}

// For a method it does not know the library stops before it splits the target into path and query.
void method_not_allowed(const Request& req, Response& res) {
  const std::string path = req.path.empty() ? req.target.substr(0, req.target.find('?')) : req.path;
  const std::string allow = allowed_methods(path);
  if (allow.empty()) return send_error(res, ApiError(404, "not_found", "no route " + req.method + " " + path));
  res.set_header("Allow", allow);
  send_error(res, ApiError(405, "method_not_allowed", req.method + " is not allowed here (allowed: " + allow + ")"));
}

std::string sse_frame(const JobEvent& e) { return "event: " + e.name + "\ndata: " + to_text(e.data) + "\n\n"; }

}  // namespace

struct Server::Impl {
  Engine& engine;
  ServeSettings settings;
  JobStore store;
  JobEvents events;
  JobRunner runner;
  httplib::Server http;
  std::atomic<size_t> event_streams{0};
  const int64_t started_at = unix_seconds();

  Impl(Engine& e, ServeSettings s)
      : engine(e),
        settings(std::move(s)),
        store(settings.results_dir),
        runner(engine, store, events, settings.queue_size) {
    routes();
  }

  // Runs a route, turning every exception into a JSON error: ApiError as it says, an engine error by its category.
  template <class F>
  httplib::Server::Handler guarded(F f) {
    return [this, f](const Request& req, Response& res) {
      try {
        (this->*f)(req, res);
      } catch (const ApiError& e) {
        ignore_ranges(req);
        send_error(res, e);
      } catch (const Error& e) {
        ignore_ranges(req);
        const int status = e.category() == ErrorCategory::InvalidRequest ? 400 : 500;
        send_error(res, ApiError(status, error_category_name(e.category()), e.what()));
      } catch (const std::exception& e) {
        ignore_ranges(req);
        send_error(res, ApiError(500, "internal", std::string("internal error: ") + e.what()));
      }
    };
  }

  void routes() {
    http.new_task_queue = [] { return new httplib::ThreadPool(64); };
    http.set_payload_max_length(settings.max_body_bytes);
    // Small JSON answers go out at once: with Nagle's algorithm each waited for the client's delayed ACK (~40 ms).
    http.set_tcp_nodelay(true);
    http.set_pre_routing_handler([this](const Request& req, Response& res) { return screen(req, res); });
    // Only POST /v1/videos takes a body: any other request that came with one is answered with "Connection: close",
    // so that the client does not reuse a connection where the library may have left that body unread, to be
    // parsed as the next request (schemathesis found it).
    http.set_post_routing_handler([](const Request& req, Response& res) {
      const std::string length = req.get_header_value("Content-Length");
      if (req.method != "POST" && !length.empty() && length != "0" && !res.has_header("Connection"))
        res.set_header("Connection", "close");
    });
    // Every error status leaves as JSON, including the ones the HTTP library sets itself (404 for no route, 413).
    http.set_error_handler(httplib::Server::HandlerWithResponse([this](const Request& req, Response& res) {
      if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      // The library's own refusals may leave a body unread on the connection: close it after the answer.
      res.set_header("Connection", "close");
      if (res.status == 413)
        send_error(res, ApiError(413, "body_too_large",
                                 "the body is larger than the server's limit of " +
                                     std::to_string(settings.max_body_bytes) + " bytes"));
      else if (res.status == 404)
        send_error(res, ApiError(404, "not_found", "no route " + req.method + " " + req.path));
      else if (res.status == 400 && !req.method.empty() && !is_library_method(req.method))
        method_not_allowed(req, res);  // TRACE, QUERY, ...: methods the library does not route at all
      else
        send_error(res, ApiError(res.status, "http_error",
                                 "the request was refused (HTTP " + std::to_string(res.status) + ")"));
      return httplib::Server::HandlerResponse::Handled;
    }));
    http.set_exception_handler([](const Request&, Response& res, std::exception_ptr) {
      send_error(res, ApiError(500, "internal", "internal error"));
    });
    // A known path with another method: 405 naming the allowed ones (Allow header), not the library's 404.
    for (const auto& [pattern, methods] : kRoutes) {
      const std::string allow = methods;
      if (allow.find("GET") == std::string::npos) http.Get(pattern, method_not_allowed);
      if (allow.find("POST") == std::string::npos) http.Post(pattern, method_not_allowed);
      if (allow.find("DELETE") == std::string::npos) http.Delete(pattern, method_not_allowed);
      http.Put(pattern, method_not_allowed);
      http.Patch(pattern, method_not_allowed);
      http.Options(pattern, method_not_allowed);
    }
    http.Get("/health", guarded(&Impl::health));
    http.Get("/openapi.json", guarded(&Impl::openapi));
    http.Get("/v1/models", guarded(&Impl::models));
    http.Post("/v1/videos", guarded(&Impl::create));
    http.Get("/v1/videos", guarded(&Impl::list));
    http.Get(R"(/v1/videos/([^/]+))", guarded(&Impl::retrieve));
    http.Delete(R"(/v1/videos/([^/]+))", guarded(&Impl::remove));
    http.Get(R"(/v1/videos/([^/]+)/content)", guarded(&Impl::content));
    http.Get(R"(/v1/videos/([^/]+)/events)", guarded(&Impl::stream_events));
  }

  // Runs before the body is read: refusals here close the connection, since an unread body would be taken for
  // the next request.
  httplib::Server::HandlerResponse screen(const Request& req, Response& res) {
    try {
      screen_headers(req);
      authenticate(req);
      return httplib::Server::HandlerResponse::Unhandled;
    } catch (const ApiError& e) {
      ignore_ranges(req);
      send_error(res, e);
      res.set_header("Connection", "close");
      return httplib::Server::HandlerResponse::Handled;
    }
  }

  // What the HTTP library would take without the body limit, or answer wrongly: a chunked or compressed body
  // (read whole whatever its size), and byte ranges anywhere but the content route (which checks them itself):
  // the library slices any response by them, unchecked, so they are dropped (RFC 9110 lets a server ignore Range).
  static void screen_headers(const Request& req) {
    if (req.path.size() < 8 || req.path.compare(req.path.size() - 8, 8, "/content") != 0) ignore_ranges(req);
    if (req.has_header("Transfer-Encoding"))
      throw ApiError(411, "length_required", "send the body with a Content-Length (no Transfer-Encoding)");
    const std::string encoding = req.get_header_value("Content-Encoding");
    if (!encoding.empty() && encoding != "identity")
      throw ApiError(415, "unsupported_media_type",
                     "the body must not be compressed (Content-Encoding " + encoding + ")");
  }

  void authenticate(const Request& req) const {
    if (settings.api_key.empty() || req.path.rfind("/v1/", 0) != 0) return;
    const std::string header = req.get_header_value("Authorization");
    const size_t space = header.find(' ');
    std::string scheme = header.substr(0, space == std::string::npos ? header.size() : space);
    for (char& ch : scheme) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    const bool ok = scheme == "bearer" && space != std::string::npos &&
                    same_secret(std::string_view(header).substr(space + 1), settings.api_key);
    if (ok) return;
    throw ApiError(401, header.empty() ? "missing_api_key" : "invalid_api_key",
                   header.empty() ? "this server needs an API key: Authorization: Bearer KEY"
                                  : "the API key is not valid (Authorization: Bearer KEY)");
  }

  void health(const Request& req, Response& res) {
    only_params(req, {});
    send_json(res, 200,
              {{"status", "ok"},
               {"model", settings.model_id},
               {"queue",
                {{"waiting", runner.waiting()}, {"running", runner.busy() ? 1 : 0}, {"capacity", runner.capacity()}}},
               {"jobs", store.size()}});
  }

  void openapi(const Request& req, Response& res) {
    only_params(req, {});
    res.set_content(openapi_document(), kJson);
  }

  void models(const Request& req, Response& res) {
    only_params(req, {});
    send_json(res, 200,
              {{"object", "list"},
               {"data", Json::array({{{"id", settings.model_id},
                                      {"object", "model"},
                                      {"created", started_at},
                                      {"owned_by", "ltx"},
                                      {"model_version", engine.model_version()}}})}});
  }

  void create(const Request& req, Response& res) {
    const std::string type = req.get_header_value("Content-Type");
    const std::string media_type = type.substr(0, type.find(';'));
    if (!type.empty() && media_type != kJson)
      throw ApiError(415, "unsupported_media_type", "the body must be application/json, got " + type);
    only_params(req, {});
    Json body;
    try {
      body = parse_json(req.body, "the request body");
    } catch (const Error& e) {
      throw ApiError(400, "invalid_json", std::string(e.what()).substr(e.component().size() + 3));
    }
    VideoRequest parsed = parse_video_request(body, settings.limits, settings.defaults, settings.model_id);
    if (runner.waiting() >= runner.capacity()) throw queue_full();

    Job job;
    job.id = new_job_id();
    job.model = settings.model_id;
    job.created_at = unix_seconds();
    job.request = parsed.record;
    const std::string dir = store.job_dir(job.id);
    try {
      write_images(parsed, dir);
      check_with_engine(parsed);
    } catch (...) {
      std::error_code ec;
      fs::remove_all(dir, ec);
      throw;
    }
    if (!runner.submit(job, std::move(parsed.request))) {
      std::error_code ec;
      fs::remove_all(dir, ec);
      throw queue_full();
    }
    res.set_header("Location", "/v1/videos/" + job.id);
    send_json(res, 202, job_to_json(job));
  }

  ApiError queue_full() const {
    ApiError e(429, "queue_full",
               "the queue is full (" + std::to_string(runner.capacity()) + " jobs wait); retry later");
    e.retry_after = runner.retry_after_seconds();
    return e;
  }

  // The images go into the job's folder under names the server chooses; the request then points at them.
  static void write_images(VideoRequest& parsed, const std::string& dir) {
    if (parsed.images.empty()) return;
    const fs::path inputs = fs::path(dir) / "inputs";
    fs::create_directories(inputs);
    for (size_t i = 0; i < parsed.images.size(); ++i) {
      const EncodedImage& image = parsed.images[i];
      const std::string path = (inputs / ("image_" + std::to_string(i) + image.extension)).string();
      io::AtomicFile file(path);
      file.write(image.bytes.data(), image.bytes.size());
      file.commit();
      parsed.request.images.push_back({path, image.frame, image.strength, image.crf});
    }
  }

  // The engine's own checks (an image that does not decode, a two-stage request without an upsampler), with the
  // server's paths replaced by the fields that named them.
  void check_with_engine(const VideoRequest& parsed) {
    try {
      engine.check(parsed.request);
    } catch (const Error& e) {
      std::string message = e.what();
      for (size_t i = 0; i < parsed.request.images.size(); ++i) {
        const std::string& path = parsed.request.images[i].path;
        for (size_t at; (at = message.find(path)) != std::string::npos;)
          message.replace(at, path.size(), "images[" + std::to_string(i) + "]");
      }
      throw ApiError(e.category() == ErrorCategory::InvalidRequest ? 400 : 500, error_category_name(e.category()),
                     message);
    }
  }

  void list(const Request& req, Response& res) {
    only_params(req, {"limit", "after", "order"});
    const size_t limit = static_cast<size_t>(integer_param(req, "limit", 20, 1, 100));
    const std::string order = req.has_param("order") ? req.get_param_value("order") : "desc";
    if (order != "asc" && order != "desc")
      throw ApiError(400, "invalid_value", "order must be \"asc\" or \"desc\", got '" + order + "'", "order");
    const std::string after = req.has_param("after") ? req.get_param_value("after") : "";
    if (!after.empty() && (!is_job_id(after) || !store.get(after)))
      throw ApiError(400, "invalid_value", "after names no video job: '" + after + "'", "after");
    const JobStore::Page page = store.list(limit, after, order == "desc");
    Json data = Json::array();
    for (const Job& job : page.jobs) data.push_back(job_to_json(job));
    send_json(res, 200,
              {{"object", "list"},
               {"data", data},
               {"first_id", page.jobs.empty() ? Json(nullptr) : Json(page.jobs.front().id)},
               {"last_id", page.jobs.empty() ? Json(nullptr) : Json(page.jobs.back().id)},
               {"has_more", page.has_more}});
  }

  Job existing(const Request& req) const {
    const std::string id = job_id_of(req);
    std::optional<Job> job = store.get(id);
    if (!job) throw ApiError(404, "not_found", "no video job '" + id + "'", "id");
    return *job;
  }

  void retrieve(const Request& req, Response& res) {
    only_params(req, {});
    send_json(res, 200, job_to_json(existing(req)));
  }

  // A queued or running job is cancelled (its record stays, status "cancelled"); a finished one is deleted with
  // its files.
  void remove(const Request& req, Response& res) {
    only_params(req, {});
    const Job job = existing(req);
    if (!is_finished(job.status) && runner.cancel(job.id)) {
      const std::optional<Job> cancelled = store.get(job.id);
      if (cancelled) {
        send_json(res, 200, job_to_json(*cancelled));
        return;
      }
    }
    store.remove(job.id);
    send_json(res, 200, {{"id", job.id}, {"object", "video.deleted"}, {"deleted", true}});
  }

  void content(const Request& req, Response& res) {
    only_params(req, {"variant", "index"});
    const Job job = existing(req);
    const std::string variant = req.has_param("variant") ? req.get_param_value("variant") : "video";
    if (variant != "video" && variant != "audio" && variant != "thumbnail")
      throw ApiError(400, "invalid_value",
                     "variant must be \"video\", \"audio\" or \"thumbnail\", got '" + variant + "'", "variant");
    if (job.status != JobStatus::Completed)
      throw ApiError(409, "not_ready",
                     "video job " + job.id + " is " + status_name(job.status) + ": its content exists once completed");
    const int64_t index = integer_param(req, "index", 0, 0, job.videos - 1);
    const std::string path = result_path(store.job_dir(job.id), variant, index, job.videos);
    auto file = std::make_shared<std::ifstream>(path, std::ios::binary);
    std::error_code ec;
    const uintmax_t size = fs::file_size(path, ec);
    if (!*file || ec) throw ApiError(404, "not_found", "video job " + job.id + " has no " + variant + " file");
    // Ranges within the file only: the library would slice past its end.
    for (const auto& [first, last] : req.ranges) {
      const bool inside = first < 0 ? last > 0
                                    : static_cast<uintmax_t>(first) < size &&
                                          (last < 0 || (last >= first && static_cast<uintmax_t>(last) < size));
      if (!inside)
        throw ApiError(416, "range_not_satisfiable",
                       "a byte range is outside the file's " + std::to_string(size) + " bytes");
    }
    const char* type = variant == "audio" ? "audio/wav" : variant == "thumbnail" ? "image/png" : "video/mp4";
    res.set_content_provider(static_cast<size_t>(size), type,
                             [file](size_t offset, size_t length, httplib::DataSink& sink) {
                               std::vector<char> buf(std::min<size_t>(length, 1 << 20));
                               file->seekg(static_cast<std::streamoff>(offset));
                               file->read(buf.data(), static_cast<std::streamsize>(buf.size()));
                               const auto got = static_cast<size_t>(file->gcount());
                               return got > 0 && sink.write(buf.data(), got);
                             });
  }

  // Server-sent events: every event of the job so far, then each new one as it happens, then "done" with the
  // final job object. A job whose events are no longer kept gets its current object as "done" when it has ended.
  void stream_events(const Request& req, Response& res) {
    only_params(req, {});
    const Job job = existing(req);
    if (event_streams.fetch_add(1) >= settings.max_event_streams) {
      event_streams.fetch_sub(1);
      ApiError e(429, "too_many_streams",
                 "the server already serves " + std::to_string(settings.max_event_streams) + " event streams");
      e.retry_after = 5;
      throw e;
    }
    res.set_header("Cache-Control", "no-cache");
    auto next = std::make_shared<size_t>(0);
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, id = job.id, next](size_t, httplib::DataSink& sink) {
          const JobEvents::Read read = events.read(id, *next, kKeepAliveEvery);
          if (!read.known) {
            const std::optional<Job> now = store.get(id);
            if (now && !is_finished(now->status)) {  // kept no log: say so rather than wait forever
              const std::string frame = sse_frame({"status", job_to_json(*now)});
              if (!sink.write(frame.data(), frame.size())) return false;
            } else if (now) {
              const std::string frame = sse_frame({"done", job_to_json(*now)});
              if (!sink.write(frame.data(), frame.size())) return false;
            }
            sink.done();
            return true;
          }
          std::string out;
          for (const JobEvent& e : read.events) out += sse_frame(e);
          *next += read.events.size();
          if (out.empty() && !read.closed) out = ": keep-alive\n\n";
          if (!out.empty() && !sink.write(out.data(), out.size())) return false;
          if (read.closed) sink.done();
          return true;
        },
        [this](bool) { event_streams.fetch_sub(1); });
  }
};

Server::Server(Engine& engine, ServeSettings settings) : impl_(std::make_unique<Impl>(engine, std::move(settings))) {}

Server::~Server() {
  impl_->http.stop();
  impl_->events.stop();
  impl_->runner.stop();
}

int Server::bind() {
  const ServeSettings& s = impl_->settings;
  const int port =
      s.port == 0 ? impl_->http.bind_to_any_port(s.host) : (impl_->http.bind_to_port(s.host, s.port) ? s.port : -1);
  if (port <= 0)
    throw Error("serve",
                "cannot listen on " + s.host + ":" + std::to_string(s.port) + " (in use, or not an address here)",
                ErrorCategory::Io);
  return port;
}

void Server::run() {
  impl_->http.listen_after_bind();
  impl_->events.stop();
  impl_->runner.stop();
}

void Server::stop() {
  impl_->events.stop();  // event streams end now: the library waits for every connection's handler before it returns
  impl_->http.stop();
}

}  // namespace ltx::server
