// One video job of `ltx serve`: the request as accepted, where the job stands and what it left. The JSON form is
// both the API's job object (GET /v1/videos/{id}) and the record in the results folder's index.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "io/json.h"

namespace ltx::server {

enum class JobStatus { Queued, InProgress, Completed, Failed, Cancelled };

const char* status_name(JobStatus status);  // "queued", "in_progress", "completed", "failed", "cancelled"
bool is_finished(JobStatus status);         // completed, failed or cancelled: nothing more will happen

struct JobError {
  std::string code;  // the engine's error category ("invalid_request", "out_of_memory", ...) or a server reason
  std::string message;
};

struct Job {
  std::string id;     // "video_" + 32 random hex digits
  std::string model;  // the served model's id
  JobStatus status = JobStatus::Queued;
  int progress = 0;   // 0..100
  std::string stage;  // the engine stage running now ("encode prompt", "denoise", "decode"); empty otherwise
  int64_t created_at = 0, started_at = 0, completed_at = 0;  // Unix seconds; 0: not yet
  Json request;        // the accepted request, every field after the server's defaults (server/video_request.h)
  int64_t videos = 0;  // result items (batch) once completed
  std::optional<JobError> error;
};

Json job_to_json(const Job& job);
// The record as job_to_json wrote it; throws ltx::Error naming the field when it is not one.
Job job_from_json(const Json& json);

// Seconds since the Unix epoch: the job's times.
int64_t unix_seconds();

// Whether `id` has the form the server gives ids; anything else names no job (and never reaches a path).
bool is_job_id(std::string_view id);
// A new id from the system's random source: 128 bits, unguessable.
std::string new_job_id();

}  // namespace ltx::server
