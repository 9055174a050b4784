// The bundled argument data (assets/engines/args/, extracted from each release's source by
// scripts/extract-engine-args): every command quantplan can emit, at every release in the data,
// is one that release's parser accepts; and the round trip: an emitted command's settings, printed
// as that release prints its arguments at startup, read back by --check's log reader as the same.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include "core/base/text_file.h"
#include "core/check/startup_log.h"
#include "core/engine/engine_profile.h"
#include "core/launch/engine_args.h"
#include "core/launch/launch.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::launch;

namespace {

std::filesystem::path args_dir() { return test::source_dir() / "assets" / "engines" / "args"; }

EngineDeployment bundled_deployment(const std::string& engine) {
    const auto file = test::source_dir() / "assets" / "engines" / "launch" / "deployment.json";
    for (const EngineDeployment& d : parse_engine_deployments(read_text_file(file.string(), "deployment.json"), "deployment.json"))
        if (d.engine == engine) return d;
    throw Error("deployment.json", "no " + engine);
}

const std::vector<GpuProfile>& gpus() {
    static const std::vector<GpuProfile> all = load_gpu_profiles(test::gpus_dir());
    return all;
}

// The plans a user can emit, in kinds that exercise every option the launch writes.
struct Case {
    std::string model, scheme, gpu, kv;
    std::int64_t tp = 1, dp = 1;
    bool ep = false, eager = false, prefix = false;
};
std::vector<Case> cases() {
    return {
        {"qwen3-8b", "bf16", "h100-sxm", "", 1, 1, false, false, false},
        {"qwen3-8b", "w4a16-g128", "h100-sxm", "", 2, 1, false, true, true},
        {"llama-3.1-70b", "w8a8-fp8", "h100-sxm", "fp8", 4, 1, false, false, false},
        {"qwen3-8b", "w8a8-int8", "a100-80gb", "", 1, 1, false, false, true},
        {"qwen3-30b-a3b", "w4a16-g128-sym", "h200", "", 2, 1, true, false, false},
        {"qwen3-30b-a3b", "bf16", "h200", "", 2, 2, true, false, false},
        {"qwen3-8b", "w4a4-nvfp4", "b200", "", 1, 1, false, false, false},
    };
}

LaunchRequest request(const Case& c, const std::string& engine, const std::string& version) {
    LaunchRequest r;
    r.engine = engine;
    r.version = version;
    r.model = test::bundled_model(c.model);
    r.model_name = c.model;
    const std::vector<BundledModel> catalog = load_model_catalog(test::models_dir());
    r.model_repo = find_bundled_model(catalog, c.model)->hf_repo;
    r.scheme = parse_scheme(c.scheme);
    r.scheme_name = c.scheme;
    r.gpu = test::bundled_gpu(c.gpu);
    r.kv_auto = c.kv.empty();
    r.kv_format = c.kv.empty() ? "bf16" : c.kv;
    r.tensor_parallel = c.tp;
    r.data_parallel = c.dp;
    r.expert_parallel = c.ep;
    r.enforce_eager = c.eager;
    r.prefix_caching = c.prefix;
    r.max_model_len = 8192;
    r.gpu_memory_utilization = 0.9;
    r.mem_fraction_static = 0.85;
    r.max_num_seqs = 128;
    r.max_num_batched_tokens = 4096;
    r.replicas = 2;
    return r;
}

// A value as Python's repr prints it in an argparse Namespace or a dict.
std::string python_value(const std::string& v) {
    if (v.empty()) return "True";
    const bool number = v.find_first_not_of("0123456789.-") == std::string::npos && v.find_first_of("0123456789") != std::string::npos;
    return number ? v : "'" + v + "'";
}

// The options of a launch (after the entry point and model) as dest -> Python value.
std::vector<std::pair<std::string, std::string>> dests(const Launch& l, const EngineArgs& a, std::size_t v, const std::string& model_dest) {
    const Entrypoint* e = a.entrypoint(v);
    std::size_t i = e->argv.size() + (e->model_flag.empty() ? 1 : 2);
    std::vector<std::pair<std::string, std::string>> out = {{model_dest, "'" + l.checkpoint.repo + "'"}};
    while (i < l.argv.size()) {
        std::string canonical;
        const ArgRange* range = a.find(l.argv[i], v, &canonical);
        BOOST_REQUIRE(range != nullptr);
        std::string dest = range->dest;
        if (dest.empty()) {
            dest = canonical.substr(2);
            std::replace(dest.begin(), dest.end(), '-', '_');
        }
        std::string value;
        if (i + 1 < l.argv.size() && l.argv[i + 1].rfind("--", 0) != 0) value = l.argv[++i];
        out.emplace_back(dest, python_value(value));
        ++i;
    }
    return out;
}

// The startup lines a release prints: vLLM "args: Namespace(...)" before 0.9.0 and "non-default
// args: {...}" from 0.9.0 (the corpus logs vllm-0.8.4-... and vllm-0.9.0-... under
// tests/data/logs/ print each), SGLang "server_args=ServerArgs(...)"; then one KV line so the
// reader has the memory figure it needs.
std::string startup_lines(const Launch& l, const EngineArgs& a, std::size_t v) {
    std::string text;
    if (l.engine == "sglang") {
        text = "[2026-12-04 10:00:00] server_args=ServerArgs(";
        bool first = true;
        for (const auto& [k, val] : dests(l, a, v, "model_path")) text += (first ? "" : ", ") + k + "=" + val, first = false;
        return text + ")\n[2026-12-04 10:00:01 TP0] KV Cache is allocated. #tokens: 100000, K size: 5.00 GB, V size: 5.00 GB\n";
    }
    const bool namespace_form = engine::compare_versions(engine::parse_engine_version(l.version, "v"), engine::parse_engine_version("0.9.0", "v")) < 0;
    bool first = true;
    if (namespace_form) {
        text = "INFO 12-04 10:00:00 api_server.py:152] args: Namespace(";
        for (const auto& [k, val] : dests(l, a, v, "model")) text += (first ? "" : ", ") + k + "=" + val, first = false;
        text += ")\n";
    } else {
        text = "INFO 12-04 10:00:00 [utils.py:326] non-default args: {";
        for (const auto& [k, val] : dests(l, a, v, "model")) text += (first ? "" : ", ") + ("'" + k + "'") + ": " + val, first = false;
        text += "}\n";
    }
    return text + "INFO 12-04 10:00:01 [kv_cache_utils.py:1] GPU KV cache size: 100,000 tokens\n";
}

// The launch's settings read back.
void check_round_trip(const Launch& l, const LaunchRequest& r, const check::StartupLog& log, const std::string& what) {
    BOOST_TEST(log.model == l.checkpoint.repo, what);
    BOOST_TEST(log.tensor_parallel.value_or(-1) == r.tensor_parallel, what);
    BOOST_TEST(log.max_model_len.value_or(-1) == r.max_model_len, what);
    BOOST_TEST(log.max_num_seqs.value_or(-1) == r.max_num_seqs, what);
    BOOST_TEST(log.max_num_batched_tokens.value_or(-1) == r.max_num_batched_tokens, what);
    if (r.engine == "vllm") BOOST_TEST(std::abs(log.gpu_memory_utilization.value_or(-1) - r.gpu_memory_utilization) < 1e-9, what);
    else BOOST_TEST(std::abs(log.mem_fraction_static.value_or(-1) - r.mem_fraction_static) < 1e-9, what);
    if (!l.checkpoint.quantization.empty()) BOOST_TEST(log.quantization.value_or("") == l.checkpoint.quantization, what);
    if (!r.kv_auto) BOOST_TEST(log.kv_cache_dtype.has_value(), what);
    if (r.enforce_eager) BOOST_TEST(log.enforce_eager.value_or(false), what);
    if (r.data_parallel > 1) BOOST_TEST(log.data_parallel.value_or(-1) == r.data_parallel, what);
    if (r.prefix_caching && r.engine == "vllm") BOOST_TEST(log.enable_prefix_caching.value_or(false), what);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(launch_data)

// Every release of both engines, every case: a launch whose arguments the release accepts, or a
// refusal that names why (a KV format or option the release lacks, a kernel it has not), never
// an argument the parser would reject.
BOOST_AUTO_TEST_CASE(every_emitted_command_is_one_the_release_accepts) {
    for (const std::string engine : {"vllm", "sglang"}) {
        const EngineArgs a = load_engine_args(args_dir(), engine);
        const EngineDeployment d = bundled_deployment(engine);
        BOOST_TEST(a.versions.size() >= 10u, engine);
        std::size_t launched = 0;
        for (std::size_t v = 0; v < a.versions.size(); ++v)
            for (const Case& c : cases()) {
                const std::string what = engine + " " + a.versions[v].version + " " + c.model + " " + c.scheme;
                try {
                    const Launch l = make_launch(request(c, engine, a.versions[v].version), a, d, {}, gpus());
                    ++launched;
                    // Checked again here, from the outside: the bare command's options.
                    const Entrypoint* e = a.entrypoint(v);
                    const std::vector<std::string> opts(l.argv.begin() + static_cast<std::ptrdiff_t>(e->argv.size() + (e->model_flag.empty() ? 1 : 0)),
                                                        l.argv.end());
                    const std::vector<std::string> problems = check_arguments(a, v, opts);
                    BOOST_TEST(problems.empty(), what << ": " << (problems.empty() ? "" : problems.front()));
                } catch (const Error& err) {
                    const std::string m = err.what();
                    BOOST_TEST(m.find(a.source) == std::string::npos, what << ": " << m);  // a rejected argument
                    BOOST_TEST((m.find("first offered") != std::string::npos || m.find("no release in the data") != std::string::npos ||
                                m.find("GPUs that serve it") != std::string::npos || m.find("expert-parallel") != std::string::npos),
                               what << ": " << m);
                }
            }
        // Most of them launch: the newest release launches every case.
        BOOST_TEST(launched >= a.versions.size() * cases().size() / 2, engine << " launched " << launched);
        for (const Case& c : cases()) BOOST_CHECK_NO_THROW(make_launch(request(c, engine, ""), a, d, {}, gpus()));
    }
}

// Both pools of a disaggregated plan (docs/disaggregation.md), at every release: the connector's
// option with the pool's side (vLLM --kv-transfer-config from 0.9.0 for NIXL and 0.9.2 for
// P2pNccl, SGLang --disaggregation-mode with its Mooncake backend) accepted by the release's
// parser, or a refusal naming the first release that has it; a connector the engine does not
// launch is refused in one line.
BOOST_AUTO_TEST_CASE(both_pools_of_a_disaggregated_plan_launch_or_name_the_first_release) {
    const Case c = cases().front();
    for (const auto& [engine, connector] : {std::pair{"vllm", "nixl"}, std::pair{"vllm", "p2p-nccl"}, std::pair{"sglang", "sglang"}}) {
        const EngineArgs a = load_engine_args(args_dir(), engine);
        const EngineDeployment d = bundled_deployment(engine);
        std::size_t launched = 0, refused = 0;
        for (std::size_t v = 0; v < a.versions.size(); ++v)
            for (const char* role : {"prefill", "decode"}) {
                LaunchRequest r = request(c, engine, a.versions[v].version);
                r.pd_role = role;
                r.pd_connector = connector;
                const std::string what = std::string(engine) + " " + a.versions[v].version + " " + connector + " " + role;
                try {
                    const Launch l = make_launch(r, a, d, {}, gpus());
                    ++launched;
                    BOOST_TEST(l.configuration.rfind(std::string(role) + " pool, ", 0) == 0, what);
                    const std::string flag = std::string(engine) == "vllm" ? "--kv-transfer-config" : "--disaggregation-mode";
                    const auto at = std::find(l.argv.begin(), l.argv.end(), flag);
                    BOOST_TEST_REQUIRE((at != l.argv.end() && at + 1 != l.argv.end()), what);
                    if (std::string(engine) == "sglang") BOOST_TEST(*(at + 1) == role, what);
                    else if (std::string(connector) == "p2p-nccl")
                        BOOST_TEST((at + 1)->find(std::string(role) == "prefill" ? "kv_producer" : "kv_consumer") != std::string::npos, what);
                    else BOOST_TEST((at + 1)->find("NixlConnector") != std::string::npos, what);
                } catch (const Error& err) {
                    ++refused;
                    const std::string m = err.what();
                    BOOST_TEST((m.find("first in") != std::string::npos || m.find("first offered") != std::string::npos), what << ": " << m);
                }
            }
        BOOST_TEST(launched > 0u, engine);
        BOOST_TEST(refused > 0u, engine);  // the releases before the connector
    }
    LaunchRequest r = request(c, "vllm", "");
    r.pd_role = "prefill";
    r.pd_connector = "dynamo";
    BOOST_TEST(test::throws_naming([&] { make_launch(r, load_engine_args(args_dir(), "vllm"), bundled_deployment("vllm"), {}, gpus()); },
                                   "--emit: vLLM servers are emitted for the nixl and p2p-nccl connectors"));
}

BOOST_AUTO_TEST_CASE(an_emitted_command_reads_back_as_the_same_settings) {
    for (const std::string engine : {"vllm", "sglang"}) {
        const EngineArgs a = load_engine_args(args_dir(), engine);
        const EngineDeployment d = bundled_deployment(engine);
        std::size_t tried = 0;
        for (std::size_t v = 0; v < a.versions.size(); ++v)
            for (const Case& c : cases()) {
                const LaunchRequest r = request(c, engine, a.versions[v].version);
                std::optional<Launch> l;
                try {
                    l = make_launch(r, a, d, {}, gpus());
                } catch (const Error&) {
                    continue;  // refused (the test above says why it may be)
                }
                const std::string what = engine + " " + a.versions[v].version + " " + c.model + " " + c.scheme;
                const check::StartupLog log = check::read_startup_log(startup_lines(*l, a, v), what);
                check_round_trip(*l, r, log, what);
                ++tried;
            }
        BOOST_TEST(tried > 0u, engine);
    }
}

// The health endpoint and the entry point are known at every release.
BOOST_AUTO_TEST_CASE(every_release_has_an_entry_point_and_a_health_endpoint) {
    for (const std::string engine : {"vllm", "sglang"}) {
        const EngineArgs a = load_engine_args(args_dir(), engine);
        for (std::size_t v = 0; v < a.versions.size(); ++v) {
            BOOST_TEST(a.entrypoint(v) != nullptr, engine << " " << a.versions[v].version);
            BOOST_TEST((a.health_endpoint(v) || !bundled_deployment(engine).health_path.empty()), engine << " " << a.versions[v].version);
        }
    }
}

BOOST_AUTO_TEST_SUITE_END()
