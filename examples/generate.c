/* The C API in one program: `generate [OUT.mp4] [PROMPT]` runs the embedded default model and writes an MP4.
 *
 * With LTX_EXAMPLE_CANCEL_AT_STEP=k it first shows cancellation: the progress callback stops the call at denoise
 * step k, the call fails with LTX_ERROR_CANCELLED and writes nothing; then the same engine generates again. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ltx/ltx.h"

/* Prints one line per finished stage and per step; returns nonzero (cancel) at denoise step *user, if > 0. */
static int on_progress(const ltx_progress_event* event, void* user) {
  const long cancel_at = *(const long*)user;
  if (event->kind == LTX_PROGRESS_END) fprintf(stderr, "%s: done in %.2f s\n", event->stage, event->elapsed);
  if (event->kind != LTX_PROGRESS_STEP) return 0;
  fprintf(stderr, "%s: step %lld/%lld\n", event->stage, (long long)event->step, (long long)event->total);
  return cancel_at > 0 && strcmp(event->stage, "denoise") == 0 && event->step == cancel_at;
}

/* One prompt through the engine, saved to `mp4` on success. */
static ltx_status generate(ltx_engine* engine, const char* prompt, long cancel_at, const char* mp4) {
  ltx_result* result = NULL;
  ltx_video video;
  ltx_request* request = ltx_request_new_default_model();
  if (request == NULL) return LTX_ERROR_OUT_OF_MEMORY;
  ltx_status status = ltx_request_add_prompt(request, prompt);
  if (status == LTX_OK) status = ltx_generate(engine, request, on_progress, &cancel_at, NULL, &result);
  if (status == LTX_OK) status = ltx_result_video(result, 0, &video);
  if (status == LTX_OK) {
    printf("%lld frames of %lldx%lld at %.0f fps, %lld audio samples x %lld channels at %lld Hz\n",
           (long long)video.frames, (long long)video.width, (long long)video.height, video.fps,
           (long long)video.samples, (long long)video.channels, (long long)video.sample_rate);
    status = ltx_result_save(result, mp4, NULL, NULL, NULL);
  }
  if (status == LTX_OK) printf("wrote %s\n", mp4);
  ltx_result_free(result);
  ltx_request_free(request);
  return status;
}

static int file_exists(const char* path) {
  FILE* f = fopen(path, "rb");
  if (f != NULL) fclose(f);
  return f != NULL;
}

/* A call the callback stops at denoise step `cancel_at` fails with LTX_ERROR_CANCELLED and writes nothing. */
static int show_cancellation(ltx_engine* engine, const char* prompt, long cancel_at, const char* mp4) {
  remove(mp4); /* so that a file from an earlier run is not taken for one the cancelled call wrote */
  const ltx_status status = generate(engine, prompt, cancel_at, mp4);
  if (status != LTX_ERROR_CANCELLED) {
    fprintf(stderr, "expected cancelled, got %s: %s\n", ltx_status_name(status), ltx_last_error());
    return 0;
  }
  if (file_exists(mp4)) {
    fprintf(stderr, "the cancelled call left %s behind\n", mp4);
    return 0;
  }
  printf("cancelled\n");
  return 1;
}

int main(int argc, char** argv) {
  const char* mp4 = argc > 1 ? argv[1] : "generate.mp4";
  const char* prompt = argc > 2 ? argv[2] : "A red circle moves to the left across a plain blue background.";
  const char* cancel_env = getenv("LTX_EXAMPLE_CANCEL_AT_STEP");
  const long cancel_at = cancel_env != NULL ? strtol(cancel_env, NULL, 10) : 0;
  long no_cancel = 0;
  ltx_engine_options* options = NULL;
  ltx_engine* engine = NULL;

  printf("ltx %s\n", ltx_version());
  ltx_status status = ltx_engine_options_default_model(&options);
  if (status == LTX_OK) status = ltx_engine_new(options, on_progress, &no_cancel, &engine);
  int ok = status == LTX_OK;
  if (!ok) fprintf(stderr, "cannot load the default model (%s): %s\n", ltx_status_name(status), ltx_last_error());
  if (ok && cancel_at > 0) ok = show_cancellation(engine, prompt, cancel_at, mp4);
  if (ok) {
    /* After a cancelled call too: cancelling leaves the engine usable. */
    status = generate(engine, prompt, 0, mp4);
    ok = status == LTX_OK;
    if (!ok) fprintf(stderr, "generate failed (%s): %s\n", ltx_status_name(status), ltx_last_error());
  }
  ltx_engine_free(engine);
  ltx_engine_options_free(options);
  return ok ? 0 : 1;
}
