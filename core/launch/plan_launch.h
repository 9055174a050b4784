#pragma once
// A priced plan's scheme (or a capacity recommendation's configuration) as a launch request, and
// the bundled data a launch needs, loaded once: what --emit, the report's capacity section and the
// window's "Copy launch command" share.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/checkpoint/model_config_json.h"
#include "core/launch/launch.h"
#include "core/plan/plan.h"

namespace quantplan::launch {

// The data behind every launch of one engine: its argument data, its deployment conventions, the
// published checkpoints, the bundled GPUs (to name those that serve a refused scheme) and the
// model catalog (to name a bundled model's repository).
struct LaunchData {
    EngineArgs args;
    EngineDeployment deployment;
    std::vector<PublishedCheckpoint> published;
    std::vector<GpuProfile> gpus;
    std::vector<BundledModel> catalog;
};

// Loads it from the data folder (models/, assets/). Throws Error("--emit") for an engine with no
// argument data or deployment conventions, and Error naming the file for a malformed one.
LaunchData load_launch_data(const std::filesystem::path& data_dir, const std::string& engine);

// What `request` priced for `scheme`, as a launch at `version` ("" the newest in the data):
// `model_argument` is the --model given (a bundled name gives its repository), max_model_len
// the longest request the plan admits, `replicas` the copies, `prefix_caching` whether the plan
// counted a shared prefix as cached.
LaunchRequest launch_request(const PlanRequest& request, const SchemeResult& scheme, const LaunchData& data, const std::string& model_argument,
                             const std::string& version, std::int64_t max_model_len, std::int64_t replicas, bool prefix_caching);

// The engine and version of an --engine argument ("vllm@0.11.0" -> {"vllm", "0.11.0"}).
std::pair<std::string, std::string> split_engine_argument(const std::string& argument);

}  // namespace quantplan::launch
