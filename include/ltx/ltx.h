/* The C API of ltx: the engine behind opaque handles, for other languages and programs. Every call that can fail
 * returns an ltx_status; LTX_OK is 0, and on anything else ltx_last_error() gives the message (per thread, valid
 * until the thread's next call). No C++ exception crosses this API. Strings are UTF-8 and copied by the callee.
 *
 *   ltx_engine_options* o = NULL;  ltx_engine* e = NULL;  ltx_result* r = NULL;
 *   ltx_engine_options_default_model(&o);
 *   ltx_engine_new(o, NULL, NULL, &e);
 *   ltx_request* q = ltx_request_new_default_model();
 *   ltx_request_add_prompt(q, "a red fox");
 *   if (ltx_generate(e, q, NULL, NULL, NULL, &r) == LTX_OK) ltx_result_save(r, "fox.mp4", NULL, NULL, NULL);
 *   ...free each handle with its ltx_*_free.
 */
#ifndef LTX_LTX_H
#define LTX_LTX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ltx_status {
  LTX_OK = 0,
  LTX_ERROR_INVALID_REQUEST = 1, /* a value outside its range, options that exclude each other, a NULL argument */
  LTX_ERROR_INVALID_MODEL = 2,   /* a model file missing, unreadable, malformed or of another model */
  LTX_ERROR_IO = 3,              /* an input unreadable or an output unwritable */
  LTX_ERROR_OUT_OF_MEMORY = 4,
  LTX_ERROR_CANCELLED = 5,
  LTX_ERROR_INTERNAL = 6
} ltx_status;

const char* ltx_version(void);
/* The message of this thread's last failed call ("" if none). */
const char* ltx_last_error(void);
/* "ok", "invalid_request", "invalid_model", "io", "out_of_memory", "cancelled", "internal". */
const char* ltx_status_name(ltx_status status);

/* ---- what an engine loads ---- */
typedef struct ltx_engine_options ltx_engine_options;
/* No model named: set at least "checkpoint" and "text_encoder" (or give text embeddings in each request). */
ltx_engine_options* ltx_engine_options_new(void);
/* The embedded default model with the Gemma 3 270M text encoder (made on first use). */
ltx_status ltx_engine_options_default_model(ltx_engine_options** out);
/* Keys: "checkpoint", "dit", "dit_config", "text_encoder", "text_encoder_mmproj", "upsampler" (paths); "lora" and
 * "distilled_lora" ("FILE" or "FILE:STRENGTH"; "lora" adds one each call); "lora_allow_partial" ("0"/"1"); "precision"
 * ("production"/"validation"); "threads" (a count, "0": all cores); "memory_budget" ("8G", "512M", bytes);
 * "int8_activations" ("0"/"1": GGUF-quantized weights multiply int8 activations, EngineOptions::int8_activations);
 * "backend" (what the plans run on: "cpu" or "xla"; EngineOptions::backend), "xla_plugin" (the PJRT plugin of "xla";
 * EngineOptions::xla_plugin). */
ltx_status ltx_engine_options_set(ltx_engine_options* options, const char* key, const char* value);
void ltx_engine_options_free(ltx_engine_options* options);

/* ---- one request ---- */
typedef struct ltx_request ltx_request;
/* The _FORCE_INT32 members give each enum the range of a 32-bit int, so any value a caller passes is a valid value
 * of the type (and rejected by the call), never undefined behaviour on the C++ side. */
typedef enum ltx_stream { LTX_VIDEO = 0, LTX_AUDIO = 1, LTX_STREAM_FORCE_INT32 = 0x7fffffff } ltx_stream;
typedef enum ltx_mode { LTX_ONE_STAGE = 0, LTX_TWO_STAGE = 1, LTX_MODE_FORCE_INT32 = 0x7fffffff } ltx_mode;
typedef enum ltx_sampler { LTX_EULER = 0, LTX_RES2S = 1, LTX_SAMPLER_FORCE_INT32 = 0x7fffffff } ltx_sampler;
ltx_request* ltx_request_new(void);               /* the official defaults: 121 frames at 768x512, 24 fps */
ltx_request* ltx_request_new_default_model(void); /* the embedded default's size: 17 frames at 192x128, 30 steps */
ltx_status ltx_request_add_prompt(ltx_request* request, const char* prompt);
ltx_status ltx_request_set_negative_prompt(ltx_request* request, const char* prompt);
ltx_status ltx_request_set_text_embeddings(ltx_request* request, const char* path);
ltx_status ltx_request_set_size(ltx_request* request, int64_t width, int64_t height, int64_t frames);
ltx_status ltx_request_set_fps(ltx_request* request, double fps);
ltx_status ltx_request_set_steps(ltx_request* request, int steps);
ltx_status ltx_request_set_seed(ltx_request* request, uint64_t seed);
ltx_status ltx_request_set_batch(ltx_request* request, int64_t samples_per_prompt);
/* name: "cfg", "stg", "rescale", "modality", "skip_step" (a whole number >= 0). */
ltx_status ltx_request_set_guidance(ltx_request* request, ltx_stream stream, const char* name, double value);
ltx_status ltx_request_add_image(ltx_request* request, const char* path, int64_t frame, double strength, int crf);
/* Audio-to-video: the file's audio from `start` seconds, at most `max_duration` seconds (<= 0: the video's duration,
   the official command line's default), held fixed while the video is generated; the result carries it. */
ltx_status ltx_request_set_audio(ltx_request* request, const char* path, double start, double max_duration);
/* Retake: [start, end) seconds of the video file regenerated, the rest kept, at the file's size, frame count and rate;
 * keep_video / keep_audio (0 or 1) regenerate nothing of that stream. */
ltx_status ltx_request_set_retake(ltx_request* request, const char* path, double start, double end, int keep_video,
                                  int keep_audio);
/* IC-LoRA: a reference ("control") video for the engine's IC-LoRA (ltx_engine_options "lora"), strength in [0, 1]
 * (1: kept clean); call once per video. */
ltx_status ltx_request_add_reference_video(ltx_request* request, const char* path, double strength);
/* IC-LoRA: how strongly the reference tokens and the generated ones attend to each other, in [0, 1]; mask_path (NULL:
 * none) a grey video scaling it per region and frame. */
ltx_status ltx_request_set_conditioning(ltx_request* request, double strength, const char* mask_path);
ltx_status ltx_request_set_mode(ltx_request* request, ltx_mode mode);
/* LTX_EULER (default) or LTX_RES2S: the HQ pipeline's second-order sampler, two DiT evaluations per step. */
ltx_status ltx_request_set_sampler(ltx_request* request, ltx_sampler sampler);
ltx_status ltx_request_set_distilled(ltx_request* request, int distilled);
/* Keyframe interpolation: every image, frame 0's too, added as guiding keyframe tokens (needs images). */
ltx_status ltx_request_set_keyframe_interpolation(ltx_request* request, int on);
/* Each prompt rewritten by the text encoder first (GenerateRequest::enhance_prompt; with images, Gemma sees the
 * first). system_prompt NULL or "": the built-in instructions; max_new_tokens in [1, 8192]. */
ltx_status ltx_request_set_enhance_prompt(ltx_request* request, int on, const char* system_prompt,
                                          int64_t max_new_tokens);
void ltx_request_free(ltx_request* request);

/* ---- progress and cancellation ---- */
typedef enum ltx_progress_kind {
  LTX_PROGRESS_BEGIN = 0,
  LTX_PROGRESS_STEP = 1,
  LTX_PROGRESS_END = 2,
  LTX_PROGRESS_NOTE = 3
} ltx_progress_kind;
typedef struct ltx_progress_event {
  ltx_progress_kind kind;
  const char* stage; /* valid during the callback only */
  int64_t step, total;
  double elapsed, eta; /* seconds; eta < 0 while unknown */
  const char* message; /* LTX_PROGRESS_NOTE; "" otherwise */
} ltx_progress_event;
/* Called on the generating thread; return nonzero to cancel the call. */
typedef int (*ltx_progress_fn)(const ltx_progress_event* event, void* user);

typedef struct ltx_cancel ltx_cancel;
ltx_cancel* ltx_cancel_new(void);
void ltx_cancel_request(ltx_cancel* cancel); /* from any thread; the call it was given to stops at its next check */
void ltx_cancel_free(ltx_cancel* cancel);

/* ---- the engine ---- */
typedef struct ltx_engine ltx_engine;
typedef struct ltx_result ltx_result;
ltx_status ltx_engine_new(const ltx_engine_options* options, ltx_progress_fn progress, void* user, ltx_engine** out);
void ltx_engine_free(ltx_engine* engine);
/* The prompt rewritten as generate's enhance_prompt does (Engine::enhance): image NULL or "" for none, else an image
 * file Gemma sees (its vision tower); seed, greedy and max_new_tokens as EnhanceRequest. On LTX_OK *out holds the
 * text (free it with ltx_string_free); on failure *out is NULL. */
ltx_status ltx_enhance(ltx_engine* engine, const char* prompt, const char* image, uint64_t seed, int greedy,
                       int64_t max_new_tokens, char** out);
void ltx_string_free(char* text);
/* progress, user and cancel may be NULL. On LTX_OK *out holds the result; on failure *out is NULL. */
ltx_status ltx_generate(ltx_engine* engine, const ltx_request* request, ltx_progress_fn progress, void* user,
                        ltx_cancel* cancel, ltx_result** out);

typedef struct ltx_video {
  int64_t frames, height, width;
  double fps;
  const uint8_t* rgb; /* [frames, height, width, 3] */
  int64_t sample_rate, channels, samples;
  const float* audio; /* [channels, samples] */
} ltx_video;
size_t ltx_result_count(const ltx_result* result);
/* Views into the result, valid until ltx_result_free. */
ltx_status ltx_result_video(const ltx_result* result, size_t item, ltx_video* out);
/* Every item's files as `ltx generate` writes them (numbered when several; NULL or "" skips one), all or none. */
ltx_status ltx_result_save(const ltx_result* result, const char* mp4, const char* wav, const char* frames_dir,
                           const char* sidecar);
void ltx_result_free(ltx_result* result);

#ifdef __cplusplus
}
#endif

#endif /* LTX_LTX_H */
