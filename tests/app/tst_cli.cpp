// The command line: option parsing, the headless JSON contract, and bad input as one line with a
// non-zero exit (run through the real executable).
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/cli_options.h"
#include "app/commands.h"
#include "app/headless.h"
#include "core/base/atomic_file.h"
#include "core/base/error.h"
#include "core/base/text_file.h"
#include "core/engine/engine_profile.h"
#include "tests/core/test_support.h"
#include "tests/support/synthetic_calibration.h"

using namespace quantplan;

namespace {

struct RunResult {
    int exit_code;
    std::string out;
    std::string err;
};

// Parses `args` after the program name and runs `mode` in process.
RunResult run_in_process(std::vector<std::string> args, int (*mode)(const app::CliOptions&, std::ostream&, std::ostream&)) {
    args.insert(args.begin(), "quantplan");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    std::ostringstream out, err;
    const app::CliOptions o = app::parse_command_line(static_cast<int>(argv.size()), argv.data());
    const int rc = mode(o, out, err);
    return {rc, out.str(), err.str()};
}

RunResult run_headless(std::vector<std::string> args) { return run_in_process(std::move(args), app::run_headless); }

RunResult run_serve(std::vector<std::string> args) {
    args.insert(args.begin(), {"--headless", "--serve"});
    return run_in_process(std::move(args), app::run_serve);
}

// Runs the built executable through the shell and returns (exit code, stdout + stderr).
std::pair<int, std::string> run_binary(const std::string& args) {
    const std::string cmd = std::string(QUANTPLAN_BINARY) + " " + args + " 2>&1";
    FILE* pipe = popen(cmd.c_str(), "r");
    std::string output;
    std::array<char, 4096> buf{};
    while (pipe && fgets(buf.data(), buf.size(), pipe)) output += buf.data();
    const int status = pipe ? pclose(pipe) : -1;
    return {WEXITSTATUS(status), output};
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli)

BOOST_AUTO_TEST_CASE(options_parse_with_and_without_equals) {
    std::vector<std::string> args{"quantplan", "--headless", "--batch=64", "--context", "128", "--gpu-mem-util", "0.8", "--tp=2"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    const app::CliOptions o = app::parse_command_line(static_cast<int>(argv.size()), argv.data());
    BOOST_TEST(o.headless);
    BOOST_TEST(o.batch == 64);
    BOOST_TEST(o.context == 128);
    BOOST_TEST(o.gpu_mem_util == 0.8);
    BOOST_TEST(o.tp == 2);
}

BOOST_AUTO_TEST_CASE(json_contract_keys) {
    const RunResult r = run_headless({"--model", "qwen3-8b", "--schemes", "bf16,w4a16-g128", "--json", "-"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["model"]["name"] == "qwen3-8b");
    BOOST_TEST(doc["model"]["parameters"]["total"] == 8190735360LL);
    BOOST_TEST(doc["schemes"].size() == 2u);
    const auto& s = doc["schemes"][1];
    BOOST_TEST(s["name"] == "w4a16-g128");
    BOOST_TEST(s["effective_bits"].get<double>() == 4.15625);
    BOOST_TEST(s["checkpoint_bytes"] == 6098479104LL);
    for (const char* key : {"bytes_by_role", "decode", "admission", "throughput_tokens_per_s", "speedup_vs_bf16", "prefill"})
        BOOST_TEST(s.contains(key), key);
    for (const char* key : {"batch", "context", "bytes", "flops", "time_s", "bound"}) BOOST_TEST(s["decode"].contains(key), key);
    for (const char* key : {"weights", "kv", "activations"}) BOOST_TEST(s["decode"]["bytes"].contains(key), key);
    for (const char* key : {"budget_bytes", "max_sequences", "kv_cache_tokens"}) BOOST_TEST(s["admission"].contains(key), key);
    for (const char* key : {"crossovers", "decision", "ridges", "schema_version"}) BOOST_TEST(doc.contains(key), key);
}

BOOST_AUTO_TEST_CASE(table_output_without_json) {
    const RunResult r = run_headless({"--schemes", "bf16,w4a16-g128"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    BOOST_TEST(r.out.find("w4a16-g128") != std::string::npos);
    BOOST_TEST(r.out.find("6098479104") != std::string::npos);
}

// The modern architectures on the command line: the table says what each layer type caches;
// placement options that cannot hold are one line, non-zero.
BOOST_AUTO_TEST_CASE(modern_architectures_in_the_table) {
    const RunResult oss = run_headless({"--model", "gpt-oss-120b", "--schemes", "native"});
    BOOST_TEST_REQUIRE(oss.exit_code == 0, oss.err);
    BOOST_TEST(oss.out.find("18 full_attention + 18 sliding_attention (window 128), 73728 bytes per token") != std::string::npos, oss.out);
    BOOST_TEST(oss.out.find("native: mxfp4") != std::string::npos, oss.out);
    const RunResult ds = run_headless({"--model", "deepseek-v3", "--gpu", "h200", "--tp", "8", "--ep", "16", "--dp", "2", "--nodes", "2", "--kv", "fp8"});
    BOOST_TEST_REQUIRE(ds.exit_code == 0, ds.err);
    BOOST_TEST(ds.out.find("61 mla_latent, 35136 bytes per token") != std::string::npos, ds.out);
    BOOST_TEST(ds.out.find("2 data-parallel engines") != std::string::npos, ds.out);
    BOOST_TEST(ds.out.find("native") != std::string::npos);  // declared FP8: in the default set
    for (const char* args : {"--headless --model deepseek-v3 --gpu h200 --tp 8 --ep 16 --dp 2", "--headless --model deepseek-v3 --gpu a100-80gb --tp 8 --ep 16 --dp 2 --nodes 2",
                             "--headless --model qwen3-8b --dp 2"}) {
        const auto [rc, output] = run_binary(args);
        BOOST_TEST(rc == 1, args << " -> " << rc);
        BOOST_TEST(std::count(output.begin(), output.end(), '\n') == 1, args << " -> " << output);
    }
}

struct Bad {
    const char* args;
    const char* fragment;
};

BOOST_AUTO_TEST_CASE(bad_input_is_one_line_and_nonzero) {
    const Bad cases[] = {
        {"--headless --model nosuch", "unknown model"},
        {"--headless --schemes w4a16-g0", "group size"},
        {"--headless --schemes w4a16-foo", "unknown part"},
        {"--headless --gpu h9000", "unknown GPU"},
        {"--headless --batch 0", "--batch"},
        {"--headless --batch abc", "--batch"},
        {"--headless --context -1", "--context"},
        {"--headless --gpu-mem-util 1.5", "--gpu-mem-util"},
        {"--headless --kv-cache-memory-bytes 0", "--kv-cache-memory-bytes"},
        {"--headless --kv-cache-memory-bytes 1.5G", "no decimals"},
        {"--headless --kv-cache-memory-bytes 4X", "byte count"},
        {"--headless --kv-cache-memory-bytes 4G --engine sglang", "vLLM setting"},
        {"--headless --profile realistic --kv-cache-memory-bytes 4G --engine sglang", "vLLM setting"},
        {"--headless --kv-cache-memory-bytes .5k", "byte count"},
        {"--headless --kv-cache-memory-bytes 99999999999999999999G", "byte count"},
        {"--headless --kv fp7", "--kv"},
        {"--headless --tp 2 --gpu-p2p maybe", "--gpu-p2p"},
        {"--headless --tp 2 --gpu-p2p", "needs a value"},
        {"--headless --frobnicate", "unknown option"},
        {"--headless --model", "needs a value"},
        {"--headless --model /nonexistent/config.json", "no such"},
        {"--headless --check-corpus /nonexistent", "--check-corpus"},
        {"--headless --check-corpus " QUANTPLAN_SOURCE_DIR "/docs", "no *.log"},
        {"--headless --bench-index 0 --check " QUANTPLAN_SOURCE_DIR "/tests/data/bench/genai-perf-0.0.4-llama-3-8b-instruct-unstated-c1.json", "--bench-index"},
        {"--headless --bench-index 2 --check " QUANTPLAN_SOURCE_DIR "/tests/data/bench/guidellm-0.5.0.dev0-gpt-oss-20b-4xintel-xpu-sync.json",
         "holds 1 GuideLLM"},
    };
    for (const Bad& c : cases) {
        const auto [rc, output] = run_binary(c.args);
        BOOST_TEST(rc == 1, c.args << " -> " << rc);
        BOOST_TEST(output.find(c.fragment) != std::string::npos, c.args << " -> " << output);
        BOOST_TEST(std::count(output.begin(), output.end(), '\n') == 1, c.args << " -> " << output);
    }
}

// Two RTX 4090s have no peer-to-peer: TP all-reduces through host memory unless --gpu-p2p on says
// the platform has it (docs/capacity.md).
BOOST_AUTO_TEST_CASE(geforce_tensor_parallel_all_reduces_through_host_memory_by_default) {
    const auto communication = [](std::vector<std::string> extra) {
        std::vector<std::string> args = {"--model", "qwen3-8b", "--gpu", "rtx-4090", "--tp", "2", "--schemes", "bf16", "--json", "-"};
        args.insert(args.end(), extra.begin(), extra.end());
        const RunResult r = run_headless(args);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        return nlohmann::json::parse(r.out)["schemes"][0]["decode"]["communication_time_s"].get<double>();
    };
    const double by_default = communication({}), off = communication({"--gpu-p2p", "off"}), on = communication({"--gpu-p2p", "on"});
    BOOST_TEST(by_default == off);
    BOOST_TEST(communication({"--gpu-p2p", "auto"}) == by_default);
    // 72 all-reduces (36 layers) at 12.25 us at least, against PCIe4 peer-to-peer's bandwidth price.
    BOOST_TEST(off >= 72 * 12.25e-6);
    BOOST_TEST(on < off / 10);
    // The table says why, and how to lift it.
    const RunResult table = run_headless({"--model", "qwen3-8b", "--gpu", "rtx-4090", "--tp", "2", "--schemes", "bf16"});
    BOOST_TEST_REQUIRE(table.exit_code == 0, table.err);
    BOOST_TEST(table.out.find("warning: the 2 GPUs have no peer-to-peer (the rtx-4090 profile's p2p: false): each of a step's 72 all-reduces") !=
               std::string::npos);
    BOOST_TEST(table.out.find("--gpu-p2p on") != std::string::npos);
    const RunResult lifted = run_headless({"--model", "qwen3-8b", "--gpu", "rtx-4090", "--tp", "2", "--schemes", "bf16", "--gpu-p2p", "on"});
    BOOST_TEST(lifted.out.find("peer-to-peer") == std::string::npos);
    const RunResult one = run_headless({"--model", "qwen3-8b", "--gpu", "rtx-4090", "--schemes", "bf16"});
    BOOST_TEST(one.out.find("peer-to-peer") == std::string::npos);
    // --serve says so on its first line.
    const RunResult serve =
        run_serve({"--model", "qwen3-8b", "--gpu", "rtx-4090", "--tp", "2", "--schemes", "bf16", "--rate", "1", "--requests", "20"});
    BOOST_TEST_REQUIRE(serve.exit_code == 0, serve.err);
    BOOST_TEST(serve.out.substr(0, serve.out.find('\n')).find("TP 2 (no peer-to-peer: all-reduces through host memory") != std::string::npos, serve.out);
}

BOOST_AUTO_TEST_CASE(engine_profile_json_has_engine_and_bands) {
    const RunResult r = run_headless({"--schemes", "bf16,w4a16-g128", "--profile", "engine", "--engine", "vllm@0.6.3", "--model",
                                      "qwen2.5-7b-instruct", "--gpu", "a100-80gb", "--json", "-"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["engine"]["name"] == "vllm");
    BOOST_TEST(doc["engine"]["version_asked"] == "0.6.3");
    BOOST_TEST(doc["engine"]["profile"] == "vllm-v0");
    BOOST_TEST(!doc["engine"]["sources"].empty());
    BOOST_TEST(doc["engine"]["defaults"]["cuda_graph_max_batch"] == 256);  // V0: up to 256 sequences
    BOOST_TEST(doc["engine"]["defaults"]["hybrid_allocator_from_version"].is_null());
    // SGLang's largest captured batch by GPU memory, TP and release (a v0.5.18 RTX 4090 log: 24).
    const auto sg = nlohmann::json::parse(
        run_headless({"--schemes", "bf16", "--engine", "sglang@0.5.18", "--model", "qwen3-4b", "--gpu", "rtx-4090", "--json", "-"}).out);
    BOOST_TEST(sg["engine"]["defaults"]["cuda_graph_max_batch"] == 24);
    BOOST_TEST(doc["profile"]["name"] == "engine");
    for (const auto& s : doc["schemes"]) {
        BOOST_TEST_REQUIRE(s.contains("bands"));
        for (const char* key : {"throughput_tokens_per_s", "step_time_s", "ttft_s", "kv_cache_tokens"}) {
            BOOST_TEST_REQUIRE(s["bands"].contains(key), key);
            // null: the class has fewer than 5 corpus points; never a band of fewer.
            if (s["bands"][key].is_null()) continue;
            BOOST_TEST(s["bands"][key]["low"].get<double>() <= s["bands"][key]["high"].get<double>(), key);
        }
        BOOST_TEST(s["bands"]["step_time_s"].is_object());
        BOOST_TEST(s["bands"].contains("basis"));
    }
    // The table prints the band beside the figure.
    const RunResult t = run_headless({"--schemes", "bf16", "--profile", "engine"});
    BOOST_TEST_REQUIRE(t.exit_code == 0, t.err);
    BOOST_TEST(t.out.find("tok/s (p10-p90)") != std::string::npos);
    BOOST_TEST(t.out.find("band: step") != std::string::npos);
    // An explicit --gpu-mem-util wins over the profile's default even at the default's value.
    const auto given = nlohmann::json::parse(run_headless({"--schemes", "bf16", "--profile", "engine", "--gpu-mem-util", "0.9", "--json", "-"}).out);
    BOOST_TEST(given["workload"]["gpu_memory_utilization"] == 0.9);
    const auto dflt = nlohmann::json::parse(run_headless({"--schemes", "bf16", "--profile", "engine", "--json", "-"}).out);
    BOOST_TEST(dflt["workload"]["gpu_memory_utilization"] == 0.92);  // vLLM 0.20 on
    // vLLM's --kv-cache-memory-bytes: the cache is the size given (4G: 4 x 2^30 bytes), not what the
    // utilization leaves; the JSON says so; a size past the GPU's memory does not fit, and says why.
    const auto pinned = nlohmann::json::parse(run_headless({"--schemes", "bf16", "--kv-cache-memory-bytes", "4G", "--json", "-"}).out);
    BOOST_TEST(pinned["workload"]["kv_cache_memory_bytes"] == 4294967296LL);
    BOOST_TEST(pinned["schemes"][0]["admission"]["budget_bytes"] == 4294967296LL);
    BOOST_TEST(!dflt["workload"].contains("kv_cache_memory_bytes"));
    BOOST_TEST(dflt["schemes"][0]["admission"]["budget_bytes"].get<std::int64_t>() > 4 * 4294967296LL);
    const auto huge = nlohmann::json::parse(run_headless({"--schemes", "bf16", "--kv-cache-memory-bytes", "200G", "--json", "-"}).out);
    BOOST_TEST(huge["schemes"][0]["admission"]["fits"] == false);
    BOOST_TEST(huge["schemes"][0]["admission"]["reason"].get<std::string>().find("more than the GPU's") != std::string::npos);
    // The default is the fitted engine profile (the load issue), with its bands; --profile realistic
    // is the seeds' roofline, naming the engine without pricing with it.
    const auto plain = nlohmann::json::parse(run_headless({"--schemes", "bf16", "--json", "-"}).out);
    BOOST_TEST(plain["profile"]["name"] == "engine");
    BOOST_TEST(plain["engine"]["prices_steps"] == true);
    BOOST_TEST(plain["schemes"][0].contains("bands"));
    const auto lecture = nlohmann::json::parse(run_headless({"--schemes", "bf16", "--profile", "realistic", "--json", "-"}).out);
    BOOST_TEST(lecture["profile"]["name"] == "realistic");
    BOOST_TEST(lecture["engine"]["prices_steps"] == false);
    BOOST_TEST(!lecture["schemes"][0].contains("bands"));
}

// --enforce-eager (and the scenario key enforce_eager) turn the engine's CUDA graphs off: each decode
// step pays the fitted eager cost per layer; the JSON says so in engine.defaults and engine.step.
BOOST_AUTO_TEST_CASE(enforce_eager_prices_decode_steps_without_cuda_graphs) {
    const std::vector<std::string> base = {"--schemes", "bf16", "--profile", "engine", "--engine", "vllm@0.9.1", "--model", "qwen3-8b",
                                           "--gpu", "a100-80gb", "--json", "-"};
    const RunResult graphs = run_headless(base);
    std::vector<std::string> args = base;
    args.push_back("--enforce-eager");
    const RunResult eager = run_headless(args);
    BOOST_TEST_REQUIRE(graphs.exit_code == 0, graphs.err);
    BOOST_TEST_REQUIRE(eager.exit_code == 0, eager.err);
    const auto g = nlohmann::json::parse(graphs.out), e = nlohmann::json::parse(eager.out);
    BOOST_TEST(g["engine"]["defaults"]["cuda_graphs"] == true);
    BOOST_TEST(e["engine"]["defaults"]["cuda_graphs"] == false);
    // The step's GPU time gains 36 x eager_per_layer_s (Qwen3-8B: 36 layers) and blends with the
    // host's 36 x eager_host.per_layer_s: (G^p + H^p)^(1/p).
    const double per_layer = e["engine"]["step"]["eager_per_layer_s"].get<double>();
    const double host = e["engine"]["step"]["eager_host"]["per_layer_s"].get<double>();
    const double p = e["engine"]["step"]["eager_blend_exponent"].get<double>();
    BOOST_TEST(e["engine"]["step"]["eager_host"]["version"] == "0.9");
    BOOST_TEST((per_layer > 0.0 && host > 0.0 && p > 0.0));
    const double gpu = g["schemes"][0]["decode"]["time_s"].get<double>() + 36 * per_layer;
    const double expected = std::pow(std::pow(gpu, p) + std::pow(36 * host, p), 1.0 / p);
    BOOST_TEST(std::abs(e["schemes"][0]["decode"]["time_s"].get<double>() - expected) < 1e-9);
    // The same through a scenario file.
    const std::filesystem::path scenario = std::filesystem::temp_directory_path() / "quantplan_tst_eager_scenario.json";
    {
        std::ofstream f(scenario);
        f << R"({"enforce_eager": true})";
    }
    args = base;
    args.insert(args.end(), {"--scenario", scenario.string()});
    const RunResult s = run_headless(args);
    std::filesystem::remove(scenario);
    BOOST_TEST_REQUIRE(s.exit_code == 0, s.err);
    BOOST_TEST(nlohmann::json::parse(s.out)["engine"]["defaults"]["cuda_graphs"] == false);
}

BOOST_AUTO_TEST_CASE(bad_engine_arguments_are_one_line) {
    for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
             {"--headless --engine tgi", "unknown engine"},
             {"--headless --engine vllm@0.1.0", "covered by no profile"},
             {"--headless --engine vllm@latest", "is not a version"},
             {"--headless --profile bogus", "--profile"},
         }) {
        const auto [rc, output] = run_binary(args);
        BOOST_TEST(rc == 1, args << " -> " << rc);
        BOOST_TEST(output.find(fragment) != std::string::npos, args << " -> " << output);
        BOOST_TEST(std::count(output.begin(), output.end(), '\n') == 1, args << " -> " << output);
    }
}

BOOST_AUTO_TEST_CASE(check_json_contract_and_bad_files) {
    const std::string log = std::string(QUANTPLAN_SOURCE_DIR) + "/tests/data/logs/vllm-0.11.2-llama-3-8b-h200-tp1.log";
    const auto [rc, out] = run_binary("--headless --check " + log + " --gpu h200 --json -");
    BOOST_TEST_REQUIRE(rc == 0, out);
    const auto doc = nlohmann::json::parse(out);
    const auto& c = doc["check"];
    for (const char* key : {"model", "gpu", "engine", "version", "tp", "gpu_memory_utilization", "max_model_len", "kv_cache_dtype", "quantization", "from"})
        BOOST_TEST(c["identified"].contains(key), key);
    BOOST_TEST(c["identified"]["version"] == "0.11.2");
    BOOST_TEST(c["identified"]["from"]["gpu"] == "option");
    std::set<std::string> quantities;
    for (const auto& r : c["rows"]) {
        for (const char* key : {"quantity", "logged", "predicted", "unit", "error_fraction"}) BOOST_TEST(r.contains(key), key);
        quantities.insert(r["quantity"].get<std::string>());
    }
    for (const char* q : {"weights_bytes", "kv_cache_bytes", "kv_cache_tokens", "max_concurrency"}) BOOST_TEST(quantities.count(q) == 1u, q);
    // The table names the largest difference.
    const auto [rc2, table] = run_binary("--headless --check " + log + " --gpu h200");
    BOOST_TEST(rc2 == 0);
    BOOST_TEST(table.find("largest difference:") != std::string::npos, table);
    // --add-to-corpus appends the logged terms in the corpus format (once per file), and --corpus
    // refits the engine profiles with them: the fit's corpus checksum changes.
    const std::string corpus = "/tmp/quantplan_tst_cli_corpus.json";
    std::remove(corpus.c_str());
    const auto [rc4, added] = run_binary("--headless --check " + log + " --gpu h200 --add-to-corpus " + corpus);
    BOOST_TEST_REQUIRE(rc4 == 0, added);
    BOOST_TEST(added.find("4 records added") != std::string::npos, added);  // weights, KV bytes, KV tokens, concurrency (graph memory < 0)
    const auto [rc5, again] = run_binary("--headless --check " + log + " --gpu h200 --add-to-corpus " + corpus);
    BOOST_TEST(again.find("0 records added") != std::string::npos, again);
    const auto plain = nlohmann::json::parse(run_binary("--headless --profile engine --schemes bf16 --json -").second);
    const auto mine = nlohmann::json::parse(run_binary("--headless --profile engine --schemes bf16 --json - --corpus " + corpus).second);
    BOOST_TEST(plain["engine"]["corpus_checksum"] != mine["engine"]["corpus_checksum"]);
    // A corpus file of the wrong shape is one line, not an internal error.
    write_file_atomically(corpus, R"({"format": "quantplan-measurements/1", "records": [{"id": "x", "source": "str"}, 3]})");
    const auto [rc6, bad_corpus] = run_binary("--headless --check " + log + " --gpu h200 --add-to-corpus " + corpus);
    BOOST_TEST(rc6 == 1, bad_corpus);
    BOOST_TEST(bad_corpus.find("--add-to-corpus") != std::string::npos, bad_corpus);
    std::remove(corpus.c_str());
    // A file that is no startup log, and one that does not exist: one line each, exit 1.
    for (const std::string& bad : {std::string(QUANTPLAN_SOURCE_DIR) + "/README.md", std::string("/nonexistent.log")}) {
        const auto [rc3, msg] = run_binary("--headless --check " + bad);
        BOOST_TEST(rc3 == 1, bad);
        BOOST_TEST(std::count(msg.begin(), msg.end(), '\n') == 1, msg);
        BOOST_TEST(msg.find("--check") != std::string::npos, msg);
    }
}

// --check-corpus: every log of the bundled corpus checked, the summary table first; the file
// written with --check-corpus-out is what stdout would hold.
BOOST_AUTO_TEST_CASE(check_corpus_prints_the_errors_per_quantity) {
    const std::string dir = std::string(QUANTPLAN_SOURCE_DIR) + "/tests/data/logs";
    const auto [rc, out] = run_binary("--headless --check-corpus " + dir);
    BOOST_TEST_REQUIRE(rc == 0, out);
    BOOST_TEST(out.rfind("| quantity | logs printing it |", 0) == 0, out.substr(0, 200));
    BOOST_TEST(out.find("| kv_cache_tokens |") != std::string::npos);
    BOOST_TEST(out.find("vllm-0.11.0-llama-3.1-8b-l4-tp1.log") != std::string::npos);
    BOOST_TEST(out.find("refused:") == std::string::npos, out);
    const std::string file = (std::filesystem::temp_directory_path() / "quantplan-check-corpus.md").string();
    const auto [rc2, quiet] = run_binary("--headless --check-corpus " + dir + " --check-corpus-out " + file);
    BOOST_TEST(rc2 == 0, quiet);
    std::ifstream in(file);
    std::stringstream written;
    written << in.rdbuf();
    BOOST_TEST(written.str() == out);
    std::remove(file.c_str());
}

// --emit (docs/launch.md): an engine or version there is no argument data for, a plan with
// nothing that fits, a different engine for the plan and the launch, and an --emit-out folder
// holding someone else's files are each one line and exit 1; the folder is left as it was.
BOOST_AUTO_TEST_CASE(bad_emit_arguments_are_one_line) {
    const std::filesystem::path foreign = std::filesystem::temp_directory_path() / "quantplan_tst_cli_foreign";
    std::filesystem::remove_all(foreign);
    std::filesystem::create_directories(foreign);
    { std::ofstream(foreign / "notes.txt") << "mine\n"; }
    for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
             {"--headless --emit trtllm", "no argument data for engine 'trtllm'"},
             {"--headless --emit vllm --engine vllm@0.3.9", "0.3.9"},
             {"--headless --emit sglang --engine vllm@0.11.0", "give the same engine to both"},
             {"--headless --emit vllm --model llama-3.1-70b --gpu rtx-4090 --schemes bf16", "does not fit"},
             {"--headless --emit vllm --model qwen3-8b --gpu h100-sxm --serve --concurrency 8 --isl 1000 --osl 200", "--target-rate or --rate"},
             {"--headless --emit vllm --emit-out " + foreign.string(), "--emit-out"},
         }) {
        const auto [rc, output] = run_binary(args);
        BOOST_TEST(rc == 1, args << " -> " << rc);
        BOOST_TEST(output.find(fragment) != std::string::npos, args << " -> " << output);
        BOOST_TEST(std::count(output.begin(), output.end(), '\n') == 1, args << " -> " << output);
    }
    BOOST_TEST(std::filesystem::exists(foreign / "notes.txt"));
    BOOST_TEST(std::distance(std::filesystem::directory_iterator(foreign), std::filesystem::directory_iterator{}) == 1);
    std::filesystem::remove_all(foreign);
}

// Speculative decoding's bad input: one line naming the option, exit 1.
BOOST_AUTO_TEST_CASE(bad_spec_arguments_are_one_line) {
    for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
             {"--headless --model llama-3.1-8b --spec eagle3:0", "--spec: K must be at least 1"},
             {"--headless --model llama-3.1-8b --spec eagle3:40 --engine vllm@0.9.0", "limit of 32"},
             {"--headless --model llama-3.1-8b --spec medusa:3", "unknown method 'medusa'"},
             {"--headless --model llama-3.1-8b --spec eagle3:3 --spec-acceptance 0.9,1.3,0.2", "outside [0, 1]"},
             {"--headless --model llama-3.1-8b --spec eagle3:3 --spec-acceptance 4.2", "above K + 1 = 4"},
             {"--headless --model llama-3.1-8b --spec mtp:2", "has no MTP layers"},
             {"--headless --model llama-3.1-8b --spec draft:qwen3-0.6b:4 --spec-acceptance 2", "must share the target's vocabulary"},
             {"--headless --model llama-3.1-8b --spec draft:no-such-model:4 --spec-acceptance 2", "--spec: draft model 'no-such-model'"},
             {"--headless --model llama-3.1-8b --spec-acceptance 2.5", "--spec-acceptance: needs --spec"},
             {"--headless --model mistral-7b-instruct-v0.2 --spec eagle3:3", "no published acceptance"},
             {"--headless --model llama-3.1-8b --spec eagle3:3 --engine vllm@0.8.3", "does not run in vllm 0.8.3 (it does from 0.8.5)"},
         }) {
        const auto [rc, output] = run_binary(args);
        BOOST_TEST(rc == 1, args << " -> " << rc);
        BOOST_TEST(output.find(fragment) != std::string::npos, args << " -> " << output);
        BOOST_TEST(std::count(output.begin(), output.end(), '\n') == 1, args << " -> " << output);
    }
}

// --spec: the plan's JSON carries `speculation` (per scheme: the draft, the points with and
// without, the batch where it stops paying); --serve's JSON the run's realised acceptance and the
// timeline's tokens per step.
BOOST_AUTO_TEST_CASE(spec_json_has_its_keys_and_serve_draws_the_acceptance) {
    const auto [rc, text] = run_binary("--headless --model llama-3.1-8b --gpu h100-sxm --schemes bf16,w4a16-g128 --context 512 --spec eagle3:3 --json -");
    BOOST_TEST_REQUIRE(rc == 0, text);
    const nlohmann::json j = nlohmann::json::parse(text);
    const nlohmann::json& s = j.at("speculation");
    BOOST_TEST(s.at("method") == "eagle3");
    BOOST_TEST(s.at("k") == 3);
    BOOST_TEST(s.at("acceptance").at("source").get<std::string>().find("default: llama-3.1-8b eagle3") != std::string::npos);
    BOOST_TEST(s.at("schemes").size() == 2u);
    for (const nlohmann::json& sc : s.at("schemes")) {
        BOOST_TEST(sc.at("draft").at("weight_bytes_per_gpu").get<double>() > 0);
        BOOST_TEST(sc.at("points").size() > 3u);
        BOOST_TEST(sc.contains("stops_paying_batch"));
        BOOST_TEST(sc.at("at_batch").at("speedup").get<double>() > 1.0);
        // The band from the fit's leave-one-out residuals brackets the prediction.
        const nlohmann::json& band = sc.at("at_batch").at("speedup_band");
        BOOST_TEST_REQUIRE(band.size() == 2u);
        BOOST_TEST(band[0].get<double>() <= sc.at("at_batch").at("speedup").get<double>());
        BOOST_TEST(band[1].get<double>() >= sc.at("at_batch").at("speedup").get<double>());
    }
    const auto [rc2, serve] = run_binary("--headless --serve --model llama-3.1-8b --gpu h100-sxm --schemes bf16 --concurrency 8 --isl 200 --osl 200 "
                                         "--requests 100 --spec eagle3:3 --spec-acceptance 0.8,0.6,0.45 --json -");
    BOOST_TEST_REQUIRE(rc2 == 0, serve);
    const nlohmann::json js = nlohmann::json::parse(serve);
    const nlohmann::json& row = js.at("serve").at(0);
    BOOST_TEST(row.at("speculation").at("tokens_per_decode_step").get<double>() > 2.5);
    BOOST_TEST(row.at("speculation").at("tokens_per_decode_step").get<double>() < 3.2);
    BOOST_TEST(row.at("timeline").contains("tokens_per_sequence"));
    const auto [rc3, text3] = run_binary("--headless --serve --model llama-3.1-8b --gpu h100-sxm --schemes bf16 --concurrency 8 --isl 200 --osl 200 "
                                         "--requests 100 --spec eagle3:3 --spec-acceptance 0.8,0.6,0.45 --json -");
    BOOST_TEST(text3 == serve);  // deterministic for the seed
}

// --check on a log that ran speculative decoding: the speculative config and the engine's
// acceptance lines are read, the draft priced in the budget, and the measured acceptance fed into
// the step. The log is a bundled vLLM 0.11.2 log with its speculative_config and two metric lines
// put in at test time (a test input, not a measurement).
BOOST_AUTO_TEST_CASE(check_reads_the_speculative_config_and_the_acceptance_lines) {
    std::ifstream in(std::filesystem::path(QUANTPLAN_SOURCE_DIR) / "tests" / "data" / "logs" / "vllm-0.11.2-llama-3-8b-h200-tp1.log");
    std::stringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    const std::string none = "speculative_config=None";
    BOOST_TEST_REQUIRE(text.find(none) != std::string::npos);
    text.replace(text.find(none), none.size(), "speculative_config=SpeculativeConfig(method='eagle3', model='yuhuili/EAGLE3-LLaMA3.1-Instruct-8B', num_spec_tokens=3)");
    text += "INFO 11-28 15:30:00 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.80, Accepted throughput: 512.30 tokens/s, Drafted "
            "throughput: 830.10 tokens/s, Accepted: 5123 tokens, Drafted: 8301 tokens, Per-position acceptance rate: 0.800, 0.580, 0.420, Avg Draft "
            "acceptance rate: 60.0%\n";
    text += "INFO 11-28 15:30:10 [metrics.py:96] SpecDecoding metrics: Mean acceptance length: 2.90, Accepted throughput: 512.30 tokens/s, Drafted "
            "throughput: 830.10 tokens/s, Accepted: 5123 tokens, Drafted: 8301 tokens, Per-position acceptance rate: 0.820, 0.620, 0.460, Avg Draft "
            "acceptance rate: 63.0%\n";
    const std::filesystem::path log = std::filesystem::temp_directory_path() / "quantplan_tst_cli_spec.log";
    { std::ofstream(log) << text; }
    const auto [rc, out] = run_binary("--headless --check " + log.string() + " --json -");
    BOOST_TEST_REQUIRE(rc == 0, out);
    const nlohmann::json j = nlohmann::json::parse(out).at("check");
    bool row = false;
    for (const nlohmann::json& r : j.at("rows"))
        if (r.at("quantity") == "spec_mean_acceptance_length") {
            row = true;
            BOOST_TEST(r.at("logged").get<double>() == 2.85, boost::test_tools::tolerance(1e-9));
        }
    BOOST_TEST(row);
    const std::string notes = j.at("notes").dump();
    BOOST_TEST(notes.find("speculative decoding eagle3:3") != std::string::npos, notes);
    BOOST_TEST(notes.find("the acceptance measured in the log (mean length 2.85)") != std::string::npos, notes);
    // The head's weights are in the predicted weights and out of the KV cache.
    const auto [rc0, plain] = run_binary("--headless --check " + (std::filesystem::path(QUANTPLAN_SOURCE_DIR) / "tests" / "data" / "logs" /
                                                                  "vllm-0.11.2-llama-3-8b-h200-tp1.log").string() + " --json -");
    BOOST_TEST_REQUIRE(rc0 == 0, plain);
    const auto predicted = [](const nlohmann::json& doc, const std::string& q) {
        for (const nlohmann::json& r : doc.at("rows"))
            if (r.at("quantity") == q && r.at("predicted").is_number()) return r.at("predicted").get<double>();
        return -1.0;
    };
    const nlohmann::json p = nlohmann::json::parse(plain).at("check");
    BOOST_TEST(predicted(j, "weights_bytes") > predicted(p, "weights_bytes") + 1e9);
    BOOST_TEST(predicted(j, "kv_cache_tokens") < predicted(p, "kv_cache_tokens"));
    std::filesystem::remove(log);
}

// --serve --disagg: bad input is one line; the JSON has the pools, the transfer, the comparison
// and Little's law end to end.
BOOST_AUTO_TEST_CASE(disagg_serves_two_pools_and_refuses_bad_input_in_one_line) {
    const std::string base = "--headless --serve --model llama-3.1-8b --gpu h100-sxm --schemes bf16 --rate 4 --isl 2000 --osl 200 --requests 200 ";
    for (const auto& [args, fragment] : std::vector<std::pair<std::string, std::string>>{
             {base + "--disagg 0:1", "--disagg: P and D must each be at least 1"},
             {base + "--disagg 1-1", "is not P:D"},
             {base + "--disagg 1:1 --interconnect warp-drive", "--interconnect: 'warp-drive' is not a bundled interconnect"},
             {base + "--disagg 1:1 --kv-connector pigeon", "--kv-connector: 'pigeon' is not a connector"},
             {base + "--kv-connector nixl", "need --disagg P:D"},
             {"--headless --serve --model llama-3.1-70b --gpu rtx-4090 --schemes bf16 --rate 1 --isl 2000 --osl 200 --disagg 1:1", "--prefill-tp"},
             {"--headless --serve --model llama-3.1-8b --gpu h100-sxm --concurrency 8 --disagg auto", "--disagg: the search and the sweeps size pools for a rate"},
             {"--headless --serve --model llama-3.1-8b --gpu h100-sxm --rate 2 --prefill-tp 2", "need --disagg P:D"},
         }) {
        const auto [rc, output] = run_binary(args);
        BOOST_TEST(rc == 1, args << " -> " << rc);
        BOOST_TEST(output.find(fragment) != std::string::npos, args << " -> " << output);
        BOOST_TEST(std::count(output.begin(), output.end(), '\n') == 1, args << " -> " << output);
    }
    const auto [rc, text] = run_binary(base + "--disagg 1:1 --interconnect roce-200g --json -");
    BOOST_TEST_REQUIRE(rc == 0, text);
    const nlohmann::json d = nlohmann::json::parse(text).at("disagg");
    BOOST_TEST(d.at("pools").at("prefill").at("instances") == 1);
    BOOST_TEST(d.at("interconnect").at("id") == "roce-200g");
    // 2,000 tokens x 128 KiB over 25 GB/s is 10.5 ms on the wire. vLLM's default connector (NIXL
    // behind its proxy) pulls it whole after the prefill; P2pNccl sends it layer by layer while
    // the prefill runs, so only the last of the 32 layers' shares comes after it.
    BOOST_TEST(d.at("connector").at("id") == "nixl");
    BOOST_TEST(d.at("layerwise") == false);
    BOOST_TEST(d.at("transfer_s").at("p50").get<double>() >= 2000.0 * 131072 / 25e9 * 0.99);
    const auto [rcl, textl] = run_binary(base + "--disagg 1:1 --interconnect roce-200g --kv-connector p2p-nccl --json -");
    BOOST_TEST_REQUIRE(rcl == 0, textl);
    const nlohmann::json dl = nlohmann::json::parse(textl).at("disagg");
    BOOST_TEST(dl.at("layerwise") == true);
    BOOST_TEST(dl.at("transfer_s").at("p50").get<double>() >= 2000.0 * 131072 / 25e9 / 32 * 0.99);
    BOOST_TEST(dl.at("transfer_s").at("p50").get<double>() < d.at("transfer_s").at("p50").get<double>());
    // NIXL has no published transfer times: the line rate, said so. vLLM's MooncakeConnector sends
    // whole after the prefill as NIXL does, at its fitted cost a transfer and share of the line
    // rate (assets/engines/fit/kv-transfer-fit.json), so each transfer takes at least that longer.
    BOOST_TEST(d.at("connector").at("transfer").at("fitted_points") == 0);
    BOOST_TEST(d.at("connector").at("transfer").at("line_rate_fraction") == 1.0);
    const auto [rcm, textm] = run_binary(base + "--disagg 1:1 --interconnect roce-200g --kv-connector mooncake --json -");
    BOOST_TEST_REQUIRE(rcm == 0, textm);
    const nlohmann::json dm = nlohmann::json::parse(textm).at("disagg");
    const nlohmann::json& tm = dm.at("connector").at("transfer");
    BOOST_TEST(tm.at("fitted_points") == 9);
    BOOST_TEST(tm.at("basis").get<std::string>().find("kvcache-ai/Mooncake") != std::string::npos);
    const double extra = tm.at("per_transfer_s").get<double>() + 2000.0 * 131072 / 25e9 * (1 / tm.at("line_rate_fraction").get<double>() - 1);
    constexpr double kFittedExtra = 0.002;   // 0.39 ms + 27% of a 10.5 ms send: about 4.3 ms, so at least 2 ms
    constexpr double kRounding = 0.99;       // the percentile's interpolation over the simulated sends
    BOOST_TEST(extra > kFittedExtra);
    BOOST_TEST(dm.at("transfer_s").at("p50").get<double>() >= d.at("transfer_s").at("p50").get<double>() + extra * kRounding);
    // The fitted connector at the corpus's own setup gives what the corpus measured: SGLang's
    // Mooncake page moves Qwen3-235B-A22B's 32,768-token KV (12.62 GB) TP 8 to TP 8 over the node's
    // 4 x 400GbE in 76.78 ms; the fit and the model count those 4 links alike.
    {
        constexpr double kFullFitError = 0.03;  // the full fit's own error at that point is -1.5% (docs/disagg-fidelity.md has the leave-one-out)
        const auto [rcs, texts] = run_binary("--headless --serve --engine sglang --model qwen3-235b-a22b --gpu h200 --schemes bf16 --tp 8 --disagg 1:1 "
                                             "--prefill-tp 8 --decode-tp 8 --interconnect roce-400g --interconnect-links 4 --kv-connector sglang "
                                             "--isl 32768 --osl 4 --rate 0.2 --requests 6 --json -");
        BOOST_TEST_REQUIRE(rcs == 0, texts);
        const nlohmann::json ds = nlohmann::json::parse(texts).at("disagg");
        BOOST_TEST(ds.at("interconnect").at("links") == 4);
        BOOST_TEST(std::abs(ds.at("transfer_s").at("p50").get<double>() / 76.78e-3 - 1) < kFullFitError, ds.at("transfer_s").dump());
        for (const auto& [args, fragment] : {std::pair{"--disagg 1:1 --interconnect-links 0", "--interconnect-links: must be 1 to 64"},
                                             {"--interconnect-links 4", "need --disagg P:D"}}) {
            const auto [rcb, textb] = run_binary(base + args);
            BOOST_TEST(rcb == 1, args);
            BOOST_TEST(textb.find(fragment) != std::string::npos, args << " -> " << textb);
        }
    }
    const auto [rct, textt] = run_binary(base + "--disagg 1:1 --interconnect roce-200g --kv-connector mooncake");
    BOOST_TEST(rct == 0);
    BOOST_TEST(textt.find("transfer: 0.39 ms a transfer, 73% of the line rate (the mooncake connector, fitted to 9") != std::string::npos, textt);
    BOOST_TEST(d.at("aggregated").at("replicas") == 2);
    BOOST_TEST(d.at("littles_law").at("mean_in_system").get<double>() ==
                   d.at("littles_law").at("throughput_times_latency").get<double>(), boost::test_tools::tolerance(0.02));
    BOOST_TEST(!d.at("winner").get<std::string>().empty());
    BOOST_TEST(!d.at("bound").get<std::string>().empty());
    // A closed loop (a benchmark client's --max-concurrency) runs too.
    const auto [rc3, text3] = run_binary("--headless --serve --model llama-3.1-8b --gpu h100-sxm --schemes bf16 --concurrency 8 --isl 2000 --osl 200 "
                                         "--requests 100 --disagg 1:1 --json -");
    BOOST_TEST_REQUIRE(rc3 == 0, text3);
    BOOST_TEST(nlohmann::json::parse(text3).at("disagg").at("littles_law").at("mean_in_system").get<double>() <= 8.0 * 1.001);
}

// --disagg auto: the cheapest P:D (TP, scheme and GPU per pool among the candidates) that holds the
// rate, beside the cheapest aggregated configuration; one prefill instance fewer does not hold.
BOOST_AUTO_TEST_CASE(disagg_auto_finds_the_cheapest_layout_that_holds) {
    const std::string base = "--headless --serve --model llama-3.1-8b --gpu h100-sxm --schemes bf16,w8a8-fp8 --rate 40 --isl 2000 --osl 200 --requests 300 "
                             "--slo-tpot 0.05 ";
    const auto [rc, text] = run_binary(base + "--disagg auto --prefill-tp 1 --decode-tp 1 --json -");
    BOOST_TEST_REQUIRE(rc == 0, text);
    const nlohmann::json d = nlohmann::json::parse(text).at("disagg");
    const nlohmann::json& s = d.at("search").at("disaggregated");
    const int p = s.at("prefill_instances").get<int>(), dc = s.at("decode_instances").get<int>();
    BOOST_TEST(p >= 2);  // one instance prefills 2,000-token prompts for fewer than 40 requests/s
    BOOST_TEST(s.at("gpus").get<int>() == p + dc);
    BOOST_TEST(s.at("usd_per_hour").get<double>() > 0);
    BOOST_TEST(d.at("search").at("aggregated").at("gpus").get<int>() >= 1);
    BOOST_TEST(d.at("end_to_end").at("overloaded") == false);
    BOOST_TEST(d.at("pools").at("prefill").at("instances").get<int>() == p);
    BOOST_TEST(!d.at("winner_layout").get<std::string>().empty());
    const std::string scheme = s.at("prefill").at("scheme").get<std::string>();
    const auto [rc2, text2] = run_binary(base + "--disagg " + std::to_string(p - 1) + ":" + std::to_string(dc) + " --prefill-scheme " + scheme +
                                         " --decode-scheme " + s.at("decode").at("scheme").get<std::string>() + " --json -");
    BOOST_TEST_REQUIRE(rc2 == 0, text2);
    BOOST_TEST(nlohmann::json::parse(text2).at("disagg").at("end_to_end").at("overloaded") == true, text2);
}

// --disagg-sweep: the layouts sized again at each prompt length and TPOT SLO. A tight TPOT SLO
// costs aggregated serving more replicas (prefill chunks lengthen its decode steps) and the
// decode pool nothing, so disaggregation pays there (DistServe's argument).
BOOST_AUTO_TEST_CASE(disagg_sweeps_show_where_splitting_pays) {
    const auto [rc, text] = run_binary("--headless --serve --model llama-3.1-8b --gpu h100-sxm --schemes w8a8-fp8 --rate 8 --isl 4000 --osl 200 --requests 300 "
                                       "--slo-ttft 1 --slo-tpot 0.03 --disagg 1:1 --disagg-sweep --json -");
    BOOST_TEST_REQUIRE(rc == 0, text);
    const nlohmann::json w = nlohmann::json::parse(text).at("disagg").at("sweeps");
    const nlohmann::json& tpot = w.at("tpot_slo").at("points");
    BOOST_TEST_REQUIRE(tpot.size() == 8u);
    BOOST_TEST(tpot.back().at("winner") == "disaggregated", tpot.dump());
    BOOST_TEST(tpot.back().at("aggregated").at("gpus").get<int>() > tpot.front().at("aggregated").at("gpus").get<int>());
    BOOST_TEST(!w.at("tpot_slo").at("crossover").is_null());
    const nlohmann::json& prompt = w.at("prompt_length").at("points");
    BOOST_TEST_REQUIRE(prompt.size() >= 6u);
    BOOST_TEST(prompt.front().at("prompt_tokens") == 256);
    // Short prompts: one aggregated replica carries the rate; splitting needs two GPUs.
    BOOST_TEST(prompt.front().at("winner") == "aggregated", prompt.dump());
}

// --emit prints the command, the image and the deployment of the plan's pick; JSON gains
// `launch` with the contract's keys (engine, version, argv, env, image).
BOOST_AUTO_TEST_CASE(emit_prints_the_launch_and_json_has_its_keys) {
    const auto [rc, text] = run_binary("--headless --emit vllm --engine vllm@0.11.0 --model qwen3-8b --gpu h100-sxm --schemes w4a16-g128 --context 8192");
    BOOST_TEST_REQUIRE(rc == 0, text);
    BOOST_TEST(text.find("vllm serve") != std::string::npos, text);
    BOOST_TEST(text.find("--max-model-len 8192") != std::string::npos, text);
    BOOST_TEST(text.find("vllm/vllm-openai:v0.11.0") != std::string::npos, text);
    BOOST_TEST(text.find("nvidia.com/gpu: 1") != std::string::npos, text);
    const RunResult j = run_in_process({"--headless", "--emit", "vllm", "--engine", "vllm@0.11.0", "--model", "qwen3-8b", "--gpu", "h100-sxm",
                                        "--schemes", "w4a16-g128", "--json", "-"},
                                       app::run_emit);
    BOOST_TEST_REQUIRE(j.exit_code == 0, j.err);
    const nlohmann::json doc = nlohmann::json::parse(j.out);
    BOOST_TEST_REQUIRE(doc.contains("launch"));
    const nlohmann::json& l = doc["launch"].at(0);
    for (const char* key : {"engine", "version", "argv", "env", "image"}) BOOST_TEST(l.contains(key), key);
    BOOST_TEST(l["engine"] == "vllm");
    BOOST_TEST(l["version"] == "0.11.0");
    BOOST_TEST(l["argv"].is_array());
    BOOST_TEST(l["argv"][0] == "vllm");
    BOOST_TEST(l["image"] == "vllm/vllm-openai:v0.11.0");
}

BOOST_AUTO_TEST_CASE(help_and_version) {
    const auto [rc, help] = run_binary("--help");
    BOOST_TEST(rc == 0);
    BOOST_TEST(help.find("Exit codes") != std::string::npos);
    const auto [rc2, version] = run_binary("--version");
    BOOST_TEST(rc2 == 0);
    BOOST_TEST(version.rfind("quantplan ", 0) == 0u);
}

BOOST_AUTO_TEST_CASE(json_to_a_file_is_written_atomically) {
    const std::string path = "/tmp/quantplan_tst_cli_out.json";
    std::remove(path.c_str());
    const RunResult r = run_headless({"--schemes", "bf16", "--json", path});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    FILE* f = std::fopen(path.c_str(), "r");
    BOOST_TEST_REQUIRE(f != nullptr);
    std::fclose(f);
    const RunResult bad = run_headless({"--schemes", "bf16", "--json", "/nonexistent-dir/out.json"});
    BOOST_TEST(bad.exit_code == 2);
    std::remove(path.c_str());
}

// A target that is not a regular file keeps its node: a FIFO (as /dev/null or /dev/stdout would)
// is written through, not replaced by the renamed temporary (as root, that rename used to turn
// /dev/null into a regular file); a link to a file keeps the link and replaces the file; a folder
// is an error.
BOOST_AUTO_TEST_CASE(atomic_writes_keep_devices_fifos_and_links) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("quantplan_tst_nodes_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    const std::filesystem::path fifo = dir / "pipe";
    BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    // The reader is opened first, without blocking, so the writer's open succeeds at once; the few
    // bytes fit in the pipe's buffer.
    const int fd = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
    BOOST_TEST_REQUIRE(fd >= 0);
    write_file_atomically(fifo, "through the pipe");
    char buf[64] = {};
    const ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    BOOST_TEST(std::string(buf, n > 0 ? static_cast<std::size_t>(n) : 0) == "through the pipe");
    BOOST_TEST(std::filesystem::is_fifo(std::filesystem::symlink_status(fifo)));

    const std::filesystem::path file = dir / "real.json", link = dir / "link.json";
    write_file_atomically(file, "old");
    std::filesystem::create_symlink(file, link);
    write_file_atomically(link, "new");
    BOOST_TEST(std::filesystem::is_symlink(std::filesystem::symlink_status(link)));
    std::ifstream in(file);
    BOOST_TEST(std::string(std::istreambuf_iterator<char>(in), {}) == "new");

    BOOST_CHECK_THROW(write_file_atomically(dir, "x"), Error);
    std::filesystem::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(a_users_own_gpu_profile_file) {
    const std::string path = "/tmp/quantplan_tst_cli_gpu.json";
    {
        FILE* f = std::fopen(path.c_str(), "w");
        BOOST_TEST_REQUIRE(f != nullptr);
        // Half an H100: half the bandwidth doubles a memory-bound step.
        std::fputs(R"({"id":"half-h100","memory_spec_bytes":80000000000,"memory_usable_bytes":85045805056,
                      "memory_bandwidth_bytes_per_s":1675000000000,"peak":{"bf16_fp32acc_flop_per_s":989400000000000}})", f);
        std::fclose(f);
    }
    // The roofline's arithmetic (the engine profile's fitted terms are per GPU id, not per bandwidth).
    const RunResult mine = run_headless({"--gpu", path, "--schemes", "bf16", "--profile", "realistic", "--json", "-"});
    const RunResult h100 = run_headless({"--gpu", "h100-sxm", "--schemes", "bf16", "--profile", "realistic", "--json", "-"});
    BOOST_TEST_REQUIRE(mine.exit_code == 0, mine.err);
    const double t_mine = nlohmann::json::parse(mine.out)["schemes"][0]["decode"]["time_s"].get<double>();
    const double t_h100 = nlohmann::json::parse(h100.out)["schemes"][0]["decode"]["time_s"].get<double>();
    BOOST_TEST(t_mine == 2 * t_h100, boost::test_tools::tolerance(1e-9));
    std::remove(path.c_str());
}

// The JSON names the kind of vision encoder a model holds, with its parameters.
BOOST_AUTO_TEST_CASE(json_names_the_vision_encoder) {
    for (const auto& [model, kind] : std::vector<std::pair<std::string, std::string>>{{"qwen3.5-27b", "qwen3_vl"}, {"gemma-3-27b-it", "siglip"}}) {
        const RunResult r = run_headless({"--model", model, "--schemes", "bf16", "--json", "-"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const nlohmann::json j = nlohmann::json::parse(r.out);
        BOOST_TEST(j["model"]["vision"]["kind"] == kind, model);
        BOOST_TEST(j["model"]["parameters"]["vision"].get<std::int64_t>() > 0, model);
    }
}

// --kv auto (the default): a ModelOpt export's declared FP8 KV cache prices `native` as vLLM 0.14 on
// runs it; --kv bf16 keeps 16 bits; the other schemes stay 16-bit either way.
BOOST_AUTO_TEST_CASE(kv_auto_takes_a_modelopt_checkpoints_fp8_kv_for_native) {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "quantplan_tst_cli_modelopt";
    std::filesystem::create_directories(dir);
    {
        std::ifstream in(test::models_dir() / "qwen3-8b" / "config.json");
        nlohmann::json j = nlohmann::json::parse(in);
        j["quantization_config"] = {{"quant_method", "modelopt"}, {"quant_algo", "FP8"}, {"kv_cache_quant_algo", "FP8"}};
        std::ofstream(dir / "config.json") << j.dump(2);
    }
    const auto schemes = [&](const std::vector<std::string>& extra) {
        std::vector<std::string> args = {"--model", dir.string(), "--schemes", "bf16,native", "--json", "-"};
        args.insert(args.end(), extra.begin(), extra.end());
        const RunResult r = run_headless(args);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        return nlohmann::json::parse(r.out);
    };
    const nlohmann::json a = schemes({});
    BOOST_TEST(a["workload"]["kv_auto"].get<bool>());
    BOOST_TEST(a["schemes"][0]["kv"] == "bf16");
    BOOST_TEST(a["schemes"][1]["kv"] == "fp8");
    BOOST_TEST(a["schemes"][1]["admission"]["kv_bytes_per_token"].get<double>() * 2 == a["schemes"][0]["admission"]["kv_bytes_per_token"].get<double>());
    const nlohmann::json old = schemes({"--engine", "vllm@0.13.0"});
    BOOST_TEST(old["schemes"][1]["kv"] == "bf16");
    const nlohmann::json b = schemes({"--kv", "bf16"});
    BOOST_TEST(!b["workload"]["kv_auto"].get<bool>());
    BOOST_TEST(b["schemes"][1]["kv"] == "bf16");
    std::filesystem::remove_all(dir);
}

// --calibration FILE adds the measured decode steps: a table after the plan, a `measured` section
// in the JSON, and with --profile measured the fitted profile prices the plan.
BOOST_AUTO_TEST_CASE(calibration_adds_measured_steps) {
    const std::string path = "/tmp/quantplan_tst_cli_calibration.json";
    const ModelConfig model = test::bundled_model("qwen3-8b");
    const GpuProfile gpu = test::bundled_gpu("h100-sxm");
    // Fused W4A16 runs 1.25x slower than the realistic profile predicts; bf16 exactly as predicted.
    write_file_atomically(path, calibration_to_json(test::synthetic_calibration(model, gpu, builtin_efficiency_profile("realistic"),
                                                                                  {{"w4a16_fused", 1.25}})));
    const RunResult j = run_headless({"--schemes", "bf16,w4a16-g128,w8a16", "--calibration", path, "--json", "-"});
    BOOST_TEST_REQUIRE(j.exit_code == 0, j.err);
    const nlohmann::json doc = nlohmann::json::parse(j.out);
    BOOST_TEST_REQUIRE(doc.contains("measured"));
    const nlohmann::json& m = doc["measured"];
    BOOST_TEST(m["calibration_file"] == path);
    BOOST_TEST(m["gpu_profile"] == "h100-sxm");
    BOOST_TEST(m["steps"].size() == 26u);
    BOOST_TEST(m["notes"].size() == 1u);  // w8a16 has no bundled kernel
    for (const nlohmann::json& p : m["steps"]) {
        const double err = p["relative_error"].get<double>();
        if (p["scheme"] == "bf16")
            BOOST_TEST(std::abs(err) < 1e-9);
        else  // the linears took 25% longer than predicted: most of the step at batch 1 (lm_head stays bf16), less where KV reads grow
            BOOST_TEST(err < (p["batch"] == 1 ? -0.10 : -0.01));
    }
    // The plan itself stays on the default (engine) profile unless asked.
    BOOST_TEST(doc["profile"]["name"] == "engine");

    const RunResult t = run_headless({"--schemes", "bf16,w4a16-g128", "--calibration", path});
    BOOST_TEST_REQUIRE(t.exit_code == 0, t.err);
    BOOST_TEST(t.out.find("decode step, predicted vs measured") != std::string::npos);
    BOOST_TEST(t.out.find("w4a16_fused") != std::string::npos);
    BOOST_TEST(t.out.find("median |error|") != std::string::npos);

    const RunResult fitted = run_headless({"--schemes", "bf16", "--profile", "measured", "--calibration", path, "--json", "-"});
    BOOST_TEST_REQUIRE(fitted.exit_code == 0, fitted.err);
    BOOST_TEST(nlohmann::json::parse(fitted.out)["profile"]["name"] == "measured");

    // Under the engine profile, the file's measured kernels replace the fitted curves of its GPU:
    // vLLM's W4A16 on an H100 (Machete, which no corpus source times: the all-GPU curve) becomes
    // covered, and its step follows the file (25% slower linears than the realistic roofline).
    const auto engine_plan = [&](bool with_file) {
        std::vector<std::string> args{"--schemes", "bf16,w4a16-g128", "--profile", "engine", "--json", "-"};
        if (with_file) args.insert(args.end(), {"--calibration", path});
        const RunResult r = run_headless(args);
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        return nlohmann::json::parse(r.out);
    };
    const nlohmann::json without = engine_plan(false), with = engine_plan(true);
    BOOST_TEST(without["schemes"][1]["bands"]["covered"] == false);
    BOOST_TEST(with["schemes"][1]["bands"]["covered"] == true);
    BOOST_TEST(with["schemes"][1]["decode"]["time_s"].get<double>() != without["schemes"][1]["decode"]["time_s"].get<double>());

    const RunResult missing = run_headless({"--calibration", "/nonexistent/calibration.json"});
    BOOST_TEST(missing.exit_code == 1);
    BOOST_TEST(missing.err.find("--calibration") != std::string::npos);
    std::remove(path.c_str());
}

// --headless --scenario FILE#N (1-based) takes the step's options for the table and the JSON too (it used to
// apply them to the report and the window only); options on the command line still win.
BOOST_AUTO_TEST_CASE(scenario_drives_the_json) {
    const std::string walk = std::string(QUANTPLAN_SOURCE_DIR) + "/assets/scenarios/seed-003-batch-walk.json";
    const RunResult step2 = run_headless({"--scenario", walk + "#4", "--json", "-"});
    BOOST_TEST_REQUIRE(step2.exit_code == 0, step2.err);
    const nlohmann::json a = nlohmann::json::parse(step2.out);
    BOOST_TEST(a["schemes"].size() == 6u);
    BOOST_TEST(a["workload"]["batch"] == 1024);  // step 4 of the walk
    BOOST_TEST(a["workload"]["context"] == 128);  // from step 3, merged
    const RunResult mine = run_headless({"--scenario", walk + "#4", "--batch", "3", "--json", "-"});
    BOOST_TEST_REQUIRE(mine.exit_code == 0, mine.err);
    BOOST_TEST(nlohmann::json::parse(mine.out)["workload"]["batch"] == 3);
    // A setup the window saved without a calibration file says "calibration": "": none.
    const std::string saved = "/tmp/quantplan_tst_cli_saved_setup.json";
    write_file_atomically(saved, R"({"model": "qwen3-8b", "schemes": "bf16", "batch": 4, "calibration": ""})");
    const RunResult from_window = run_headless({"--scenario", saved, "--json", "-"});
    BOOST_TEST_REQUIRE(from_window.exit_code == 0, from_window.err);
    BOOST_TEST(!nlohmann::json::parse(from_window.out).contains("measured"));
    BOOST_TEST(nlohmann::json::parse(from_window.out)["workload"]["batch"] == 4);
    std::remove(saved.c_str());
    const RunResult missing = run_headless({"--scenario", "/nonexistent/scenario.json"});
    BOOST_TEST(missing.exit_code == 1);
    BOOST_TEST(missing.err.find("scenario") != std::string::npos);
}

BOOST_AUTO_TEST_CASE(validate_seconds_is_range_checked) {
    const auto parse = [](std::vector<std::string> args) {
        args.insert(args.begin(), "quantplan");
        std::vector<char*> argv;
        for (std::string& a : args) argv.push_back(a.data());
        return app::parse_command_line(static_cast<int>(argv.size()), argv.data());
    };
    BOOST_TEST(*parse({"--validate", "--validate-seconds", "150"}).validate_seconds == 150.0);
    BOOST_TEST(!parse({"--validate"}).validate_seconds.has_value());
    for (const char* bad : {"5", "3601", "nan", "x"}) {
        try {
            parse({"--validate", "--validate-seconds", bad});
            BOOST_ERROR("accepted --validate-seconds " << bad);
        } catch (const Error& e) {
            BOOST_TEST(e.field() == "--validate-seconds");
        }
    }
}

// --serve (docs/capacity.md): the JSON contract of the capacity issue, one object per scheme.
BOOST_AUTO_TEST_CASE(serve_json_contract) {
    const RunResult r = run_serve({"--schemes", "bf16,w4a16-g128", "--rate", "2", "--requests", "200", "--isl", "uniform:1000:3000", "--osl",
                                   "normal:500:100", "--slo-ttft", "2", "--slo-tpot", "0.05@p90", "--target-rate", "20", "--price",
                                   "h100-sxm=3", "--json", "-"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST_REQUIRE(doc["serve"].size() == 2u);
    for (const auto& s : doc["serve"]) {
        for (const char* key : {"name", "ttft_s", "tpot_s", "itl_s", "e2e_s", "output_tokens_per_s", "input_tokens_per_s", "requests_per_s",
                                "goodput_requests_per_s", "slo_attainment", "preemptions", "kv_utilization_mean", "max_rate_requests_per_s",
                                "replicas_needed", "gpus_needed", "cost_per_million_output_tokens", "cost_per_million_input_tokens", "fits_from_tp"})
            BOOST_TEST(s.contains(key), key);
        for (const char* p : {"mean", "p50", "p90", "p99"}) BOOST_TEST(s["ttft_s"].contains(p), p);
        BOOST_TEST(s["ttft_s"]["p50"].get<double>() <= s["ttft_s"]["p99"].get<double>());
        // At 2 requests/s, under both schemes' highest rates, every request is served: 200 of them
        // over about 100 s.
        BOOST_TEST(s["requests_per_s"].get<double>() > 1.6);
        BOOST_TEST(s["requests_per_s"].get<double>() < 2.4);
        const double max_rate = s["max_rate_requests_per_s"].get<double>();
        BOOST_TEST(max_rate > 2.0);
        BOOST_TEST(s["replicas_needed"].get<std::int64_t>() == static_cast<std::int64_t>(std::ceil(20.0 / max_rate - 1e-9)));
        // The headroom those replicas leave: at least none, less than one replica's worth.
        const double headroom = s["headroom_fraction"].get<double>();
        BOOST_TEST(std::abs(headroom - (s["replicas_needed"].get<double>() * max_rate / 20.0 - 1)) < 1e-12);
        BOOST_TEST(headroom >= -1e-12);
        BOOST_TEST(headroom < max_rate / 20.0);
        BOOST_TEST(s["cost_per_million_output_tokens"].get<double>() > 0);
        BOOST_TEST(s["fits_from_tp"] == 1);
    }
    // The ranked recommendation for 20 requests/s: cheapest first, each meeting the target.
    const auto& rec = doc["serve_recommendation"];
    BOOST_TEST(rec["target_rate_requests_per_s"] == 20.0);
    BOOST_TEST_REQUIRE(!rec["ranked"].empty());
    double last = 0;
    for (const auto& c : rec["ranked"]) {
        BOOST_TEST(c["usd_per_hour"].get<double>() >= last);
        last = c["usd_per_hour"].get<double>();
        BOOST_TEST(c["usd_per_hour"].get<double>() == 3.0 * c["gpus"].get<double>());
        BOOST_TEST(c["replicas"].get<double>() * c["max_rate_requests_per_s"].get<double>() >= 20.0);
        BOOST_TEST(c["gpus"].get<std::int64_t>() == c["replicas"].get<std::int64_t>() * c["tp"].get<std::int64_t>());
        BOOST_TEST(c["headroom_fraction"].get<double>() >= -1e-12);
    }
    // Under the strict tolerance 4-bit weights are vetoed and leave the ranking.
    const RunResult strict = run_serve({"--schemes", "bf16,w4a16-g128", "--rate", "2", "--requests", "100", "--accuracy", "strict", "--json", "-"});
    BOOST_TEST_REQUIRE(strict.exit_code == 0, strict.err);
    const auto sr = nlohmann::json::parse(strict.out)["serve_recommendation"];
    for (const auto& c : sr["ranked"]) BOOST_TEST(c["scheme"] == "bf16");
    BOOST_TEST(sr["vetoed"].size() == 1u);
    // The same seed, the same numbers.
    const RunResult again = run_serve({"--schemes", "bf16,w4a16-g128", "--rate", "2", "--requests", "200", "--isl", "uniform:1000:3000", "--osl",
                                       "normal:500:100", "--slo-ttft", "2", "--slo-tpot", "0.05@p90", "--target-rate", "20", "--price",
                                       "h100-sxm=3", "--json", "-"});
    BOOST_TEST(again.out == r.out);
}

// Without --price the bundled list prices the GPU (its default entry, with source and date);
// --compare-gpus adds GPUs to the recommendation.
BOOST_AUTO_TEST_CASE(serve_prices_from_the_bundled_list_and_compares_gpus) {
    const auto bundled = nlohmann::json::parse(std::ifstream(std::string(QUANTPLAN_SOURCE_DIR) + "/assets/prices/gpu-prices.json"));
    double h100 = 0, h200 = 0;
    for (const auto& e : bundled["prices"]) {
        if (!e["default"].get<bool>()) continue;
        if (e["gpu"] == "h100-sxm") h100 = e["usd_per_gpu_hour"].get<double>();
        if (e["gpu"] == "h200") h200 = e["usd_per_gpu_hour"].get<double>();
    }
    BOOST_TEST_REQUIRE(h100 > 0);
    BOOST_TEST_REQUIRE(h200 > 0);
    const RunResult r = run_serve({"--schemes", "w8a8-fp8", "--rate", "2", "--requests", "200", "--target-rate", "30", "--compare-gpus", "h200",
                                   "--json", "-"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    BOOST_TEST(doc["serve_traffic"]["price_usd_per_gpu_hour"].get<double>() == h100);
    BOOST_TEST(doc["serve_traffic"]["price_source"].get<std::string>().find("gpu-prices.json") != std::string::npos);
    BOOST_TEST(doc["serve"][0]["cost_per_million_output_tokens"].get<double>() > 0);
    bool saw_h200 = false;
    for (const auto& c : doc["serve_recommendation"]["ranked"]) {
        const double per_gpu = c["gpu"] == "h200" ? h200 : h100;
        saw_h200 = saw_h200 || c["gpu"] == "h200";
        BOOST_TEST(std::abs(c["usd_per_hour"].get<double>() - per_gpu * c["gpus"].get<double>()) < 1e-9);
    }
    BOOST_TEST(saw_h200);
    // --price wins over the list; an unknown GPU in --compare-gpus is one line naming the option.
    const RunResult given = run_serve({"--schemes", "w8a8-fp8", "--rate", "2", "--requests", "100", "--price", "h100-sxm=1.25", "--json", "-"});
    BOOST_TEST_REQUIRE(given.exit_code == 0, given.err);
    BOOST_TEST(nlohmann::json::parse(given.out)["serve_traffic"]["price_source"] == "--price");
    const RunResult bad = run_serve({"--schemes", "bf16", "--rate", "2", "--target-rate", "5", "--compare-gpus", "h200,no-such-gpu"});
    BOOST_TEST(bad.exit_code == 1);
    BOOST_TEST(bad.err.find("--compare-gpus") != std::string::npos, bad.err);
}

// The published serving benchmarks of docs/capacity.md, predicted as that page records (with the
// bundled serving fit, the default: its "fit" figures): a change
// that makes any of these predictions worse by more than kRecordedSlack (5 points of error) fails.
BOOST_AUTO_TEST_CASE(published_serving_benchmarks_within_the_recorded_errors) {
    constexpr double kRecordedSlack = 0.05;
    const std::string bench = std::string(QUANTPLAN_SOURCE_DIR) + "/tests/data/bench/";
    struct Case {
        std::string args;                          // --check FILE and what identifies the run
        std::vector<std::pair<std::string, double>> recorded;  // quantity, error as docs/capacity.md records it
    };
    const std::vector<Case> cases = {
        {"vllm-0.11.2-llama-3-8b-h200-c8-trtllm-client.json --model llama-3-8b --gpu h200 --engine vllm@0.11.2",
         {{"tpot_s_mean", 0.006}, {"e2e_s_mean", 0.011}, {"output_tokens_per_s", -0.009}, {"ttft_s_mean", 0.208}}},
        {"vllm-0.5.4-llama-3-8b-instruct-h100-sxm-burst-np10.json --model llama-3-8b --gpu h100-sxm --engine vllm@0.5.4",
         {{"ttft_s_mean", 0.898}, {"tpot_s_mean", -0.068}, {"itl_s_mean", 0.040}, {"output_tokens_per_s", -0.049}}},
        {"vllm-0.5.4-llama-3-8b-instruct-h100-sxm-burst-np20.json --model llama-3-8b --gpu h100-sxm --engine vllm@0.5.4",
         {{"ttft_s_mean", 0.559}, {"tpot_s_mean", 0.134}, {"itl_s_mean", 0.003}, {"output_tokens_per_s", -0.036}}},
        {"vllm-0.5.4-llama-3-8b-instruct-h100-sxm-burst-np40.json --model llama-3-8b --gpu h100-sxm --engine vllm@0.5.4",
         {{"ttft_s_mean", 0.250}, {"tpot_s_mean", 0.092}, {"itl_s_mean", 0.023}, {"output_tokens_per_s", -0.029}}},
        {"sglang-0.5.5.post3-qwen2.5-3b-gh200-c32.json --gpu gh200",
         {{"ttft_s_mean", 0.881}, {"tpot_s_mean", -0.019}, {"e2e_s_mean", 0.060}, {"output_tokens_per_s", -0.084}}},
        {"vllm-unstated-llama-3-8b-instruct-a100-80gb-burst-np10.json --model llama-3-8b --gpu a100-80gb --engine vllm@0.6.0",
         {{"ttft_s_mean", 0.217}, {"tpot_s_p50", 0.118}, {"tpot_s_mean", -0.251}, {"output_tokens_per_s", -0.119}}},
        {"vllm-unstated-llama-3-8b-instruct-a100-80gb-burst-np40.json --model llama-3-8b --gpu a100-80gb --engine vllm@0.6.0",
         {{"ttft_s_mean", -0.106}, {"tpot_s_p50", 0.223}, {"tpot_s_mean", 0.303}, {"output_tokens_per_s", -0.134}}},
    };
    for (const Case& c : cases) {
        const auto [rc, out] = run_binary("--headless --check " + bench + c.args + " --json -");
        BOOST_TEST_REQUIRE(rc == 0, out);
        const auto rows = nlohmann::json::parse(out)["check"]["rows"];
        for (const auto& [quantity, recorded] : c.recorded) {
            bool found = false;
            for (const auto& r : rows) {
                if (r["quantity"] != quantity || r["error_fraction"].is_null()) continue;
                found = true;
                const double error = r["error_fraction"].get<double>();
                BOOST_TEST(std::abs(error) <= std::abs(recorded) + kRecordedSlack,
                           c.args << " " << quantity << ": error " << error << ", recorded " << recorded);
            }
            BOOST_TEST(found, c.args << " " << quantity);
        }
    }
    // SGLang, Llama-3.3-70B-Instruct (priced with Llama-3.1-70B's config: the same architecture) on
    // 4 x H200 at TP 4, Poisson at 1, 4 and 16 requests/s, lengths uniform 1..1024.
    const auto lines = [&] {
        std::vector<nlohmann::json> v;
        std::ifstream f(bench + "sglang-dec2024-llama-3.3-70b-4xh200-tp4.json");
        for (std::string line; std::getline(f, line);)
            if (!line.empty()) v.push_back(nlohmann::json::parse(line));
        return v;
    }();
    const std::map<double, std::vector<std::pair<std::string, double>>> sweep = {
        {1.0, {{"output_throughput", -0.040}, {"median_itl_ms", 0.455}, {"mean_e2e_latency_ms", 0.405}}},
        {4.0, {{"output_throughput", -0.049}, {"median_itl_ms", 0.107}, {"mean_e2e_latency_ms", 0.068}}},
        {16.0, {{"output_throughput", 0.013}, {"median_itl_ms", 0.173}, {"mean_e2e_latency_ms", 0.060}}},
    };
    for (const auto& m : lines) {
        if (m["dataset_name"] != "random") continue;
        const double rate = m["request_rate"].get<double>();
        const auto it = sweep.find(rate);
        if (it == sweep.end()) continue;
        const RunResult r = run_serve({"--model", "llama-3.1-70b", "--gpu", "h200", "--tp", "4", "--engine", "sglang@0.4.0", "--schemes", "bf16",
                                       "--rate", std::to_string(rate), "--requests", std::to_string(m["completed"].get<int>()), "--isl",
                                       "uniform:1:1024", "--osl", "uniform:1:1024", "--json", "-"});
        BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
        const auto s = nlohmann::json::parse(r.out)["serve"][0];
        const std::map<std::string, double> predicted = {{"output_throughput", s["output_tokens_per_s"].get<double>()},
                                                         {"median_itl_ms", s["itl_s"]["p50"].get<double>() * 1e3},
                                                         {"mean_e2e_latency_ms", s["e2e_s"]["mean"].get<double>() * 1e3}};
        for (const auto& [key, recorded] : it->second) {
            const double error = predicted.at(key) / m[key].get<double>() - 1;
            BOOST_TEST(std::abs(error) <= std::abs(recorded) + kRecordedSlack, "rate " << rate << " " << key << ": error " << error << ", recorded " << recorded);
        }
    }
}

// --fit-engines' fidelity tables price the corpus's serving runs (which the fit leaves out) with the
// capacity simulator, out of sample (docs/fidelity.md).
BOOST_AUTO_TEST_CASE(fidelity_tables_price_the_serving_runs_out_of_sample) {
    const std::string dir = "/tmp/quantplan_tst_cli_fit";
    std::filesystem::create_directories(dir);
    const auto [rc, out] = run_binary("--fit-engines --fit-out " + dir + "/fit.json --fidelity-out " + dir + "/fidelity.md");
    BOOST_TEST_REQUIRE(rc == 0, out);
    std::ifstream f(dir + "/fidelity.md");
    const std::string md((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    const std::size_t at = md.find("### Serving runs priced by the capacity simulator (out of sample)");
    BOOST_TEST_REQUIRE(at != std::string::npos);
    // "N points priced": the gpustack runs at concurrency 2-8 on an H100 at least.
    const std::size_t priced = md.find(" points priced", at);
    BOOST_TEST_REQUIRE(priced != std::string::npos);
    const std::size_t from = md.rfind(' ', priced - 1) + 1;
    BOOST_TEST(std::stoi(md.substr(from, priced - from)) >= 40);
    BOOST_TEST(md.find("| gpustack-perf-lab/qwen3-8b-h100-latency/vllm/bf16/bs2/c2/ttft_s-mean | ttft_s_mean |", at) != std::string::npos);
}

// --serve with --out writes the report, its capacity section the same planning (not a table only).
BOOST_AUTO_TEST_CASE(serve_with_out_writes_the_report) {
    const std::string dir = "/tmp/quantplan_tst_cli_serve_out";
    std::filesystem::remove_all(dir);
    const auto [rc, out] = run_binary("--headless --serve --rate 2 --requests 100 --schemes bf16 --out " + dir);
    BOOST_TEST_REQUIRE(rc == 0, out);
    std::ifstream f(dir + "/report.json");
    BOOST_TEST_REQUIRE(f.good());
    const auto doc = nlohmann::json::parse(f);
    BOOST_TEST(doc["capacity"]["serve"].size() == 1u);
    BOOST_TEST(doc["capacity"]["traffic"]["rate_requests_per_s"] == 2.0);
}

// At a rate near zero every request is alone: without serving terms its TPOT is the engine
// profile's decode step at batch 1 and its TTFT the profile's prefill of the prompt (the capacity
// issue's check 6); with the bundled serving fit (the default) a lone request's TPOT is that step
// plus the host's time for one sequence, and its TTFT that prefill plus the frontend's serial time
// and the host's time for one prefilling sequence (vLLM runs the host serially with the GPU).
BOOST_AUTO_TEST_CASE(serve_at_a_rate_near_zero_is_the_plan_s_steps) {
    const std::vector<std::string> traffic = {"--schemes", "bf16", "--rate", "0.01", "--requests", "20", "--isl", "512", "--osl", "65", "--json", "-"};
    std::vector<std::string> bare_args = traffic;
    bare_args.insert(bare_args.end(), {"--serving-fit", "none"});
    const RunResult r = run_serve(bare_args);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto s = nlohmann::json::parse(r.out)["serve"][0];
    // Decode steps run at contexts 513..576: the mean is 544.5; the plan's step at context 544.
    const auto step = nlohmann::json::parse(run_headless({"--schemes", "bf16", "--profile", "engine", "--context", "544", "--json", "-"}).out);
    const double decode = step["schemes"][0]["decode"]["time_s"].get<double>();
    BOOST_TEST(std::abs(s["tpot_s"]["mean"].get<double>() - decode) < 0.002 * decode, s["tpot_s"] << " vs " << decode);
    const auto prompt = nlohmann::json::parse(run_headless({"--schemes", "bf16", "--profile", "engine", "--context", "512", "--json", "-"}).out);
    const double ttft = prompt["schemes"][0]["prefill"]["time_to_first_token_s"].get<double>();
    BOOST_TEST(std::abs(s["ttft_s"]["p50"].get<double>() - ttft) < 1e-6 * ttft, s["ttft_s"] << " vs " << ttft);
    BOOST_TEST(s["slo_attainment"].get<double>() == 1.0);
    // The default: the bundled serving fit's terms, named in the plan's engine section.
    const RunResult fitted = run_serve(traffic);
    BOOST_TEST_REQUIRE(fitted.exit_code == 0, fitted.err);
    const auto f = nlohmann::json::parse(fitted.out)["serve"][0];
    const auto terms = step["engine"]["serving"];
    BOOST_TEST_REQUIRE(terms.is_object());
    const double per_sequence = terms["host_per_sequence_s"].get<double>(), per_prefill = terms["host_per_prefill_sequence_s"].get<double>();
    BOOST_TEST(terms["frontend_latency_s"].get<double>() == step["engine"]["step"]["ttft_overhead_s"].get<double>());
    BOOST_TEST(std::abs(f["tpot_s"]["mean"].get<double>() - decode - per_sequence) < 0.002 * decode, f["tpot_s"] << " vs " << decode + per_sequence);
    const double expected = ttft + terms["frontend_serial_s"].get<double>() + per_sequence + per_prefill;
    BOOST_TEST(std::abs(f["ttft_s"]["p50"].get<double>() - expected) < 1e-6 * expected, f["ttft_s"] << " vs " << expected);
    BOOST_TEST(nlohmann::json::parse(run_headless({"--schemes", "bf16", "--serving-fit", "none", "--json", "-"}).out)["engine"]["serving"].is_null());
}

// A model that fits nowhere at TP 1 is an answer, with the TP it fits from; bad traffic is one line.
BOOST_AUTO_TEST_CASE(serve_answers_for_a_model_that_does_not_fit_and_refuses_bad_traffic) {
    const RunResult r = run_serve({"--model", "llama-3.1-70b", "--schemes", "bf16", "--concurrency", "4", "--requests", "20", "--json", "-"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto s = nlohmann::json::parse(r.out)["serve"][0];
    BOOST_TEST(s["fits"] == false);
    BOOST_TEST(s["fits_from_tp"] == 2);
    BOOST_TEST(s["max_rate_requests_per_s"].is_null());
    const RunResult t = run_serve({"--model", "llama-3.1-70b", "--schemes", "bf16", "--concurrency", "4", "--requests", "20"});
    BOOST_TEST(t.exit_code == 0);
    BOOST_TEST(t.out.find("does not fit at TP 1; fits from TP 2") != std::string::npos, t.out);
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad = {
        {{"--rate", "0"}, "--rate"},
        {{"--concurrency", "-3"}, "--concurrency"},
        {{"--rate", "1", "--concurrency", "2"}, "--rate"},
        {{"--isl", "uniform:9:3"}, "--isl"},
        {{"--osl", "lognormal:200"}, "--osl"},
        {{"--isl", "file:/nonexistent/lengths.txt"}, "--isl"},
        {{"--isl", "100000"}, "max_model_len"},
        {{"--slo-tpot", "0.0001"}, "fastest possible step"},
        {{"--slo-e2e", "3@p95"}, "--slo-e2e"},
        {{"--price", "h100-sxm=free"}, "--price"},
        {{"--requests", "0"}, "--requests"},
    };
    for (const auto& [args, fragment] : bad) {
        std::vector<std::string> a = args;
        a.insert(a.end(), {"--schemes", "bf16"});
        if (args[0] != "--requests") a.insert(a.end(), {"--requests", "20"});
        const RunResult b = run_serve(a);
        BOOST_TEST(b.exit_code == 1, args[0] << " " << args[1]);
        BOOST_TEST(b.err.find(fragment) != std::string::npos, b.err);
        BOOST_TEST(std::count(b.err.begin(), b.err.end(), '\n') == 1, b.err);
    }
}

// The traffic and SLOs as scenario-file keys, the command line winning; a trace, a prefix and
// burst arrivals through --serve.
BOOST_AUTO_TEST_CASE(serve_traffic_from_a_scenario_and_a_trace) {
    const std::string scenario = "/tmp/quantplan_tst_cli_serve_scenario.json";
    write_file_atomically(scenario, R"({"schemes": "bf16", "rate": 3, "requests": 100, "isl": "uniform:500:1500", "osl": 200,
        "arrival": "gamma:2", "prefix": 400, "slo_ttft": "1.5@p90", "slo_tpot": 0.05, "target_rate": 9, "seed": 4,
        "prices": {"h100-sxm": 2.5}})");
    const RunResult r = run_serve({"--scenario", scenario, "--seed", "5", "--json", "-"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto doc = nlohmann::json::parse(r.out);
    const auto& t = doc["serve_traffic"];
    BOOST_TEST(t["rate_requests_per_s"] == 3.0);
    BOOST_TEST(t["isl"] == "uniform:500:1500");
    BOOST_TEST(t["osl"] == "200");
    BOOST_TEST(t["arrival"] == "gamma:2");
    BOOST_TEST(t["prefix_tokens"] == 400);
    BOOST_TEST(t["seed"] == 5);  // the command line wins
    BOOST_TEST(t["price_usd_per_gpu_hour"] == 2.5);
    BOOST_TEST(doc["serve"][0]["prefix_hit_tokens"].get<std::int64_t>() > 90 * 400);
    BOOST_TEST(!doc["serve"][0]["cost_per_million_output_tokens"].is_null());
    // A trace replayed as recorded: three requests.
    const std::string trace = "/tmp/quantplan_tst_cli_trace.csv";
    write_file_atomically(trace, "0.0,1000,50\n0.5,800,60\n1.0,1200,40\n");
    const RunResult tr = run_serve({"--schemes", "bf16", "--trace", trace, "--json", "-"});
    BOOST_TEST_REQUIRE(tr.exit_code == 0, tr.err);
    const auto s = nlohmann::json::parse(tr.out)["serve"][0];
    BOOST_TEST(s["e2e_s"]["p99"].get<double>() > 0);
    // input tokens/s x the run's span (3 requests / requests/s) is the trace's 3,000 prompt tokens
    BOOST_TEST(std::abs(s["input_tokens_per_s"].get<double>() * 3.0 / s["requests_per_s"].get<double>() - 3000) < 1);
    // Burst: everything at time 0, so the last TTFT waits behind the others' prefills.
    const RunResult b = run_serve({"--schemes", "bf16", "--arrival", "burst", "--requests", "50", "--json", "-"});
    BOOST_TEST_REQUIRE(b.exit_code == 0, b.err);
    const auto bs = nlohmann::json::parse(b.out)["serve"][0];
    BOOST_TEST(bs["ttft_s"]["p99"].get<double>() > bs["ttft_s"]["p50"].get<double>());
    for (const auto& [args, fragment] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--arrival", "gamma:0"}, "--arrival"}, {{"--prefix", "-1"}, "--prefix"}, {{"--trace", "/nonexistent.csv"}, "--trace"}}) {
        std::vector<std::string> a = args;
        a.insert(a.end(), {"--schemes", "bf16", "--requests", "20"});
        const RunResult bad = run_serve(a);
        BOOST_TEST(bad.exit_code == 1);
        BOOST_TEST(bad.err.find(fragment) != std::string::npos, bad.err);
    }
}

// The bundled serving fit applies by default: its bands appear in the serve JSON (null with
// --serving-fit none), --serving-fit FILE takes another file, and a file that is missing or
// malformed is one line naming the option, exit 1.
BOOST_AUTO_TEST_CASE(serving_fit_is_the_default_and_bad_files_are_one_line) {
    const std::string fit = std::string(QUANTPLAN_SOURCE_DIR) + "/assets/engines/fit/serving-fit.json";
    const RunResult plain = run_serve({"--schemes", "bf16", "--rate", "2", "--requests", "200", "--serving-fit", "none", "--json", "-"});
    BOOST_TEST_REQUIRE(plain.exit_code == 0, plain.err);
    BOOST_TEST(nlohmann::json::parse(plain.out)["serve"][0]["ttft_s_band"].is_null());
    const RunResult by_default = run_serve({"--schemes", "bf16", "--rate", "2", "--requests", "200", "--json", "-"});
    BOOST_TEST_REQUIRE(by_default.exit_code == 0, by_default.err);
    BOOST_TEST(nlohmann::json::parse(by_default.out)["serve"][0]["ttft_s_band"].is_object());
    // The table prints the bands under each row; without a serving fit it has none.
    const RunResult table = run_serve({"--schemes", "bf16", "--rate", "2", "--requests", "200"});
    BOOST_TEST_REQUIRE(table.exit_code == 0, table.err);
    BOOST_TEST(table.out.find("  p10-p90 ") != std::string::npos, table.out);
    const RunResult bare_table = run_serve({"--schemes", "bf16", "--rate", "2", "--requests", "200", "--serving-fit", "none"});
    BOOST_TEST(bare_table.out.find("p10-p90") == std::string::npos, bare_table.out);
    const RunResult with = run_serve({"--schemes", "bf16", "--rate", "2", "--requests", "200", "--serving-fit", fit, "--json", "-"});
    BOOST_TEST_REQUIRE(with.exit_code == 0, with.err);
    const nlohmann::json row = nlohmann::json::parse(with.out)["serve"][0];
    BOOST_TEST_REQUIRE(row["ttft_s_band"].is_object());
    BOOST_TEST(row["ttft_s_band"]["low"].get<double>() < row["ttft_s"]["p50"].get<double>());
    BOOST_TEST(row["ttft_s_band"]["high"].get<double>() > row["ttft_s"]["p50"].get<double>());
    BOOST_TEST(row["max_rate_requests_per_s_band"].is_object());
    BOOST_TEST(row["binding"].is_string());
    const RunResult missing = run_serve({"--schemes", "bf16", "--rate", "2", "--serving-fit", "/no/such/serving-fit.json"});
    BOOST_TEST(missing.exit_code == 1);
    BOOST_TEST(missing.err.find("--serving-fit") != std::string::npos, missing.err);
    const std::string bad = "/tmp/quantplan_tst_cli_bad_serving_fit.json";
    write_file_atomically(bad, "{\"format\": \"quantplan-serving-fit/1\", \"corpus_checksum\": \"x\", \"profiles\": {\"vllm-v1\": {\"host_per_sequence_s\": -1}}}");
    const RunResult malformed = run_headless({"--schemes", "bf16", "--serving-fit", bad});
    BOOST_TEST(malformed.exit_code == 1);
    BOOST_TEST(malformed.err.find("host_per_sequence_s") != std::string::npos, malformed.err);
    BOOST_TEST(std::count(malformed.err.begin(), malformed.err.end(), '\n') == 1);
    // --check replays a benchmark result with the fit's terms too: the H200 closed loop's TTFT
    // rises by at least the fitted frontend's serial time (every request pays it once).
    const std::string result = std::string(QUANTPLAN_SOURCE_DIR) + "/tests/data/bench/vllm-0.11.2-llama-3-8b-h200-c8-trtllm-client.json";
    const auto ttft = [&](const std::string& extra) {
        const auto [rc, out] = run_binary("--headless --check " + result + " --model llama-3-8b --gpu h200 --engine vllm@0.11.2 --json -" + extra);
        BOOST_TEST_REQUIRE(rc == 0, out);
        const nlohmann::json doc = nlohmann::json::parse(out);
        for (const auto& r : doc["check"]["rows"])
            if (r["quantity"] == "ttft_s_mean") return r["predicted"].get<double>();
        return 0.0;
    };
    const double serial = engine::parse_serving_fit(read_text_file(fit, "fit"), fit).terms.at("vllm-v1").frontend_serial_s;
    BOOST_TEST(serial > 0);
    BOOST_TEST(ttft("") >= ttft(" --serving-fit none") + serial);
    BOOST_TEST(ttft(" --serving-fit " + fit) == ttft(""));
    const auto [rc, out] = run_binary("--headless --check " + result + " --gpu h200 --serving-fit " + bad);
    BOOST_TEST(rc == 1, out);
    std::remove(bad.c_str());
}


// --emit with --disagg: both pools' launches, each with its side of the KV transfer; --emit-out
// writes one folder per pool.
BOOST_AUTO_TEST_CASE(emit_writes_both_pools_of_a_disaggregated_plan) {
    const std::string base = "--headless --emit vllm --engine vllm@0.11.0 --serve --model llama-3.1-8b --gpu h100-sxm --schemes w8a8-fp8 --rate 8 "
                             "--isl 4000 --osl 200 --requests 200 --disagg 2:1 --decode-tp 2 ";
    const auto [rc, text] = run_binary(base + "--json -");
    BOOST_TEST_REQUIRE(rc == 0, text);
    const nlohmann::json doc = nlohmann::json::parse(text);
    BOOST_TEST_REQUIRE(doc.at("launch").size() == 2u);
    const nlohmann::json& prefill = doc.at("disagg").at("pools").at("prefill").at("launch");
    const nlohmann::json& decode = doc.at("disagg").at("pools").at("decode").at("launch");
    for (const nlohmann::json* l : {&prefill, &decode})
        for (const char* key : {"engine", "version", "argv", "env", "image"}) BOOST_TEST(l->contains(key), key);
    const auto argv_text = [](const nlohmann::json& l) {
        std::string t;
        for (const auto& a : l.at("argv")) t += a.get<std::string>() + " ";
        return t;
    };
    BOOST_TEST(argv_text(prefill).find("--kv-transfer-config {\"kv_connector\":\"NixlConnector\"") != std::string::npos, argv_text(prefill));
    BOOST_TEST(argv_text(prefill).find("--tensor-parallel-size 1 ") != std::string::npos);
    BOOST_TEST(argv_text(decode).find("--tensor-parallel-size 2 ") != std::string::npos);
    BOOST_TEST(prefill.at("replicas") == 2);
    const std::string dir = "/tmp/quantplan_tst_cli_emit_disagg";
    std::filesystem::remove_all(dir);
    const auto [rc2, text2] = run_binary(base + "--emit-out " + dir);
    BOOST_TEST_REQUIRE(rc2 == 0, text2);
    int folders = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) folders += e.is_directory() ? 1 : 0;
    BOOST_TEST(folders == 2);
    std::filesystem::remove_all(dir);
    // A release before the connector: one line naming the first that has it.
    const auto [rc3, text3] = run_binary("--headless --emit vllm --engine vllm@0.8.5 --serve --model llama-3.1-8b --gpu h100-sxm --schemes w8a8-fp8 "
                                         "--rate 8 --disagg 2:1");
    BOOST_TEST(rc3 == 1);
    BOOST_TEST(text3.find("first in vLLM 0.9.0") != std::string::npos, text3);
}

// --fit-disagg: the committed table (docs/disagg-fidelity.md) is what the model predicts now, so a
// change that moves a disaggregated or aggregated prediction must regenerate it (and its summary in
// docs/disaggregation.md).
BOOST_AUTO_TEST_CASE(disagg_fidelity_table_is_current) {
    const std::filesystem::path out = std::filesystem::temp_directory_path() / "quantplan-test-disagg-fidelity.md";
    const std::filesystem::path fit = std::filesystem::temp_directory_path() / "quantplan-test-kv-transfer-fit.json";
    const RunResult r = run_in_process({"--fit-disagg", "--fit-out", fit.string(), "--fidelity-out", out.string()}, app::run_fit_disagg);
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    const auto slurp = [](const std::filesystem::path& p) {
        std::ifstream f(p);
        return std::string(std::istreambuf_iterator<char>(f), {});
    };
    const std::string now = slurp(out), committed = slurp(std::filesystem::path(QUANTPLAN_SOURCE_DIR) / "docs" / "disagg-fidelity.md");
    const std::string fit_now = slurp(fit), fit_committed = slurp(std::filesystem::path(QUANTPLAN_SOURCE_DIR) / "assets" / "engines" / "fit" / "kv-transfer-fit.json");
    std::filesystem::remove(out);
    std::filesystem::remove(fit);
    // The connectors' transfer terms the bundle carries are the fit of the corpus as it is now.
    BOOST_TEST(fit_now == fit_committed, "regenerate with: quantplan --fit-disagg --fidelity-out docs/disagg-fidelity.md");
    BOOST_TEST(fit_now.find("\"mooncake\"") != std::string::npos);
    // Each transfer time predicted from its connector's other times: Mooncake's vLLM 32,768-token
    // transfer (31.65 ms) at 34.1 ms, where the line rate gave 24% less than measured.
    BOOST_TEST(now.find("| mooncake | 0.394 ms | 73.0% | 9 | 39.8% | 5.3% |") != std::string::npos, now.substr(0, 1200));
    BOOST_TEST(now.find("kv_transfer_s | 31.6 ms | 34.1 ms | +7.6% |") != std::string::npos);
    BOOST_TEST(now.find("priced: 28 from 4 sources") != std::string::npos, now.substr(0, 400));
    // Mooncake's vLLM transfers (Qwen3-8B, TP 8 over 8 RoCE links) are priced alone, without a GPU.
    BOOST_TEST(now.find("| mooncake-vllm-h800/qwen3-8b/1p1d-tp8/in32768 | 8 TP -> 8 TP, roce-200g x 8, qwen3-8b bf16, 32768 tokens, mooncake | kv_transfer_s |") !=
               std::string::npos);
    // and SGLang's on H20 (4 x 400GbE a node), on the bundled architecture whose KV bytes its page prints.
    BOOST_TEST(now.find("| mooncake-sglang-h20/qwen3-235b-bf16/1p1d-tp8/in32768 | 8 TP -> 8 TP, roce-400g x 4, qwen3-235b-a22b bf16, 32768 tokens, sglang |") !=
               std::string::npos);
    BOOST_TEST(now == committed, "regenerate with: quantplan --fit-disagg --fidelity-out docs/disagg-fidelity.md");
}

// --num-scheduler-steps: vLLM V0's multi-step scheduling. At 10 steps the tokens stream ten at a
// time (ITL about ten passes), the per-step host time is paid once a window (TPOT lower), and a new
// request waits for the window to end (TTFT higher); V1 has no such setting.
BOOST_AUTO_TEST_CASE(multi_step_scheduling_streams_its_windows) {
    const std::string base = "--headless --serve --engine vllm@0.6.0 --model llama-3.1-8b --gpu a100-80gb --schemes bf16 --rate 8 --isl 200 --osl 200 "
                             "--requests 300 --json - ";
    const auto figures = [&](const std::string& extra) {
        const auto [rc, text] = run_binary(base + extra);
        BOOST_TEST_REQUIRE(rc == 0, text);
        return nlohmann::json::parse(text).at("serve").at(0);
    };
    const nlohmann::json one = figures(""), ten = figures("--num-scheduler-steps 10");
    const auto p50 = [](const nlohmann::json& s, const char* key) { return s.at(key).at("p50").get<double>(); };
    constexpr double kChunkPasses = 6, kOnePass = 1.5;  // ten passes a window, some cut short; one pass, some gaps lengthened by a prefill step
    BOOST_TEST(p50(ten, "itl_s") > kChunkPasses * p50(ten, "tpot_s"));
    BOOST_TEST(p50(one, "itl_s") < kOnePass * p50(one, "tpot_s"));
    BOOST_TEST(p50(ten, "tpot_s") < p50(one, "tpot_s"));
    BOOST_TEST(p50(ten, "ttft_s") > p50(one, "ttft_s"));
    for (const auto& [args, fragment] : {std::pair{"--engine vllm@0.11.0 --num-scheduler-steps 4", "--num-scheduler-steps: is vLLM V0's multi-step scheduling"},
                                         {"--num-scheduler-steps 0", "--num-scheduler-steps: must be 1 to 64"}}) {
        const auto [rc, output] = run_binary(base + args);
        BOOST_TEST(rc == 1, args);
        BOOST_TEST(output.find(fragment) != std::string::npos, args << " -> " << output);
        BOOST_TEST(std::count(output.begin(), output.end(), '\n') == 1, output);
    }
    // The same through a scenario file's key.
    const std::filesystem::path scenario = std::filesystem::temp_directory_path() / "quantplan_tst_multistep_scenario.json";
    {
        std::ofstream f(scenario);
        f << R"({"num_scheduler_steps": 10})";
    }
    const nlohmann::json from_scenario = figures("--scenario " + scenario.string());
    std::filesystem::remove(scenario);
    BOOST_TEST(p50(from_scenario, "itl_s") == p50(ten, "itl_s"));
    // --check of a result whose stream came ten tokens a chunk (LambdaLabs' A100 run of 2024-09-07,
    // docs/capacity.md): with the windows its per-chunk ITL (114.5 ms mean) is predicted, where a
    // plain V0 scheduler puts it at one pass (-89%).
    const std::string file = std::string(QUANTPLAN_SOURCE_DIR) + "/tests/data/bench/vllm-unstated-llama-3-8b-instruct-a100-80gb-burst-np10.json";
    const auto itl_error = [&](const std::string& extra) {
        const auto [rc, out] = run_binary("--headless --check " + file + " --model llama-3-8b --gpu a100-80gb --engine vllm@0.6.0 " + extra + " --json -");
        BOOST_TEST_REQUIRE(rc == 0, out);
        const nlohmann::json doc = nlohmann::json::parse(out);
        for (const auto& r : doc.at("check").at("rows"))
            if (r.at("quantity") == "itl_s_mean") return r.at("error_fraction").get<double>();
        return 1e9;
    };
    constexpr double kOnePassItl = -0.8, kWindowItl = 0.2;  // -89% without the windows; +11% with them (docs/check.md)
    BOOST_TEST(itl_error("") < kOnePassItl);
    BOOST_TEST(std::abs(itl_error("--num-scheduler-steps 10")) < kWindowItl);
    {
        const auto [rc, out] = run_binary("--headless --check " + file + " --model llama-3-8b --gpu a100-80gb --engine vllm@0.11.0 --num-scheduler-steps 10");
        BOOST_TEST(rc == 1);
        BOOST_TEST(out.find("--num-scheduler-steps: is vLLM V0's multi-step scheduling") != std::string::npos, out);
    }
    // The windows with disaggregation (whose connectors are V1's and SGLang's), with V0's chunked
    // prefill (on above a 32,768-token context) or without --serve are one line each; --emit writes
    // the flag the plan priced.
    for (const auto& [args, fragment] : {std::pair{"--disagg 1:1 --num-scheduler-steps 8", "--num-scheduler-steps: vLLM V0's multi-step scheduling has no disaggregated"},
                                         {"--num-scheduler-steps 8 --isl 34000 --osl 16 --requests 10", "--num-scheduler-steps: multi-step scheduling with chunked prefill"}}) {
        const auto [rc, output] = run_binary(base + args);
        BOOST_TEST(rc == 1, args);
        BOOST_TEST(output.find(fragment) != std::string::npos, args << " -> " << output);
    }
    {
        const auto [rc, output] = run_binary("--headless --engine vllm@0.6.0 --model llama-3.1-8b --gpu a100-80gb --num-scheduler-steps 4");
        BOOST_TEST(rc == 1);
        BOOST_TEST(output.find("--num-scheduler-steps: is a serving setting") != std::string::npos, output);
        const auto [rce, emitted] = run_binary("--headless --emit vllm --engine vllm@0.6.0 --serve --model llama-3.1-8b --gpu a100-80gb --schemes bf16 --rate 4 "
                                               "--isl 200 --osl 200 --requests 100 --num-scheduler-steps 8");
        BOOST_TEST_REQUIRE(rce == 0, emitted);
        BOOST_TEST(emitted.find("--num-scheduler-steps 8") != std::string::npos, emitted);
    }
}

BOOST_AUTO_TEST_SUITE_END()
