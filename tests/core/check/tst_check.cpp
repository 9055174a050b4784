// --check: published startup logs (tests/data/logs/, each with its source in its first lines) read
// field by field, then checked against the prediction; hostile and foreign text refused in one line.
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/base/json_guard.h"
#include "core/check/check.h"
#include "core/check/log_corpus.h"
#include "core/check/startup_log.h"
#include "core/engine/engine_profile.h"
#include "tests/core/test_support.h"

using namespace quantplan;
using namespace quantplan::check;

namespace {

constexpr double kGiB = 1073741824.0;
// A logged GiB figure is printed with 2 to 4 decimals: compare to the printed precision.
constexpr double kPrintedGiBTolerance = 0.006 * kGiB;
// The issue's target for KV-cache tokens on the log fixtures: within 3%.
constexpr double kKvTokensTarget = 0.03;

std::string fixture(const std::string& name, const char* folder = "logs") {
    std::ifstream in(test::source_dir() / "tests" / "data" / folder / name, std::ios::binary);
    BOOST_REQUIRE_MESSAGE(in.good(), "missing fixture " << name);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const engine::EngineCatalog& catalog() {
    static const engine::EngineCatalog c = engine::load_engine_catalog(test::source_dir() / "assets" / "engines" / "profiles",
                                                                       test::source_dir() / "assets" / "engines" / "fit" / "engine-fit.json");
    return c;
}

CheckInputs inputs() {
    CheckInputs in;
    in.models_dir = test::models_dir();
    in.gpus_dir = test::gpus_dir();
    in.gpus = load_gpu_profiles(test::gpus_dir());
    in.catalog = &catalog();
    return in;
}

const CheckRow* row(const CheckResult& r, const std::string& quantity) {
    for (const CheckRow& x : r.rows)
        if (x.quantity == quantity) return &x;
    return nullptr;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(check_logs)

BOOST_AUTO_TEST_CASE(prefixes_and_colours_are_removed) {
    BOOST_TEST(clean_log_line("\x1b[1;36m(EngineCore_DP0 pid=420)\x1b[0;0m INFO 11-28 15:28:13 [gpu_model_runner.py:4244] Graph capturing finished in 4 secs, took -0.41 GiB") ==
               "Graph capturing finished in 4 secs, took -0.41 GiB");
    BOOST_TEST(clean_log_line("(RayWorkerWrapper pid=77, ip=10.0.0.2) INFO 09-04 01:29:25 worker.py:238] model weights take 1GiB") == "model weights take 1GiB");
    BOOST_TEST(clean_log_line("[2025-03-08 12:29:21 TP0] KV Cache is allocated. #tokens: 46611") == "KV Cache is allocated. #tokens: 46611");
    BOOST_TEST(clean_log_line("plain text") == "plain text");
}

// vLLM 0.11.0 on an L4 (abinavChandar/demo_env_l4): the V1 lines, read field by field.
BOOST_AUTO_TEST_CASE(vllm_0_11_v1_log_field_by_field) {
    const StartupLog log = read_startup_log(fixture("vllm-0.11.0-llama-3.1-8b-l4-tp1.log"), "l4.log");
    BOOST_TEST(log.engine == "vllm");
    BOOST_TEST(log.version == "0.11.0");
    BOOST_TEST(log.engine_generation == "v1");
    BOOST_TEST(log.model == "meta-llama/Meta-Llama-3.1-8B-Instruct");
    BOOST_TEST(*log.max_model_len == 32000);
    BOOST_TEST_REQUIRE(log.kv_cache_tokens.has_value());
    BOOST_TEST(log.kv_cache_tokens->value == 38944);
    BOOST_TEST(std::abs(log.kv_cache_bytes->value - 4.75 * kGiB) < kPrintedGiBTolerance);
    BOOST_TEST(std::abs(log.weights_bytes->value - 14.99 * kGiB) < kPrintedGiBTolerance);
    BOOST_TEST(std::abs(log.max_concurrency->value - 1.22) < 0.006);
    BOOST_TEST(*log.max_concurrency_tokens == 32000);
    BOOST_TEST(log.cuda_graph_bytes.has_value());
    BOOST_TEST(*log.gpu_memory_utilization == 0.92);
}

// The bundled-model V1 logs: the KV-cache size within the issue's 3% with the GPU given, but for
// the H200 log (fitted +3.4%: its budget loses 5.4 GiB beyond the weights where the A100 and L4
// logs lose 0.6 to 2 GiB, which neither the activation nor the non-torch term explains).
BOOST_AUTO_TEST_CASE(kv_tokens_of_the_v1_fixtures_within_three_percent) {
    const struct {
        const char* file;
        const char* gpu;
        const char* model;
        double band;
    } cases[] = {
        {"vllm-0.11.0-llama-3.1-8b-l4-tp1.log", "l4", "llama-3.1-8b", kKvTokensTarget},
        {"vllm-0.11.2-llama-3-8b-h200-tp1.log", "h200", "llama-3-8b", kKvTokensTarget},
        {"vllm-0.10.1.1-qwen2-7b-a100-80gb-tp1-gmu0.5.log", "a100-80gb", "qwen2-7b-instruct", kKvTokensTarget},
        // gpt-oss-120b at TP 4 (MXFP4 experts: quantization mxfp4 is scheme native; the hybrid
        // allocator's two groups of 18 layers).
        {"vllm-0.10.1.1-gpt-oss-120b-a100-80gb-tp4-gmu0.8-ray.log", "a100-80gb", "gpt-oss-120b", kKvTokensTarget},
    };
    for (const auto& c : cases) {
        CheckOptions o;
        o.gpu = c.gpu;
        const CheckResult r = check_startup_log(read_startup_log(fixture(c.file), c.file), o, inputs());
        BOOST_TEST(r.identified.model == c.model, c.file);
        BOOST_TEST(r.identified.from.at("model") == "log");
        BOOST_TEST(r.identified.from.at("gpu") == "option");
        const CheckRow* tokens = row(r, "kv_cache_tokens");
        BOOST_TEST_REQUIRE(tokens != nullptr);
        BOOST_TEST_REQUIRE(tokens->error_fraction.has_value());
        BOOST_TEST(std::abs(*tokens->error_fraction) <= c.band,
                   c.file << ": logged " << tokens->logged << ", predicted " << *tokens->predicted << ", band " << c.band);
        const CheckRow* weights = row(r, "weights_bytes");
        BOOST_TEST_REQUIRE(weights != nullptr);
        BOOST_TEST(std::abs(*weights->error_fraction) < 0.01, c.file);  // the checkpoint's bytes: within 1%
        BOOST_TEST(!r.largest_difference.empty());
        // The concurrency as the engine divides the cache: the KV budget's error, no other.
        const CheckRow* concurrency = row(r, "max_concurrency");
        if (concurrency && concurrency->error_fraction)
            BOOST_TEST(std::abs(*concurrency->error_fraction - *tokens->error_fraction) < 0.005, c.file << " " << *concurrency->error_fraction);
    }
}

// A vLLM 0.10.2 log of Qwen3-Next-80B-A3B at TP 2 on H200s (a gated DeltaNet hybrid; the code
// index's stored text id 7292846353): the weights within 0.2%, and the concurrency priced as the
// hybrid allocator divides the cache (one block per request in each state group), so its error is
// the KV budget's. The budget was 13.9% high until the profiling run's sampler was priced as the
// version runs it (PyTorch's native top-k/top-p sort from 0.10.2: about 39 bytes per logit at
// 1,024 sequences, 5.6 GiB for Qwen3-Next's vocabulary); out of sample (no Qwen3-Next point is
// fitted), it is now 3.5% high. A change that moves it is seen here.
BOOST_AUTO_TEST_CASE(qwen3_next_log_prices_the_hybrid_concurrency) {
    CheckOptions o;
    o.gpu = "h200";
    o.model = "qwen3-next-80b-a3b";
    const char* file = "vllm-0.10.2-qwen3-next-80b-a3b-h200-tp2.log";
    const CheckResult r = check_startup_log(read_startup_log(fixture(file), file), o, inputs());
    BOOST_TEST(r.identified.tp == 2);
    BOOST_TEST(r.identified.max_model_len == 262144);
    const CheckRow* weights = row(r, "weights_bytes");
    BOOST_TEST_REQUIRE((weights != nullptr && weights->error_fraction.has_value()));
    BOOST_TEST(std::abs(*weights->error_fraction) < 0.002, *weights->error_fraction);
    const CheckRow* tokens = row(r, "kv_cache_tokens");
    const CheckRow* concurrency = row(r, "max_concurrency");
    BOOST_TEST_REQUIRE((tokens != nullptr && tokens->error_fraction.has_value()));
    BOOST_TEST_REQUIRE((concurrency != nullptr && concurrency->error_fraction.has_value()));
    BOOST_TEST(std::abs(*tokens->error_fraction - 0.035) < 0.01, *tokens->error_fraction);
    BOOST_TEST(std::abs(*concurrency->error_fraction - *tokens->error_fraction) < 0.005, *concurrency->error_fraction);
}

// A log that leaves --kv-cache-dtype at auto, of a ModelOpt checkpoint that declares an FP8 KV
// cache (the bundled qwen3.5-122b-a10b-nvfp4): vLLM from 0.14.0 caches it in fp8, and the check
// prices that and says where it came from; before 0.14.0, bf16. (The log lines are made up for
// the test: only the settings are read.)
BOOST_AUTO_TEST_CASE(an_auto_kv_dtype_follows_a_modelopt_checkpoint) {
    const auto log_of = [](const std::string& version) {
        return "INFO 01-01 00:00:00 [api_server.py:1] vLLM API server version " + version + "\n" +
               "INFO 01-01 00:00:00 [core.py:1] Initializing a V1 LLM engine (v" + version +
               ") with config: model='nvidia/Qwen3.5-122B-A10B-NVFP4', dtype=torch.bfloat16, max_seq_len=32768, "
               "tensor_parallel_size=1, quantization=modelopt_fp4, enforce_eager=False, kv_cache_dtype=auto\n"
               "INFO 01-01 00:00:00 [gpu_worker.py:1] Available KV cache memory: 60.00 GiB\n"
               "INFO 01-01 00:00:00 [kv_cache_utils.py:1] GPU KV cache size: 100,000 tokens\n";
    };
    CheckOptions o;
    o.gpu = "b200";
    o.model = "qwen3.5-122b-a10b-nvfp4";  // quantization=modelopt_fp4 with a model that declares it: scheme native
    const CheckResult now = check_startup_log(read_startup_log(log_of("0.14.0"), "a.log"), o, inputs());
    BOOST_TEST(now.identified.scheme == "native");
    BOOST_TEST(now.identified.kv_cache_dtype == "fp8");
    BOOST_TEST(now.identified.from.at("kv_cache_dtype") == "checkpoint");
    const CheckResult before = check_startup_log(read_startup_log(log_of("0.13.0"), "b.log"), o, inputs());
    BOOST_TEST(before.identified.kv_cache_dtype == "bf16");
}

// A hard-wrapped log (dennislee22/vLLM-benchmarking): the argument list is joined across lines.
BOOST_AUTO_TEST_CASE(wrapped_argument_lists_are_joined) {
    const StartupLog log = read_startup_log(fixture("vllm-0.10.1.1-qwen2-7b-a100-80gb-tp1-gmu0.5.log"), "gmu.log");
    BOOST_TEST(*log.gpu_memory_utilization == 0.5);
    BOOST_TEST(*log.max_model_len == 16384);
    BOOST_TEST(log.kv_cache_tokens->value == 464848);
    // The log names the model (Qwen2-7B-Instruct, bundled) but neither a GPU nor the total memory:
    // its budget (weights 14.25 GiB + KV cache 24.83 GiB at 0.5) needs at least 78.2 GiB, which
    // every 80 GB GPU fits; the A100's defaults (max_num_batched_tokens 2048, not the H100's 8192)
    // predict the logged KV cache nearest, so it is priced as an A100 80GB, the others named.
    const CheckResult r = check_startup_log(log, {}, inputs());
    BOOST_TEST(r.identified.model == "qwen2-7b-instruct");
    BOOST_TEST(r.identified.gpu == "a100-80gb");
    BOOST_TEST(r.identified.from.at("gpu") == "memory budget");
    BOOST_TEST(std::count(r.identified.gpu_candidates.begin(), r.identified.gpu_candidates.end(), "h100-sxm") == 1);
    for (const std::string& u : r.unresolved) BOOST_TEST(u.find("--model") == std::string::npos, u);
    const CheckRow* tokens = row(r, "kv_cache_tokens");
    BOOST_TEST_REQUIRE(tokens->predicted.has_value());
    BOOST_TEST(std::abs(*tokens->error_fraction) <= kKvTokensTarget, "KV tokens " << *tokens->error_fraction);
    // Without the KV bytes line, the KV tokens at the model's bytes per token stand in for the
    // cache in the budget; without either, the budget says nothing, and the check asks for --gpu.
    StartupLog no_bytes = log;
    no_bytes.kv_cache_bytes.reset();
    const CheckResult from_tokens = check_startup_log(no_bytes, {}, inputs());
    BOOST_TEST(from_tokens.identified.gpu == "a100-80gb");
    BOOST_TEST(std::any_of(from_tokens.notes.begin(), from_tokens.notes.end(),
                           [](const std::string& n) { return n.find("tokens at the model's KV bytes per token") != std::string::npos; }));
    StartupLog bare = no_bytes;
    bare.kv_cache_tokens.reset();
    bare.max_concurrency.reset();
    bool asks_gpu = false;
    for (const std::string& u : check_startup_log(bare, {}, inputs()).unresolved) asks_gpu = asks_gpu || u.find("--gpu") != std::string::npos;
    BOOST_TEST(asks_gpu);
    const StartupLog tp2 = read_startup_log(fixture("vllm-0.10.1.1-qwen2-7b-a100-40gb-tp2-gmu0.5-ray.log"), "tp2.log");
    BOOST_TEST(*tp2.tensor_parallel == 2);
}

// The model where a log names it only in the command pasted above it: lm-evaluation-harness's
// --model_args pretrained=, a Python one-liner's LLM("..."), SGLang's benchmark scripts'
// --model-path; and a local folder named without punctuation.
BOOST_AUTO_TEST_CASE(the_model_from_the_commands_users_paste) {
    const std::string kv = "\nGPU KV cache size: 5 tokens\n";
    BOOST_TEST(read_startup_log("lm_eval --model vllm --model_args pretrained=Qwen/Qwen3-0.6B,max_model_len=4096 --tasks gsm8k" + kv, "a").model ==
               "Qwen/Qwen3-0.6B");
    BOOST_TEST(read_startup_log("> python -c 'from vllm import LLM;LLM(\"facebook/opt-125m\")'" + kv, "b").model == "facebook/opt-125m");
    BOOST_TEST(read_startup_log("python -m sglang.bench_latency --model-path meta-llama/Meta-Llama-3-8B-Instruct --batch 32" + kv, "c").model ==
               "meta-llama/Meta-Llama-3-8B-Instruct");
    const StartupLog local = read_startup_log("non-default args: {'model': '../models/qwen25_32b_instruct_HF/'}" + kv, "d");
    CheckOptions o;
    o.gpu = "l40s";
    BOOST_TEST(check_startup_log(local, o, inputs()).identified.model == "qwen2.5-32b-instruct");
}

// vLLM's kv_cache_memory_bytes sets the KV cache per GPU and skips the utilization's budget
// (v1/worker/gpu_worker.py determine_available_memory: "Initial free memory X GiB, reserved Y GiB
// memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory
// profiling"). A synthetic log in that form: Llama-3-8B's 128 KiB a token in 4 GiB is 32,768
// tokens, whatever gpu_memory_utilization says; the free memory at start names the GPU; the
// setting is reported as the log's; a size the GPU cannot hold beside the weights is said so.
BOOST_AUTO_TEST_CASE(kv_cache_memory_bytes_sets_the_cache_and_not_the_utilization) {
    // `reserved` empty: the log has no reserved-KV line (vLLM prints it only with the setting).
    const auto log_with = [](const std::string& setting, const std::string& reserved) {
        return "INFO 09-18 17:01:10 [api_server.py:1885] vLLM API server version 0.11.2\n"
               "INFO 09-18 17:01:10 [utils.py:233] non-default args: {'model': 'meta-llama/Meta-Llama-3-8B', 'max_model_len': 8192, "
               "'gpu_memory_utilization': 0.5" + setting + "}\n"
               "(EngineCore_DP0 pid=1) INFO 09-18 17:01:20 [gpu_model_runner.py:2653] Model loading took 14.9889 GiB and 3.2 seconds\n" +
               (reserved.empty() ? std::string()
                                 : "(EngineCore_DP0 pid=1) INFO 09-18 17:01:23 [gpu_worker.py:381] Initial free memory 139.20 GiB, reserved " + reserved +
                                       " GiB memory for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling.\n") +
               "(EngineCore_DP0 pid=1) INFO 09-18 17:01:23 [kv_cache_utils.py:1087] GPU KV cache size: 32,768 tokens\n";
    };
    const StartupLog log = read_startup_log(log_with(", 'kv_cache_memory_bytes': 4294967296", "4.00"), "kvmem.log");
    BOOST_REQUIRE(log.kv_cache_memory_bytes.has_value());
    BOOST_TEST(*log.kv_cache_memory_bytes == 4294967296LL);
    BOOST_REQUIRE(log.kv_cache_bytes.has_value());
    BOOST_TEST(log.kv_cache_bytes->value == 4.0 * kGiB);
    const CheckResult r = check_startup_log(log, {}, inputs());
    BOOST_TEST(r.identified.gpu == "h200");
    BOOST_TEST(r.identified.from.at("gpu") == "free memory at start");
    const CheckRow* tokens = row(r, "kv_cache_tokens");
    BOOST_REQUIRE((tokens && tokens->predicted));
    BOOST_TEST(*tokens->predicted == 32768.0);
    BOOST_TEST(r.identified.settings.at("kv_cache_memory_bytes").from.starts_with("log"));
    BOOST_TEST(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("gpu_memory_utilization is not consulted") != std::string::npos; }));
    // Without the setting (and so without its line) the same log is priced by the utilization: 0.5
    // of an H200 is far more.
    const CheckResult by_utilization = check_startup_log(read_startup_log(log_with("", ""), "util.log"), CheckOptions{.gpu = "h200"}, inputs());
    const CheckRow* more = row(by_utilization, "kv_cache_tokens");
    BOOST_REQUIRE((more && more->predicted));
    BOOST_TEST(*more->predicted > 10 * 32768.0);
    // The reserved-KV line alone is the setting (its two decimals of GiB).
    const StartupLog line_only = read_startup_log(log_with("", "4.00"), "line.log");
    BOOST_REQUIRE(line_only.kv_cache_memory_bytes.has_value());
    BOOST_TEST(*line_only.kv_cache_memory_bytes == 4294967296LL);
    BOOST_TEST(line_only.settings.at("kv_cache_memory_bytes").form == "reserved-KV line");
    // The cache is then the size set on every GPU: it does not name one. Without the free-memory
    // line and a GPU name, none is picked by the KV cache.
    const CheckResult unnamed = check_startup_log(read_startup_log(log_with(", 'kv_cache_memory_bytes': 4294967296", ""), "unnamed.log"), {}, inputs());
    BOOST_TEST(unnamed.identified.gpu.empty());
    // A command line in vLLM's human-readable form (500M is 500 x 2^20 bytes), and an impossible one:
    // said so, and priced as asked (the blocks it would hold), not left at zero.
    const StartupLog pasted = read_startup_log("$ vllm serve meta-llama/Meta-Llama-3-8B --kv-cache-memory-bytes 500M\n" + log_with("", "0.49"), "pasted.log");
    BOOST_REQUIRE(pasted.kv_cache_memory_bytes.has_value());
    BOOST_TEST(*pasted.kv_cache_memory_bytes == 500LL * 1048576);
    const CheckResult too_big = check_startup_log(read_startup_log(log_with(", 'kv_cache_memory_bytes': 214748364800", "200.00"), "big.log"),
                                                  CheckOptions{.gpu = "h200"}, inputs());
    BOOST_TEST(std::any_of(too_big.notes.begin(), too_big.notes.end(), [](const std::string& n) { return n.find("is more than the GPU's") != std::string::npos; }));
    const CheckRow* asked = row(too_big, "kv_cache_tokens");
    BOOST_REQUIRE((asked && asked->predicted));
    BOOST_TEST(*asked->predicted == 200.0 * 8192);  // 200 GiB at Llama-3-8B's 128 KiB a token
    // A value outside the domain is named and not used; the reserved-KV line then stands for it.
    const StartupLog zero = read_startup_log(log_with(", 'kv_cache_memory_bytes': 0", "4.00"), "zero.log");
    BOOST_TEST(std::any_of(zero.notes.begin(), zero.notes.end(), [](const std::string& n) { return n.find("kv_cache_memory_bytes=0") != std::string::npos; }));
    BOOST_REQUIRE(zero.kv_cache_memory_bytes.has_value());
    BOOST_TEST(zero.settings.at("kv_cache_memory_bytes").form == "reserved-KV line");
}

// vLLM 0.27.1 at TP 2 (souspilot/DiscoverPhysicsWIP): the total memory 79.25 GiB fits the A100
// 80GB and the H100s alike; the "Device capability 8.0" of a warning keeps the A100.
BOOST_AUTO_TEST_CASE(a_printed_compute_capability_keeps_its_architecture) {
    const char* file = "vllm-0.27.1-discoverphysics-a100-80gb-tp2-qwen3.6-27b.log";
    const StartupLog log = read_startup_log(fixture(file), file);
    BOOST_TEST(log.compute_capability == "sm_80");
    const CheckResult r = check_startup_log(log, {}, inputs());
    BOOST_TEST(r.identified.gpu == "a100-80gb");
    StartupLog without = log;
    without.compute_capability.clear();
    BOOST_TEST(check_startup_log(without, {}, inputs()).identified.gpu != "a100-80gb");
}

namespace {
// The #10517 fixture's log lines alone, without the comment's "GPU: RTX 3090" and "MODEL:" lines above them.
std::string log_lines_of_10517() {
    const std::string text = fixture("vllm-unstated-issue10517-rtx3090-llama-3.1-8b.log");
    return text.substr(text.find("Loading model weights"));
}
}  // namespace

// A V0 log without a version line (vllm #10517): the memory-profiling line gives the total memory,
// the GPU follows from it; the KV size comes from the max-model-len error.
BOOST_AUTO_TEST_CASE(v0_log_identifies_the_gpu_by_its_total_memory) {
    const StartupLog log = read_startup_log(log_lines_of_10517(), "10517.log");
    BOOST_TEST(log.engine_generation == "v0");
    BOOST_TEST(log.version.empty());
    BOOST_TEST(std::abs(log.total_memory_bytes->value - 23.58 * kGiB) < kPrintedGiBTolerance);
    // The max-model-len error's 23,648 tokens are another run's in the thread: the block count wins.
    BOOST_TEST(!log.kv_cache_tokens.has_value());
    BOOST_TEST(log.gpu_blocks->value == 1952);
    const CheckResult r = check_startup_log(log, {}, inputs());
    BOOST_TEST(r.identified.gpu == "rtx-4090");  // the nearest 24 GB GPU; the other one that fits is named
    BOOST_TEST(r.identified.gpu_candidates.size() == 2u);
    BOOST_TEST(r.identified.gpu_candidates.back() == "rtx-3090");
    BOOST_TEST(r.identified.from.at("gpu") == "total memory");
    BOOST_TEST(r.identified.profile == "vllm-v0");
}

// A GPU named where people write it down beside a log: a system description's "Graphics:" or
// "GPU:" line (count and notes dropped, the vendor words optional) and a Markdown table cell. It
// settles what the memory alone cannot (the RTX 3090 and 4090 hold the same 24 GB).
BOOST_AUTO_TEST_CASE(a_gpu_named_in_a_pasted_system_description_or_table_is_read) {
    CheckInputs in = inputs();
    in.device_names = parse_device_names(fixture("gpu-device-names.json", "../../assets"), "gpu-device-names.json");
    const std::string log = log_lines_of_10517();
    const auto gpu_of = [&](const std::string& pasted) {
        const StartupLog l = read_startup_log(pasted + "\n" + log, "pasted.log");
        const CheckResult r = check_startup_log(l, {}, in);
        return std::pair{r.identified.gpu, r.identified.from.count("gpu") ? r.identified.from.at("gpu") : std::string()};
    };
    BOOST_TEST(gpu_of("- Graphics: RTX 3090").first == "rtx-3090");
    BOOST_TEST(gpu_of("- Graphics: RTX 3090").second == "device name");
    BOOST_TEST(gpu_of("GPU: 2x RTX 3090 (24GB each)").first == "rtx-3090");
    BOOST_TEST(gpu_of("GPUs: 4 x NVIDIA GeForce RTX 3090, driver 550").first == "rtx-3090");
    BOOST_TEST(gpu_of("| GPU model | `NVIDIA GeForce RTX 3090` |").first == "rtx-3090");
    BOOST_TEST(gpu_of("| GPU 型号 | NVIDIA GeForce RTX 3090 |").first == "rtx-3090");
    // A table with a GPU column (zhjunqin/LLM-Learning's benchmark notes: "| 3090 | 24G | 535 | 12.2 |").
    BOOST_TEST(gpu_of("| GPU  | 显存 | 驱动 | CUDA |\n| ---- | ---- | ---- | ---- |\n| 3090 | 24G  | 535  | 12.2 |").first == "rtx-3090");
    BOOST_TEST(gpu_of("| Model | GPU |\n|---|---|\n| Llama | `RTX 3090` |").first == "rtx-3090");
    BOOST_TEST(gpu_of("| gpu | vram |\n|:--:|--|\n| RTX 3090 | 24G |").first == "rtx-3090");
    // Not a table: no separator row under the header, or a row after the table has ended (a blank
    // line or text between).
    BOOST_TEST(gpu_of("| GPU  | VRAM |\n| 3090 | 24G  |").first == "rtx-4090");
    BOOST_TEST(gpu_of("| GPU  | VRAM |\n| ---- | ---- |\nsome text\n| 3090 | 24G  |").first == "rtx-4090");
    BOOST_TEST(gpu_of("| GPU  | VRAM |\n| ---- | ---- |\n\n| 3090 | 24G  |").first == "rtx-4090");
    // Not a GPU: a per-GPU table's index, a key-value table's next key.
    BOOST_TEST(gpu_of("| GPU | Util |\n|---|---|\n| 0 | 35% |").first == "rtx-4090");
    BOOST_TEST(read_startup_log("| GPU | Util |\n|---|---|\n| 0 | 35% |\n" + log, "x").device_names.empty());
    BOOST_TEST(read_startup_log("| GPU | RTX 3090 |\n| --- | --- |\n| CUDA | 12.4 |\n" + log, "x").device_names.empty());
    // Nor a "GPUs" column's count, or a three-digit figure under "GPU"; a model number with a
    // suffix is one ("4090D").
    BOOST_TEST(read_startup_log("| Node | GPUs |\n|---|---|\n| a | 8 |\n| b | 1024 |\n" + log, "x").device_names.empty());
    BOOST_TEST(read_startup_log("| GPU | Power |\n|---|---|\n| 128 | 300W |\n" + log, "x").device_names.empty());
    BOOST_TEST(read_startup_log("| GPU | VRAM |\n|---|---|\n| 4090D | 24G |\n" + log, "x").device_names.size() == 1);
    // The brand word is optional: "A6000" is the RTX A6000 (the log's 23.58 GiB is then noted).
    BOOST_TEST(gpu_of("GPU: A6000").first == "a6000");
    // The fixture as quoted, with the comment's own "GPU: RTX 3090" line above the log.
    BOOST_TEST(check_startup_log(read_startup_log(fixture("vllm-unstated-issue10517-rtx3090-llama-3.1-8b.log"), "10517.log"), {}, in).identified.gpu ==
               "rtx-3090");
    // Not names: a count, a block line, a GPU the names file does not know (memory decides).
    BOOST_TEST(gpu_of("GPU: 0").first == "rtx-4090");
    BOOST_TEST(gpu_of("GPU: 1").second == "total memory");
    BOOST_TEST(read_startup_log(log, "x").device_names.empty());
    BOOST_TEST(gpu_of("- Graphics: RTX 2080 Ti").first == "rtx-4090");
}

// A person's "MODEL: X" line above a log (vllm #10517's comment) names the model, the weakest form:
// any setting the engine or the command prints replaces it, in either order.
BOOST_AUTO_TEST_CASE(a_model_named_in_a_pasted_description_is_read_and_yields_to_the_engine) {
    BOOST_TEST(read_startup_log(fixture("vllm-unstated-issue10517-rtx3090-llama-3.1-8b.log"), "x").model == "meta-llama/Llama-3.1-8B-Instruct");
    const std::string args = "INFO 05-04 14:43:16 api_server.py:152] args: Namespace(model='Qwen/Qwen3-8B', tensor_parallel_size=1)\n";
    BOOST_TEST(read_startup_log("MODEL: meta-llama/Llama-3.1-8B-Instruct\n" + args + log_lines_of_10517(), "x").model == "Qwen/Qwen3-8B");
    BOOST_TEST(read_startup_log(args + "Model: meta-llama/Llama-3.1-8B-Instruct\n" + log_lines_of_10517(), "x").model == "Qwen/Qwen3-8B");
    // Not a description: an engine line that happens to hold "Model:", a sentence, or lscpu's CPU
    // model number in a pasted collect_env.
    BOOST_TEST(read_startup_log("CPU family:            6\nModel:                 143\n" + log_lines_of_10517(), "x").model.empty());
    BOOST_TEST(read_startup_log("INFO 05-04 14:43:16 x.py:1] Model: foo\n" + log_lines_of_10517(), "x").model.empty());
    BOOST_TEST(read_startup_log("Model: the one we use in production\n" + log_lines_of_10517(), "x").model.empty());
}

// A log that names no GPU and no total memory, whose budget's printed share does not single one
// out (LMCache#1739 prints only its KV cache): the bundled GPU whose predicted KV cache at the
// log's settings is nearest the logged one, within kKvIdentifyTolerance, with the others named.
BOOST_AUTO_TEST_CASE(a_gpu_is_identified_by_its_predicted_kv_cache_when_nothing_else_tells) {
    CheckOptions o;
    o.model = "qwen3-14b";
    const std::string text = fixture("vllm-0.10.2-lmcache1739-a100-40gb-qwen3-14b.log");
    const CheckResult r = check_startup_log(read_startup_log(text, "1739.log"), o, inputs());
    BOOST_TEST(r.identified.gpu == "a100-40gb");
    BOOST_TEST(r.identified.from.at("gpu") == "predicted KV cache");
    BOOST_TEST(std::none_of(r.unresolved.begin(), r.unresolved.end(), [](const std::string& u) { return u.starts_with("GPU"); }));
    BOOST_TEST(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("+19.0% from it") != std::string::npos; }));
    // With the weights printed and a utilization logged, the budget decides before the KV cache is
    // asked: at 0.2, 6.51 GiB of cache and Qwen3-14B's 27.5 GiB of weights need at least 170 GiB,
    // which only the B200 and MI300X hold; the B200 (the nearer) is priced, not the A100 40GB.
    const std::string low = "(EngineCore_DP0 pid=1) INFO 10-03 16:22:00 [utils.py:1] non-default args: {'gpu_memory_utilization': 0.2}\n"
                            "(EngineCore_DP0 pid=1) INFO 10-03 16:22:01 [gpu_model_runner.py:1] Model loading took 27.5123 GiB and 9.9 seconds\n" +
                            text;
    const CheckResult budget = check_startup_log(read_startup_log(low, "low.log"), o, inputs());
    BOOST_TEST(budget.identified.gpu == "b200");
    BOOST_TEST(budget.identified.from.at("gpu") != "predicted KV cache");
    // A KV cache that no bundled GPU's prediction comes within 20% of: no GPU, and the option named.
    std::string small = text;
    small.replace(small.find("6.51 GiB"), 8, "0.30 GiB");
    small.replace(small.find("42,656 tokens"), 13, "1,966 tokens");
    const CheckResult none = check_startup_log(read_startup_log(small, "small.log"), o, inputs());
    BOOST_TEST(none.identified.gpu.empty());
    BOOST_TEST(std::any_of(none.unresolved.begin(), none.unresolved.end(), [](const std::string& u) { return u.find("pass --gpu") != std::string::npos; }));
}

// The export variants and the L20 by the names collect_env prints (assets/gpu-device-names.json):
// an H800 or A800 is priced as the H100 SXM or A100 80GB of its family, with a note that says so;
// an L20 is named and left for --gpu (no bundled GPU stands in for it).
BOOST_AUTO_TEST_CASE(export_variants_and_the_l20_are_named_by_their_device_names) {
    CheckOptions o;
    o.model = "llama-3.1-8b";
    CheckInputs in = inputs();
    in.device_names = parse_device_names(fixture("gpu-device-names.json", "../../assets"), "gpu-device-names.json");
    const std::string rest = "INFO 06-02 14:46:01 [api_server.py:1289] vLLM API server version 0.9.0\nGPU KV cache size: 92,944 tokens\n";
    const CheckResult h800 = check_startup_log(read_startup_log("GPU models and configuration:\nGPU 0: NVIDIA H800\n" + rest, "h800.log"), o, in);
    BOOST_TEST(h800.identified.gpu == "h100-sxm");
    BOOST_TEST(h800.identified.device_name == "NVIDIA H800");
    BOOST_TEST(std::any_of(h800.notes.begin(), h800.notes.end(), [](const std::string& n) { return n.find("an H100 variant") != std::string::npos; }));
    const CheckResult a800 = check_startup_log(read_startup_log("GPU 0: NVIDIA A800-SXM4-80GB\n" + rest, "a800.log"), o, in);
    BOOST_TEST(a800.identified.gpu == "a100-80gb");
    const CheckResult l20 = check_startup_log(read_startup_log("GPU 0: NVIDIA L20\n" + rest, "l20.log"), o, in);
    BOOST_TEST(l20.identified.gpu.empty());
    BOOST_TEST(std::any_of(l20.unresolved.begin(), l20.unresolved.end(), [](const std::string& u) { return u.find("'NVIDIA L20'") != std::string::npos; }));
}

// What the log proves still rules GPUs out of the predicted-KV fallback. A synthetic SGLang log of
// Llama-3.1-8B (mem_fraction_static 0.85, 9.77 + 9.77 GB of KV cache): without a free-memory line
// the A100 40GB's predicted cache is the nearest (-7.8%; the L40S and RTX 6000 Ada +13.9%); with
// "Load weight begin. avail mem=41.10 GB" no bundled GPU is within 6% above 41.1 GiB (so the
// free-memory rule picks none), but the fallback drops every GPU under it: the L40S is priced.
BOOST_AUTO_TEST_CASE(the_free_memory_at_start_rules_gpus_out_of_the_kv_fallback) {
    CheckOptions o;
    o.model = "llama-3.1-8b";
    const std::string head = "[2025-06-01 10:00:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', tp_size=1, mem_fraction_static=0.85)\n";
    const std::string tail =
        "[2025-06-01 10:00:09 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=26.00 GB, mem usage=14.99 GB.\n"
        "[2025-06-01 10:00:10 TP0] KV Cache is allocated. #tokens: 160000, K size: 9.77 GB, V size: 9.77 GB\n";
    const CheckResult nearest = check_startup_log(read_startup_log(head + tail, "sg.log"), o, inputs());
    BOOST_TEST(nearest.identified.gpu == "a100-40gb");
    BOOST_TEST(nearest.identified.from.at("gpu") == "predicted KV cache");
    const std::string begin = "[2025-06-01 10:00:05 TP0] Load weight begin. avail mem=41.10 GB\n";
    const CheckResult bounded = check_startup_log(read_startup_log(head + begin + tail, "sg-free.log"), o, inputs());
    BOOST_TEST(bounded.identified.gpu == "l40s");
    BOOST_TEST(bounded.identified.from.at("gpu") == "predicted KV cache");
    const std::vector<std::string>& c = bounded.identified.gpu_candidates;
    BOOST_TEST((std::find(c.begin(), c.end(), "a100-40gb") == c.end()));
}

// Several bundled GPUs within 20%: the nearest is priced and the others are named with what they
// would change. The Gemma 3 QAT log ran on two RTX 4090s (the project's later documents), but its
// KV cache is predicted 16% high there and 5.6% high on the L4 (docs/check.md): the L4 is picked,
// the RTX 4090 and 3090 named. The corpus test counts it among the GPUs identified wrong.
BOOST_AUTO_TEST_CASE(the_nearest_predicted_kv_cache_names_the_other_gpus_that_fit) {
    const CheckResult r = check_startup_log(read_startup_log(fixture("vllm-0.8.4-plg_ai-rtx4090-tp2-gemma-3-12b-it-qat-awq.log"), "plg.log"), {}, inputs());
    BOOST_TEST(r.identified.gpu == "l4");
    BOOST_TEST(r.identified.from.at("gpu") == "predicted KV cache");
    const std::vector<std::string>& c = r.identified.gpu_candidates;
    BOOST_TEST(c.front() == "l4");
    BOOST_TEST((std::find(c.begin(), c.end(), "rtx-4090") != c.end() && std::find(c.begin(), c.end(), "rtx-3090") != c.end()));
    BOOST_TEST(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) {
        return n.find("GPU l4 by the logged KV cache") != std::string::npos && n.find("+5.6% from it") != std::string::npos &&
               n.find("also fits rtx-4090") != std::string::npos;
    }));
    // Issue 13061's worker, given its model: the budget it prints (weights at TP 2 and the KV cache)
    // fits the RTX 4090 and the RTX 3090 alike (24 GB each); the tie goes to the nearer predicted KV
    // cache, the 3090's (-3.3%), where the source ran 4090s (its expectation, unverified). Both are
    // named, with what the other would change (step times, not the KV cache).
    CheckOptions o;
    o.model = "deepseek-r1-distill-qwen-14b";
    const CheckResult tie = check_startup_log(read_startup_log(fixture("vllm-unstated-issue13061-rtx4090-tp2-r1-distill-qwen-14b.log"), "13061.log"), o, inputs());
    BOOST_TEST(tie.identified.gpu == "rtx-3090");
    BOOST_TEST((std::find(tie.identified.gpu_candidates.begin(), tie.identified.gpu_candidates.end(), "rtx-4090") != tie.identified.gpu_candidates.end()));
    BOOST_TEST(std::any_of(tie.notes.begin(), tie.notes.end(), [](const std::string& n) { return n.find("priced as rtx-3090, not rtx-4090") != std::string::npos; }));
}

// A worker's excerpt that prints no TP: the TP at which the model's weights per GPU are the logged
// ones (issue 13061: 13.95 GB of a 14B model in bf16 is TP 2), or, in V0, at which one block's bytes
// over the 4 GiB default swap space give the logged CPU blocks (issue 5248: 1,024 blocks of 16
// tokens is 256 KiB a token, deepseek-coder-6.7b's 512 KiB over TP 2). A log that prints its TP
// keeps it.
BOOST_AUTO_TEST_CASE(an_excerpt_without_a_tp_is_priced_at_the_tp_its_memory_shows) {
    CheckOptions o;
    o.gpu = "rtx-4090";
    o.model = "deepseek-r1-distill-qwen-14b";
    const StartupLog worker = read_startup_log(fixture("vllm-unstated-issue13061-rtx4090-tp2-r1-distill-qwen-14b.log"), "13061.log");
    BOOST_TEST(!worker.tensor_parallel.has_value());
    CheckResult r = check_startup_log(worker, o, inputs());
    BOOST_TEST(r.identified.tp == 2);
    BOOST_TEST(r.identified.from.at("tp") == "logged memory");
    BOOST_TEST(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("priced at TP 2") != std::string::npos; }));
    // Half the weights again is TP 4.
    const StartupLog quarter = read_startup_log("INFO 02-11 07:40:45 model_runner.py:1115] Loading model weights took 6.9738 GB\n"
                                                "INFO 02-11 07:40:49 worker.py:267] # GPU blocks: 5000, # CPU blocks: 1000\n",
                                                "quarter.log");
    BOOST_TEST(check_startup_log(quarter, o, inputs()).identified.tp == 4);
    // Weights that fit no TP leave it at the default.
    const StartupLog odd = read_startup_log("INFO 02-11 07:40:45 model_runner.py:1115] Loading model weights took 20.0 GB\n"
                                            "INFO 02-11 07:40:49 worker.py:267] # GPU blocks: 500, # CPU blocks: 100\n",
                                            "odd.log");
    BOOST_TEST(check_startup_log(odd, o, inputs()).identified.tp == 1);
    BOOST_TEST(check_startup_log(odd, o, inputs()).identified.from.at("tp") == "engine default");

    CheckOptions t4;
    t4.gpu = "t4";
    t4.model = "deepseek-coder-6.7b-instruct";
    const StartupLog blocks = read_startup_log(fixture("vllm-unstated-issue5248-t4-tp2-deepseek-coder-6.7b.log"), "5248.log");
    BOOST_TEST(blocks.cpu_blocks->value == 1024);
    BOOST_TEST(check_startup_log(blocks, t4, inputs()).identified.tp == 2);
    // With a swap space of 2 GiB the same blocks are 128 KiB a token: TP 4.
    const StartupLog swap2 = read_startup_log("INFO 06-12 08:12:20 api_server.py:1] args: Namespace(swap_space=2, gpu_memory_utilization=0.9)\n" +
                                                  fixture("vllm-unstated-issue5248-t4-tp2-deepseek-coder-6.7b.log"),
                                              "swap2.log");
    BOOST_TEST(*swap2.swap_space_gib == 2.0);
    BOOST_TEST(check_startup_log(swap2, t4, inputs()).identified.tp == 4);
    // The log's own TP wins.
    const StartupLog stated = read_startup_log("INFO 06-12 08:12:20 api_server.py:1] args: Namespace(tensor_parallel_size=1)\n" +
                                                   fixture("vllm-unstated-issue5248-t4-tp2-deepseek-coder-6.7b.log"),
                                               "stated.log");
    BOOST_TEST(check_startup_log(stated, t4, inputs()).identified.tp == 1);
}

// A container's arguments in exec form name the model (issue 10360: "CMD: `'--model'
// 'Qwen2.5-32B-Instruct-AWQ' ...`", and a compose file's ["--model", "X"]).
BOOST_AUTO_TEST_CASE(a_container_command_in_exec_form_names_the_model) {
    const StartupLog cmd = read_startup_log(fixture("vllm-unstated-issue10360-a6000-tp1-qwen2.5-32b-instruct-awq.log"), "10360.log");
    BOOST_TEST(cmd.model == "Qwen2.5-32B-Instruct-AWQ");
    BOOST_TEST(*cmd.max_model_len == 4096);
    const StartupLog compose = read_startup_log("command: [\"--model\", \"Qwen/Qwen3-8B\", \"--max-model-len\", \"8192\"]\n"
                                                "INFO 10-03 16:22:17 [kv_cache_utils.py:864] GPU KV cache size: 42,656 tokens\n",
                                                "compose.log");
    BOOST_TEST(compose.model == "Qwen/Qwen3-8B");
    BOOST_TEST(*compose.max_model_len == 8192);
}

// vLLM 0.27.1 logs its KV token count as the concurrency at max_model_len times max_model_len
// (get_kv_cache_capacity): 1,407,894 = int(21.48 x 65,536) for Qwen3.6-27B, a DeltaNet hybrid whose
// blocks hold fewer tokens. Before the profile's bound the count is blocks x block size.
BOOST_AUTO_TEST_CASE(a_hybrids_kv_tokens_are_logged_as_concurrency_times_max_model_len_in_newer_vllm) {
    CheckInputs in = inputs();
    in.device_names = parse_device_names(fixture("gpu-device-names.json", "../../assets"), "gpu-device-names.json");
    const StartupLog log = read_startup_log(fixture("vllm-0.27.1-discoverphysics-a100-80gb-tp2-qwen3.6-27b.log"), "0.27.1.log");
    const CheckResult r = check_startup_log(log, {}, in);
    BOOST_TEST(r.identified.model == "qwen3.6-27b");  // its folder ./qwen36_27B
    const auto row = [&](const CheckResult& c, const std::string& q) {
        return std::find_if(c.rows.begin(), c.rows.end(), [&](const CheckRow& x) { return x.quantity == q; });
    };
    const auto tokens = row(r, "kv_cache_tokens"), concurrency = row(r, "max_concurrency");
    BOOST_TEST_REQUIRE((tokens != r.rows.end() && concurrency != r.rows.end()));
    BOOST_TEST(std::abs(*tokens->error_fraction) < 0.05);
    BOOST_TEST(*tokens->predicted == std::floor(*concurrency->predicted * 65536.0));
    CheckOptions older;
    older.engine = "vllm@0.22.1";
    const CheckResult o = check_startup_log(log, older, in);
    BOOST_TEST(*row(o, "kv_cache_tokens")->error_fraction < -0.5);  // blocks x block size: the hybrid's blocks hold fewer tokens
}

// A sliding-window model's KV token count stands in for the cache's bytes too (vLLM V1's hybrid
// allocator: tokens x groups x layers a group x one layer's bytes), so a log with its weights and
// KV tokens but no total memory still puts the GPU in its memory class (gpt-oss-20b: 24 layers of
// 48 KiB a token; 1,220,000 tokens are 55.8 GiB, and with 13 GiB of weights at utilization 0.9 an
// 80 GB GPU).
BOOST_AUTO_TEST_CASE(a_sliding_window_models_kv_tokens_bound_the_gpu_memory) {
    const StartupLog log = read_startup_log(
        "INFO 08-01 10:00:00 [api_server.py:1805] vLLM API server version 0.10.1\n"
        "INFO 08-01 10:00:00 [utils.py:326] non-default args: {'model': 'openai/gpt-oss-20b'}\n"
        "INFO 08-01 10:00:30 [gpu_model_runner.py:1892] Model loading took 13.0000 GiB and 25.1 seconds\n"
        "INFO 08-01 10:01:00 [kv_cache_utils.py:829] GPU KV cache size: 1,220,000 tokens\n",
        "gpt-oss.log");
    const CheckResult r = check_startup_log(log, {}, inputs());
    BOOST_TEST(r.identified.model == "gpt-oss-20b");
    BOOST_TEST(r.identified.from.count("gpu") == 1u);
    BOOST_TEST(r.identified.from.at("gpu") == "memory budget");
    for (const std::string& g : r.identified.gpu_candidates) {
        const GpuProfile p = test::bundled_gpu(g);
        BOOST_TEST(p.memory_usable_bytes > 78ull * (1ull << 30), g);
        BOOST_TEST(p.memory_usable_bytes < 90ull * (1ull << 30), g);
    }
}

// SGLang 0.4.3.post4 on four L4s (didier-durand/llms-in-clouds): server_args and the KV pool.
BOOST_AUTO_TEST_CASE(sglang_log_field_by_field) {
    const StartupLog log = read_startup_log(fixture("sglang-0.4.3.post4-qwq-32b-l4-tp4.log"), "sglang.log");
    BOOST_TEST(log.engine == "sglang");
    BOOST_TEST(log.model == "/home/model/Qwen/QwQ-32B");
    BOOST_TEST(*log.tensor_parallel == 4);
    BOOST_TEST(*log.mem_fraction_static == 0.85);
    BOOST_TEST(log.kv_cache_tokens->value == 46611);
    BOOST_TEST(std::abs(log.kv_cache_bytes->value - 2.84 * kGiB) < kPrintedGiBTolerance);
    BOOST_TEST(log.ranks_seen == 4);
}

BOOST_AUTO_TEST_CASE(foreign_and_hostile_text_is_one_error) {
    BOOST_TEST(test::throws_naming([] { read_startup_log("hello\nworld\n", "x.txt"); }, "is not a vLLM or SGLang startup log"));
    BOOST_TEST(test::throws_naming([] { read_startup_log(std::string("GPU KV cache size: 5 tokens\0", 29), "nul.log"); }, "NUL"));
    // Garbled logs: every fixture with random bytes flipped either reads or is refused, never crashes.
    std::mt19937 rng(20261201);
    const std::string base = fixture("vllm-0.11.0-llama-3.1-8b-l4-tp1.log");
    for (int round = 0; round < 200; ++round) {
        std::string s = base;
        for (int i = 0; i < 40; ++i) s[rng() % s.size()] = static_cast<char>(1 + rng() % 255);
        try {
            (void)read_startup_log(s, "garbled.log");
        } catch (const Error&) {
        }
    }
    // Lines far longer than any log line (the regexes see only their head) and impossible settings.
    const std::string long_lines = "[2025-03-08 12:29:21 " + std::string(60000, 'x') + "\n" + [] {
        std::string s;
        for (int i = 0; i < 5000; ++i) s += "(Worker pid=1) ";
        return s;
    }() + "\nMemory profiling results: total_gpu_memory=" + std::string(50000, '9') + "\nGPU KV cache size: 5 tokens\n";
    BOOST_TEST(read_startup_log(long_lines, "long.log").kv_cache_tokens->value == 5);
    const StartupLog tp0 = read_startup_log("Initializing a V1 LLM engine (v0.10.1) with config: model='meta-llama/Llama-3.1-8B', "
                                            "tensor_parallel_size=0\nGPU KV cache size: 5 tokens\n", "tp0.log");
    CheckOptions on_h100;
    on_h100.gpu = "h100-sxm";
    // An impossible value is named and set aside, never silently used (the engine default stands in).
    BOOST_TEST(!tp0.tensor_parallel.has_value());
    BOOST_TEST_REQUIRE(tp0.rejected.size() == 1u);
    BOOST_TEST(tp0.rejected[0].key == "tensor_parallel_size");
    const CheckResult tp0_check = check_startup_log(tp0, on_h100, inputs());
    BOOST_TEST(tp0_check.identified.tp == 1);
    BOOST_TEST(tp0_check.identified.settings.at("tensor_parallel_size").from.find("outside its domain") != std::string::npos);
    const StartupLog huge_util = read_startup_log("non-default args: {'model': 'meta-llama/Llama-3.1-8B', 'gpu_memory_utilization': 9e999}\n"
                                                  "GPU KV cache size: 5 tokens\n", "util.log");
    BOOST_TEST(!huge_util.gpu_memory_utilization.has_value());
    BOOST_TEST(huge_util.rejected.size() == 1u);
    BenchResult huge = read_bench_result(R"({"model_id": "meta-llama/Llama-3.1-8B", "completed": 1, "max_concurrency": 1,
        "total_input_tokens": 1e14, "total_output_tokens": 10, "mean_tpot_ms": 7})", "huge.json");
    const CheckResult priced = check_bench_result(huge, on_h100, inputs());  // returns at once: lengths beyond any context are not priced
    BOOST_TEST(!row(priced, "tpot_s_mean")->predicted.has_value());
    BOOST_TEST(scheme_from_quantization("Qwen/Qwen2.5-7B-Instruct-AWQ", "awq").value() == "w4a16-g128");
    BOOST_TEST(scheme_from_quantization("Qwen/Qwen2.5-7B-Instruct-GPTQ-Int8", "gptq").value() == "w8a16-int8");
    BOOST_TEST(scheme_from_quantization("meta-llama/Llama-3.1-8B", "").value() == "bf16");
    BOOST_TEST(scheme_from_quantization("openai/gpt-oss-120b", "mxfp4").value() == "native");  // the config declares the experts
    BOOST_TEST(!scheme_from_quantization("x", "bitsandbytes").has_value());
}

// Two servers in one file: one after the other, the first server's figures; interleaved line by
// line (two startups written to one file at once), still the first server's settings, with a note.
BOOST_AUTO_TEST_CASE(two_servers_in_one_file_read_as_the_first_with_a_note) {
    const std::string l4 = fixture("vllm-0.11.0-llama-3.1-8b-l4-tp1.log");
    const std::string a100 = fixture("vllm-0.10.1.1-qwen2-7b-a100-80gb-tp1-gmu0.5.log");
    const StartupLog alone = read_startup_log(l4, "l4.log");
    const auto has_note = [](const StartupLog& log, const std::string& part) {
        return std::any_of(log.notes.begin(), log.notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
    };
    const StartupLog sequential = read_startup_log(l4 + a100, "two.log");
    BOOST_TEST(sequential.servers_seen == 2);
    BOOST_TEST(sequential.model == alone.model);
    BOOST_TEST(sequential.kv_cache_tokens->value == alone.kv_cache_tokens->value);
    BOOST_TEST(has_note(sequential, "second server"));
    BOOST_TEST(!has_note(sequential, "interleaved"));
    std::istringstream a(l4), b(a100);
    std::string mixed, line;
    // The L4 server starts first (its header lines), then the two write line by line.
    for (int i = 0; i < 30 && std::getline(a, line); ++i) mixed += line + "\n";
    for (bool more = true; more;) {
        more = false;
        if (std::getline(a, line)) mixed += line + "\n", more = true;
        if (std::getline(b, line)) mixed += line + "\n", more = true;
    }
    const StartupLog interleaved = read_startup_log(mixed, "mixed.log");
    BOOST_TEST(interleaved.servers_seen == 2);
    BOOST_TEST(interleaved.model == alone.model);
    BOOST_TEST(*interleaved.gpu_memory_utilization == *alone.gpu_memory_utilization);
    BOOST_TEST(interleaved.kv_cache_tokens.has_value());
    BOOST_TEST(has_note(interleaved, "interleaved"));
}

// GuideLLM's benchmarks JSON (0.5.0.dev0, danielkorat/guidellm-bench) and genai-perf's
// profile_export_genai_perf.json (0.0.4, FernandoDorado/sizing-llm-inference-nvidia), field by
// field (tests/data/bench/*.source.txt); a run number past the file's runs is one error.
BOOST_AUTO_TEST_CASE(guidellm_and_genai_perf_results_field_by_field) {
    constexpr double kMs = 1e-3;
    const BenchResult g = read_bench_result(fixture("guidellm-0.5.0.dev0-gpt-oss-20b-4xintel-xpu-sync.json", "bench"), "g.json");
    BOOST_TEST(g.format == "guidellm");
    BOOST_TEST(g.model == "openai/gpt-oss-20b");
    BOOST_TEST(g.runs_in_file == 1u);
    BOOST_TEST(g.max_concurrency.value() == 1);  // strategy synchronous
    BOOST_TEST(g.completed.value() == 25);
    BOOST_TEST(std::abs(g.metrics.at("ttft_s_mean") - 48.843650817871094 * kMs) < 1e-9);
    BOOST_TEST(std::abs(g.mean_output_tokens.value() - 1024) < 1e-9);
    BOOST_TEST(g.metrics.at("tpot_s_mean") > 0.029);  // inter_token_latency_ms 29.9
    BOOST_TEST(g.metrics.at("e2e_s_mean") > 30.0);    // request_latency is in seconds
    BOOST_TEST(test::throws_naming([] { (void)read_bench_result(fixture("guidellm-0.5.0.dev0-gpt-oss-20b-4xintel-xpu-sync.json", "bench"), "g.json", 1); },
                                   "holds 1 GuideLLM benchmark"));
    BOOST_TEST(test::throws_naming([] { (void)read_bench_result(R"({"benchmarks": [1]})", "bad.json"); }, "not an object"));
    const BenchResult p = read_bench_result(fixture("genai-perf-0.0.4-llama-3-8b-instruct-unstated-c100.json", "bench"), "p.json");
    BOOST_TEST(p.format == "genai-perf");
    BOOST_TEST(p.model == "meta/llama3-8b-instruct");
    BOOST_TEST(p.max_concurrency.value() == 100);
    BOOST_TEST(std::abs(p.metrics.at("ttft_s_mean") - 1019.6901196972727 * kMs) < 1e-9);
    BOOST_TEST(std::abs(p.metrics.at("ttft_s_p99") - 1564.26834917 * kMs) < 1e-9);
    BOOST_TEST(std::abs(p.metrics.at("requests_per_s") - 30.935429942267838) < 1e-9);
    BOOST_TEST(!p.notes.empty());  // its own tokenizer's counts
    // Priced like any result: the simulated run at the file's concurrency.
    CheckOptions o;
    o.gpu = "a100-80gb";
    o.model = "llama-3-8b";
    const CheckResult r = check_bench_result(p, o, inputs());
    BOOST_TEST_REQUIRE(row(r, "tpot_s_mean") != nullptr);
    BOOST_TEST(row(r, "tpot_s_mean")->predicted.has_value());
}

// A burst whose first tokens come sooner than the GPUs' peak can prefill its prompts is said to be
// so. dennislee22/vllm-benchmarking (assets/serving-runs/dennislee22-vllm-benchmarking.json):
// 75 prompts of 1,021 tokens at once to Qwen2-7B-Instruct on one A100 80GB (vLLM 0.10.1.1), twice on
// two servers. Test 4's TTFT p99 of 2.676 s is under the 3.17 s the first 99% of the prompts' block
// linears alone take at the A100's 312 TFLOP/s; test 5's 5.064 s is not.
BOOST_AUTO_TEST_CASE(a_burst_faster_than_the_gpus_peak_is_named) {
    const auto result = [](double ttft_p99) {
        BenchResult b;
        b.format = "vllm";
        b.engine = "vllm";
        b.backend = "vllm";
        b.model = "Qwen2-7B-Instruct";
        b.num_prompts = 75;
        b.completed = 75;
        b.mean_input_tokens = 76558.0 / 75;
        b.mean_output_tokens = 76710.0 / 75;
        b.metrics["ttft_s_p99"] = ttft_p99;
        return b;
    };
    CheckOptions o;
    o.gpu = "a100-80gb";
    o.engine = "vllm@0.10.1.1";
    o.model = "qwen2-7b-instruct";
    const auto named = [](const CheckResult& r) {
        return std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("did not all run their prefill") != std::string::npos; });
    };
    BOOST_TEST(named(check_bench_result(result(2.67582), o, inputs())));
    BOOST_TEST(!named(check_bench_result(result(5.06367), o, inputs())));
    // A closed loop below the prompt count is not a burst: no floor is claimed.
    BenchResult loop = result(0.5);
    loop.max_concurrency = 8;
    BOOST_TEST(!named(check_bench_result(loop, o, inputs())));
    // Nor a run at a request rate, whatever its concurrency cap.
    BenchResult paced = result(0.15);
    paced.request_rate = 1.0;
    paced.max_concurrency = 100;
    BOOST_TEST(!named(check_bench_result(paced, o, inputs())));
    // The floor is the shortest prompts' first: 74 prompts of 100 tokens and one of 60,000 can reach
    // a p99 of 1 s (the 74 short ones take 0.03 s), which is not named.
    BenchResult mixed = result(1.0);
    mixed.input_lens.assign(74, 100);
    mixed.input_lens.push_back(60000);
    mixed.output_lens.assign(75, 100);
    mixed.mean_input_tokens = (74.0 * 100 + 60000) / 75;
    mixed.mean_output_tokens = 100;
    BOOST_TEST(!named(check_bench_result(mixed, o, inputs())));
    mixed.metrics["ttft_s_p99"] = 0.01;
    BOOST_TEST(named(check_bench_result(mixed, o, inputs())));
}

// vLLM 0.11.2 on an H200 at concurrency 8 (faradawn/bench3, written by TensorRT-LLM's copy of
// vLLM's benchmark_serving.py): read field by field, then priced at its concurrency.
BOOST_AUTO_TEST_CASE(vllm_benchmark_result_field_by_field_and_priced) {
    constexpr double kMs = 1e-3;
    const BenchResult b = read_bench_result(fixture("vllm-0.11.2-llama-3-8b-h200-c8-trtllm-client.json", "bench"), "c8.json");
    BOOST_TEST(b.engine == "vllm");
    BOOST_TEST(b.model == "meta-llama/Meta-Llama-3-8B-Instruct");
    BOOST_TEST(*b.num_prompts == 40);
    BOOST_TEST(*b.max_concurrency == 8);
    BOOST_TEST(!b.request_rate.has_value());  // "inf"
    BOOST_TEST(*b.mean_input_tokens == 128);
    BOOST_TEST(*b.mean_output_tokens == 512);
    BOOST_TEST(std::abs(b.metrics.at("tpot_s_mean") - 6.439846692021997 * kMs) < 1e-12);
    BOOST_TEST(std::abs(b.metrics.at("e2e_s_p99") - 3394.534891335061 * kMs) < 1e-12);
    BOOST_TEST(std::abs(b.metrics.at("output_tokens_per_s") - 1214.4578767333037) < 1e-9);
    CheckOptions o;
    o.gpu = "h200";
    o.engine = "vllm@0.11.2";
    const CheckResult r = check_bench_result(b, o, inputs());
    BOOST_TEST(r.identified.model == "llama-3-8b");
    BOOST_TEST(r.identified.profile == "vllm-v1");
    const CheckRow* tpot = row(r, "tpot_s_mean");
    BOOST_TEST_REQUIRE(tpot != nullptr);
    BOOST_TEST_REQUIRE(tpot->error_fraction.has_value());
    // The benchmark is simulated (8 users in a closed loop, 40 prompts) with the engine's step
    // model: TPOT within the step class's band of docs/fidelity.md (p10-p90 about -23% to +17%).
    BOOST_TEST(std::abs(*tpot->error_fraction) < 0.25, "TPOT logged " << tpot->logged << ", predicted " << *tpot->predicted);
    for (const char* key : {"ttft_s_mean", "ttft_s_p99", "tpot_s_p99", "e2e_s_mean", "e2e_s_p99", "output_tokens_per_s"}) {
        const CheckRow* k = row(r, key);
        BOOST_TEST_REQUIRE(k != nullptr, key);
        BOOST_TEST_REQUIRE(k->error_fraction.has_value(), key << " is not predicted");
        // TTFT carries the prefill class's wider error; the rest follows the decode steps.
        const double bound = std::string(key).starts_with("ttft") ? 0.6 : 0.25;
        BOOST_TEST(std::abs(*k->error_fraction) < bound, key << " logged " << k->logged << ", predicted " << *k->predicted);
    }
    // A TTFT is a prefill plus at most a few decode steps of waiting: well under one TPOT x 512.
    BOOST_TEST(*row(r, "ttft_s_mean")->predicted < 0.1 * *row(r, "e2e_s_mean")->predicted);
    const CheckRow* itl = row(r, "itl_s_p99");
    BOOST_TEST_REQUIRE(itl != nullptr);
    // The token-gap tail is predicted from every gap of the run (the simulator's histogram): at
    // concurrency 8 with every request alike, no gap is far from a decode step.
    BOOST_TEST_REQUIRE(itl->predicted.has_value());
    BOOST_TEST(*itl->predicted >= *row(r, "itl_s_p50")->predicted);
    BOOST_TEST(*itl->predicted < 2.0 * *row(r, "itl_s_p50")->predicted);
}

// vLLM's warning that custom all-reduce is off for want of P2P (two A100 pods of one node,
// dennislee22; two RTX 4090s) says the TP ranks all-reduce through host memory: the check says so
// and how to price the server's benchmarks; a benchmark checked with --gpu-p2p off pays it.
BOOST_AUTO_TEST_CASE(a_log_without_gpu_p2p_says_so_and_a_benchmark_pays_the_host_detour) {
    for (const char* file : {"vllm-0.10.1.1-qwen2-7b-a100-80gb-tp2-gmu0.25.log", "vllm-0.8.4-plg_ai-rtx4090-tp2-gemma-3-12b-it-qat-awq.log"}) {
        const StartupLog log = read_startup_log(fixture(file), file);
        BOOST_TEST_REQUIRE(log.gpu_p2p.has_value(), file);
        BOOST_TEST(!*log.gpu_p2p, file);
        const CheckResult r = check_startup_log(log, {}, inputs());
        BOOST_TEST(std::any_of(r.notes.begin(), r.notes.end(), [](const std::string& n) { return n.find("--gpu-p2p off") != std::string::npos; }),
                   file);
    }
    const StartupLog one_gpu = read_startup_log(fixture("vllm-0.11.0-llama-3.1-8b-l4-tp1.log"), "l4.log");
    BOOST_TEST(!one_gpu.gpu_p2p.has_value());
    const BenchResult b = read_bench_result(fixture("vllm-0.11.2-llama-3-8b-h200-c8-trtllm-client.json", "bench"), "c8.json");
    CheckOptions o;
    o.gpu = "h200";
    o.engine = "vllm@0.11.2";
    o.tp = 2;
    const CheckResult p2p = check_bench_result(b, o, inputs());
    o.gpu_p2p = false;
    const CheckResult host = check_bench_result(b, o, inputs());
    const CheckRow* with = row(p2p, "tpot_s_mean");
    const CheckRow* without = row(host, "tpot_s_mean");
    BOOST_TEST_REQUIRE((with && without && with->predicted && without->predicted));
    // 64 all-reduces a step (32 layers) at 12.25 us each at least.
    BOOST_TEST(*without->predicted > *with->predicted + 64 * 12.25e-6);
}

// SGLang 0.5.5.post3's JSON line (TonyLi15/sglang-benchmark): "request_rate": Infinity, the
// version and model inside server_info; GH200 and Qwen2.5-3B are not bundled, so it asks.
BOOST_AUTO_TEST_CASE(sglang_benchmark_result_with_python_literals) {
    const BenchResult b = read_bench_result(fixture("sglang-0.5.5.post3-qwen2.5-3b-gh200-c32.json", "bench"), "sglang.jsonl");
    BOOST_TEST(b.engine == "sglang");
    BOOST_TEST(b.engine_version == "0.5.5.post3");
    BOOST_TEST(b.model == "Qwen/Qwen2.5-3B-Instruct");
    BOOST_TEST(!b.request_rate.has_value());
    BOOST_TEST(*b.max_concurrency == 32);
    BOOST_TEST(std::abs(b.metrics.at("e2e_s_mean") - 557.9127527959645e-3) < 1e-12);
    BOOST_TEST(std::abs(b.metrics.at("ttft_s_p50") - 37.13699756190181e-3) < 1e-12);
    const CheckResult r = check_bench_result(b, {}, inputs());
    BOOST_TEST(r.identified.profile == "sglang-0.5");
    // Qwen2.5-3B-Instruct is bundled (models/README.md); the GPU is not named by the result.
    BOOST_TEST(r.identified.model == "qwen2.5-3b-instruct");
    BOOST_TEST_REQUIRE(r.unresolved.size() == 1u);
    BOOST_TEST(r.unresolved[0].find("GPU") != std::string::npos, r.unresolved[0]);
    // Its server_info states tp_size 1.
    BOOST_TEST(*b.tensor_parallel == 1);
    BOOST_TEST(r.identified.tp == 1);
    BOOST_TEST(r.identified.from.at("tp") == "result");
    // The older SGLang format (datacrunch-research/h200-benchmarks, December 2024): the last of its
    // JSON lines, without a model key.
    const BenchResult old = read_bench_result(fixture("sglang-dec2024-llama-3.3-70b-4xh200-tp4.json", "bench"), "old.jsonl");
    BOOST_TEST(old.engine == "sglang");
    // Its run was at TP 4, which the file does not say: --tp gives it, and the 70B model fits.
    CheckOptions tp4;
    tp4.model = "llama-3.1-70b";
    tp4.gpu = "h200";
    tp4.engine = "sglang@0.4.0";
    tp4.tp = 4;
    const CheckResult at4 = check_bench_result(old, tp4, inputs());
    BOOST_TEST(at4.identified.tp == 4);
    BOOST_TEST(at4.identified.from.at("tp") == "option");
    bool priced = false;
    for (const CheckRow& row : at4.rows) priced = priced || (row.quantity == "output_tokens_per_s" && row.predicted.has_value());
    BOOST_TEST(priced);
    tp4.tp = 3;
    BOOST_TEST(test::throws_naming([&] { check_bench_result(old, tp4, inputs()); }, "--tp"));
    BOOST_TEST(old.metrics.count("e2e_s_mean") == 1u);
    // Python's literals outside strings become null; inside strings and as parts of names they stay.
    BOOST_TEST(null_python_literals(R"({"a": Infinity, "b": "Infinity", "c": -Infinity, "d": [NaN], "e": NaNx})") ==
               R"({"a": null, "b": "Infinity", "c": null, "d": [null], "e": NaNx})");
    // JSON that is no benchmark result is refused in one error.
    BOOST_TEST(test::throws_naming([] { read_bench_result(R"({"a": 1})", "x.json"); }, "not a benchmark result"));
}

BOOST_AUTO_TEST_SUITE_END()

// The log corpus as a whole (the log issue's item 3): every fixture under tests/data/logs/ is read
// without an error, and each one with an `.expect.json` (what the log prints, with the bundled GPU
// and model it is) is identified field by field by `--check` as a user runs it, with no option.
// The share identified per field is printed beside the issue's 95% target, and a field that falls
// below the share recorded here fails: the corpus only gains.
BOOST_AUTO_TEST_SUITE(check_log_corpus)

BOOST_AUTO_TEST_CASE(every_fixture_parses_and_the_expected_fields_are_identified) {
    namespace fs = std::filesystem;
    // The shares identified, with no option, over the fixtures whose expectation states the field
    // (session 14: 45 logs, each with an expectation; the GPU and the model where the log holds the
    // evidence, docs/check.md; 2026-12-05: two fixtures quote the GPU their source names beside the
    // log). The issue's target is 95%; the GPU falls short.
    const std::map<std::string, double> recorded = {{"gpu", 28.0 / 35}, {"model", 31.0 / 32}, {"version", 1.0},
                                                    {"tp", 1.0},         {"gpu_memory_utilization", 27.0 / 28}, {"kv_cache_tokens", 1.0}};
    constexpr double kIssueTarget = 0.95;
    CheckInputs in = inputs();
    in.device_names = parse_device_names(fixture("gpu-device-names.json", "../../assets"), "gpu-device-names.json");
    std::map<std::string, std::pair<int, int>> tally;  // field -> (identified, expected)
    int logs = 0;
    // GPUs priced as another than the expectation's (a miss the tally counts like an unidentified one):
    // 2026-12-05, 1 (the Gemma 3 QAT log's L4 by its predicted KV cache, docs/check.md).
    constexpr int kRecordedWrongGpus = 1;
    int wrong_gpus = 0;
    for (const auto& e : fs::directory_iterator(test::source_dir() / "tests" / "data" / "logs")) {
        if (e.path().extension() != ".log") continue;
        ++logs;
        const std::string name = e.path().filename().string();
        StartupLog log;
        BOOST_REQUIRE_NO_THROW(log = read_startup_log(fixture(name), name));
        const fs::path expect_path = fs::path(e.path()).replace_extension(".expect.json");
        if (!fs::exists(expect_path)) continue;
        const nlohmann::json expect = nlohmann::json::parse(fixture(expect_path.filename().string()));
        CheckResult r;
        BOOST_REQUIRE_NO_THROW(r = check_startup_log(log, CheckOptions{}, in));
        const auto count = [&](const std::string& field, bool expected, bool identified, const std::string& got) {
            if (!expected) return;
            ++tally[field].second;
            tally[field].first += identified ? 1 : 0;
            BOOST_TEST_MESSAGE(name << " " << field << (identified ? " identified" : " not identified: got " + got));
        };
        count("gpu", expect["quantplan_gpu"].is_string(), expect["quantplan_gpu"].is_string() && r.identified.gpu == expect["quantplan_gpu"].get<std::string>(),
              r.identified.gpu);
        if (expect["quantplan_gpu"].is_string() && !r.identified.gpu.empty() && r.identified.gpu != expect["quantplan_gpu"].get<std::string>()) ++wrong_gpus;
        // The model where the log prints one (an excerpt of memory lines names none).
        count("model", expect["quantplan_model"].is_string() && expect["model"].is_string(),
              expect["quantplan_model"].is_string() && r.identified.model == expect["quantplan_model"].get<std::string>(), r.identified.model);
        count("version", expect["version"].is_string(), expect["version"].is_string() && log.version == expect["version"].get<std::string>(), log.version);
        count("tp", expect["tp"].is_number(), expect["tp"].is_number() && r.identified.tp == expect["tp"].get<std::int64_t>(), std::to_string(r.identified.tp));
        const nlohmann::json& utilization = expect["engine"] == "sglang" ? expect["mem_fraction_static"] : expect["gpu_memory_utilization"];
        const std::optional<double> read = expect["engine"] == "sglang" ? log.mem_fraction_static : log.gpu_memory_utilization;
        count("gpu_memory_utilization", utilization.is_number(), utilization.is_number() && read && std::abs(*read - utilization.get<double>()) < 1e-9,
              read ? std::to_string(*read) : "none");
        count("kv_cache_tokens", expect["kv_cache_tokens"].is_number(),
              expect["kv_cache_tokens"].is_number() && log.kv_cache_tokens && log.kv_cache_tokens->value == expect["kv_cache_tokens"].get<double>(),
              log.kv_cache_tokens ? std::to_string(log.kv_cache_tokens->value) : "none");
    }
    BOOST_TEST(logs >= 45);
    BOOST_TEST(wrong_gpus <= kRecordedWrongGpus, "GPUs priced as another than the expectation's: " << wrong_gpus);
    for (const auto& [field, floor] : recorded) {
        const auto [identified, expected] = tally[field];
        BOOST_TEST_REQUIRE(expected > 0, field);
        const double share = static_cast<double>(identified) / expected;
        BOOST_TEST_MESSAGE(field << ": identified in " << identified << " of " << expected << " (" << share * 100 << "%; the issue's target "
                                 << kIssueTarget * 100 << "% over 40 logs)");
        BOOST_TEST(share >= floor - 1e-9, field << ": identified in " << identified << " of " << expected << ", recorded " << floor);
    }
}

// Predicted against logged over the whole log corpus, each log at the model and GPU its expectation
// names (core/check/log_corpus.h; `quantplan --check-corpus tests/data/logs` prints the same table,
// docs/check-corpus.md). Fails when a median or the number of logs priced moves the wrong way.
BOOST_AUTO_TEST_CASE(predictions_over_the_corpus_within_the_recorded_errors) {
    namespace fs = std::filesystem;
    struct Recorded {
        int predicted;         // logs priced (at least)
        double median_abs;     // median |error| (at most, + 0.5 points)
    };
    // Session 14, 45 logs. The issue's targets: KV tokens median 3%, largest 8%; weights,
    // activation peak, non-torch and CUDA-graph memory medians 5%.
    const std::map<std::string, Recorded> recorded = {
        {"weights_bytes", {28, 0.004}}, {"kv_cache_bytes", {23, 0.010}}, {"kv_cache_tokens", {33, 0.023}}, {"max_concurrency", {22, 0.014}}};
    CheckInputs in = inputs();
    in.device_names = parse_device_names(fixture("gpu-device-names.json", "../../assets"), "gpu-device-names.json");
    std::vector<CorpusLog> logs;
    for (const auto& e : fs::directory_iterator(test::source_dir() / "tests" / "data" / "logs")) {
        if (e.path().extension() != ".log") continue;
        const std::string name = e.path().filename().string();
        const fs::path expect = fs::path(e.path()).replace_extension(".expect.json");
        const CheckOptions options =
            fs::exists(expect) ? options_from_expectation(fixture(expect.filename().string()), expect.filename().string()) : CheckOptions{};
        logs.push_back(check_corpus_log(name, read_startup_log(fixture(name), name), options, in));
    }
    const CorpusSummary summary = summarize_corpus(std::move(logs));
    BOOST_TEST_MESSAGE(corpus_markdown(summary));
    for (const auto& [quantity, r] : recorded) {
        const CorpusQuantity* q = corpus_quantity(summary, quantity);
        BOOST_TEST_REQUIRE(q != nullptr, quantity);
        BOOST_TEST(q->predicted >= r.predicted, quantity << ": " << q->predicted << " logs priced, recorded " << r.predicted);
        BOOST_TEST(q->median_abs_error <= r.median_abs + 0.005, quantity << ": median |error| " << q->median_abs_error << ", recorded " << r.median_abs);
    }
    // A log the corpus holds is never refused by the reader or the check.
    for (const CorpusLog& log : summary.logs) BOOST_TEST(log.refused.empty(), log.name << ": " << log.refused);
}

BOOST_AUTO_TEST_SUITE_END()
