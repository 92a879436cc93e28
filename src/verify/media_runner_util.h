// Shared plumbing of the media golden runners (video VAE, audio VAE, vocoders, mel, upsamplers): the case's weight
// source and config, its inputs, and running a graph whose output and tapped intermediates come back by name.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "io/json.h"
#include "io/safetensors.h"
#include "models/ltx/video_vae/video_vae_layers.h"
#include "nn/weight_source.h"
#include "verify/golden_case.h"

namespace ltx::media_runner {

// The checkpoint `config` JSON of the case's weights.
Json weights_config(const WeightSource& source);

// Builds `outputs` (name -> value) plus every tap as graph outputs, compiles, runs with `inputs` (in declaration
// order) and returns owned copies by name. Taps that share a node are computed once.
std::map<std::string, Tensor> run(Graph& g, const std::vector<std::pair<std::string, Value>>& outputs,
                                  const video_vae::Taps& taps, const std::vector<Tensor>& inputs);

}  // namespace ltx::media_runner
