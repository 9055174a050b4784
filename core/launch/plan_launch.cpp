#include "core/launch/plan_launch.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/base/text_file.h"
#include "core/engine/step_model.h"

namespace quantplan::launch {

LaunchData load_launch_data(const std::filesystem::path& data_dir, const std::string& engine) {
    LaunchData d;
    const std::filesystem::path args_dir = data_dir / "assets" / "engines" / "args";
    std::error_code ec;
    if (!std::filesystem::is_regular_file(args_dir / (engine + ".json"), ec)) {
        // The engines there is data for, by file name: a user's typo and an engine not extracted
        // yet (TensorRT-LLM's trtllm-serve) get the same one line.
        std::vector<std::string> known;
        for (const auto& entry : std::filesystem::directory_iterator(args_dir, ec))
            if (entry.path().extension() == ".json") known.push_back(entry.path().stem().string());
        std::sort(known.begin(), known.end());
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        throw Error("--emit", "no argument data for engine '" + engine + "': the launch is checked against " +
                                  (list.empty() ? std::string("no engine") : list) + " (assets/engines/args/)");
    }
    d.args = load_engine_args(args_dir, engine);
    const std::filesystem::path file = data_dir / "assets" / "engines" / "launch" / "deployment.json";
    const std::string source = "assets/engines/launch/deployment.json";
    const std::vector<EngineDeployment> all = parse_engine_deployments(read_text_file(file.string(), source, 1 << 20), source);
    const auto it = std::find_if(all.begin(), all.end(), [&](const EngineDeployment& e) { return e.engine == engine; });
    if (it == all.end()) throw Error("--emit", "no deployment conventions for engine '" + engine + "' in " + source);
    d.deployment = *it;
    d.published = load_published_checkpoints(data_dir / "models");
    d.gpus = load_gpu_profiles(data_dir / "assets" / "gpus");
    d.catalog = load_model_catalog(data_dir / "models");
    return d;
}

std::pair<std::string, std::string> split_engine_argument(const std::string& argument) {
    const std::size_t at = argument.find('@');
    return at == std::string::npos ? std::pair{argument, std::string()} : std::pair{argument.substr(0, at), argument.substr(at + 1)};
}

LaunchRequest launch_request(const PlanRequest& request, const SchemeResult& scheme, const LaunchData& data, const std::string& model_argument,
                             const std::string& version, std::int64_t max_model_len, std::int64_t replicas, bool prefix_caching) {
    LaunchRequest r;
    r.engine = data.args.engine;
    r.version = version;
    r.model = request.model;
    if (const BundledModel* b = find_bundled_model(data.catalog, model_argument)) {
        r.model_name = b->name;
        r.model_repo = b->hf_repo;
    } else {
        r.model_repo = model_argument;  // a path or a repository the catalog does not hold
    }
    r.scheme = scheme.costs.scheme;
    r.scheme_name = scheme_name(scheme.costs.scheme);
    r.kv_auto = request.workload.kv_auto;
    r.kv_format = kv_format_name(scheme.costs.kv);
    r.gpu = request.gpu;
    r.tensor_parallel = request.workload.tensor_parallel;
    r.data_parallel = request.workload.data_parallel;
    r.expert_parallel = request.workload.expert_parallel > 1;
    r.nodes = request.workload.nodes;
    r.max_model_len = max_model_len;
    const EngineSettings& e = request.workload.engine;
    r.gpu_memory_utilization = e.gpu_memory_utilization;
    r.max_num_seqs = e.max_num_seqs;
    r.max_num_batched_tokens = e.max_num_batched_tokens;
    r.num_scheduler_steps = e.num_scheduler_steps;
    if (request.engine) {
        const engine::EngineProfile& p = request.engine->profile;
        if (p.memory.rule == engine::BudgetRule::StaticFraction)
            r.mem_fraction_static = engine::sglang_mem_fraction_static(p, request.gpu.memory_usable_bytes, r.tensor_parallel);
        // V0 without chunked prefill takes max(max_num_batched_tokens, max_model_len) in one forward.
        if (!p.defaults.chunked_prefill) r.max_num_batched_tokens = std::max(r.max_num_batched_tokens, max_model_len);
        r.enforce_eager = !p.defaults.cuda_graphs;
    }
    r.prefix_caching = prefix_caching;
    r.mxfp4_mxfp8 = request.workload.mxfp4_mxfp8;
    r.replicas = replicas;
    r.checkpoint_bytes = scheme.costs.budget.checkpoint_bytes;
    return r;
}

}  // namespace quantplan::launch
