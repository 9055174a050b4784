#pragma once
// From a plan to a running server (docs/launch.md): the launch command, its environment, the
// engine's official image, a Kubernetes Deployment and Service, and the checkpoint a scheme needs
// (a published one, the engine quantizing at load, or the recipe that makes it), for one engine
// version, with every argument checked against that version's parser (engine_args.h).
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/hardware/gpu.h"
#include "core/launch/engine_args.h"
#include "core/model/model.h"
#include "core/scheme/scheme.h"

namespace quantplan::launch {

// A published quantized checkpoint of a catalog model (models/quantized-checkpoints.json).
struct PublishedCheckpoint {
    std::string model;        // catalog name ("qwen3-8b")
    std::string repo;         // "Qwen/Qwen3-8B-AWQ"
    std::string publisher;
    std::string scheme;       // quantplan scheme name it stores ("" when it maps to none)
    std::string quant_method; // its quantization_config's quant_method
    std::string source;
};

// Parses models/quantized-checkpoints.json. Throws Error naming the field.
std::vector<PublishedCheckpoint> parse_published_checkpoints(std::string_view json_text, const std::string& source);
std::vector<PublishedCheckpoint> load_published_checkpoints(const std::filesystem::path& models_dir);

// Each engine's image, port and deployment conventions (assets/engines/launch.json).
struct EngineDeployment {
    std::string engine;
    std::string image;            // "vllm/vllm-openai"
    std::string tag;              // "v{version}" ({version} replaced)
    std::string image_source;
    int port = 8000;
    std::string port_flag;        // "--port"
    std::string host_flag;        // "--host" ("" when the image's default host already listens on 0.0.0.0)
    std::string host_value;       // "0.0.0.0"
    std::vector<std::string> docker_flags;   // before the image: "--gpus", "all", "--ipc=host", ...
    bool image_runs_server = true;           // the image's entrypoint is the server: args follow the image
    std::string image_model_flag = "--model";  // how the model is passed after such an image
    std::string health_path;                 // fallback when the args data has none
    int readiness_initial_delay_s = 60;
    std::string deployment_source;
};
std::vector<EngineDeployment> parse_engine_deployments(std::string_view json_text, const std::string& source);

// What the plan assumed, in quantplan's terms.
struct LaunchRequest {
    std::string engine;                    // "vllm", "sglang"
    std::string version;                   // "" the newest release in the data
    ModelConfig model;
    std::string model_name;                // catalog name, "" for a config given by path
    std::string model_repo;                // the 16-bit model's repository (or path)
    Scheme scheme;
    std::string scheme_name;
    std::string kv_format;                 // quantplan KV format ("bf16", "fp8", ...)
    bool kv_auto = true;                   // --kv auto: the engine's default (nothing emitted)
    GpuProfile gpu;
    std::int64_t tensor_parallel = 1;
    std::int64_t data_parallel = 1;
    bool expert_parallel = false;
    std::int64_t nodes = 1;
    std::int64_t max_model_len = 4096;
    double gpu_memory_utilization = 0.9;   // vLLM; SGLang's mem_fraction_static when mem_fraction_static is 0
    double mem_fraction_static = 0;        // SGLang: the fraction the plan budgeted
    std::int64_t max_num_seqs = 256;
    std::int64_t max_num_batched_tokens = 8192;
    bool prefix_caching = false;           // the plan counted prefix hits (--prefix N)
    bool enforce_eager = false;
    std::int64_t num_scheduler_steps = 1;  // vLLM V0's multi-step scheduling the plan priced (1: off)
    bool mxfp4_mxfp8 = false;
    std::int64_t replicas = 1;
    std::uint64_t checkpoint_bytes = 0;    // the scheme's checkpoint as the plan computed it
    // Disaggregated serving (core/serve/disagg.h, docs/disaggregation.md): the pool this launch
    // serves ("prefill" or "decode"; "" for aggregated serving) and the connector the plan priced
    // ("nixl", "p2p-nccl" for vLLM; "sglang" for SGLang's PD with its Mooncake backend; "dynamo" and
    // "mooncake" are refused: Dynamo launches its own workers, and the MooncakeConnector's first
    // vLLM release is not pinned).
    std::string pd_role;
    std::string pd_connector;
};

// How the checkpoint the command loads comes about.
struct CheckpointPlan {
    std::string kind;          // "model" (the 16-bit model or the checkpoint as shipped), "published",
                               // "online" (the engine quantizes at load), "recipe"
    std::string repo;          // what the command loads
    std::string source;        // of a published checkpoint
    std::string quantization;  // the engine's --quantization value, "" when it reads the checkpoint's own
    std::string kernel;        // the kernel the engine resolves on the GPU ("" unknown)
    std::string tool;          // recipe: "llm-compressor"
    std::string recipe;        // recipe: YAML
    std::string recipe_file;   // recipe: "recipe.yaml"
    std::string calibration;   // recipe: the calibration data it needs, in words
    std::string output_dir;    // recipe: where the tool writes the checkpoint
    std::uint64_t bytes = 0;
    std::vector<std::string> notes;
};

// A launch for one configuration.
struct Launch {
    std::string engine, version;
    std::string configuration;             // "h100-sxm, w8a8-fp8, TP 2, 3 replicas"
    std::vector<std::string> argv;         // the whole command
    std::vector<std::string> container_args;  // in the image: after it (container_runs_server) or the whole command
    bool container_runs_server = true;
    std::optional<std::pair<std::string, std::string>> model_mount;  // (path here, path in the container) for a local checkpoint
    std::map<std::string, std::string> env;
    std::string image;                     // "vllm/vllm-openai:v0.11.0"
    std::string health_path;
    int port = 8000;
    std::int64_t gpus_per_replica = 1;
    std::int64_t replicas = 1;
    CheckpointPlan checkpoint;
    std::vector<std::string> settings_from_plan;  // "--max-model-len 4500: the longest request of the traffic"
    std::vector<std::string> notes;
};

// Builds the launch. Throws Error("--emit", ...) in one line for an engine or version not in the
// data, a scheme no kernel of that version serves on the GPU (naming the first version or the
// GPUs that serve it), a KV format the version's --kv-cache-dtype does not offer (naming the
// first version that does), a deployment over several nodes, and any emitted argument the
// version's parser would refuse.
Launch make_launch(const LaunchRequest& request, const EngineArgs& args, const EngineDeployment& deployment,
                   const std::vector<PublishedCheckpoint>& published, const std::vector<GpuProfile>& gpus);

// The release a version argument names in the data: exact, or the newest for "".
// Throws Error("--engine") naming the releases there are.
std::size_t resolve_args_version(const EngineArgs& args, const std::string& version);

// Texts of a launch.
std::string shell_command(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env);  // env + argv, quoted, continued lines
std::string docker_run(const Launch& launch, const EngineDeployment& deployment);
std::string kubernetes_yaml(const Launch& launch, const std::string& name);
// JSON `launch`: engine, version, argv, env, image (the contract), with the rest beside them.
nlohmann::json launch_json(const Launch& launch);

// A name fit for Kubernetes (lower case, digits and '-', at most 63 characters).
std::string kubernetes_name(const std::string& text);

// Writes the launch files of `launches` into `dir`, replacing an earlier emit folder whole or not
// at all: one subfolder per configuration with launch.sh, docker-run.sh, deployment.yaml and, for
// a recipe, recipe.yaml; launch.json at the top. Throws Error("--emit-out") when `dir` holds files
// that are not an earlier emit's.
void write_emit_folder(const std::filesystem::path& dir, const std::vector<Launch>& launches, const EngineDeployment& deployment);

}  // namespace quantplan::launch
