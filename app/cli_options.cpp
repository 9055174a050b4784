#include "app/cli_options.h"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include "core/base/error.h"
#include "core/roofline/roofline.h"

namespace quantplan::app {
namespace {

std::int64_t to_int(const std::string& opt, const std::string& v) {
    std::int64_t out = 0;
    const auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
    if (ec != std::errc() || ptr != v.data() + v.size()) throw Error(opt, "expects an integer, got '" + v + "'");
    return out;
}

double to_double(const std::string& opt, const std::string& v) {
    try {
        std::size_t pos = 0;
        const double d = std::stod(v, &pos);
        if (pos != v.size() || !std::isfinite(d)) throw Error(opt, "expects a number, got '" + v + "'");
        return d;
    } catch (const std::logic_error&) {
        throw Error(opt, "expects a number, got '" + v + "'");
    }
}

// A byte count as vLLM's arguments take it (vllm/engine/arg_utils.py human_readable_int): digits,
// optionally with k/m/g/t (x 1000^n, decimals allowed) or K/M/G/T (x 1024^n, whole numbers):
// `--kv-cache-memory-bytes 500M` reserves 500 x 2^20 bytes.
std::int64_t to_byte_count(const std::string& opt, const std::string& v) {
    const auto bad = [&] { return Error(opt, "expects a byte count (digits, optionally with k, m, g, t or K, M, G, T), got '" + v + "'"); };
    if (v.empty()) throw bad();
    const char last = v.back();
    const std::string decimal = "kmgt", binary = "KMGT";
    const std::size_t d = decimal.find(last), b = binary.find(last);
    if (d == std::string::npos && b == std::string::npos) {
        if (v.find_first_not_of("0123456789") != std::string::npos || v.size() > 18) throw bad();
        return to_int(opt, v);
    }
    const std::string digits = v.substr(0, v.size() - 1);
    // vLLM's pattern: \d+(\.\d+)? before the suffix.
    const std::size_t dot = digits.find('.');
    const std::string whole = digits.substr(0, dot), part = dot == std::string::npos ? "1" : digits.substr(dot + 1);
    if (whole.empty() || part.empty() || whole.find_first_not_of("0123456789") != std::string::npos ||
        part.find_first_not_of("0123456789") != std::string::npos)
        throw bad();
    double x = 0;
    if (b != std::string::npos) {
        if (digits.find('.') != std::string::npos) throw Error(opt, "takes no decimals with a binary suffix (K, M, G, T), got '" + v + "'");
        if (digits.size() > 15) throw bad();
        x = static_cast<double>(to_int(opt, digits)) * std::pow(1024.0, static_cast<double>(b + 1));
    } else {
        x = to_double(opt, digits) * std::pow(1000.0, static_cast<double>(d + 1));
    }
    if (!(x >= 0) || x > 9.0e18) throw bad();
    return static_cast<std::int64_t>(x);
}

}  // namespace

CliOptions parse_command_line(int argc, char** argv) {
    CliOptions o;
    using Setter = std::function<void(const std::string&)>;
    // Options that take a value.
    const std::map<std::string, Setter> valued{
        {"--json", [&](const std::string& v) { o.json_path = v; }},
        {"--out", [&](const std::string& v) { o.out_dir = v; }},
        {"--inspect", [&](const std::string& v) { o.inspect_path = v; }},
        {"--model", [&](const std::string& v) { o.model = v; o.model_given = true; }},
        {"--check", [&](const std::string& v) { o.check_path = v; }},
        {"--add-to-corpus", [&](const std::string& v) { o.add_to_corpus = v; }},
        {"--check-corpus", [&](const std::string& v) { o.check_corpus = v; }},
        {"--bench-index", [&](const std::string& v) {
             o.bench_index = to_int("--bench-index", v);
             if (o.bench_index < 1 || o.bench_index > 100000) throw Error("--bench-index", "must be a run number from 1");
         }},
        {"--check-corpus-out", [&](const std::string& v) { o.check_corpus_out = v; }},
        {"--schemes", [&](const std::string& v) { o.schemes = v; }},
        {"--gpu", [&](const std::string& v) { o.gpu = v; o.gpu_given = true; }},
        {"--batch", [&](const std::string& v) { o.batch = to_int("--batch", v); }},
        {"--context", [&](const std::string& v) { o.context = to_int("--context", v); }},
        {"--kv", [&](const std::string& v) { o.kv = v; }},
        {"--profile", [&](const std::string& v) { o.profile = v; }},
        {"--serving-fit", [&](const std::string& v) { o.serving_fit = v; }},
        {"--calibration", [&](const std::string& v) { o.calibration = v; }},
        {"--engine", [&](const std::string& v) { o.engine = v; o.engine_given = true; }},
        {"--emit", [&](const std::string& v) { o.emit_engine = v; }},
        {"--emit-out", [&](const std::string& v) { o.emit_out = v; }},
        {"--spec", [&](const std::string& v) { o.spec = v; }},
        {"--disagg", [&](const std::string& v) { o.disagg = v; }},
        {"--prefill-tp", [&](const std::string& v) { o.prefill_tp = to_int("--prefill-tp", v); }},
        {"--decode-tp", [&](const std::string& v) { o.decode_tp = to_int("--decode-tp", v); }},
        {"--prefill-scheme", [&](const std::string& v) { o.prefill_scheme = v; }},
        {"--decode-scheme", [&](const std::string& v) { o.decode_scheme = v; }},
        {"--prefill-gpu", [&](const std::string& v) { o.prefill_gpu = v; }},
        {"--decode-gpu", [&](const std::string& v) { o.decode_gpu = v; }},
        {"--interconnect", [&](const std::string& v) { o.interconnect = v; }},
        {"--interconnect-links", [&](const std::string& v) { o.interconnect_links = to_int("--interconnect-links", v); }},
        {"--kv-connector", [&](const std::string& v) { o.kv_connector = v; }},
        {"--spec-acceptance", [&](const std::string& v) { o.spec_acceptance = v; }},
        {"--fit-out", [&](const std::string& v) { o.fit_out = v; }},
        {"--fidelity-out", [&](const std::string& v) { o.fidelity_out = v; }},
        {"--corpus", [&](const std::string& v) { o.corpus_files.push_back(v); }},
        {"--gpu-mem-util", [&](const std::string& v) { o.gpu_mem_util = to_double("--gpu-mem-util", v); o.gpu_mem_util_given = true; }},
        {"--kv-cache-memory-bytes", [&](const std::string& v) {
             o.kv_cache_memory_bytes = to_byte_count("--kv-cache-memory-bytes", v);
             if (o.kv_cache_memory_bytes < 1) throw Error("--kv-cache-memory-bytes", "must be a positive byte count, got '" + v + "'");
         }},
        {"--tp", [&](const std::string& v) { o.tp = to_int("--tp", v); }},
        {"--ep", [&](const std::string& v) { o.ep = to_int("--ep", v); }},
        {"--dp", [&](const std::string& v) { o.dp = to_int("--dp", v); }},
        {"--nodes", [&](const std::string& v) { o.nodes = to_int("--nodes", v); }},
        {"--kernel", [&](const std::string& v) { o.kernel = v; }},
        {"--goal", [&](const std::string& v) { o.goal = v; }},
        {"--accuracy", [&](const std::string& v) { o.accuracy = v; }},
        {"--max-num-batched-tokens", [&](const std::string& v) {
             o.max_num_batched_tokens = to_int("--max-num-batched-tokens", v);
             o.max_num_batched_tokens_given = true;
         }},
        {"--max-num-seqs", [&](const std::string& v) { o.max_num_seqs = to_int("--max-num-seqs", v); o.max_num_seqs_given = true; }},
        {"--num-scheduler-steps", [&](const std::string& v) { o.num_scheduler_steps = to_int("--num-scheduler-steps", v); }},
        {"--scenario", [&](const std::string& v) { o.scenario = v; }},
        {"--errorsim-formats", [&](const std::string& v) { o.errorsim = true; o.errorsim_formats = v; }},
        {"--errorsim-granularities", [&](const std::string& v) { o.errorsim = true; o.errorsim_granularities = v; }},
        {"--errorsim-methods", [&](const std::string& v) { o.errorsim = true; o.errorsim_methods = v; }},
        {"--errorsim-activation", [&](const std::string& v) { o.errorsim = true; o.errorsim_activation = v; }},
        {"--errorsim-outlier", [&](const std::string& v) { o.errorsim = true; o.errorsim_outlier = to_double("--errorsim-outlier", v); }},
        {"--errorsim-seed", [&](const std::string& v) { o.errorsim = true; o.errorsim_seed = to_int("--errorsim-seed", v); }},
        {"--errorsim-tensor", [&](const std::string& v) { o.errorsim = true; o.errorsim_tensor = v; }},
        {"--errorsim-activation-tensor", [&](const std::string& v) { o.errorsim = true; o.errorsim_activation_tensor = v; }},
        {"--errorsim-tokens", [&](const std::string& v) { o.errorsim = true; o.errorsim_tokens = to_int("--errorsim-tokens", v); }},
        {"--rate", [&](const std::string& v) { o.rate = to_double("--rate", v); }},
        {"--concurrency", [&](const std::string& v) { o.concurrency = to_int("--concurrency", v); }},
        {"--requests", [&](const std::string& v) { o.requests = to_int("--requests", v); }},
        {"--isl", [&](const std::string& v) { o.isl = v; }},
        {"--osl", [&](const std::string& v) { o.osl = v; }},
        {"--slo-ttft", [&](const std::string& v) { o.slo_ttft = v; }},
        {"--slo-tpot", [&](const std::string& v) { o.slo_tpot = v; }},
        {"--slo-e2e", [&](const std::string& v) { o.slo_e2e = v; }},
        {"--target-rate", [&](const std::string& v) { o.target_rate = to_double("--target-rate", v); }},
        {"--price", [&](const std::string& v) { o.prices.push_back(v); }},
        {"--compare-gpus", [&](const std::string& v) { o.compare_gpus = v; }},
        {"--seed", [&](const std::string& v) { o.seed = to_int("--seed", v); }},
        {"--arrival", [&](const std::string& v) { o.arrival = v; }},
        {"--trace", [&](const std::string& v) { o.trace = v; }},
        {"--prefix", [&](const std::string& v) { o.prefix = to_int("--prefix", v); }},
        {"--gpu-p2p", [&](const std::string& v) { o.gpu_p2p = parse_gpu_p2p(v, "--gpu-p2p"); }},
        {"--validate-seconds", [&](const std::string& v) {
             o.validate_seconds = to_double("--validate-seconds", v);
             if (!(*o.validate_seconds >= 10 && *o.validate_seconds <= 3600)) throw Error("--validate-seconds", "must be 10 to 3600 seconds");
         }},
    };
    // Flags.
    const std::map<std::string, std::function<void()>> flags{
        {"--help", [&] { o.help = true; }},
        {"-h", [&] { o.help = true; }},
        {"--version", [&] { o.version = true; }},
        {"--headless", [&] { o.headless = true; }},
        {"--validate", [&] { o.validate = true; }},
        {"--fit-engines", [&] { o.fit_engines = true; }},
        {"--fit-serving", [&] { o.fit_serving = true; }},
        {"--fit-spec", [&] { o.fit_spec = true; }},
        {"--reasoning", [&] { o.reasoning = true; }},
        {"--enforce-eager", [&] { o.enforce_eager = true; }},
        {"--mxfp4-mxfp8", [&] { o.mxfp4_mxfp8 = true; }},
        {"--tensors", [&] { o.per_tensor = true; }},
        {"--timestamp", [&] { o.timestamp = true; }},
        {"--errorsim", [&] { o.errorsim = true; }},
        {"--serve", [&] { o.serve = true; }},
        {"--disagg-sweep", [&] { o.disagg_sweep = true; }},
        {"--fit-disagg", [&] { o.fit_disagg = true; }},
    };
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        std::optional<std::string> inline_value;
        if (arg.rfind("--", 0) == 0) {
            const std::size_t eq = arg.find('=');
            if (eq != std::string::npos) {
                inline_value = arg.substr(eq + 1);
                arg = arg.substr(0, eq);
            }
        }
        if (const auto f = flags.find(arg); f != flags.end()) {
            if (inline_value) throw Error(arg, "takes no value");
            f->second();
            continue;
        }
        if (const auto v = valued.find(arg); v != valued.end()) {
            if (inline_value) {
                v->second(*inline_value);
            } else {
                if (i + 1 >= argc) throw Error(arg, "needs a value");
                v->second(argv[++i]);
            }
            continue;
        }
        // Qt's own options (-platform, -style, ...) pass through to the GUI; anything else is an error.
        if (arg.rfind("--", 0) == 0) throw Error(arg, "unknown option (see --help)");
        o.gui_args.push_back(argv[i]);
    }
    return o;
}

std::string version_text() { return "quantplan 0.1.0"; }

std::string help_text() {
    return R"(quantplan - which quantization scheme, on this GPU, for this traffic?

Usage:
  quantplan [options]                      open the planner window (when built with Qt)
  quantplan --headless [options]           print the plan as a table (or JSON with --json -)
  quantplan --headless --out DIR           write a report folder
  quantplan --headless --inspect PATH      read a checkpoint's headers and compare with the prediction
                                           (PATH: a folder, a config.json or a .safetensors file;
                                           --gpu for the engines' kernels; docs/inspector.md)
  quantplan --headless --check FILE [--model M] [--gpu G] [--engine E] [--json -]
                                           read a vLLM or SGLang startup log, price the same setup and
                                           show every logged memory term beside its prediction
                                           (docs/check.md); --add-to-corpus FILE appends what
                                           it measured to a user corpus (then --corpus FILE);
                                           FILE may be a benchmark result (vLLM, SGLang, GuideLLM:
                                           --bench-index N picks its N-th run; genai-perf)
  quantplan --headless --check-corpus DIR [--check-corpus-out FILE]
                                           check every *.log in DIR (each at the model and GPU its
                                           .expect.json names) and print the errors per quantity
                                           as Markdown (docs/check-corpus.md)
  quantplan --headless --serve [--rate R | --concurrency N] [traffic and SLO options below]
                                           simulate serving traffic per scheme through the engine
                                           profile: latency percentiles, goodput, the highest rate
                                           within the SLOs, replicas and cost (docs/capacity.md)
  quantplan --fit-engines [--fit-out FILE] [--fidelity-out FILE] [--corpus FILE]...
                                           fit the engine profiles to the measurement corpus
                                           (assets/measurements/), with leave-one-out errors
  quantplan --fit-serving [--fit-out FILE] [--fidelity-out FILE]
                                           fit the serving terms (host time per sequence, the
                                           frontend) to the runs under load in assets/serving-runs/
  quantplan --fit-spec [--fit-out FILE] [--fidelity-out FILE]
                                           fit speculative decoding's draft-forward and host terms
                                           to the published speed-ups (assets/measurements/speculative/)
  quantplan --fit-disagg [--fit-out FILE] [--fidelity-out FILE]
                                           predict the published disaggregated and aggregated runs
                                           (assets/measurements/disaggregated/) at their setups, and
                                           fit each KV connector's transfer terms to the published
                                           transfer times [assets/engines/fit/kv-transfer-fit.json]
  quantplan --headless --emit vllm|sglang [--engine E@V] [--emit-out DIR] [plan or --serve options]
                                           the launch command, environment, docker run, Kubernetes
                                           Deployment and Service, and the checkpoint (published or
                                           the recipe that makes it) for the plan's chosen scheme or
                                           each recommended configuration, every argument checked
                                           against that engine version's parser (docs/launch.md)
  quantplan --validate [--model M] [--out FILE] [--validate-seconds S]
                                           check predictions on an NVIDIA GPU (S caps the timing
                                           phase, default 300; docs/kernels.md)

Model and hardware:
  --model NAME|PATH        bundled model (qwen3-8b, qwen3-32b, qwen3-30b-a3b, qwen2.5-7b-instruct,
                           llama-3-8b, llama-3.1-8b, llama-3.1-70b, mistral-7b-instruct-v0.2,
                           mixtral-8x7b, deepseek-v3, kimi-k2-instruct, gpt-oss-20b, gpt-oss-120b,
                           gemma-3-27b-it and more: models/catalog.json; a Hugging Face repo name
                           works too) or a config.json / folder
                           [default qwen3-8b]
  --gpu ID|FILE            h100-sxm, h100-pcie, h200, a100-80gb, a100-40gb, l40s, l4, rtx-4090,
                           rtx-5090, rtx-6000-ada, b200, mi300x, or a profile .json [default h100-sxm]
  --schemes A,B,...        scheme names (docs/schemes.md) [default: bf16,w8a16-int8,w4a16-g128,
                           w4a16-g32,w8a8-int8,w8a8-fp8 (+w4a4-nvfp4 on FP4 GPUs)]
Workload:
  --batch N                concurrent sequences [1]
  --context N              tokens of context per sequence [4096]
  --kv FMT                 KV-cache format: auto, bf16, fp16, fp8, fp8_e5m2, int8, int4 [auto]
                           (auto: as the engine's --kv-cache-dtype auto, bf16 except that `native`
                           takes a ModelOpt checkpoint's declared FP8 KV on vLLM >= 0.14, SGLang >= 0.5.3)
  --tp N                   tensor-parallel degree 1..8 [1]
  --ep N                   MoE: place whole experts over the N GPUs (expert parallel; N = --dp x --tp)
                           instead of slicing each; the step waits for the busiest GPU [1]
  --dp N                   MoE with --ep: N data-parallel engines, each with its own batch and its
                           attention over its --tp GPUs, sharing the experts (all-to-all per layer) [1]
  --nodes N                nodes the --dp x --tp GPUs span (at most 8 per node; the network between
                           them from the GPU profile) [1]
  --gpu-p2p on|off|auto    peer-to-peer between the --tp GPUs of a node; off: NCCL all-reduces through
                           host memory (GeForce cards, containers that hide P2P; docs/capacity.md)
                           [auto: the GPU profile's, off for the RTX 3090, 4090 and 5090]
  --gpu-mem-util U         engine's gpu_memory_utilization in (0, 1] [0.9]
  --kv-cache-memory-bytes N  vLLM's --kv-cache-memory-bytes: the KV cache per GPU is N bytes (500M:
                           500 x 2^20; 5g: 5 x 10^9), whatever the utilization leaves; it must still
                           fit beside the weights [unset]
  --max-num-batched-tokens N  prefill chunk / profiling tokens [8192]
  --max-num-seqs N         sampler size [256]
  --num-scheduler-steps N  vLLM V0's multi-step scheduling (0.5.5 to 0.10.0, --engine vllm@V with
                           the V0 engine): N decode passes a schedule, streamed together [1]
  --enforce-eager          the engine runs without CUDA graphs (vLLM's --enforce-eager, SGLang's
                           --disable-cuda-graph): with --profile engine each decode step pays the
                           fitted eager launch cost per layer
  --mxfp4-mxfp8            MXFP4 experts (gpt-oss) with MXFP8 activations: on GPUs with block-scaled
                           FP4/FP8 tensor cores (B200, RTX 5090) their matmuls at the FP8 rate (vLLM:
                           VLLM_USE_FLASHINFER_MOE_MXFP4_MXFP8=1 on sm_100); default W4A16, as vLLM
                           runs them; the fitted engine profiles price the default
Model of the hardware:
  --profile NAME           engine: the engine profile's step model fitted to published
                           measurements, with error bands (docs/fidelity.md); or realistic, ideal
                           (the seeds' lecture rooflines) or measured (needs --calibration FILE) [engine]
  --serving-fit FILE|none  the serving terms (host time per sequence, the frontend's queue) and
                           bands of step and serving figures and of --check's replay of a benchmark
                           result: a --fit-serving file's, or none [assets/engines/fit/serving-fit.json]
  --corpus FILE            a user corpus (repeatable): with --profile engine the profiles are
                           refitted with its points too, so the bands are your own
  --engine NAME[@VER]      engine profile: vllm, vllm@0.6.3, vllm@0.10.1, sglang@0.4.6, ... (the
                           version picks the profile covering it; NAME alone is the newest) [vllm]
  --calibration FILE       calibration file written by --validate: adds its measured decode steps
                           (table, JSON 'measured', report, crossover chart)
  --kernel Q               weight-only kernel quality: fused (Marlin class) or generic [fused]
Disaggregated prefill and decode (with --serve and --rate or --concurrency; docs/disaggregation.md):
  --disagg P:D             P prefill and D decode instances, the prompt's KV sent between them, beside
                           aggregated serving on the same GPUs
  --disagg auto            (with --rate) the cheapest P:D with TP 1-8, a scheme of --schemes and a GPU
                           of --gpu and --compare-gpus per pool (each pool option pins its pool),
                           beside the cheapest aggregated configuration
  --disagg-sweep           (with --rate) both layouts sized again at prompt lengths 256 to 32768 and
                           at TPOT SLOs 200 to 15 ms: where disaggregation starts to pay
  --prefill-tp N, --decode-tp N          each pool's tensor parallelism [--tp]
  --prefill-scheme S, --decode-scheme S  each pool's scheme [the first of --schemes, else bf16]
  --prefill-gpu ID, --decode-gpu ID      each pool's GPU [--gpu]
  --interconnect ID|FILE   the link the KV cache crosses: nvlink3, nvlink4, nvlink5, infiniband-hdr,
                           infiniband-ndr, infiniband-xdr, roce-200g, roce-400g, ethernet-100g,
                           pcie-gen4-x16, pcie-gen5-x16 (assets/interconnects/), or a profile file
                           [infiniband-ndr]
  --interconnect-links N   the links (NICs) a prefill instance sends its KV over, each at the link's
                           bandwidth [one per GPU pair: min(prefill TP, decode TP)]
  --kv-connector C         how the KV moves: nixl (vLLM's NixlConnector behind its proxy: pulled
                           whole after the prefill, the decode server's frontend paid too),
                           p2p-nccl (layer by layer), dynamo, mooncake (vLLM's MooncakeConnector),
                           sglang [nixl for vLLM, sglang for SGLang]; a connector with published
                           transfer times sends at its fitted cost a transfer and share of the
                           line rate (assets/engines/fit/kv-transfer-fit.json, --fit-disagg)
Speculative decoding (docs/speculative.md):
  --spec METHOD:K          eagle3:K, eagle:K, mtp:K, ngram:K or draft:MODEL:K (K speculative tokens
                           per step): TPOT and throughput with and without it per batch, the batch
                           where it stops paying; the memory budget holds the draft; --serve draws
                           each step's accepted tokens
  --spec-acceptance A      K per-position acceptance rates (0.8,0.6,0.4, as vLLM logs them) or a mean
                           acceptance length (2.9, tokens per step with the bonus token)
                           [the published figure for the model family and method]
Decision:
  --goal G                 throughput or latency [throughput]
  --accuracy T             strict, moderate or loose accuracy tolerance [moderate]
  --reasoning              reasoning-heavy traffic (long chains of thought degrade first)
Traffic and sizing (with --serve; with --out they add the report's Capacity section):
  --rate R                 open-loop arrivals at R requests/s (else --concurrency; neither: the run
                           is at the highest rate found)
  --concurrency N          N users in a closed loop, each sending its next request when one ends
  --requests N             requests simulated per run [1000]
  --isl SPEC, --osl SPEC   input / output lengths: N, uniform:A:B, normal:MEAN:SD,
                           lognormal:MEDIAN:SIGMA or file:PATH (one length a line) [2000, 500]
  --arrival A              poisson, gamma:CV (burstier above 1) or burst (all at once) [poisson]
  --trace FILE             replay requests: arrival_s,input_tokens,output_tokens a line (CSV or JSONL)
  --prefix N               the first N tokens of every prompt are shared (prefix caching)
  --slo-ttft S, --slo-tpot S, --slo-e2e S
                           latency targets in seconds, at p99 unless @p50 or @p90 is appended
  --target-rate R          replicas and GPUs needed for R requests/s [the --rate]
  --price GPU=USD          on-demand price per GPU-hour (repeatable) for the cost per million tokens
                           [the bundled list, assets/prices/gpu-prices.json]
  --compare-gpus L         more GPUs for the recommendation: all (every GPU with a price) or
                           ids joined with commas [the --gpu and every GPU given a --price]
  --seed N                 the traffic's seed [1]
Output:
  --json FILE|-            write the JSON document (docs/headless.md) to FILE or stdout
  --tensors                list every tensor's bytes in the JSON
  --errorsim               add the error lab (errorsim section; docs/errorsim.md): one linear layer with
                           outlier channels quantized for real, layer and weight errors per row
  --errorsim-formats L     weight formats: int2..int8[-sym|-asym], fp8, fp8_e5m2, fp4, nvfp4, mxfp4
                           [int4,int8]
  --errorsim-granularities L  tensor, channel, g<N>, block<R>x<C>, ladder [ladder]
  --errorsim-methods L     rtn, gptq, gptq-actorder, awq, awq-clip, smoothquant[@A], joined with +
                           (awq+gptq) [rtn]
  --errorsim-activation A  a16, or int8 / fp8 / fp8_e5m2 with -tensor, -static, -asym [a16]
  --errorsim-outlier X     outlier channel magnitude, times an ordinary channel [20]
  --errorsim-seed N        the synthetic layer's seed [1]
  --errorsim-tokens N      synthetic calibration tokens, and as many held-out ones [512]
  --errorsim-tensor F:NAME weights from a .safetensors file (bf16, fp16, fp32), synthetic activations
  --errorsim-activation-tensor F:NAME  supplied activations [T x K] for --errorsim-tensor
  --out DIR                write a report folder (docs/report.md): report.json, report.md, report.html,
                           sweeps.csv, charts/*.svg and *.png; no display needed. DIR must be new, empty
                           or an earlier report; it is replaced whole or not at all. --out - is stdout
                           (with --json -: the JSON document)
  --timestamp              with --out: record the generation time in report.json (without it the same
                           inputs give byte-identical report.json and sweeps.csv)
  --scenario FILE          take the options from a scenario JSON (docs/report.md; assets/scenarios/);
                           FILE#N picks step N of a lecture scenario; options given on the command line win
  --help, --version

Exit codes:
  0  success
  1  bad input (unknown model, scheme or GPU; malformed file; impossible sizes): one line on stderr
  2  the operation failed (cannot write output, no GPU for --validate)
  3  --out DIR exists and is not a quantplan report: refused, nothing written
)";
}

}  // namespace quantplan::app
