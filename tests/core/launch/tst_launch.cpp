// core/launch: the argument data's reader and checker on a small synthetic engine, and launches
// built from it (the bundled data's tests are in tst_launch_data.cpp).
#include <boost/test/unit_test.hpp>

#include <fstream>

#include "core/base/text_file.h"
#include "core/launch/engine_args.h"
#include "core/launch/launch.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::launch;

namespace {

// Two releases: 1.0 has no FP8 KV cache and a flag-style eager switch; 1.1 adds fp8 and turns the
// switch into --x/--no-x.
const char* kArgs = R"({
  "format": "quantplan-engine-args/1", "engine": "vllm", "converter": "test",
  "versions": [{"version": "1.0"}, {"version": "1.1"}],
  "entrypoints": [{"from": "1.0", "to": "1.0", "argv": ["python", "-m", "vllm.entrypoints.openai.api_server"], "model_flag": "--model"},
                  {"from": "1.1", "to": "1.1", "argv": ["vllm", "serve"], "model_flag": ""}],
  "health": [{"from": "1.0", "to": "1.1", "path": "/health"}],
  "args": {
    "--model": [{"from": "1.0", "to": "1.1", "kind": "str"}],
    "--host": [{"from": "1.0", "to": "1.1", "kind": "str"}],
    "--port": [{"from": "1.0", "to": "1.1", "kind": "int"}],
    "--quantization": [{"from": "1.0", "to": "1.1", "kind": "choice", "choices": ["awq", "awq_marlin", "gptq_marlin", "compressed-tensors", "fp8", "modelopt_fp4"], "aliases": ["-q"]}],
    "--kv-cache-dtype": [{"from": "1.0", "to": "1.0", "kind": "choice", "choices": ["auto"]},
                         {"from": "1.1", "to": "1.1", "kind": "choice", "choices": ["auto", "fp8", "fp8_e4m3"]}],
    "--tensor-parallel-size": [{"from": "1.0", "to": "1.1", "kind": "int", "aliases": ["-tp"]}],
    "--data-parallel-size": [{"from": "1.0", "to": "1.1", "kind": "int"}],
    "--enable-expert-parallel": [{"from": "1.0", "to": "1.1", "kind": "flag"}],
    "--max-model-len": [{"from": "1.0", "to": "1.1", "kind": "int"}],
    "--gpu-memory-utilization": [{"from": "1.0", "to": "1.1", "kind": "float"}],
    "--max-num-seqs": [{"from": "1.0", "to": "1.1", "kind": "int"}],
    "--max-num-batched-tokens": [{"from": "1.0", "to": "1.1", "kind": "int"}],
    "--enable-prefix-caching": [{"from": "1.0", "to": "1.1", "kind": "bool_optional"}],
    "--enforce-eager": [{"from": "1.0", "to": "1.0", "kind": "flag"}, {"from": "1.1", "to": "1.1", "kind": "bool_optional"}],
    "--override-generation-config": [{"from": "1.1", "to": "1.1", "kind": "json"}],
    "--allowed-origins": [{"from": "1.0", "to": "1.1", "kind": "list", "item_kind": "str"}]
  }
})";

const char* kDeployment = R"({"engines": [{"engine": "vllm", "image": "vllm/vllm-openai", "tag": "v{version}", "image_source": "test",
  "port": 8000, "port_flag": "--port", "host_flag": "", "docker_flags": ["--ipc=host"], "image_runs_server": true,
  "image_model_flag": "--model", "health_path": "/health"}]})";

EngineArgs args() { return parse_engine_args(kArgs, "test-args.json"); }
EngineDeployment deployment() { return parse_engine_deployments(kDeployment, "test-deployment.json").front(); }

LaunchRequest request(const std::string& model, const std::string& scheme, const std::string& gpu) {
    LaunchRequest r;
    r.engine = "vllm";
    r.model = test::bundled_model(model);
    r.model_name = model;
    r.model_repo = "Org/" + model;
    r.scheme = parse_scheme(scheme);
    r.scheme_name = scheme;
    r.gpu = test::bundled_gpu(gpu);
    r.max_model_len = 4500;
    r.gpu_memory_utilization = 0.9;
    r.checkpoint_bytes = 123;
    return r;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

}  // namespace

BOOST_AUTO_TEST_SUITE(launch_args)

BOOST_AUTO_TEST_CASE(a_version_accepts_its_options_and_refuses_others) {
    const EngineArgs a = args();
    BOOST_TEST(a.versions.size() == 2u);
    BOOST_TEST(a.versions_text() == "1.0 to 1.1 (2 releases)");
    BOOST_TEST(check_arguments(a, 1, {"--kv-cache-dtype", "fp8", "-tp", "2", "--gpu-memory-utilization=0.85", "--no-enforce-eager"}).empty());
    BOOST_TEST(check_arguments(a, 1, {"--allowed-origins", "a", "b", "--port", "8000"}).empty());
    // fp8 is not a choice in 1.0, and --no-enforce-eager does not exist there (a plain flag).
    const auto p = check_arguments(a, 0, {"--kv-cache-dtype", "fp8", "--no-enforce-eager"});
    BOOST_TEST_REQUIRE(p.size() == 2u);
    BOOST_TEST(p[0].find("'fp8' is not one of auto") != std::string::npos);
    BOOST_TEST(p[1].find("unknown option --no-enforce-eager") != std::string::npos);
    BOOST_TEST(check_arguments(a, 1, {"--max-model-len", "4k"}).front().find("is not an integer") != std::string::npos);
    BOOST_TEST(check_arguments(a, 1, {"--gpu-memory-utilization", "most"}).front().find("is not a number") != std::string::npos);
    BOOST_TEST(check_arguments(a, 1, {"--enforce-eager=1"}).front().find("takes no value") != std::string::npos);
    BOOST_TEST(check_arguments(a, 1, {"--port"}).front().find("needs a value") != std::string::npos);
    BOOST_TEST(check_arguments(a, 1, {"--override-generation-config", "{bad"}).front().find("is not JSON") != std::string::npos);
    BOOST_TEST(check_arguments(a, 1, {"stray"}).front().find("not an option") != std::string::npos);
    BOOST_TEST(check_arguments(a, 0, {"--override-generation-config", "{}"}).front().find("unknown option") != std::string::npos);
    BOOST_TEST(*a.first_accepting("--kv-cache-dtype", "fp8") == 1u);
    BOOST_TEST(!a.first_accepting("--kv-cache-dtype", "int4"));
}

BOOST_AUTO_TEST_CASE(malformed_argument_data_is_one_error_naming_the_field) {
    BOOST_TEST(test::throws_naming([] { parse_engine_args("{", "x.json"); }, "x.json"));
    BOOST_TEST(test::throws_naming([] { parse_engine_args(R"({"format": "other"})", "x.json"); }, "x.json.format"));
    std::string overlap = kArgs;
    const std::string later = R"({"from": "1.1", "to": "1.1", "kind": "choice", "choices": ["auto", "fp8")";
    overlap.replace(overlap.find(later), later.size(), R"({"from": "1.0", "to": "1.1", "kind": "choice", "choices": ["auto", "fp8")");
    BOOST_TEST(test::throws_naming([&] { parse_engine_args(overlap, "x.json"); }, "overlaps"));
    std::string bad_kind = kArgs;
    bad_kind.replace(bad_kind.find("\"kind\": \"json\""), 14, "\"kind\": \"blob\"");
    BOOST_TEST(test::throws_naming([&] { parse_engine_args(bad_kind, "x.json"); }, "'blob' is not"));
    std::string bad_version = kArgs;
    bad_version.replace(bad_version.find(R"("to": "1.0", "argv")"), 11, R"("to": "9.9")");
    BOOST_TEST(test::throws_naming([&] { parse_engine_args(bad_version, "x.json"); }, "'9.9' is not in versions"));
    BOOST_TEST(test::throws_naming([] { resolve_args_version(args(), "2.0"); }, "1.0 to 1.1"));
    BOOST_TEST(resolve_args_version(args(), "") == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(launch_commands)

BOOST_AUTO_TEST_CASE(a_launch_carries_every_setting_the_plan_assumed) {
    LaunchRequest r = request("qwen3-8b", "w8a8-fp8", "h100-sxm");
    r.tensor_parallel = 2;
    r.kv_auto = false;
    r.kv_format = "fp8";
    r.prefix_caching = true;
    r.enforce_eager = true;
    r.replicas = 3;
    const Launch l = make_launch(r, args(), deployment(), {}, {});
    BOOST_TEST(l.version == "1.1");
    BOOST_TEST(l.argv[0] == "vllm");
    BOOST_TEST(l.argv[1] == "serve");
    BOOST_TEST(l.argv[2] == "./qwen3-8b-w8a8-fp8");  // no published checkpoint: the recipe's output
    for (const char* flag : {"--kv-cache-dtype", "--tensor-parallel-size", "--max-model-len", "--gpu-memory-utilization", "--max-num-seqs",
                             "--max-num-batched-tokens", "--enable-prefix-caching", "--enforce-eager"})
        BOOST_TEST(contains(l.argv, flag), flag);
    BOOST_TEST(l.argv[std::find(l.argv.begin(), l.argv.end(), "--max-model-len") - l.argv.begin() + 1] == "4500");
    BOOST_TEST(l.image == "vllm/vllm-openai:v1.1");
    BOOST_TEST(l.gpus_per_replica == 2);
    BOOST_TEST(l.checkpoint.kind == "recipe");
    BOOST_TEST(l.checkpoint.tool == "llm-compressor");
    BOOST_TEST(l.checkpoint.recipe.find("FP8_DYNAMIC") != std::string::npos);
    BOOST_TEST(l.checkpoint.calibration.find("none") == 0u);
    BOOST_TEST(l.checkpoint.bytes == 123u);
    // The container gets the model by --model after the image, and the port.
    BOOST_TEST(l.container_args[0] == "--model");
    BOOST_TEST(contains(l.container_args, "--port"));
    const std::string yaml = kubernetes_yaml(l, "Qwen3 8B / fp8");
    BOOST_TEST(yaml.find("name: qwen3-8b-fp8") != std::string::npos);
    BOOST_TEST(yaml.find("replicas: 3") != std::string::npos);
    BOOST_TEST(yaml.find("nvidia.com/gpu: 2") != std::string::npos);
    BOOST_TEST(yaml.find("path: /health") != std::string::npos);
    BOOST_TEST(docker_run(l, deployment()).find("--gpus 2") != std::string::npos);
    const nlohmann::json j = launch_json(l);
    for (const char* key : {"engine", "version", "argv", "env", "image"}) BOOST_TEST(j.contains(key), key);
    BOOST_TEST(j["argv"].is_array());
}

BOOST_AUTO_TEST_CASE(a_published_checkpoint_is_loaded_and_its_kernel_pinned) {
    const std::vector<PublishedCheckpoint> published = {{"qwen3-8b", "Qwen/Qwen3-8B-AWQ", "Qwen", "w4a16-g128", "awq", "test"}};
    const Launch l = make_launch(request("qwen3-8b", "w4a16-g128", "h100-sxm"), args(), deployment(), published, {});
    BOOST_TEST(l.checkpoint.kind == "published");
    BOOST_TEST(l.argv[2] == "Qwen/Qwen3-8B-AWQ");
    // vLLM runs AWQ through Marlin on Hopper: --quantization awq would force the slow kernel.
    BOOST_TEST(contains(l.argv, "awq_marlin"));
    BOOST_TEST(!l.checkpoint.kernel.empty());
}

BOOST_AUTO_TEST_CASE(the_old_entry_point_takes_the_model_by_its_option) {
    LaunchRequest r = request("qwen3-8b", "bf16", "a100-80gb");
    r.version = "1.0";
    const Launch l = make_launch(r, args(), deployment(), {}, {});
    BOOST_TEST(l.argv[0] == "python");
    BOOST_TEST(l.argv[3] == "--model");
    BOOST_TEST(l.argv[4] == "Org/qwen3-8b");
    BOOST_TEST(l.checkpoint.kind == "model");
    BOOST_TEST(!contains(l.argv, "--quantization"));
}

BOOST_AUTO_TEST_CASE(what_no_kernel_of_the_version_serves_is_refused_naming_what_would) {
    LaunchRequest r = request("qwen3-8b", "bf16", "h100-sxm");
    r.version = "1.0";
    r.kv_auto = false;
    r.kv_format = "fp8";
    BOOST_TEST(test::throws_naming([&] { make_launch(r, args(), deployment(), {}, {}); }, "first offered in vLLM 1.1"));
    const std::vector<GpuProfile> gpus = {test::bundled_gpu("h100-sxm"), test::bundled_gpu("b200")};
    const LaunchRequest fp4 = request("qwen3-8b", "w4a4-nvfp4", "h100-sxm");
    BOOST_TEST(test::throws_naming([&] { make_launch(fp4, args(), deployment(), {}, gpus); }, "GPUs that serve it: b200"));
    LaunchRequest nodes = request("qwen3-8b", "bf16", "h100-sxm");
    nodes.nodes = 2;
    BOOST_TEST(test::throws_naming([&] { make_launch(nodes, args(), deployment(), {}, {}); }, "multi-node"));
}

BOOST_AUTO_TEST_CASE(a_recipe_leaves_the_head_and_the_routers_in_16_bits) {
    const Launch l = make_launch(request("qwen3-30b-a3b", "w4a16-g128-sym", "h100-sxm"), args(), deployment(), {}, {});
    BOOST_TEST(l.checkpoint.kind == "recipe");
    BOOST_TEST(l.checkpoint.recipe.find("GPTQModifier") != std::string::npos);
    BOOST_TEST(l.checkpoint.recipe.find("\"lm_head\"") != std::string::npos);
    BOOST_TEST(l.checkpoint.recipe.find("mlp\\\\.gate$") != std::string::npos);
    BOOST_TEST(l.checkpoint.recipe.find("group_size: 128") != std::string::npos);
    BOOST_TEST(l.checkpoint.calibration.find("512 samples") != std::string::npos);
    const Launch awq = make_launch(request("qwen3-8b", "w4a16-g128", "h100-sxm"), args(), deployment(), {}, {});
    BOOST_TEST(awq.checkpoint.tool == "AutoAWQ");
    BOOST_TEST(awq.checkpoint.recipe.find("\"q_group_size\": 128") != std::string::npos);
    const Launch w8a8 = make_launch(request("qwen3-8b", "w8a8-int8", "a100-80gb"), args(), deployment(), {}, {});
    BOOST_TEST(w8a8.checkpoint.recipe.find("SmoothQuantModifier") != std::string::npos);
    BOOST_TEST(w8a8.checkpoint.recipe.find("strategy: token") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(an_emit_folder_is_written_whole_and_a_foreign_one_refused) {
    const auto dir = std::filesystem::temp_directory_path() / ("quantplan-emit-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    const Launch l = make_launch(request("qwen3-8b", "w8a8-fp8", "h100-sxm"), args(), deployment(), {}, {});
    write_emit_folder(dir, {l}, deployment());
    const std::string sub = "1-" + kubernetes_name(l.configuration);
    for (const char* f : {"launch.sh", "docker-run.sh", "deployment.yaml", "recipe.yaml"})
        BOOST_TEST(std::filesystem::is_regular_file(dir / sub / f), f);
    BOOST_TEST(read_text_file((dir / "launch.json").string(), "launch.json").find("quantplan-launch/1") != std::string::npos);
    write_emit_folder(dir, {l}, deployment());  // an earlier emit is replaced
    const auto foreign = dir.string() + "-foreign";
    std::filesystem::create_directories(foreign);
    std::ofstream(foreign + "/notes.txt") << "mine";
    BOOST_TEST(test::throws_naming([&] { write_emit_folder(foreign, {l}, deployment()); }, "not quantplan launch files"));
    BOOST_TEST(read_text_file(foreign + "/notes.txt", "notes") == "mine");
    std::filesystem::remove_all(dir);
    std::filesystem::remove_all(foreign);
}

BOOST_AUTO_TEST_CASE(kubernetes_names_are_lower_case_and_short) {
    BOOST_TEST(kubernetes_name("H100 SXM, w8a8-fp8, TP 2") == "h100-sxm-w8a8-fp8-tp-2");
    BOOST_TEST(kubernetes_name(std::string(100, 'a')).size() == 63u);
    BOOST_TEST(kubernetes_name("!!") == "quantplan");
}

BOOST_AUTO_TEST_SUITE_END()
